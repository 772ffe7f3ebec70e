package plugins

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// savedPage captures url with the singlefile plugin and returns the page
// it wrote.
func savedPage(t *testing.T, url string) string {
	t.Helper()
	dir, got := capture(t, browser(t), testConfig(t), url, "singlefile")
	if got["singlefile"].Status != Succeeded {
		t.Fatalf("singlefile: %+v", got["singlefile"])
	}
	return string(read(t, dir, "singlefile/singlefile.html"))
}

// sameOffline checks that js reports want on the live page at path, and
// the same on its capture offline, the server closed.
func sameOffline(t *testing.T, s *site, path, js, want string) {
	t.Helper()
	if live := evalJS[string](t, open(t, s.URL+path), js); live != want {
		t.Fatalf("live: %s\nwant  %s", live, want)
	}
	page := savedPage(t, s.URL+path)
	s.Close()
	if got := evalJS[string](t, offline(t, page), js); got != want {
		t.Errorf("offline: %s\nlive     %s", got, want)
	}
}

// screenshot is the tab's viewport as an image.
func screenshot(t *testing.T, ctx context.Context) image.Image {
	t.Helper()
	shot, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// imageSizes reports each img's id, natural width and rendered size.
const imageSizes = `[...document.images].map(i => { const r = i.getBoundingClientRect();
	return i.id + " " + (i.complete && i.naturalWidth) + " " + r.width + "x" + r.height; }).join(", ")`

// A real srcset page: offline, each image is the one the browser chose
// live, at the size it rendered at (a 2x image at half its pixels).
func TestSingleFileKeepsTheChosenImage(t *testing.T) {
	s := newSite(t, map[string]file{
		"/srcset.html": {"text/html", `<!DOCTYPE html><html><body style="margin:0">
<img id="x" src="fallback.png" srcset="one.png 1x, two.png 2x">
<img id="w" srcset="w200.png 200w, w800.png 800w" sizes="(min-width: 5000px) 50vw, 100px">
<picture><source srcset="p1.png 1x, p2.png 2x" media="(min-width: 10px)"><img id="p" src="fallback.png"></picture>
<img id="d" srcset="two.png 2x"></body></html>`},
		"/fallback.png": pngFile(10, 10, red), "/one.png": pngFile(40, 20, green), "/two.png": pngFile(80, 40, blue),
		"/w200.png": pngFile(200, 100, green), "/w800.png": pngFile(800, 400, blue),
		"/p1.png": pngFile(20, 20, green), "/p2.png": pngFile(40, 40, blue),
	})
	sameOffline(t, s, "/srcset.html", imageSizes, "x 40 40x20, w 100 100x50, p 20 20x20, d 40 40x20")
}

// An img the capture read the currentSrc of shows that image offline at
// its density-corrected size; a <picture>'s sources go.
func TestSingleFileShowsCurrentSrc(t *testing.T) {
	s := newSite(t, map[string]file{"/small.png": pngFile(40, 20, red), "/big.png": pngFile(80, 40, blue)})
	out := inlineFrame(t, &Frame{URL: s.URL + "/", Charset: "UTF-8", HTML: `<!DOCTYPE html><html><head></head><body>
<img id="a" src="small.png" srcset="small.png 1x, big.png 2x" data-folio-current="` + s.URL + `/big.png" data-folio-natural="40 20">
<picture><source srcset="small.png" media="(max-width: 1px)"><img id="b" src="small.png" data-folio-current="` + s.URL + `/big.png" data-folio-natural="20 10"></picture>
</body></html>`})
	s.Close()
	if strings.Contains(out, "<source") || s.hit("/small.png") != 0 {
		t.Errorf("a source is kept or the fallback fetched (%d times): %.500s", s.hit("/small.png"), out)
	}
	if got, want := evalJS[string](t, offline(t, out), imageSizes), "a 40 40x20, b 20 20x10"; got != want {
		t.Errorf("offline: %q, want %q", got, want)
	}
}

// The symbols of an external sprite are drawn offline, through href and
// xlink:href, with the gradient and nested use they refer to, and with
// ids renamed where the page has them already.
func TestSingleFileInlinesSprites(t *testing.T) {
	s := newSite(t, map[string]file{
		"/sprite.html": {"text/html", `<!DOCTYPE html><html><body style="margin:0"><p id="g">gradient clash</p><p id="star">star clash</p>
<svg id="one" width="40" height="40" style="position:absolute;left:0;top:0"><use href="icons/sprite.svg#star"/></svg>
<svg id="two" width="40" height="40" style="position:absolute;left:50px;top:0"><use xlink:href="icons/sprite.svg#dot"/></svg>
<svg id="three" width="10" height="10" style="position:absolute;left:100px;top:0"><defs><rect id="own" width="10" height="10"/></defs><use href="sprite.html#own"/></svg>
</body></html>`},
		"/icons/sprite.svg": {"image/svg+xml", `<?xml version="1.0"?>
<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">
<defs><linearGradient id="g"><stop offset="0" stop-color="rgb(255,0,0)"/><stop offset="1" stop-color="rgb(0,0,255)"/></linearGradient>
<circle id="inner" cx="5" cy="5" r="5" fill="rgb(0,128,0)"/></defs>
<symbol id="star" viewBox="0 0 10 10"><rect width="10" height="10" fill="url(#g)"/></symbol>
<symbol id="dot" viewBox="0 0 10 10"><use xlink:href="#inner"/><script>alert(1)</script></symbol>
<symbol id="unused" viewBox="0 0 10 10"><rect width="1" height="1"/></symbol></svg>`},
	})
	page := savedPage(t, s.URL+"/sprite.html")
	s.Close()
	if n := s.hit("/icons/sprite.svg"); n != 1 || strings.Contains(page, "unused") || !strings.Contains(page, `<use href="#own">`) {
		t.Errorf("sprite fetched %d times, a symbol not used copied, or a use of the page itself not pointed at its element", n)
	}
	ctx := offline(t, page)
	boxes := evalJS[string](t, ctx, `[...document.querySelectorAll("#one use, #two use, #three use")].map(u => u.getBBox().width).join(" ")`)
	if boxes != "40 40 10" {
		t.Errorf("offline use boxes: %q, want 40 40 10", boxes)
	}
	img := screenshot(t, ctx)
	r, g, b, _ := img.At(20, 20).RGBA()
	if r>>8 < 60 || b>>8 < 60 || g>>8 > 40 {
		t.Errorf("the star's gradient is not drawn: rgb(%d, %d, %d) at its centre", r>>8, g>>8, b>>8)
	}
	if r, g, b, _ := img.At(70, 20).RGBA(); r>>8 > 40 || g>>8 < 100 || b>>8 > 40 {
		t.Errorf("the dot's nested use is not drawn: rgb(%d, %d, %d) at its centre", r>>8, g>>8, b>>8)
	}
}

// Presentational and other URL-bearing attributes a browser renders are
// data: URLs: nothing of the page refers to its server any more.
func TestSingleFileInlinesLegacyAttributes(t *testing.T) {
	s := newSite(t, map[string]file{
		"/legacy.html": {"text/html", `<!DOCTYPE html><html><body background="img/bg.png">
<table id="t" background="img/bg.png"><thead background="img/bg.png"><tr><th background="img/bg.png">h</th></tr></thead>
<tbody><tr id="tr" background="img/bg.png"><td id="td" background="img/bg.png">cell</td></tr></tbody></table>
<input id="in" type="image" src="img/pic.png" alt="go">
<object id="ob" data="img/pic.png" type="image/png"></object><embed id="em" src="img/pic.png" type="image/png">
<object id="doc" data="doc.pdf" type="application/pdf"></object>
<svg width="20" height="20"><image id="i1" href="img/pic.png" width="20" height="20"/><image id="i2" xlink:href="img/pic.png" width="20" height="20"/></svg>
<video id="v" poster="img/pic.png"></video></body></html>`},
		"/img/bg.png": pngFile(2, 2, green), "/img/pic.png": pngFile(12, 6, blue), "/doc.pdf": {"application/pdf", "%PDF-1.4"},
	})
	page := savedPage(t, s.URL+"/legacy.html")
	s.Close()
	if strings.Contains(page, s.URL) || strings.Contains(page, "img/") {
		t.Errorf("the page still refers to its server: %.3000s", page)
	}
	ctx := offline(t, page)
	got := evalJS[string](t, ctx, `(() => {
		const bg = e => getComputedStyle(e).backgroundImage.slice(0, 26);
		const xl = "http://www.w3.org/1999/xlink";
		return [bg(document.body), bg(t), bg(document.querySelector("thead")), bg(document.querySelector("th")), bg(tr), bg(td),
			document.getElementById("in").getBoundingClientRect().width, ob.getBoundingClientRect().width, em.getBoundingClientRect().width,
			document.getElementById("doc").hasAttribute("data"),
			i1.getAttribute("href").slice(0, 14), i2.getAttributeNS(xl, "href").slice(0, 14), v.poster.slice(0, 14)].join(" | ");
	})()`)
	const d = `url("data:image/png;base64`
	if want := strings.Repeat(d+" | ", 6) + "12 | 12 | 12 | false | data:image/png | data:image/png | data:image/png"; got != want {
		t.Errorf("offline attributes:\n%s\nwant\n%s", got, want)
	}
}
