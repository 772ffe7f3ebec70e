package plugins

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/folio-archive/folio/fixtures"
)

// A large body is recorded as it streams in, never read whole: what
// Chromium hands over at once (Network.getResponseBody) is the whole body
// in memory, which would make folio's memory grow with the page. A large
// body behind a redirect streams too, and the redirect is recorded.
func TestLargeBodyIsStreamedNotReadWhole(t *testing.T) {
	// An image the browser shows, followed by more than the recorder
	// would ever read whole (readWholeUpTo), which the browser reads and
	// ignores.
	img, err := fixtures.Read("image.png", "")
	if err != nil {
		t.Fatal(err)
	}
	big := make([]byte, len(img)+readWholeUpTo+1<<20+5)
	rng := rand.New(rand.NewPCG(3, 5))
	for i := range big {
		big[i] = byte(rng.Uint32())
	}
	copy(big, img)
	mux := http.NewServeMux()
	mux.HandleFunc("/page.html", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, `<!DOCTYPE html><html><head><title>Big</title></head><body><h1>Large bodies</h1>`+
			`<img src="/big.png"><img src="/moved.png"></body></html>`)
	})
	serveBig := func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Header().Set("Cache-Control", "no-store")
		w.Write(big)
	}
	mux.HandleFunc("/big.png", serveBig)
	mux.HandleFunc("/other.png", serveBig)
	mux.Handle("/moved.png", http.RedirectHandler("/other.png", http.StatusFound))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	b := browser(t)
	rec, err := NewRecorder(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	p := b.Load(withRecorder(context.Background(), rec), srv.URL+"/page.html",
		// Under -race on a loaded machine the bodies stream at about
		// 1 MB/s, one after the other: give the load room.
		testConfig(t, "CHROME_PAGELOAD_TIMEOUT", "300"))
	defer p.Close()
	if p.Err != nil {
		t.Fatal(p.Err)
	}
	rec.stop()

	rec.mu.Lock()
	defer rec.mu.Unlock()
	seen := map[string]bool{}
	for _, ex := range rec.exchanges {
		path := strings.TrimPrefix(ex.url, srv.URL)
		switch path {
		case "/big.png", "/other.png":
			seen[path] = true
			if ex.via != viaStream {
				t.Errorf("%s: its body was read %q, want %q", path, ex.via, viaStream)
			}
			r, err := ex.body.reader()
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(r)
			if !ex.done || ex.skip || !bytes.Equal(got, big) {
				t.Errorf("%s: recorded %d bytes (done %v, skipped %v), want the %d served", path, len(got), ex.done, ex.skip, len(big))
			}
		case "/moved.png":
			if ex.done && ex.settle != nil {
				ex.settle()
			}
			seen[path] = ex.done && !ex.skip && bytes.HasPrefix(ex.respHead(0), []byte("HTTP/1.1 302 "))
		}
	}
	for _, path := range []string{"/big.png", "/other.png", "/moved.png"} {
		if !seen[path] {
			t.Errorf("%s was not recorded", path)
		}
	}
}
