package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/folio-archive/folio/gen"
)

// siteCollection is a generated collection exported in pages of 20 with
// two snapshots made to be hard: one whose only output is a PDF, and one
// among the newest whose screenshot and favicon are not images a browser
// can decode (random bytes, as a failed capture leaves them).
type siteCollection struct {
	dir           string
	pdf, broken   string // snapshot folders, relative to dir
	words         string // two words of a title on the last page, in the reverse order
	entries       []gen.Entry
	newestToOldst []gen.Entry
}

func newSiteCollection(t *testing.T) *siteCollection {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "data")
	m, err := gen.Current(dir, gen.Options{N: 50, Seed: 7, NoSync: true, Plain: true})
	if err != nil {
		t.Fatal(err)
	}
	c := &siteCollection{dir: dir, entries: m.Snapshots}
	c.newestToOldst = append([]gen.Entry(nil), m.Snapshots...)
	sort.Slice(c.newestToOldst, func(a, b int) bool {
		return c.newestToOldst[a].BookmarkedAt.After(c.newestToOldst[b].BookmarkedAt)
	})
	has := func(e gen.Entry, rel string) bool {
		_, err := os.Stat(filepath.Join(dir, filepath.FromSlash(e.Dir), filepath.FromSlash(rel)))
		return err == nil
	}
	for i, e := range c.newestToOldst {
		switch {
		case e.Status != "sealed":
		case c.broken == "" && i < 20 && has(e, "screenshot/screenshot.png") && has(e, "favicon/favicon.ico"):
			c.broken = e.Dir
		case c.pdf == "" && i >= 20 && has(e, "pdf/output.pdf"):
			c.pdf = e.Dir
		}
	}
	if c.broken == "" || c.pdf == "" {
		t.Fatalf("no snapshot to break (%q) or to keep as a PDF (%q)", c.broken, c.pdf)
	}
	noise := []byte("\x13\x9c\xffnot an image at all\x00\x01\x02")
	for _, rel := range []string{"screenshot/screenshot.png", "favicon/favicon.ico"} {
		if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(c.broken), filepath.FromSlash(rel)), noise, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The broken screenshot is the detail page's preview too.
	for _, d := range []string{"singlefile"} {
		os.RemoveAll(filepath.Join(dir, filepath.FromSlash(c.broken), d))
	}
	// The PDF is all the other snapshot has to show.
	for _, d := range []string{"singlefile", "screenshot", "wget", "dom", "readability", "htmltotext", "favicon"} {
		os.RemoveAll(filepath.Join(dir, filepath.FromSlash(c.pdf), d))
	}
	last := c.newestToOldst[len(c.newestToOldst)-1]
	w := strings.Fields(last.Title)
	if len(w) < 3 {
		t.Fatalf("title %q: too few words", last.Title)
	}
	c.words = w[2] + " " + w[0]
	if _, stderr, code := runFolio(t, "-D", dir, "export", "--page-size", "20"); code != 0 {
		t.Fatalf("export: %s", stderr)
	}
	return c
}

func (c *siteCollection) fileURL(rel string) string {
	return "file://" + filepath.Join(c.dir, filepath.FromSlash(rel))
}

// siteOut is where the site tests leave screenshots for a reviewer.
func siteOut(t *testing.T) string { return testOut(t, "site") }

// testOut is the folder name of the test output folder, made when
// missing: $FOLIO_TEST_OUT/name, or test-output/name at the top of the
// project (ignored by git).
func testOut(t *testing.T, name string) string {
	t.Helper()
	base := os.Getenv("FOLIO_TEST_OUT")
	if base == "" {
		base = filepath.Join("..", "..", "test-output")
	}
	dir, err := filepath.Abs(filepath.Join(base, name))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// siteOpen shows url at width and waits for the page (and its images) to load.
func siteOpen(t *testing.T, ctx context.Context, url string, width int64) {
	t.Helper()
	if err := chromedp.Do(ctx,
		chromedp.EmulateViewport(width, 900),
		chromedp.Navigate(url),
		chromedp.WaitReady(chromedp.CSS("footer")),
	); err != nil {
		t.Fatalf("open %s: %v", url, err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.readyState === "complete"`)); err != nil {
		t.Fatal(err)
	}
}

func siteEval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	return v
}

// siteShot writes a screenshot of the whole page as name.png.
func siteShot(t *testing.T, ctx context.Context, width int64, name string) {
	t.Helper()
	height := siteEval[int64](t, ctx, `document.documentElement.scrollHeight`)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(width, height)); err != nil {
		t.Fatal(err)
	}
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(siteOut(t), name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(width, 900)); err != nil {
		t.Fatal(err)
	}
}

// shownRows are the ids of the snapshots the root page's rows show, as
// the filter left them: the rows that are displayed.
const shownRows = `Array.from(document.querySelectorAll("#table-bookmarks tr.snapshot-row")).filter(function(tr){ return tr.getClientRects().length > 0; }).map(function(tr){ var h = tr.querySelector("a.snapshot-title").getAttribute("href"); return h.split("/").slice(-2)[0]; })`

// TestSiteFilterOnPhoneAndDesktop types words into the root page's filter
// box at a phone's and a desktop's width, in the reverse order of a title
// on the last page, and expects the rows shown to be the matches only,
// with their preview, favicon, icons and links, the words in the
// address; a URL with #q= filters when opened; every snapshot 'folio
// search' finds for the words is among the box's (captured text ticked).
func TestSiteFilterOnPhoneAndDesktop(t *testing.T) {
	ctx := exportBrowser(t)
	c := newSiteCollection(t)
	out, stderr, code := runFolio(t, "-D", c.dir, "search", "--jsonl", c.words)
	if code != 0 {
		t.Fatalf("folio search %s: exit %d: %s", c.words, code, stderr)
	}
	var want []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var r struct{ ID string }
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("folio search: %q: %v", line, err)
		}
		want = append(want, r.ID)
	}
	if len(want) == 0 {
		t.Fatalf("folio search %q found nothing", c.words)
	}
	for _, width := range []int64{375, 1280} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			siteOpen(t, ctx, c.fileURL("index.html"), width)
			all := siteEval[[]string](t, ctx, shownRows)
			if len(all) != 10 { // 50 snapshots in pages of 20: the first lists 10
				t.Fatalf("%d rows shown before filtering, want 10", len(all))
			}
			if err := chromedp.Do(ctx, chromedp.SendKeys("#static-search", c.words)); err != nil {
				t.Fatal(err)
			}
			if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`!document.getElementById("search-rows").hidden && document.getElementById("search-rows").rows.length > 0`)); err != nil {
				t.Fatalf("the filter never ran: %v", err)
			}
			got := siteEval[[]string](t, ctx, shownRows)
			if len(got) == 0 || len(got) >= 20 {
				t.Fatalf("typing %q at %d px: %d rows shown (%v): the filter hid no row or every row", c.words, width, len(got), got)
			}
			checkFilteredRows(t, ctx, c.words)
			hash := siteEval[string](t, ctx, `location.hash`)
			if want := "#q=" + url.QueryEscape(c.words); strings.ReplaceAll(hash, "%20", "+") != want {
				t.Errorf("address fragment %q, want %q", hash, want)
			}
			if width == 375 {
				if err := chromedp.Do(ctx, chromedp.Click("#static-search-text")); err != nil {
					t.Fatal(err)
				}
				if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`location.hash.indexOf("&text=1") > 0 && /captured text included$/.test(document.getElementById("search-state").textContent)`)); err != nil {
					t.Fatalf("the filter with captured text never ran: %v", err)
				}
				withText := siteEval[[]string](t, ctx, shownRows)
				for _, id := range want {
					if !slices.Contains(withText, id) {
						t.Errorf("'folio search %s' finds %s, the filter box (captured text included) does not: %v", c.words, id, withText)
					}
				}
			}
			siteShot(t, ctx, width, fmt.Sprintf("root-filtered-%d", width))
		})
	}
	t.Run("address", func(t *testing.T) {
		siteOpen(t, ctx, c.fileURL("site/page-2.html")+"#q="+url.PathEscape(c.words), 375)
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`!document.getElementById("search-rows").hidden`)); err != nil {
			t.Fatalf("opening #q= did not filter: %v", err)
		}
		if v := siteEval[string](t, ctx, `document.getElementById("static-search").value`); v != c.words {
			t.Errorf("filter box holds %q, want %q", v, c.words)
		}
		// A page but the first does not say how many snapshots there
		// are; filtering, it counts them from the search shards.
		if of, want := siteEval[string](t, ctx, `document.getElementById("count-of").textContent`), fmt.Sprintf("of %d snapshots", len(c.entries)); of != want {
			t.Errorf("page 2 filtered: the count says %q, want %q", of, want)
		}
		checkFilteredRows(t, ctx, c.words)
	})
}

// checkFilteredRows checks the rows the filter shows: each has every
// word in its title, URL, tags or status, a preview (image or labelled
// box), its file icons, and links that lead to existing pages.
func checkFilteredRows(t *testing.T, ctx context.Context, words string) {
	t.Helper()
	type row struct {
		Text, Title, Href, Size string
		Preview, Icons, Favicon int
		Broken                  bool
	}
	rows := siteEval[[]row](t, ctx, `Array.from(document.querySelectorAll("#search-rows tr")).map(function(tr){
  var a = tr.querySelector("a.snapshot-title");
  return {Text: tr.textContent.toLowerCase(), Title: a.textContent, Href: a.href,
    Size: tr.querySelector(".snapshot-size-cell a").href,
    Preview: tr.querySelectorAll(".snapshot-preview-cell img, .snapshot-preview-cell .snapshot-preview-empty").length,
    Icons: tr.querySelectorAll(".files-icons a.ic .sr").length,
    Favicon: tr.querySelectorAll("img.favicon").length,
    Broken: !!tr.querySelector("img.snapshot-preview:not([src])")};
})`)
	if len(rows) == 0 {
		t.Fatal("no filtered rows")
	}
	icons := 0
	for _, r := range rows {
		for _, w := range strings.Fields(strings.ToLower(words)) {
			if !strings.Contains(r.Text, w) {
				t.Errorf("row %q shown for %q has no %q", r.Title, words, w)
			}
		}
		if r.Preview != 1 {
			t.Errorf("row %q: %d previews", r.Title, r.Preview)
		}
		icons += r.Icons
		for _, h := range []string{r.Href, r.Size} {
			p, err := url.PathUnescape(strings.TrimPrefix(h, "file://"))
			if _, serr := os.Stat(p); !strings.HasPrefix(h, "file://") || err != nil || serr != nil {
				t.Errorf("row %q links %s, which is not a file of the export", r.Title, h)
			}
		}
	}
	if icons == 0 {
		t.Error("no file icons in the filtered rows")
	}
}

// TestSitePreviews opens a snapshot whose only output is a PDF and one
// whose screenshot and favicon are not images, at a desktop's and a
// phone's width: the PDF is in the browser's PDF viewer (a frame without
// sandbox: Chromium refuses a PDF in a sandboxed one), the broken preview
// is a labelled box in the root page's row and on its detail page, and
// the broken favicon is gone, leaving no indent.
func TestSitePreviews(t *testing.T) {
	ctx := exportBrowser(t)
	c := newSiteCollection(t)
	// Served, the PDF comes with the sandbox CSP of every archived file;
	// Chromium's viewer shows it all the same.
	base, _ := exportServe(t, c.dir)
	for _, width := range []int64{1280, 375} {
		t.Run(fmt.Sprintf("pdf-%d", width), func(t *testing.T) {
			sitePDFPreview(t, ctx, c.fileURL(c.pdf+"/index.html"), width)
			siteShot(t, ctx, width, fmt.Sprintf("detail-pdf-%d", width))
		})
		t.Run(fmt.Sprintf("pdf-served-%d", width), func(t *testing.T) {
			sitePDFPreview(t, ctx, strings.TrimSuffix(base, "/")+"/"+c.pdf+"/index.html", width)
		})
		t.Run(fmt.Sprintf("broken-%d", width), func(t *testing.T) {
			siteOpen(t, ctx, c.fileURL(c.broken+"/index.html"), width)
			if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`!!document.querySelector(".preview .preview-missing")`)); err != nil {
				t.Fatalf("the undecodable screenshot left no placeholder on its page: %v", err)
			}
			if n := siteEval[int](t, ctx, `document.querySelectorAll("img.favicon, #preview-frame").length`); n != 0 {
				t.Errorf("%d broken images left on the page", n)
			}
			siteShot(t, ctx, width, fmt.Sprintf("detail-broken-%d", width))

			siteOpen(t, ctx, c.fileURL("index.html"), width)
			row := `document.querySelector("#page-rows a.snapshot-title[href*='` + filepath.Base(c.broken) + `']").closest("tr")`
			if _, err := chromedp.Run(ctx, chromedp.Poll[bool](row+`.querySelector(".preview-broken") !== null`)); err != nil {
				t.Fatalf("the undecodable screenshot left no placeholder in its row: %v", err)
			}
			if n := siteEval[int](t, ctx, row+`.querySelectorAll("img").length`); n != 0 {
				t.Errorf("%d broken images left in the row", n)
			}
			// No favicon, no indent: the title starts where the URL does.
			indent := siteEval[float64](t, ctx, `(function(tr){ return tr.querySelector("a.snapshot-title").getBoundingClientRect().left - tr.querySelector(".snapshot-url").getBoundingClientRect().left; })(`+row+`)`)
			if indent != 0 {
				t.Errorf("the title of a row without favicon is indented %.1f px", indent)
			}
			if label := siteEval[string](t, ctx, row+`.querySelector(".preview-broken").textContent`); label != "no preview" {
				t.Errorf("placeholder says %q", label)
			}
			siteShot(t, ctx, width, fmt.Sprintf("root-broken-%d", width))
		})
	}
	t.Logf("screenshots in %s", siteOut(t))
}

// TestSiteSpeaksTheCLIsWords exports a generated collection and expects
// the root page's sizes in KiB/MiB as the CLI prints them, and every
// state pill to say a word 'folio list --status' takes, selecting as many
// snapshots as the page shows with it; and robots.txt to keep crawlers
// out of archived copies unless --allow-crawlers or EXPORT_ALLOW_CRAWLERS.
func TestSiteSpeaksTheCLIsWords(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	if _, err := gen.Current(dir, gen.Options{N: 40, Seed: 3, NoSync: true, Plain: true}); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := runFolio(t, "-D", dir, "export"); code != 0 {
		t.Fatalf("export: %s", stderr)
	}
	root := string(mustRead(t, filepath.Join(dir, "index.html")))
	if strings.Contains(root, " KB<") || strings.Contains(root, " MB<") || !strings.Contains(root, " KiB<") {
		t.Errorf("the root page's sizes are not in KiB/MiB:\n%s", grepLines(root, "snapshot-size-cell"))
	}
	pills := map[string]int{}
	for _, part := range strings.Split(root, `<td class="snapshot-status"><span class="status-pill status-`)[1:] {
		_, rest, _ := strings.Cut(part, `">`)
		word, _, _ := strings.Cut(rest, "<")
		pills[word]++
	}
	if len(pills) < 3 {
		t.Fatalf("pills: %v", pills)
	}
	for word, n := range pills {
		out, stderr, code := runFolio(t, "-D", dir, "list", "--jsonl", "--status", word)
		if code != 0 {
			t.Errorf("the site says %q, 'folio list --status %s' refuses it (exit %d): %s", word, word, code, stderr)
			continue
		}
		if got := strings.Count(out, "\n"); got != n {
			t.Errorf("the site shows %d snapshots %q, 'folio list --status %s' lists %d", n, word, word, got)
		}
	}
	robots := string(mustRead(t, filepath.Join(dir, "robots.txt")))
	if !strings.Contains(robots, "\nDisallow: /archive/\n") {
		t.Errorf("robots.txt lets crawlers into archived copies:\n%s", robots)
	}
	if _, stderr, code := runFolio(t, "-D", dir, "export", "--allow-crawlers"); code != 0 {
		t.Fatalf("export --allow-crawlers: %s", stderr)
	}
	if robots := string(mustRead(t, filepath.Join(dir, "robots.txt"))); strings.Contains(robots, "Disallow: /") {
		t.Errorf("export --allow-crawlers: robots.txt still keeps crawlers out:\n%s", robots)
	}
	if _, stderr, code := runFolio(t, "-D", dir, "export"); code != 0 {
		t.Fatalf("export: %s", stderr)
	}
	if robots := string(mustRead(t, filepath.Join(dir, "robots.txt"))); !strings.Contains(robots, "Disallow: /archive/") {
		t.Errorf("export without --allow-crawlers kept the opt-in:\n%s", robots)
	}
	if err := os.WriteFile(filepath.Join(dir, "ArchiveBox.conf"), []byte("[SERVER_CONFIG]\nEXPORT_ALLOW_CRAWLERS = True\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := runFolio(t, "-D", dir, "export"); code != 0 {
		t.Fatalf("export: %s", stderr)
	}
	if robots := string(mustRead(t, filepath.Join(dir, "robots.txt"))); strings.Contains(robots, "Disallow: /") {
		t.Errorf("EXPORT_ALLOW_CRAWLERS = True in ArchiveBox.conf: robots.txt still keeps crawlers out:\n%s", robots)
	}
}

// sitePDFPreview opens a PDF snapshot's page at url and waits until its
// preview frame shows the PDF in the browser's viewer.
func sitePDFPreview(t *testing.T, ctx context.Context, url string, width int64) {
	t.Helper()
	siteOpen(t, ctx, url, width)
	if sb := siteEval[bool](t, ctx, `document.getElementById("preview-frame").hasAttribute("sandbox")`); sb {
		t.Error("the PDF preview frame is sandboxed: Chromium shows no PDF there")
	}
	var frame *cdp.Frame
	deadline := time.Now().Add(20 * time.Second)
	for frame == nil || frame.MimeType != "application/pdf" {
		if time.Now().After(deadline) {
			t.Fatalf("the preview frame never showed the PDF: %+v", frame)
		}
		time.Sleep(200 * time.Millisecond)
		tree, err := chromedp.Call(ctx, page.GetFrameTree, cdp.Empty{})
		if err != nil {
			t.Fatal(err)
		}
		for _, ch := range tree.FrameTree.ChildFrames {
			if strings.HasSuffix(ch.Frame.URL, "/pdf/output.pdf") {
				frame = ch.Frame
			}
		}
		if frame != nil && frame.UnreachableURL != "" {
			t.Fatalf("the PDF preview was blocked: %s", frame.UnreachableURL)
		}
	}
}
