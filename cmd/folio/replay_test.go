package main_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// replayEmbed is the page that embeds ReplayWeb.page's <replay-web-page>
// (its ui.js, and sw.js under replay/, as its embedding guide lays out).
const replayEmbed = `<!DOCTYPE html><html><head><meta charset="utf-8"><script src="ui.js"></script></head>
<body><replay-web-page source="archive.wacz" url="PAGE" replayBase="./replay/" embed="replayonly"></replay-web-page></body></html>`

// replayFrame is the app page ReplayWeb.page loads in its iframe.
const replayFrame = `<!DOCTYPE html><html><head><meta charset="utf-8"><script src="../ui.js"></script></head>
<body><replay-app-main></replay-app-main></body></html>`

// replayFinder returns a script that looks through every same-origin
// frame and shadow root of the page for a frame document d in which the
// JavaScript expression found (over d) is true, and then returns, as
// JSON, the value of the expression result (over d); null until found.
func replayFinder(found, result string) string {
	return `(() => {
  const walk = (root) => {
    for (const el of root.querySelectorAll("*")) {
      if (el.shadowRoot) { const r = walk(el.shadowRoot); if (r) return r; }
      if (el.tagName === "IFRAME") {
        let d = null;
        try { d = el.contentDocument; } catch (e) {}
        if (!d) continue;
        if (` + found + `) return JSON.stringify(` + result + `);
        const r = walk(d);
        if (r) return r;
      }
    }
    return null;
  };
  return walk(document);
})()`
}

// replayFound finds the archived page of the WACZ tests (its h1#m): its
// text once the h1 has the colour the archived stylesheet gives it and
// the archived image has decoded, and the frame's address.
var replayFound = replayFinder(
	`((h, img) => h && img && img.complete && img.naturalWidth > 0 && d.defaultView.getComputedStyle(h).color === "rgb(1, 2, 3)")(d.getElementById("m"), d.querySelector("img"))`,
	`{text: d.getElementById("m").innerText, href: d.location.href}`)

// TestWACZReplaysInReplayWebPage: the WACZ that export --wacz writes
// opens in ReplayWeb.page (npm replaywebpage, test-only) in headless
// Chromium, served from loopback, and shows the archived page's text
// with the site that served it stopped.
func TestWACZReplaysInReplayWebPage(t *testing.T) {
	tools := waczTools(t, "replaywebpage")
	dir, page, _, site := waczCollection(t)
	out := filepath.Join(t.TempDir(), "archive.wacz")
	if stdout, stderr, code := runFolio(t, "export", "-D", dir, "--wacz", out, page); code != 0 && code != 3 {
		t.Fatalf("export --wacz: exit %d\n%s%s", code, stdout, stderr)
	}
	site.Close()
	if resp, err := http.Get(page); err == nil {
		resp.Body.Close()
		t.Fatal("the fixture site still answers")
	}
	found := replay(t, tools, out, page, replayFound)
	var got struct{ Text, Href string }
	json.Unmarshal([]byte(found), &got)
	if got.Text != waczMarker || !strings.Contains(got.Href, "mp_/"+page) {
		t.Errorf("the replayed frame %s shows %q, want the archived %s", got.Href, got.Text, page)
	}
}

// replay serves ReplayWeb.page (from tools) and the WACZ on loopback,
// opens it at page in headless Chromium and polls found (a script that
// returns a string once the archived page shows what it looks for).
func replay(t *testing.T, tools, wacz, page, found string) string {
	t.Helper()
	rwp := filepath.Join(tools, "replaywebpage")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Write([]byte(strings.Replace(replayEmbed, "PAGE", page, 1)))
		case "/replay/", "/replay/index.html":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Write([]byte(replayFrame))
		case "/ui.js", "/replay/ui.js":
			http.ServeFile(w, r, filepath.Join(rwp, "ui.js"))
		case "/replay/sw.js", "/sw.js":
			http.ServeFile(w, r, filepath.Join(rwp, "sw.js"))
		case "/archive.wacz":
			http.ServeFile(w, r, wacz)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	ctx := exportBrowser(t)
	ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Navigate(srv.URL+"/")); err != nil {
		t.Fatal(err)
	}
	got, err := chromedp.Run(ctx, chromedp.Poll[string](found, chromedp.WithPollingInterval(300*time.Millisecond)))
	if err != nil {
		t.Fatalf("ReplayWeb.page did not show the archived %s as expected: %v", page, err)
	}
	return got
}

// replayScripted finds the replayed warc.html fixture with the fragment
// its script loaded by XHR (answered from the WARC: the site is gone) and
// its image decoded.
var replayScripted = replayFinder(
	`((p, img) => p && img && img.complete && img.naturalWidth > 0)(d.getElementById("loaded"), d.querySelector("img"))`,
	`{text: d.getElementById("loaded").innerText, href: d.location.href, title: d.title}`)

// TestAddThenWACZReplays is the whole loop through the real binary:
// folio add records the page's WARC in its Chromium tab, export --wacz
// packages it, and ReplayWeb.page replays it with the site stopped,
// scripts and all: the fragment the page loads by XHR after load comes
// from the archive.
func TestAddThenWACZReplays(t *testing.T) {
	tools := waczTools(t, "replaywebpage")
	srv := fixtureServer(t)
	dir := newCollection(t)
	page := srv.URL + "/warc.html"
	if stdout, stderr, code := runFolio(t, "add", "-D", dir, page); code != 0 {
		t.Fatalf("add exit %d\n%s%s", code, stdout, stderr)
	}
	out := filepath.Join(t.TempDir(), "archive.wacz")
	if stdout, stderr, code := runFolio(t, "export", "-D", dir, "--wacz", out); code != 0 {
		t.Fatalf("export --wacz: exit %d\n%s%s", code, stdout, stderr)
	}
	srv.Close()
	if resp, err := http.Get(page); err == nil {
		resp.Body.Close()
		t.Fatal("the fixture site still answers")
	}
	var got struct{ Text, Href, Title string }
	json.Unmarshal([]byte(replay(t, tools, out, page, replayScripted)), &got)
	if !strings.Contains(got.Text, "wick trimmed at dusk") || got.Title != "The Lamp Room" || !strings.Contains(got.Href, "mp_/"+page) {
		t.Errorf("the replayed frame %s (%q) shows %q, want warc.html with its XHR fragment", got.Href, got.Title, got.Text)
	}
}
