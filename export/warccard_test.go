package export_test

import (
	"strings"
	"testing"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/export"
)

// TestWARCResultIsADownloadNotAPreview: the warc plugin's result names its
// WARC; the page offers it under Downloads (size, records, download link)
// and neither frames it as the preview nor gives it a second card, while
// the snapshot's other outputs keep theirs.
func TestWARCResultIsADownloadNotAPreview(t *testing.T) {
	c := newCollection(t)
	dir := handMade{snap: archive.Snapshot{URL: "https://a.example/", Title: "a"},
		results: []archive.Result{ok("warc", "warc/1.warc.gz"), ok("screenshot", "screenshot/screenshot.png")},
		files:   map[string]string{"warc/1.warc.gz": "not really a WARC", "screenshot/screenshot.png": "\x89PNG"}}.write(t, c)
	run(t, export.Options{Collection: c})
	p := page(t, c, dir)
	if strings.Contains(p, `src="./warc/1.warc.gz"`) || strings.Contains(p, "card-warc") || strings.Contains(p, "view.html#"+dir+":warc/") {
		t.Errorf("the WARC is framed, carded or opened in the viewer:\n%s", p)
	}
	if !strings.Contains(p, `<a href="./warc/1.warc.gz" download>`) || !strings.Contains(p, "unreadable") {
		t.Errorf("the WARC is not under Downloads with what its reading found:\n%s", p)
	}
	if !strings.Contains(p, "card-screenshot") || !strings.Contains(p, `class="preview-image"`) {
		t.Errorf("the screenshot lost its card or its preview:\n%s", p)
	}
}
