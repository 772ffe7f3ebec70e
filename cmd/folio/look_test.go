package main_test

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/gen"
)

// lookOut is where TestExportLooksRight leaves its screenshots for a
// reviewer, emptied first: $FOLIO_TEST_OUT/look, or test-output/look at
// the top of the project (ignored by git).
func lookOut(t *testing.T) string {
	t.Helper()
	dir := testOut(t, "look")
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// lookCollection generates a collection whose newest snapshot has a very
// long title and URL, and returns the data directory and the snapshot
// folder with the most output files (for the detail page).
func lookCollection(t *testing.T) (string, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "data")
	m, err := gen.Current(dir, gen.Options{N: 60, Seed: 7, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	list := append([]gen.Entry(nil), m.Snapshots...)
	sort.Slice(list, func(a, b int) bool { return list[a].BookmarkedAt.After(list[b].BookmarkedAt) })
	newest := filepath.Join(dir, filepath.FromSlash(list[0].Dir))
	ix, _, err := archive.ReadIndex(newest)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := ix.Snapshot()
	s.Title = "An uncommonly long title about " + strings.Repeat("fog signals and lighthouses ", 8) +
		"Pneumonoultramicroscopicsilicovolcanoconiosis" + strings.Repeat("X", 60)
	s.URL = "https://example.com/" + strings.Repeat("a-very-long-path-segment-without-breaks", 6) + "?q=" + strings.Repeat("z", 80)
	ix.SetSnapshot(s)
	if err := archive.WriteIndex(newest, ix); err != nil {
		t.Fatal(err)
	}
	richest := list[0]
	for _, e := range list {
		if e.Status == "sealed" && e.Files > richest.Files {
			richest = e
		}
	}
	return dir, richest.Dir
}

// TestExportLooksRight screenshots the root page, a later page and a
// detail page at a desktop and a phone width (and the root page in the
// dark scheme) and checks from the DOM that nothing is wider than the
// viewport, and from the pixels that every icon draws a shape of its own:
// not blank, not a filled box, not the same box for every plugin (what a
// missing font's replacement glyph looks like).
func TestExportLooksRight(t *testing.T) {
	ctx := exportBrowser(t)
	out := lookOut(t)
	dir, detail := lookCollection(t)
	if _, stderr, code := runFolio(t, "-D", dir, "export", "--page-size", "20"); code != 0 {
		t.Fatalf("export: %s", stderr)
	}
	pages := []struct{ name, rel string }{
		{"root", "index.html"},
		{"page-2", "site/page-2.html"},
		{"detail", detail + "/index.html"},
	}
	type view struct {
		width int64
		dark  bool
	}
	views := []view{{1280, false}, {375, false}, {1280, true}}
	for _, p := range pages {
		for _, v := range views {
			if v.dark && p.name != "root" {
				continue
			}
			name := fmt.Sprintf("%s-%d", p.name, v.width)
			if v.dark {
				name += "-dark"
			}
			t.Run(name, func(t *testing.T) {
				lookAt(t, ctx, "file://"+filepath.Join(dir, filepath.FromSlash(p.rel)), v.width, v.dark, filepath.Join(out, name+".png"))
			})
		}
	}
	t.Logf("screenshots in %s", out)
}

// iconBox is an icon element's place on the page, in CSS pixels of the
// whole document.
type iconBox struct {
	Class      string
	X, Y, W, H float64
}

// lookAt opens url at width (in the dark scheme when dark), writes a full
// page screenshot to shot and checks overflow and icons.
func lookAt(t *testing.T, ctx context.Context, url string, width int64, dark bool, shot string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	scheme := "light"
	if dark {
		scheme = "dark"
	}
	if _, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
		Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}},
	}); err != nil {
		t.Fatalf("emulate %s scheme: %v", scheme, err)
	}
	// Let lazy images and the preview frame settle before measuring.
	siteOpen(t, ctx, url, width)
	// Nothing may reach past the viewport, except inside a box that clips
	// its content (a thumbnail's scaled-down frame).
	overflow, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`(function(){
  var out = [], w = window.innerWidth;
  if (document.documentElement.scrollWidth > w) out.push("document scrollWidth " + document.documentElement.scrollWidth + " > " + w);
  var clipped = function(e){ for (var a = e.parentElement; a; a = a.parentElement) { var o = getComputedStyle(a).overflowX; if (o !== "visible") return true; } return false; };
  document.querySelectorAll("body *").forEach(function(e){
    var r = e.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) return;
    if ((r.right > w + 0.5 || r.left < -0.5) && !clipped(e)) out.push(e.tagName.toLowerCase() + "." + e.className + " spans " + Math.round(r.left) + ".." + Math.round(r.right));
  });
  return out.slice(0, 10);
})()`))
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range overflow {
		t.Errorf("wider than the %d px viewport: %s", width, o)
	}

	// A card's thumbnail frame is tall enough to show a page, and no link
	// was blanked by the template escaper.
	bad, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll(".card-thumb")).filter(function(e){ return e.getBoundingClientRect().height < 120; }).map(function(e){ return "thumbnail " + Math.round(e.getBoundingClientRect().height) + " px tall"; }).concat(Array.from(document.querySelectorAll("a[href*=ZgotmplZ], img[src*=ZgotmplZ], iframe[src*=ZgotmplZ]")).map(function(e){ return "escaped link in " + e.outerHTML.slice(0, 80); }))`))
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bad {
		t.Error(b)
	}

	// The screenshot is taken with the viewport as tall as the page: a
	// full-page capture beyond the viewport leaves sandboxed frames (the
	// card thumbnails) unpainted, and lazy frames load only once in view.
	height, err := chromedp.Run(ctx, chromedp.Evaluate[int64](`document.documentElement.scrollHeight`))
	if err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(width, height)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)

	icons, err := chromedp.Run(ctx, chromedp.Evaluate[[]iconBox](`Array.from(document.querySelectorAll(".ic")).map(function(e){
  var r = e.getBoundingClientRect();
  return {Class: Array.from(e.classList).filter(function(c){ return c.indexOf("ic-") === 0; }).join(" "),
    X: r.left + window.scrollX, Y: r.top + window.scrollY, W: r.width, H: r.height};
}).filter(function(b){ return b.W > 0 && b.H > 0; })`))
	if err != nil {
		t.Fatal(err)
	}
	if len(icons) == 0 {
		t.Fatal("no icons on the page")
	}
	png100, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(shot, png100, 0o644); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(png100))
	if err != nil {
		t.Fatal(err)
	}
	shapes := map[string]string{} // icon class → its ink mask
	for _, ic := range icons {
		mask, ink := inkOf(img, ic)
		if ink < 0.05 || ink > 0.75 {
			t.Errorf("icon %s at %.0f,%.0f: %.0f%% of its box is drawn (blank or a filled box)", ic.Class, ic.X, ic.Y, 100*ink)
			continue
		}
		if _, seen := shapes[ic.Class]; !seen {
			shapes[ic.Class] = mask
		}
	}
	byMask := map[string][]string{}
	for class, mask := range shapes {
		byMask[mask] = append(byMask[mask], class)
	}
	for _, classes := range byMask {
		if len(classes) > 1 {
			sort.Strings(classes)
			t.Errorf("icons %s draw the same pixels (a replacement glyph?)", strings.Join(classes, ", "))
		}
	}
	if dark {
		bg, err := chromedp.Run(ctx, chromedp.Evaluate[string](`getComputedStyle(document.documentElement).backgroundColor`))
		if err != nil {
			t.Fatal(err)
		}
		if bg != "rgb(18, 22, 27)" {
			t.Errorf("dark scheme: the page background is %s", bg)
		}
	}
}

// inkOf returns which pixels of box b are drawn (a string of 0 and 1,
// row by row) and what fraction they are. The background is the colour
// found most often just outside the box.
func inkOf(img image.Image, b iconBox) (string, float64) {
	x0, y0 := int(b.X+0.5), int(b.Y+0.5)
	x1, y1 := int(b.X+b.W+0.5), int(b.Y+b.H+0.5)
	rgb := func(x, y int) [3]int {
		r, g, bl, _ := img.At(x, y).RGBA()
		return [3]int{int(r >> 8), int(g >> 8), int(bl >> 8)}
	}
	count := map[[3]int]int{}
	for x := x0 - 2; x <= x1+1; x++ {
		count[rgb(x, y0-2)]++
		count[rgb(x, y1+1)]++
	}
	for y := y0 - 2; y <= y1+1; y++ {
		count[rgb(x0-2, y)]++
		count[rgb(x1+1, y)]++
	}
	var bg [3]int
	for c, n := range count {
		if n > count[bg] {
			bg = c
		}
	}
	var mask strings.Builder
	drawn, all := 0, 0
	for y := y0; y < y1; y++ {
		for x := x0; x < x1; x++ {
			c := rgb(x, y)
			d := abs(c[0]-bg[0]) + abs(c[1]-bg[1]) + abs(c[2]-bg[2])
			all++
			if d > 90 {
				drawn++
				mask.WriteByte('1')
			} else {
				mask.WriteByte('0')
			}
		}
		mask.WriteByte('\n')
	}
	if all == 0 {
		return "", 0
	}
	return mask.String(), float64(drawn) / float64(all)
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
