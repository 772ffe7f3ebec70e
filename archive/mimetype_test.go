package archive_test

import (
	"testing"

	"github.com/folio-archive/folio/archive"
)

func TestMimetype(t *testing.T) {
	for name, want := range map[string]string{
		"singlefile.html": "text/html", "SCREENSHOT.PNG": "image/png", "a/b/output.pdf": "application/pdf",
		"archive.warc.gz": "application/warc", "data.gz": "application/gzip", "x.unknown.gz": "application/gzip",
		"blob": "application/octet-stream", "weird.xyz": "application/octet-stream", "media.mp4": "video/mp4",
	} {
		if got := archive.Mimetype(name); got != want {
			t.Errorf("Mimetype(%q) = %q, want %q", name, got, want)
		}
	}
	files := []archive.OutputFile{archive.NewOutputFile("a.png", 5), archive.NewOutputFile("b.html", 3), archive.NewOutputFile("c.png", 1), archive.NewOutputFile("d.css", 3)}
	if got := archive.MimetypesBySize(files); got != "image/png,text/css,text/html" {
		t.Errorf("MimetypesBySize = %q", got)
	}
}
