package plugins

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"

	"github.com/chromedp/chromedp"

	"github.com/folio-archive/folio/archive"
)

// The plugins that read the snapshot's loaded tab (plugins spec §2.2).

// tab returns the loaded page's context for a plugin, or the outcome the
// plugin reports when there is none: noresults for a static file, failed
// with the load error otherwise.
func tab(ctx context.Context, job *Job) (context.Context, context.CancelFunc, *Outcome) {
	if job.Static != "" {
		o := noResults("staticfile already handled")
		return nil, nil, &o
	}
	tctx, cancel, ok := job.Page.Context(ctx)
	if !ok {
		o := failed("%v", pageErr(job.Page))
		return nil, nil, &o
	}
	return tctx, cancel, nil
}

// pageErr is why p cannot be read: ErrNoBrowser without a page, the
// load's error, errTabLost when its browser died after the load.
func pageErr(p *Page) error {
	switch {
	case p == nil:
		return ErrNoBrowser
	case p.Err == nil && p.ctx != nil && p.ctx.Err() != nil:
		return errTabLost
	}
	return p.Err
}

// write saves data as <plugin dir>/<name> atomically and returns its path
// relative to the snapshot folder, the form output_str takes.
func write(job *Job, plugin, name string, data []byte) (string, error) {
	dir := job.PluginDir(plugin)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	if err := archive.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
		return "", err
	}
	return plugin + "/" + name, nil
}

// save is write followed by the outcome of a plugin whose output is that
// one file.
func save(job *Job, plugin, name string, data []byte) Outcome {
	rel, err := write(job, plugin, name, data)
	if err != nil {
		return failed("%v", err)
	}
	return succeeded(rel)
}

// Title writes title/title.txt: the page title, else og:title,
// twitter:title, the first h1. Its output_str is the title itself.
type Title struct{ builtin }

func (p *Title) Run(ctx context.Context, job *Job) Outcome {
	tctx, cancel, o := tab(ctx, job)
	if o != nil {
		return *o
	}
	defer cancel()
	title, err := chromedp.Run(tctx, chromedp.Evaluate[string](`(() => {
		const meta = n => { const m = document.querySelector('meta[property="' + n + '"], meta[name="' + n + '"]'); return m ? m.content : ""; };
		const h1 = document.querySelector("h1");
		for (const t of [document.title, meta("og:title"), meta("twitter:title"), h1 ? h1.innerText : ""]) {
			if (t && t.trim()) return t.trim().replace(/\s+/g, " ");
		}
		return "";
	})()`))
	if err != nil {
		return failed("read the title: %v", err)
	}
	if title == "" {
		return noResults("No title found")
	}
	if _, err := write(job, p.name, "title.txt", []byte(title)); err != nil {
		return failed("%v", err)
	}
	job.Title = title
	return succeeded(title)
}

// Headers writes headers/headers.json from the main document's final
// response, with ArchiveBox's keys.
type Headers struct{ builtin }

func (p *Headers) Run(_ context.Context, job *Job) Outcome {
	pg := job.Page
	if pg == nil || pg.ResponseHeaders == nil {
		if pg != nil && pg.Err != nil {
			return failed("no response headers: %v", pg.Err)
		}
		return failed("no response headers")
	}
	resp := map[string]any{":status": strconv.FormatInt(pg.Status, 10)}
	for k, v := range pg.ResponseHeaders {
		resp[k] = v
	}
	doc := map[string]any{
		"url": pg.URL, "final_url": pg.FinalURL, "status": pg.Status, "statusText": pg.StatusText,
		"request_headers": pg.RequestHeaders, "response_headers": resp, "headers": resp,
	}
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return failed("%v", err)
	}
	return save(job, p.name, "headers.json", append(data, '\n'))
}

// Screenshot writes screenshot/screenshot.png of the viewport at
// SCREENSHOT_RESOLUTION (else RESOLUTION) and screenshot/screenshot.json.
type Screenshot struct{ builtin }

func (p *Screenshot) Run(ctx context.Context, job *Job) Outcome {
	tctx, cancel, o := tab(ctx, job)
	if o != nil {
		return *o
	}
	defer cancel()
	w, h, err := job.Config.Resolution(p.name)
	if err != nil {
		return failed("%v", err)
	}
	if _, err := chromedp.Run(tctx, chromedp.EmulateViewport(int64(w), int64(h))); err != nil {
		return failed("set the viewport: %v", err)
	}
	png, err := chromedp.Run(tctx, chromedp.CaptureScreenshot())
	if err != nil {
		return failed("capture the screenshot: %v", err)
	}
	meta, _ := json.MarshalIndent(map[string]any{"requestedUrl": job.URL, "finalUrl": job.Page.FinalURL,
		"status": job.Page.Status, "width": w, "height": h}, "", "  ")
	if _, err := write(job, p.name, "screenshot.json", append(meta, '\n')); err != nil {
		return failed("%v", err)
	}
	return save(job, p.name, "screenshot.png", png)
}

// PDF writes pdf/output.pdf: A4, backgrounds printed, 0.5 in margins.
type PDF struct{ builtin }

func (p *PDF) Run(ctx context.Context, job *Job) Outcome {
	tctx, cancel, o := tab(ctx, job)
	if o != nil {
		return *o
	}
	defer cancel()
	data, err := chromedp.Run(tctx, chromedp.PrintToPDF(chromedp.PDFPaper(chromedp.PaperA4),
		chromedp.PDFPrintBackground(), chromedp.PDFMargin(0.5)))
	if err != nil {
		return failed("print to PDF: %v", err)
	}
	return save(job, p.name, "output.pdf", data)
}

// DOM writes dom/output.html, the rendered DOM with its doctype.
type DOM struct{ builtin }

func (p *DOM) Run(ctx context.Context, job *Job) Outcome {
	_, cancel, o := tab(ctx, job)
	if o != nil {
		return *o
	}
	cancel()
	html, err := job.Page.HTML(ctx)
	if err != nil {
		return failed("read the DOM: %v", err)
	}
	if len(html) <= 100 {
		return noResults("DOM is empty")
	}
	return save(job, p.name, "output.html", []byte(html))
}

var (
	_ Plugin = (*Title)(nil)
	_ Plugin = (*Headers)(nil)
	_ Plugin = (*Screenshot)(nil)
	_ Plugin = (*PDF)(nil)
	_ Plugin = (*DOM)(nil)
)
