package export_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/export"
)

func get(t *testing.T, srv *httptest.Server, path string, hdr map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest("GET", srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	tr := &http.Transport{DisableCompression: true}
	resp, err := (&http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, body
}

// TestServeHandler serves an in-place export from a real HTTP server on
// loopback and checks what it serves and refuses.
func TestServeHandler(t *testing.T) {
	c, _ := generated(t, 5, 2)
	odd, _ := oddSnapshots(t, c)
	for _, p := range []string{"ArchiveBox.conf", "index.sqlite3", "sources/a.txt", "logs/x.log"} {
		os.MkdirAll(filepath.Dir(c.Path(p)), 0o755)
		os.WriteFile(c.Path(p), []byte("private"), 0o644)
	}
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("secret"), 0o644)
	os.Symlink(filepath.Join(outside, "secret.txt"), c.Path(odd+"/leak.txt"))
	run(t, export.Options{Collection: c, Gzip: true})
	h, err := export.NewHandler(c.Dir, false)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()

	resp, body := get(t, srv, "/", nil)
	if resp.StatusCode != 200 || !strings.Contains(string(body), "static-search") {
		t.Fatalf("/: %d", resp.StatusCode)
	}
	if resp.Header.Get("X-Content-Type-Options") != "nosniff" || resp.Header.Get("Content-Security-Policy") != export.CSP {
		t.Errorf("/ headers: %v", resp.Header)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
		t.Errorf("/ content type %q", ct)
	}

	// Precompressed sibling when the client accepts gzip.
	resp, body = get(t, srv, "/index.html", map[string]string{"Accept-Encoding": "br, gzip;q=0.8"})
	if resp.Header.Get("Content-Encoding") != "gzip" {
		t.Errorf("no gzip: %v", resp.Header)
	} else {
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		plain, _ := io.ReadAll(zr)
		disk, _ := os.ReadFile(c.Path("index.html"))
		if !bytes.Equal(plain, disk) {
			t.Errorf("gzip sibling differs from the page")
		}
	}
	if resp, _ := get(t, srv, "/index.html", map[string]string{"Accept-Encoding": "gzip;q=0"}); resp.Header.Get("Content-Encoding") != "" {
		t.Errorf("gzip served though refused")
	}

	// Byte ranges on an archived file, with the sandbox CSP.
	file := "/" + odd + "/ytdlp/clip.mp4"
	resp, body = get(t, srv, file, map[string]string{"Range": "bytes=4-8"})
	if resp.StatusCode != http.StatusPartialContent || string(body) != "data," {
		t.Errorf("range: %d %q", resp.StatusCode, body)
	}
	if cr := resp.Header.Get("Content-Range"); cr != "bytes 4-8/16" {
		t.Errorf("Content-Range %q", cr)
	}
	if resp.Header.Get("Content-Security-Policy") != "sandbox" || resp.Header.Get("Content-Type") != "video/mp4" {
		t.Errorf("archived headers: %v", resp.Header)
	}
	resp, _ = get(t, srv, "/"+odd+"/singlefile/singlefile.html", nil)
	if resp.Header.Get("Content-Security-Policy") != "sandbox" {
		t.Errorf("archived html CSP %q", resp.Header.Get("Content-Security-Policy"))
	}
	resp, _ = get(t, srv, "/"+odd+"/index.html", nil)
	if resp.Header.Get("Content-Security-Policy") != export.CSP {
		t.Errorf("detail page CSP %q", resp.Header.Get("Content-Security-Policy"))
	}
	resp, _ = get(t, srv, "/"+odd+"/wget/index%253A.html", nil)
	if resp.StatusCode != 200 {
		t.Errorf("quoted name: %d", resp.StatusCode)
	}
	resp, _ = get(t, srv, "/index.jsonl", nil)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		t.Errorf("manifest: %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	resp, _ = get(t, srv, "/"+odd, nil)
	if resp.StatusCode != http.StatusMovedPermanently {
		t.Errorf("folder without slash: %d", resp.StatusCode)
	}
	resp, body = get(t, srv, "/"+odd+"/", nil)
	if resp.StatusCode != 200 || !strings.Contains(string(body), "preview-frame") {
		t.Errorf("snapshot folder: %d", resp.StatusCode)
	}

	for _, p := range []string{
		"/.folio/catalog.sqlite3", "/.folio/lock", "/ArchiveBox.conf", "/index.sqlite3", "/sources/a.txt",
		"/logs/x.log", "/archive/", "/archive/users/", "/" + odd + "/wget/", "/" + odd + "/leak.txt",
		"/%2e%2e/etc/passwd", "/archive/../ArchiveBox.conf", "/site/search/",
	} {
		if resp, _ := get(t, srv, p, nil); resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", p, resp.StatusCode)
		}
	}
	req, _ := http.NewRequest("POST", srv.URL+"/", nil)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST: %v %v", resp, err)
	}

	// An --out export is served whole, still without dotfiles.
	out := filepath.Join(t.TempDir(), "public")
	run(t, export.Options{Collection: c, Out: out})
	h2, err := export.NewHandler(out, true)
	if err != nil {
		t.Fatal(err)
	}
	srv2 := httptest.NewServer(h2)
	defer srv2.Close()
	if resp, _ := get(t, srv2, "/_headers", nil); resp.StatusCode != 200 {
		t.Errorf("_headers: %d", resp.StatusCode)
	}
	if resp, _ := get(t, srv2, "/.nojekyll", nil); resp.StatusCode != 404 {
		t.Errorf(".nojekyll: %d", resp.StatusCode)
	}
	resp, _ = get(t, srv2, "/"+odd+"/singlefile/singlefile.html", nil)
	if resp.Header.Get("Content-Security-Policy") != "sandbox allow-scripts" {
		t.Errorf("allow-scripts CSP %q", resp.Header.Get("Content-Security-Policy"))
	}
	_ = archive.IndexFile
}
