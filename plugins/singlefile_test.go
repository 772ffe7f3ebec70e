package plugins

import (
	"bytes"
	"context"
	"encoding/base64"
	"html"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The singlefile inliner's tests: a capture (a Frame, written by hand with
// the markers Page.Capture writes, or read from a real page) is inlined
// against resources on a loopback server, and the result is loaded from
// file:// in the real Chromium with the server gone.

// site is a loopback server of fixed files that counts folio's requests
// for each path (not the browser's, which say what they fetch for).
type site struct {
	*httptest.Server
	mu   sync.Mutex
	hits map[string]int
}

type file struct {
	ct   string
	body string
}

func newSite(t *testing.T, files map[string]file) *site {
	t.Helper()
	s := &site{hits: map[string]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Sec-Fetch-Dest") == "" {
			s.mu.Lock()
			s.hits[r.URL.Path]++
			s.mu.Unlock()
		}
		f, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", f.ct)
		w.Write([]byte(f.body))
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *site) hit(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[path]
}

// pngOf is a w×h PNG of one colour.
func pngOf(w, h int, c color.Color) string {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.Set(x, y, c)
		}
	}
	var b bytes.Buffer
	png.Encode(&b, img)
	return b.String()
}

func pngFile(w, h int, c color.Color) file { return file{"image/png", pngOf(w, h, c)} }

var (
	red   = color.RGBA{255, 0, 0, 255}
	green = color.RGBA{0, 128, 0, 255}
	blue  = color.RGBA{0, 0, 255, 255}
)

// inlineFrame inlines a capture with a real HTTP client.
func inlineFrame(t *testing.T, f *Frame) string {
	t.Helper()
	cfg := testConfig(t)
	out, err := inline(context.Background(), &Job{Config: cfg, HTTP: NewHTTPClient(cfg)}, f)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "data-folio-") || strings.Contains(strings.ToLower(out), "<script") {
		t.Errorf("the inlined page keeps a marker or a script: %.2000s", out)
	}
	return out
}

// offline loads a saved page from file:// in Chromium and returns its
// tab's context.
func offline(t *testing.T, page string) context.Context {
	t.Helper()
	path := filepath.Join(t.TempDir(), "singlefile.html")
	if err := os.WriteFile(path, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	return open(t, "file://"+path)
}

func open(t *testing.T, url string) context.Context {
	t.Helper()
	p := browser(t).Load(context.Background(), url, testConfig(t))
	t.Cleanup(p.Close)
	if p.Err != nil {
		t.Fatal(p.Err)
	}
	ctx, cancel, _ := p.Context(context.Background())
	t.Cleanup(cancel)
	return ctx
}

// evalJS runs js in the tab (awaiting a promise, for 30 seconds at most)
// and returns its value.
func evalJS[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}

// A canvas the capture read the pixels of shows them offline, at the
// size and place the page's CSS gives it, with scripts on (file://) and
// off (a sandboxed frame, as folio's export viewer shows a capture).
func TestSingleFileFreezesCanvases(t *testing.T) {
	pixels := func(c color.Color) string {
		return "data:image/png;base64," + base64.StdEncoding.EncodeToString([]byte(pngOf(80, 40, c)))
	}
	out := inlineFrame(t, &Frame{URL: "http://127.0.0.1:1/", Charset: "UTF-8", HTML: `<!DOCTYPE html><html><head>
<style>body { margin: 0 } canvas { display: block; margin: 10px }</style></head><body>
<canvas id="c" class="k" width="80" height="40" style="border:0" data-folio-canvas="` + pixels(red) + `">fallback</canvas>
<canvas id="hidpi" width="80" height="40" style="width: 40px" data-folio-canvas="` + pixels(blue) + `"></canvas>
</body></html>`})
	sandboxed := `<!DOCTYPE html><html><body style="margin:0"><iframe sandbox="allow-same-origin" style="border:0;position:absolute;left:0;top:0;width:800px;height:600px" srcdoc="` +
		html.EscapeString(out) + `"></iframe></body></html>`
	for _, c := range []struct{ name, page, doc string }{
		{"scripts on", out, "document"}, {"scripts off", sandboxed, `document.querySelector("iframe").contentDocument`},
	} {
		ctx := offline(t, c.page)
		got := evalJS[string](t, ctx, `new Promise(done => setTimeout(() => done([...`+c.doc+`.querySelectorAll("#c, #hidpi")].map(e => {
			const r = e.getBoundingClientRect();
			return e.tagName + " " + e.className + " " + r.left + "," + r.top + " " + r.width + "x" + r.height;
		}).join(", ")), 100))`)
		if want := "CANVAS k 10,10 80x40, CANVAS  10,60 40x20"; got != want {
			t.Errorf("%s: canvases %q, want %q", c.name, got, want)
		}
		img := screenshot(t, ctx)
		for _, p := range []struct {
			x, y int
			want color.RGBA
		}{{50, 30, red}, {30, 70, blue}} {
			if r, g, b, _ := img.At(p.x, p.y).RGBA(); uint8(r>>8) != p.want.R || uint8(g>>8) != p.want.G || uint8(b>>8) != p.want.B {
				t.Errorf("%s: pixel %d,%d is rgb(%d, %d, %d), want %v", c.name, p.x, p.y, r>>8, g>>8, b>>8, p.want)
			}
		}
	}
}

// Declarative shadow roots keep their content, styles (adopted ones
// included), images and sprite symbols (in the shadow tree, where its ids
// are) offline, without their scripts.
func TestSingleFileKeepsShadowRoots(t *testing.T) {
	s := newSite(t, map[string]file{"/bg.png": pngFile(4, 4, green), "/in.png": pngFile(6, 3, blue),
		"/sprite.svg": {"image/svg+xml", `<svg xmlns="http://www.w3.org/2000/svg"><symbol id="s" viewBox="0 0 2 2"><rect width="2" height="2"/></symbol></svg>`}})
	out := inlineFrame(t, &Frame{URL: s.URL + "/page.html", Charset: "UTF-8", HTML: `<!DOCTYPE html><html><head></head><body>
<div id="host"><template shadowrootmode="open"><style>p { background: url(bg.png) }</style>
<style data-folio-adopted="">p { color: rgb(0, 128, 0) }</style>
<p>inside</p><img src="in.png"><script>document.title = "ran"</script>
<svg width="8" height="8"><use href="sprite.svg#s"/></svg><span id="nested"><template shadowrootmode="closed"><b>deep</b></template></span></template></div>
</body></html>`})
	s.Close()
	ctx := offline(t, out)
	got := evalJS[string](t, ctx, `(() => {
		const root = document.getElementById("host").shadowRoot;
		if (!root) return "no shadow root";
		const p = getComputedStyle(root.querySelector("p")), img = root.querySelector("img");
		return [p.color, p.backgroundImage.slice(0, 26), img.complete && img.naturalWidth,
			root.querySelectorAll("script").length, document.title, root.getElementById("nested").textContent,
			root.querySelector("use").getBBox().width].join(" | ");
	})()`)
	if want := `rgb(0, 128, 0) | url("data:image/png;base64 | 6 | 0 |  |  | 8`; got != want {
		t.Errorf("offline shadow root: %q, want %q", got, want)
	}
}

// A captured frame's document is embedded, inlined by the same rules
// against its own URL: an iframe's as srcdoc, a frameset's frame's as a
// data: URL. Each resource is fetched once for the whole page.
func TestSingleFileEmbedsFrames(t *testing.T) {
	s := newSite(t, map[string]file{
		"/sub/pic.png":   pngFile(30, 10, red),
		"/sub/style.css": {"text/css", "#pic { border: 2px solid rgb(0, 0, 255) }"},
	})
	inner := &Frame{URL: s.URL + "/sub/inner.html", Charset: "UTF-8", HTML: `<!DOCTYPE html><html><head>
<link rel="stylesheet" href="style.css"></head><body><img id="pic" src="pic.png"><script>document.title = "ran"</script>
<iframe id="deeper" data-folio-frame="0" src="deeper.html"></iframe><iframe id="lost" src="lost.html"></iframe></body></html>`,
		Frames: map[string]*Frame{"0": {URL: s.URL + "/sub/deeper.html", Charset: "UTF-8", HTML: `<html><body><img id="again" src="pic.png"></body></html>`}}}
	out := inlineFrame(t, &Frame{URL: s.URL + "/index.html", Charset: "UTF-8", HTML: `<!DOCTYPE html><html><head></head><body>
<iframe id="f" data-folio-frame="1" src="sub/inner.html" width="300" height="200"></iframe></body></html>`,
		Frames: map[string]*Frame{"1": inner}})
	s.Close()
	if n := s.hit("/sub/pic.png"); n != 1 {
		t.Errorf("pic.png fetched %d times, want once", n)
	}
	ctx := offline(t, out)
	got := evalJS[string](t, ctx, `new Promise(done => setTimeout(() => { try {
		const d = document.getElementById("f").contentDocument, pic = d.getElementById("pic");
		const deeper = d.getElementById("deeper").contentDocument.getElementById("again");
		done([pic.complete && pic.naturalWidth, getComputedStyle(pic).borderTopColor, deeper.naturalWidth,
			d.getElementById("lost").hasAttribute("src"), d.title].join(" | "));
	} catch (e) { done(String(e)) } }, 100))`)
	if want := "30 | rgb(0, 0, 255) | 30 | false | "; got != want {
		t.Errorf("offline frames: %q, want %q", got, want)
	}

	frameset := inlineFrame(t, &Frame{URL: "http://127.0.0.1:1/", Charset: "UTF-8",
		HTML:   `<html><head></head><frameset cols="50%,50%"><frame data-folio-frame="a" src="a.html"><frame src="b.html"></frameset></html>`,
		Frames: map[string]*Frame{"a": {URL: "http://127.0.0.1:1/a.html", Charset: "UTF-8", HTML: `<p>framed</p><script>x()</script>`}}})
	_, b64, ok := strings.Cut(frameset, `src="data:text/html;charset=utf-8;base64,`)
	if !ok {
		t.Fatalf("the frame has no data: URL: %s", frameset)
	}
	doc, _ := base64.StdEncoding.DecodeString(b64[:strings.IndexByte(b64, '"')])
	if !strings.Contains(string(doc), "<p>framed</p>") || strings.Contains(string(doc), "<script") || strings.Count(frameset, "src=") != 1 {
		t.Errorf("frameset: %s\nframe document: %s", frameset, doc)
	}
}

// Form state the capture read becomes the attributes that show it, and a
// style sheet a script changed is saved as the CSSOM held it.
func TestSingleFileKeepsFormState(t *testing.T) {
	out := inlineFrame(t, &Frame{URL: "http://127.0.0.1:1/", Charset: "UTF-8", HTML: `<!DOCTYPE html><html><head>
<style data-folio-cssom="#s { color: rgb(0, 128, 0) }">#s { color: red }</style></head><body>
<input id="t" value="typed in html" data-folio-value="typed later"><input id="pw" type="password" data-folio-value="secret">
<textarea id="a" data-folio-value="new &lt;text&gt;">old</textarea>
<input id="c" type="checkbox" data-folio-checked="true"><input id="r" type="radio" checked="" data-folio-checked="false">
<select id="sel"><option selected="" data-folio-chosen="false">one</option><option data-folio-chosen="true">two</option></select>
<p id="s">styled</p></body></html>`})
	ctx := offline(t, out)
	got := evalJS[string](t, ctx, `[t.value, a.value, c.checked, r.checked, sel.value, getComputedStyle(s).color, pw.value].join(" | ")`)
	if want := "typed later | new <text> | true | false | two | rgb(0, 128, 0) | "; got != want {
		t.Errorf("offline form state: %q, want %q", got, want)
	}
}
