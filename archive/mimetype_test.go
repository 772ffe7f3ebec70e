package archive_test

import (
	"testing"

	"github.com/folio-archive/folio/archive"
)

// TestMimetype: the media types and extensions are what abx-dl's
// guess_mimetype and Path.suffix give under Python 3.12's built-in
// mimetypes table (MimeTypes(filenames=()), so no system mime.types; .js
// text/javascript as 3.12 has it), application/octet-stream where that
// gives none, as ArchiveBox then records.
func TestMimetype(t *testing.T) {
	for _, c := range []struct{ name, mimetype, ext string }{
		{"a.xml", "text/xml", "xml"},
		{"a.log", "application/octet-stream", "log"},
		{"a.tgz", "application/x-tar", "tgz"},
		{"a.wacz", "application/octet-stream", "wacz"},
		{"a.vtt", "text/vtt", "vtt"},
		{"a.srt", "text/plain", "srt"},
		{"a.m3u8", "application/vnd.apple.mpegurl", "m3u8"},
		{"a.epub", "application/octet-stream", "epub"},
		{"archive.warc.gz", "application/warc", "gz"},
		{"a.warc", "application/warc", "warc"},
		{"data.gz", "application/gzip", "gz"},
		{"x.unknown.gz", "application/gzip", "gz"},
		{"a.tar.gz", "application/x-tar", "gz"},
		{"a.svgz", "image/svg+xml", "svgz"},
		{"a.tar.bz2", "application/x-tar", "bz2"},
		{"a.bz2", "application/octet-stream", "bz2"},
		{"SCREENSHOT.PNG", "image/png", "png"},
		{"a/b/output.pdf", "application/pdf", "pdf"},
		{"blob", "application/octet-stream", ""},
		{"weird.xyz", "application/octet-stream", "xyz"},
		{"media.mp4", "video/mp4", "mp4"},
		{"a.js", "text/javascript", "js"},
		{"a.webp", "image/webp", "webp"},
		{"a.jpg", "image/jpeg", "jpg"},
		{"A.JPG", "image/jpeg", "jpg"},
		{"a.woff2", "application/octet-stream", "woff2"},
		{"a.md", "application/octet-stream", "md"},
		{"a.opus", "audio/opus", "opus"},
		{"a.ogg", "application/octet-stream", "ogg"},
		{"a.mkv", "application/octet-stream", "mkv"},
		{".gz", "application/octet-stream", ""},
		{"..a", "application/octet-stream", "a"},
		{"a.", "application/octet-stream", ""},
		{"dir.d/file", "application/octet-stream", ""},
		{"a.Z", "application/octet-stream", "z"},
		{"a.json", "application/json", "json"},
		{"singlefile.html", "text/html", "html"},
		{"a.mhtml", "message/rfc822", "mhtml"},
		{"a.TGZ", "application/x-tar", "tgz"},
		{"a.tar.Z", "application/x-tar", "z"},
		{"a.ico", "image/vnd.microsoft.icon", "ico"},
		{"a.wav", "audio/x-wav", "wav"},
		{"a.rtf", "application/rtf", "rtf"},
		{"a.html.gz", "text/html", "gz"},
	} {
		if got := archive.Mimetype(c.name); got != c.mimetype {
			t.Errorf("Mimetype(%q) = %q, want %q", c.name, got, c.mimetype)
		}
		if f := archive.NewOutputFile(c.name, 1); f.Extension != c.ext {
			t.Errorf("NewOutputFile(%q).Extension = %q, want %q", c.name, f.Extension, c.ext)
		}
	}
	for name, want := range map[string]string{"font.woff2": "font/woff2", "a.ogg": "audio/ogg", "a.png": "image/png", "a.xyz": "application/octet-stream"} {
		if got := archive.WebType(name); got != want {
			t.Errorf("WebType(%q) = %q, want %q", name, got, want)
		}
	}
	files := []archive.OutputFile{archive.NewOutputFile("a.png", 5), archive.NewOutputFile("b.html", 3), archive.NewOutputFile("c.png", 1), archive.NewOutputFile("d.css", 3)}
	if got := archive.MimetypesBySize(files); got != "image/png,text/css,text/html" {
		t.Errorf("MimetypesBySize = %q", got)
	}
}
