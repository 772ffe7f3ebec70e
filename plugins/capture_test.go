package plugins

import (
	"bytes"
	"context"
	"encoding/base64"
	"image/png"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// The tests here read fixture pages with Page.Capture, as the singlefile
// plugin does, and check what the markers and templates say.

// load loads a fixture page and returns it with its capture.
func load(t *testing.T, cfg Config, url string) (*Page, *Frame) {
	t.Helper()
	p := browser(t).Load(context.Background(), url, cfg)
	t.Cleanup(p.Close)
	if p.Err != nil {
		t.Fatalf("load %s: %v", url, p.Err)
	}
	f, err := p.Capture(context.Background())
	if err != nil {
		t.Fatalf("capture %s: %v", url, err)
	}
	return p, f
}

// attr returns the value of attribute name on the first element of html
// whose start tag contains sel.
func attr(t *testing.T, html, sel, name string) string {
	t.Helper()
	tag := regexp.MustCompile(`<[a-z]+[^>]*` + regexp.QuoteMeta(sel) + `[^>]*>`).FindString(html)
	if tag == "" {
		t.Fatalf("no element with %s in %.400s", sel, html)
	}
	m := regexp.MustCompile(` ` + regexp.QuoteMeta(name) + `="([^"]*)"`).FindStringSubmatch(tag)
	if m == nil {
		return ""
	}
	return m[1]
}

func TestCaptureShadowRoots(t *testing.T) {
	srv := serve(t)
	_, f := load(t, testConfig(t), srv.URL+"/fidelity/page-shadow.html")
	for _, want := range []string{
		`<div id="scripted"><template shadowrootmode="open"><p class="inside">Scripted shadow text</p><slot></slot><style data-folio-adopted="">.inside { color: rgb(200, 0, 0); border: 3px solid rgb(0, 0, 200); }</style></template></div>`,
		`<div id="declared"><template shadowrootmode="open"><style>p { color: rgb(0, 128, 0); }</style><p>Declared open shadow text</p></template></div>`,
		`<div id="closed"><template shadowrootmode="closed"><p>Declared closed shadow text</p></template></div>`,
		`<style data-folio-adopted="">body { background: rgb(250, 240, 200); }</style></body>`,
	} {
		if !strings.Contains(f.HTML, want) {
			t.Errorf("the capture lacks %s:\n%s", want, f.HTML)
		}
	}
}

func TestCaptureCanvas(t *testing.T) {
	srv := serve(t)
	_, f := load(t, testConfig(t), srv.URL+"/fidelity/page-canvas.html")
	for _, c := range []struct {
		id   string
		w, h int
	}{{`id="flat"`, 120, 80}, {`id="gl"`, 64, 48}} {
		data, ok := strings.CutPrefix(attr(t, f.HTML, c.id, MarkCanvas), "data:image/png;base64,")
		if !ok {
			t.Errorf("canvas %s: no PNG data URL", c.id)
			continue
		}
		raw, err := base64.StdEncoding.DecodeString(data)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(bytes.NewReader(raw))
		if err != nil {
			t.Fatalf("canvas %s: %v", c.id, err)
		}
		if b := img.Bounds(); b.Dx() != c.w || b.Dy() != c.h {
			t.Errorf("canvas %s: image %v, want %dx%d", c.id, b, c.w, c.h)
		}
		// The middle pixel is what the page drew: blue on the 2D canvas,
		// green on the WebGL one.
		r, g, b, a := img.At(c.w/2-10, c.h/2-10).RGBA()
		if a == 0 || (c.id == `id="flat"` && b>>8 < 150) || (c.id == `id="gl"` && g>>8 < 150) {
			t.Errorf("canvas %s: pixel (%d %d %d %d) is not what the page drew", c.id, r>>8, g>>8, b>>8, a>>8)
		}
	}
}

func TestCaptureResponsiveImages(t *testing.T) {
	srv := serve(t)
	_, f := load(t, testConfig(t), srv.URL+"/fidelity/page-srcset.html")
	for _, id := range []string{`id="chosen"`, `id="pictured"`} {
		if got := attr(t, f.HTML, id, MarkCurrent); got != srv.URL+"/image.png" {
			t.Errorf("img %s: %s %q, want the srcset's image", id, MarkCurrent, got)
		}
		if got := attr(t, f.HTML, id, MarkNatural); got != "64 64" {
			t.Errorf("img %s: %s %q, want 64 64", id, MarkNatural, got)
		}
	}
}

// Frames of the page's site and of another one are read alike: the page
// is served at localhost, its second frame from 127.0.0.1.
func TestCaptureFrames(t *testing.T) {
	srv := serve(t)
	local := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
	_, f := load(t, testConfig(t), local+"/fidelity/page-frames.html")
	if len(f.Frames) != 3 {
		t.Fatalf("%d frames, want 3: %v", len(f.Frames), f.Frames)
	}
	for _, c := range []struct{ id, url, text string }{
		{`id="same"`, local + "/fidelity/page-frame-child.html?same", "Framed page from " + strings.TrimPrefix(local, "http://") + " (same)"},
		{`id="cross"`, srv.URL + "/fidelity/page-frame-child.html?cross", "Framed page from " + strings.TrimPrefix(srv.URL, "http://") + " (cross)"},
		{`id="srcdoc"`, local + "/fidelity/page-frames.html", "<p>Text of the srcdoc frame</p>"},
	} {
		key := attr(t, f.HTML, c.id, MarkFrame)
		sub := f.Frames[key]
		if sub == nil {
			t.Errorf("frame %s: key %q names no frame", c.id, key)
			continue
		}
		if sub.URL != c.url || !strings.Contains(sub.HTML, c.text) || !strings.HasPrefix(sub.HTML, "<") {
			t.Errorf("frame %s: URL %q, HTML %.300s; want URL %q and %q", c.id, sub.URL, sub.HTML, c.url, c.text)
		}
	}
}

// Content that comes after the load event, and content that comes when
// it is scrolled to, is in the capture; the page is back at its top.
func TestCaptureWaitsForLateContent(t *testing.T) {
	srv := serve(t)
	p, f := load(t, testConfig(t), srv.URL+"/fidelity/page-late.html")
	for _, want := range []string{`<div id="late">Inserted 300 ms after load</div>`, `<div id="watched">Loaded when seen</div>`} {
		if !strings.Contains(f.HTML, want) {
			t.Errorf("the capture lacks %q", want)
		}
	}
	if got := attr(t, f.HTML, `id="lazy"`, MarkNatural); got != "64 64" {
		t.Errorf("the lazy image did not load: %s %q", MarkNatural, got)
	}
	ctx, cancel, _ := p.Context(context.Background())
	defer cancel()
	if y, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`scrollY`)); err != nil || y != 0 {
		t.Errorf("the page was left scrolled to %v (err %v)", y, err)
	}
}

// A page whose network never goes quiet is read when
// CHROME_SETTLE_TIMEOUT runs out, with what came after its load event.
func TestCaptureAPageThatNeverSettles(t *testing.T) {
	srv := serve(t)
	_, f := load(t, testConfig(t, "CHROME_SETTLE_TIMEOUT", "1"), srv.URL+"/fidelity/page-longpoll.html")
	if !strings.Contains(f.HTML, `<p id="said">Polling since the load event.</p>`) {
		t.Errorf("the capture lacks the text set after load: %.300s", f.HTML)
	}
}

// Form state and rules inserted into the CSSOM are marked; the live page
// is left as it was.
func TestCaptureStateAndLeaveThePage(t *testing.T) {
	srv := serve(t)
	p, _ := load(t, testConfig(t), srv.URL+"/fidelity/page-state.html")
	ctx, cancel, _ := p.Context(context.Background())
	defer cancel()
	live := `document.documentElement.outerHTML`
	before, err := chromedp.Run(ctx, chromedp.Evaluate[string](live))
	if err != nil {
		t.Fatal(err)
	}
	f, err := p.Capture(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	after, err := chromedp.Run(ctx, chromedp.Evaluate[string](live))
	if err != nil {
		t.Fatal(err)
	}
	if after != before || strings.Contains(after, "data-folio") {
		t.Errorf("capturing changed the live page:\n%s\n%s", before, after)
	}
	for _, c := range []struct{ sel, name, want string }{
		{`id="typed"`, MarkValue, "typed &lt;by&gt; &quot;script&quot;"},
		{`id="box"`, MarkChecked, "true"},
		{`id="area"`, MarkValue, "area &amp; script"},
		{`id="cssinjs"`, MarkCSSOM, ".styled { color: rgb(1, 2, 3); }"},
		{`id="plain"`, MarkCSSOM, ""},
	} {
		if got := attr(t, f.HTML, c.sel, c.name); got != c.want {
			t.Errorf("%s %s = %q, want %q", c.sel, c.name, got, c.want)
		}
	}
	if !strings.Contains(f.HTML, `<option `+MarkChosen+`="false">one</option><option `+MarkChosen+`="true">two</option>`) {
		t.Errorf("the options' choice is not marked: %s", f.HTML)
	}
}
