package main_test

import (
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
)

// `folio add` saves a page built the way the web builds it as one
// self-contained singlefile.html: an external SVG sprite's symbol copied
// in, an @import's layer kept, a windows-1252 style sheet in UTF-8, a
// table cell's background and the srcset image the browser chose inlined.
// (The plugins package's tests load such pages offline in Chromium.)
func TestAddSingleFileFidelity(t *testing.T) {
	files := map[string][2]string{
		"/page.html": {"text/html; charset=utf-8", `<!DOCTYPE html><html><head><link rel="stylesheet" href="main.css"></head><body>
<svg width="20" height="20"><use href="sprite.svg#star"/></svg><svg width="20" height="20"><use xlink:href="sprite.svg#star"/></svg>
<table><tr><td background="bg.png">cell</td></tr></table>
<img src="fallback.png" srcset="one.png 1x, two.png 2x"></body></html>`},
		"/main.css":   {"text/css", "@import url(base.css) layer(base);\n@import url(latin.css);\np { color: blue }"},
		"/base.css":   {"text/css", "p { color: red }"},
		"/latin.css":  {"text/css; charset=windows-1252", "p::after { content: \"caf\xe9\" }"},
		"/sprite.svg": {"image/svg+xml", `<svg xmlns="http://www.w3.org/2000/svg"><symbol id="star" viewBox="0 0 2 2"><rect width="2" height="2"/></symbol></svg>`},
		"/bg.png":     {"image/png", "\x89PNG bg"}, "/one.png": {"image/png", "\x89PNG one"},
		"/fallback.png": {"image/png", "\x89PNG fallback"}, "/two.png": {"image/png", "\x89PNG two"},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", f[0])
		w.Write([]byte(f[1]))
	}))
	defer srv.Close()
	dir := newCollection(t)
	if stdout, stderr, code := runFolio(t, "add", "-D", dir, "--plugins", "singlefile", srv.URL+"/page.html"); code != 0 {
		t.Fatalf("add exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	snaps := snapshots(t, dir)
	if len(snaps) != 1 || snaps[0].results["singlefile"].Status != "succeeded" {
		t.Fatalf("snapshots: %+v", snaps)
	}
	page := string(mustRead(t, filepath.Join(snaps[0].dir, "singlefile/singlefile.html")))
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	for _, want := range []string{
		`<use href="#star">`, `<use xlink:href="#star">`, `<symbol id="star"`, // the sprite's symbol, used by both forms
		"@layer base {\np { color: red }\n}", `content: "café"`,
		`background="data:image/png;base64,`, b64("\x89PNG one"),
	} {
		if !strings.Contains(page, want) {
			t.Errorf("singlefile.html lacks %q", want)
		}
	}
	if strings.Contains(page, srv.URL) || strings.Contains(page, b64("\x89PNG fallback")) {
		t.Errorf("singlefile.html refers to the server or holds the fallback image:\n%s", page)
	}
}
