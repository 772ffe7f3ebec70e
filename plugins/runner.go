package plugins

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/folio-archive/folio/archive"
)

// Runner runs the selected plugins over one snapshot at a time, in order,
// each under its own timeout. It is safe for concurrent use: snapshots run
// in parallel share the browser (one tab each) and the HTTP client.
type Runner struct {
	Plugins []Plugin
	Browser *Browser // nil when none could be started; browser plugins then fail
	Config  Config
	HTTP    *http.Client
	IDs     archive.IDSource
	Now     func() time.Time
	// Before, when set, is called before each plugin runs; an error stops
	// the capture as a report error does.
	Before func(Plugin) error
}

// NeedsBrowser reports whether any selected plugin needs the page.
func NeedsBrowser(ps []Plugin) bool {
	for _, p := range ps {
		if p.Browser() {
			return true
		}
	}
	return false
}

// Capture runs every plugin over job. After each one, report gets its
// ArchiveResult (to be written to the snapshot's index.jsonl before the
// next plugin starts). withLinks also collects the page's links into
// job.Links. A cancelled ctx stops before the next plugin and returns the
// context's error; the result of a plugin it interrupted is not reported.
func (r *Runner) Capture(ctx context.Context, job *Job, withLinks bool, report func(archive.Result) error) error {
	job.Config, job.HTTP = r.Config, r.HTTP
	if job.Now == nil {
		job.Now = r.Now
	}
	ctx, stopRecording := startRecorder(ctx, r.Plugins, job)
	defer stopRecording()
	if NeedsBrowser(r.Plugins) || withLinks {
		if r.Browser == nil {
			job.Page = &Page{URL: job.URL, Err: ErrNoBrowser}
		} else {
			job.Page = r.Browser.Load(ctx, job.URL, r.Config)
			defer job.Page.Close()
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if withLinks {
			job.Links = job.Page.Links(ctx)
		}
	}
	for _, p := range r.Plugins {
		if err := ctx.Err(); err != nil {
			return err
		}
		if r.Before != nil {
			if err := r.Before(p); err != nil {
				return err
			}
		}
		timeout := r.Config.Timeout(p.Name())
		pctx, cancel := context.WithTimeout(ctx, timeout)
		start := r.Now()
		o := p.Run(pctx, job)
		end := r.Now()
		expired := errors.Is(pctx.Err(), context.DeadlineExceeded)
		cancel()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		switch {
		case o.Status == Succeeded:
		case p.Browser() && job.Page.Lost(ctx):
			o.Status, o.Output = Failed, errTabLost.Error()
		case expired:
			o.Status, o.Output = Failed, fmt.Sprintf("timed out after %s (%s_TIMEOUT)", timeout, strings.ToUpper(p.Name()))
		}
		files, size := Outputs(job.PluginDir(p.Name()))
		res := archive.Result{
			ID: r.IDs(), SnapshotID: job.SnapshotID, Plugin: p.Name(), HookName: p.HookName(),
			Status: o.Status, OutputStr: o.Output, StartTS: start, EndTS: end,
			OutputFiles: files, OutputSize: size, OutputMimetypes: archive.MimetypesBySize(files),
			Cmd: o.Cmd, SchemaVersion: archive.SchemaVersion,
		}
		if err := report(res); err != nil {
			return err
		}
	}
	return nil
}

// Outputs lists the output files of a plugin folder as its ArchiveResult
// records them (logs, pid files and temp files left out), with their
// total size.
func Outputs(dir string) ([]archive.OutputFile, int64) {
	files := outputFiles(mustWalk(dir))
	var size int64
	for _, f := range files {
		size += f.Size
	}
	return files, size
}

// staticExts are the link targets --depth 1 does not follow: assets, not
// pages (as ArchiveBox's parse_dom_outlinks).
var staticExts = map[string]bool{".css": true, ".js": true, ".png": true, ".jpg": true, ".jpeg": true, ".gif": true,
	".svg": true, ".ico": true, ".woff": true, ".woff2": true, ".ttf": true, ".eot": true, ".mp4": true,
	".webm": true, ".mp3": true, ".pdf": true}

// Links are the page's http(s) links, without fragments, duplicates and
// links to assets, in document order.
func (p *Page) Links(ctx context.Context) []string {
	tctx, cancel, ok := p.Context(ctx)
	if !ok {
		return nil
	}
	defer cancel()
	hrefs, err := chromedp.Run(tctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("a[href], area[href]")).map(a => a.href)`))
	if err != nil {
		return nil
	}
	seen := map[string]bool{}
	var out []string
	for _, h := range hrefs {
		u, err := url.Parse(h)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			continue
		}
		u.Fragment = ""
		if staticExts[strings.ToLower(path.Ext(u.Path))] {
			continue
		}
		s := u.String()
		if !seen[s] && s != p.URL && s != p.FinalURL {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
