package main_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// markerScript is what every hostile archived document runs: it leaves a
// mark the server sees when it runs with the site's origin (its storage
// works, and it asks for /pwned-…), and tries to get out of any frame: a
// link with target=_top, window.open, top.location. In a sandboxed frame
// (an opaque origin) storage throws and it asks for /ran-sandboxed-…
// instead, which only --allow-archived-scripts lets happen.
func markerScript(tag string) string {
	return `(function () {
  var tag = "` + tag + `";
  try { localStorage.setItem("pwned", tag); document.cookie = "pwned=" + tag + "; path=/"; new Image().src = "/pwned-storage?" + tag; }
  catch (e) { new Image().src = "/ran-sandboxed?" + tag; }
  try { var a = document.createElementNS("http://www.w3.org/1999/xhtml", "a"); a.href = "/pwned-top-link?" + tag; a.target = "_top"; document.documentElement.appendChild(a); a.click(); } catch (e) {}
  try { window.open("/pwned-open?" + tag); } catch (e) {}
  try { top.location.href = "/pwned-top?" + tag; } catch (e) {}
})();`
}

// hostileFiles are a snapshot's archived documents that run markerScript:
// HTML, SVG, XHTML in an .xml file, a file without an extension (which a
// browser sniffs from file://), next to files pages link directly.
func hostileFiles() map[string]string {
	page := func(tag string) string {
		return "<!DOCTYPE html><html><head><title>archived " + tag + "</title></head><body><p>archived " + tag + "</p>" +
			`<a href="/pwned-link?` + tag + `" target="_top">a link out</a><script>` + markerScript(tag) + "</script></body></html>"
	}
	return map[string]string{
		"singlefile/singlefile.html":            page("singlefile"),
		"dom/output.html":                       page("dom"),
		"readability/content.html":              page("readability"),
		"wget/pages.example.org/index.html":     page("wget-index"),
		"wget/pages.example.org/more/page.html": page("wget-page"),
		"wget/pages.example.org/about":          page("wget-noext"),
		"wget/pages.example.org/feed.xml": `<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"><body><p>feed</p><script>` +
			"//<![CDATA[\n" + markerScript("xml") + "\n//]]></script></body></html>",
		"screenshot/screenshot.svg": `<svg xmlns="http://www.w3.org/2000/svg" width="400" height="300"><rect width="400" height="300" fill="#c33"/><script>//<![CDATA[` +
			"\n" + markerScript("svg") + "\n//]]></script></svg>",
		"headers/headers.json":         `{"status": 200}`,
		"htmltotext/htmltotext.txt":    "archived text <script>" + markerScript("txt") + "</script>",
		"warc/1714564800.warc.gz":      "not really a warc",
		"favicon/favicon.ico":          "not really an icon",
		"media/Clip from the talk.mp4": "not really an mp4",
	}
}

// staticServer serves dir with Python's http.server, a plain static
// server that sends no special headers, and returns its base URL and its
// request log (stderr) so far.
func staticServer(t *testing.T, dir string) (string, func() string) {
	t.Helper()
	python, err := exec.LookPath("python3")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("python3 not found, and this test must run in CI")
		}
		t.Skip("SKIPPING: python3 not found (CI runs this test)")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(python, "-m", "http.server", "--bind", "127.0.0.1", strconv.Itoa(port), "--directory", dir)
	cmd.Env = append(os.Environ(), "PYTHONUNBUFFERED=1")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var (
		mu  sync.Mutex
		log strings.Builder
	)
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			mu.Lock()
			log.WriteString(sc.Text() + "\n")
			mu.Unlock()
		}
	}()
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait(); <-done })
	base := "http://127.0.0.1:" + strconv.Itoa(port) + "/"
	for i := 0; ; i++ {
		resp, err := http.Get(base + "index.html")
		if err == nil {
			resp.Body.Close()
			break
		}
		if i == 100 {
			t.Fatalf("http.server did not answer: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return base, func() string { mu.Lock(); defer mu.Unlock(); return log.String() }
}

// crawl opens every link of the export's own pages, starting at base's
// root page: each is loaded top-level as a reader would by following it
// (a link with the download attribute is clicked instead), and the links
// of every page of folio's (root pages, snapshot pages, the viewer) are
// followed in turn; a viewer's frame is waited for. It returns the URLs
// opened.
func crawl(t *testing.T, ctx context.Context, base string) []string {
	t.Helper()
	type link struct {
		Href     string `json:"href"`
		Download bool   `json:"download"`
	}
	queue := []string{base + "index.html"}
	seen := map[string]bool{queue[0]: true}
	var opened []string
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		opened = append(opened, u)
		c, cancel := context.WithTimeout(ctx, 20*time.Second)
		chromedp.Do(c, chromedp.Navigate("about:blank"))
		chromedp.Do(c, chromedp.Navigate(u)) // a file the browser downloads ends the navigation with an error
		ours, _ := chromedp.Run(c, chromedp.Evaluate[bool](`!!(document.body && /\bfolio-/.test(document.body.className))`))
		if !ours {
			cancel()
			continue
		}
		if strings.Contains(u, "/site/view.html#") {
			// (A file the browser would download, such as one without an
			// extension, never loads in a sandboxed frame, which may not
			// download.)
			if _, err := chromedp.Run(c, chromedp.Poll[string](`(function(){var f=document.getElementById('view-frame');return f&&f.getAttribute('data-loaded')?f.src:null})()`,
				chromedp.WithPollingTimeout(3*time.Second))); err != nil {
				t.Logf("the viewer at %s did not load its frame: %v", u, err)
			}
		}
		links, err := chromedp.Run(c, chromedp.Evaluate[[]link](`Array.from(document.querySelectorAll('a[href]')).map(function(a){return {href:a.href,download:a.hasAttribute('download')}})`))
		if err != nil {
			t.Fatalf("links of %s: %v", u, err)
		}
		for i, l := range links {
			if l.Download {
				chromedp.Run(c, chromedp.Evaluate[bool](`(function(){document.querySelectorAll('a[href]')[`+strconv.Itoa(i)+`].click();return true})()`))
				continue
			}
			p, err := url.Parse(l.Href)
			if err != nil || !strings.HasPrefix(l.Href, base) || seen[l.Href] {
				continue // the original URLs lead off loopback: never opened
			}
			if p.Fragment != "" && !strings.HasSuffix(p.Path, "/site/view.html") {
				l.Href = strings.TrimSuffix(l.Href, "#"+p.EscapedFragment())
				if seen[l.Href] {
					continue
				}
			}
			seen[l.Href] = true
			queue = append(queue, l.Href)
		}
		cancel()
	}
	time.Sleep(500 * time.Millisecond) // let the last requests reach the server
	return opened
}

// TestExportArchivedScriptsNeverRunWithSiteOrigin exports a snapshot of
// hostile archived documents with --out, serves the copy with a plain
// static server that honours no _headers, opens every link of the root
// page and the snapshot page (and of every viewer page they lead to) in
// Chromium, and finds that no archived script ever ran with the site's
// origin; opening one of those files directly, as the pages used to link
// them, does run it (the control). With --allow-archived-scripts the
// scripts run, in their sandbox only.
func TestExportArchivedScriptsNeverRunWithSiteOrigin(t *testing.T) {
	ctx := exportBrowser(t)
	base := t.TempDir()
	dir := filepath.Join(base, "data")
	if _, stderr, code := runFolio(t, "init", "-D", dir); code != 0 {
		t.Fatalf("init: %s", stderr)
	}
	rel := writeSnapshotFiles(t, dir, "0190f3c2a1b27c3d8e4f5a6b7c8d0007", "Hostile page", hostileFiles())
	writeSnapshotFiles(t, dir, "0190f3c2a1b27c3d8e4f5a6b7c8d0008", "Another capture", map[string]string{"dom/output.html": "<p>calm</p><script>" + markerScript("calm") + "</script>"})

	for _, mode := range []struct {
		name string
		args []string
	}{{"default", nil}, {"allow-archived-scripts", []string{"--allow-archived-scripts"}}} {
		t.Run(mode.name, func(t *testing.T) {
			out := filepath.Join(base, "public-"+mode.name)
			if _, stderr, code := runFolio(t, append([]string{"-D", dir, "export", "--out", out}, mode.args...)...); code != 0 {
				t.Fatalf("export: exit %d\n%s", code, stderr)
			}
			site, log := staticServer(t, out)
			opened := crawl(t, ctx, site)
			views := 0
			for _, u := range opened {
				if strings.Contains(u, "/site/view.html#") {
					views++
				}
			}
			t.Logf("opened %d URLs, %d through the viewer", len(opened), views)
			if views < 6 {
				t.Errorf("only %d links led to the viewer: %v", views, opened)
			}
			got := log()
			if strings.Contains(got, "/pwned") {
				t.Errorf("an archived script ran with the site's origin:\n%s", grepLines(got, "/pwned"))
			}
			if ran := strings.Contains(got, "/ran-sandboxed"); ran != (mode.args != nil) {
				t.Errorf("archived scripts ran in their sandbox: %v, want %v\n%s", ran, mode.args != nil, grepLines(got, "/ran-sandboxed"))
			}
			c, cancel := context.WithTimeout(ctx, 20*time.Second)
			defer cancel()
			if err := chromedp.Do(c, chromedp.Navigate(site+"index.html")); err != nil {
				t.Fatal(err)
			}
			if v, _ := chromedp.Run(c, chromedp.Evaluate[string](`localStorage.getItem("pwned") || ""`)); v != "" {
				t.Errorf("the site's storage holds an archived script's mark %q", v)
			}

			// The control: the same files opened top-level, as the pages
			// used to link them, do run with the site's origin.
			for _, tag := range []string{"dom", "svg"} {
				file := map[string]string{"dom": "dom/output.html", "svg": "screenshot/screenshot.svg"}[tag]
				c, cancel := context.WithTimeout(ctx, 20*time.Second)
				chromedp.Do(c, chromedp.Navigate(site+rel+"/"+file))
				cancel()
				for i := 0; !strings.Contains(log(), "/pwned-storage?"+tag); i++ {
					if i == 100 {
						t.Fatalf("the control never ran: %s opened directly left no mark\n%s", file, log())
					}
					time.Sleep(50 * time.Millisecond)
				}
			}
		})
	}
}

// TestExportViewerFromFile: the viewer shows an archived page in its
// sandboxed frame from file:// too, and refuses targets outside the
// export's archive.
func TestExportViewerFromFile(t *testing.T) {
	ctx := exportBrowser(t)
	dir := filepath.Join(t.TempDir(), "data")
	if _, stderr, code := runFolio(t, "init", "-D", dir); code != 0 {
		t.Fatalf("init: %s", stderr)
	}
	rel := writeSnapshotFiles(t, dir, "0190f3c2a1b27c3d8e4f5a6b7c8d0009", "Hostile page", hostileFiles())
	if _, stderr, code := runFolio(t, "-D", dir, "export"); code != 0 {
		t.Fatalf("export: exit %d\n%s", code, stderr)
	}
	detail, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel), "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	want := `href="../../../../../../../site/view.html#` + rel + `:dom/output.html"`
	if !strings.Contains(string(detail), want) {
		t.Fatalf("the snapshot page does not link dom/output.html through the viewer (%s)", want)
	}
	view := "file://" + dir + "/site/view.html#"
	c, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(c, chromedp.Navigate(view+rel+":dom/output.html"),
		chromedp.WaitVisible(chromedp.CSS("#view-frame[data-loaded]"))); err != nil {
		t.Fatal(err)
	}
	attrs, err := chromedp.Run(c, chromedp.Attributes(chromedp.CSS("#view-frame")))
	if err != nil {
		t.Fatal(err)
	}
	if sb, ok := attrs["sandbox"]; !ok || sb != "" {
		t.Errorf("the viewer's frame has sandbox %q (present: %v)", sb, ok)
	}
	if !strings.HasSuffix(attrs["src"], "/"+rel+"/dom/output.html") {
		t.Errorf("the viewer's frame shows %q", attrs["src"])
	}
	tree, err := chromedp.Call(c, page.GetFrameTree, cdp.Empty{})
	if err != nil {
		t.Fatal(err)
	}
	loaded := false
	for _, ch := range tree.FrameTree.ChildFrames {
		loaded = loaded || strings.HasSuffix(ch.Frame.URL, "/dom/output.html") && ch.Frame.UnreachableURL == ""
	}
	if targets, err := chromedp.Targets(c); err == nil {
		for _, ti := range targets {
			loaded = loaded || ti.Type == "iframe" && strings.HasSuffix(ti.URL, "/dom/output.html")
		}
	}
	if !loaded {
		t.Errorf("the viewer's frame did not load the archived page from file://")
	}
	for _, bad := range []string{"../../../etc:passwd", "archive/x:../../../../etc/passwd", "https://example.com/:x.html",
		"javascript:alert(1)", "archive/%2e%2e/%2e%2e:x", rel + ":", ":dom/output.html", "archive/x:/etc/passwd", "archive/x:%2e%2e/y"} {
		if err := chromedp.Do(c, chromedp.Navigate("about:blank"), chromedp.Navigate(view+bad), chromedp.WaitVisible(chromedp.CSS(".view-refused"))); err != nil {
			t.Errorf("%q: the viewer did not refuse it: %v", bad, err)
			continue
		}
		if src, _ := chromedp.Run(c, chromedp.Evaluate[string](`document.getElementById('view-frame').getAttribute('src') || ""`)); src != "" {
			t.Errorf("%q: the viewer framed %q", bad, src)
		}
	}
}

func grepLines(s, sub string) string {
	var b strings.Builder
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			fmt.Fprintln(&b, l)
		}
	}
	return b.String()
}
