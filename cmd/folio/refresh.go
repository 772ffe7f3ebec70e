package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/export"
)

// siteRefresh is what add, update and remove do once they changed the
// catalog: a collection exported in place before has its export brought
// up to date, incrementally and with the options it was last written
// with (the export 'folio watch --export' runs after each change), and
// the run ends with the file:// URL of its root page. A collection never
// exported gets no site it did not ask for: add and update end with the
// file:// URL of each saved snapshot's own page instead (see
// snapshotPage) and say once how to get a site.
type siteRefresh struct {
	coll *archive.Collection
	p    *printer
	// out receives the URLs (stdout); nil prints them as messages, for a
	// command whose stdout holds other records (remove --jsonl).
	out io.Writer
}

// run refreshes the export after the command's work; saved are the
// snapshot folders it saved (nil for remove). The caller has released
// the collection's lock: the export takes it. A failure is a warning
// naming the command that finishes the job: what the command did is done.
func (r siteRefresh) run(ctx context.Context, saved []string) {
	last, err := export.LastInPlace(r.coll)
	if err != nil {
		r.p.Warnf("the site was not brought up to date: %v; 'folio export' does it", err)
		return
	}
	if last == nil {
		if len(saved) > 0 {
			r.p.Infof("no site yet: 'folio export' writes one (index.html) listing every snapshot, and add, update and remove keep it current")
		}
		for _, dir := range saved {
			r.url(snapshotPage(r.coll, dir))
		}
		return
	}
	if ctx.Err() != nil {
		r.p.Warnf("the site was not brought up to date (interrupted): 'folio export' does it")
		return
	}
	st, err := export.Run(ctx, last.Options(r.coll, version), r.p)
	if err != nil {
		r.p.Warnf("the site was not brought up to date: %v; 'folio export' does it", err)
		return
	}
	r.p.Infof("site: %s and %s written, %d unchanged", plural(st.Written, "snapshot page"), plural(st.RootWritten, "root page"), st.Kept+st.RootKept)
	r.url(st.URL)
}

func (r siteRefresh) url(u string) {
	if r.out == nil {
		r.p.Infof("%s", u)
		return
	}
	fmt.Fprintln(r.out, u)
}

// pageFiles are the outputs that show a snapshot on their own, opened
// from disk: singlefile's page (which runs no script and loads nothing),
// else the screenshot, else the PDF. Other archived HTML (dom, wget)
// could run its scripts with a file:// origin and is never named.
var pageFiles = []string{"singlefile/singlefile.html", "screenshot/screenshot.png", "pdf/output.pdf"}

// snapshotPage is the file:// URL of the page that shows the snapshot in
// dir (relative) best without an export: its first pageFiles output, else
// its folder.
func snapshotPage(c *archive.Collection, dir string) string {
	abs := c.Path(dir)
	for _, f := range pageFiles {
		p := filepath.Join(abs, filepath.FromSlash(f))
		if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() && fi.Size() > 0 {
			return "file://" + export.Quote(filepath.ToSlash(p))
		}
	}
	return "file://" + export.Quote(filepath.ToSlash(abs)) + "/"
}

// refresh brings the site up to date after a remove (or --unhide): its
// URL goes to stdout, unless --jsonl keeps stdout for the records.
func (f removeFlags) refresh(ctx context.Context, e *env, coll *archive.Collection) {
	p := e.printer()
	defer p.done()
	r := siteRefresh{coll: coll, p: p, out: e.stdout}
	if f.jsonl {
		r.out = nil
	}
	r.run(ctx, nil)
}
