package plugins

import (
	"context"
	"mime"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/folio-archive/folio/archive"
)

// Staticfile saves a URL that is not a page (a PDF, an image, an archive)
// as it is, under staticfile/<file name>; the page plugins then report
// noresults "staticfile already handled" (plugins spec §2.2).
type Staticfile struct{ builtin }

// htmlTypes are the media types of documents the page plugins handle.
var htmlTypes = map[string]bool{"text/html": true, "application/xhtml+xml": true, "": true}

func (p *Staticfile) Run(ctx context.Context, job *Job) Outcome {
	pg := job.Page
	// The browser saw an HTML document (an error page too): not a file.
	if pg != nil && (pg.Err == nil || pg.MimeType != "") && htmlTypes[strings.ToLower(pg.MimeType)] {
		return noResults("Page is HTML (not staticfile)")
	}
	max, err := strconv.ParseInt(job.Config.Get("STATICFILE_MAX_SIZE"), 10, 64)
	if err != nil || max <= 0 {
		max = 1 << 30
	}
	f, err := get(ctx, job, job.URL, max)
	switch {
	case err != nil:
		return failed("fetch %s: %v", job.URL, err)
	case f.Status >= 400:
		return failed("%s answered HTTP %d", job.URL, f.Status)
	case htmlTypes[f.ContentType]:
		// The browser could not show it, but it is a page after all.
		return noResults("Page is HTML (not staticfile)")
	}
	rel, err := write(job, p.name, staticName(f), f.Body)
	if err != nil {
		return failed("%v", err)
	}
	job.Static = rel
	if pg != nil {
		pg.Err = nil // the URL is captured; nothing failed to load
	}
	return succeeded(rel)
}

// staticName is the file name a static file is saved under: the one
// Content-Disposition gives, else the URL's last path segment, else
// "download", with an extension from the media type when it has none.
func staticName(f *fetched) string {
	name := ""
	if _, params, err := mime.ParseMediaType(f.Header.Get("Content-Disposition")); err == nil {
		name = path.Base(strings.ReplaceAll(params["filename"], "\\", "/"))
	}
	if name == "" || name == "." || name == "/" {
		if u, err := url.Parse(f.URL); err == nil {
			name = path.Base(u.Path)
		}
	}
	name = strings.Map(func(r rune) rune {
		if r < 0x20 || r == '/' || r == '\\' || r == 0x7f {
			return '_'
		}
		return r
	}, name)
	if name == "" || name == "." || name == ".." || name == "/" || strings.HasPrefix(name, ".") {
		name = "download"
	}
	if len(name) > 200 {
		name = name[:200]
	}
	if path.Ext(name) == "" {
		if exts, _ := mime.ExtensionsByType(f.ContentType); len(exts) > 0 {
			name += exts[0]
		}
	}
	return name
}

// Favicon writes favicon/favicon.ico: the first icon that answers 2xx with
// a body among the page's <link rel=icon> candidates, /favicon.ico,
// /favicon.png and /apple-touch-icon.png, whatever its real type.
type Favicon struct{ builtin }

func (p *Favicon) Run(ctx context.Context, job *Job) Outcome {
	var candidates []string
	if tctx, cancel, o := tab(ctx, job); o == nil {
		links, err := chromedp.Run(tctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll(
			'link[rel~="icon" i], link[rel="shortcut icon" i], link[rel~="apple-touch-icon" i]')).map(l => l.href).filter(h => /^https?:/.test(h))`))
		cancel()
		if err == nil {
			candidates = links
		}
	}
	base, err := url.Parse(job.URL)
	if err != nil {
		return failed("%v", err)
	}
	if job.Page != nil && job.Page.FinalURL != "" {
		if u, err := url.Parse(job.Page.FinalURL); err == nil {
			base = u
		}
	}
	for _, name := range []string{"/favicon.ico", "/favicon.png", "/apple-touch-icon.png"} {
		candidates = append(candidates, base.ResolveReference(&url.URL{Path: name}).String())
	}
	seen := map[string]bool{}
	for _, c := range candidates {
		if seen[c] {
			continue
		}
		seen[c] = true
		rctx, cancel := withTimeout(ctx, 15*time.Second)
		f, err := get(rctx, job, c, 10<<20)
		cancel()
		if err == nil && f.Status/100 == 2 && len(f.Body) > 0 && !htmlTypes[f.ContentType] {
			return save(job, p.name, "favicon.ico", f.Body)
		}
		if ctx.Err() != nil {
			return failed("%v", ctx.Err())
		}
	}
	return noResults("No favicon found")
}

// outputFiles lists a plugin folder's regular files (runner logs, pid and
// command files excepted), as ArchiveBox records them in output_files:
// paths relative to the folder.
func outputFiles(tree []fileEntry) []archive.OutputFile {
	var out []archive.OutputFile
	for _, e := range tree {
		n := path.Base(e.rel)
		if strings.HasSuffix(n, ".log") || strings.HasSuffix(n, ".pid") || strings.HasSuffix(n, ".sh") || archive.IsTemp(n) {
			continue
		}
		out = append(out, archive.NewOutputFile(e.rel, e.size))
	}
	return out
}

var (
	_ Plugin = (*Staticfile)(nil)
	_ Plugin = (*Favicon)(nil)
)
