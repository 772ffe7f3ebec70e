package plugins

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/fixtures"
)

// The tests here drive the real Chromium against the fixture site on
// loopback. One browser is shared by the package's tests.

var (
	sharedOnce    sync.Once
	sharedBrowser *Browser
	sharedErr     error
)

func testConfig(t *testing.T, kv ...string) Config {
	t.Helper()
	cfg, err := LoadConfig(filepath.Join(t.TempDir(), "ArchiveBox.conf"), nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Set("RESOLUTION", "800,600")
	for i := 0; i+1 < len(kv); i += 2 {
		cfg.Set(kv[i], kv[i+1])
	}
	return cfg
}

func browser(t *testing.T) *Browser {
	t.Helper()
	sharedOnce.Do(func() {
		cfg, err := LoadConfig("/nonexistent/ArchiveBox.conf", nil)
		if err != nil {
			sharedErr = err
			return
		}
		cfg.Set("RESOLUTION", "800,600")
		cfg.Set("CHROME_ARGS_EXTRA", "--run-all-compositor-stages-before-draw") // screenshots of a settled frame, for the fidelity tests
		sharedBrowser, sharedErr = StartBrowser(cfg)
	})
	if sharedErr != nil {
		t.Fatalf("start Chromium (make test installs it): %v", sharedErr)
	}
	return sharedBrowser
}

func TestMain(m *testing.M) {
	code := m.Run()
	if sharedBrowser != nil {
		sharedBrowser.Close()
	}
	os.Exit(code)
}

func serve(t *testing.T) *fixtures.Server {
	t.Helper()
	srv, err := fixtures.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// capture runs the given plugins (all built-ins when none) over url and
// returns the results by plugin name.
func capture(t *testing.T, b *Browser, cfg Config, url string, names ...string) (string, map[string]archive.Result) {
	t.Helper()
	ps, err := Builtins().Select(names, cfg)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	r := &Runner{Plugins: ps, Browser: b, Config: cfg, HTTP: NewHTTPClient(cfg), IDs: archive.RandomIDs, Now: time.Now}
	job := &Job{URL: url, Dir: dir, SnapshotID: "0190a1b2c3d4e5f60718293a4b5c6d7e"}
	got := map[string]archive.Result{}
	if err := r.Capture(context.Background(), job, false, func(res archive.Result) error {
		got[res.Plugin] = res
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return dir, got
}

func read(t *testing.T, dir, rel string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, rel))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestBuiltinsCaptureAPage(t *testing.T) {
	srv := serve(t)
	cfg := testConfig(t)
	dir, got := capture(t, browser(t), cfg, srv.URL+"/index.html")

	for _, name := range []string{"headers", "favicon", "singlefile", "screenshot", "pdf", "dom", "title", "readability", "htmltotext", "hashes"} {
		if got[name].Status != Succeeded {
			t.Errorf("%s: status %q, output %q", name, got[name].Status, got[name].OutputStr)
		}
	}
	if s := got["staticfile"].Status; s != NoResults {
		t.Errorf("staticfile on a page: %q", s)
	}
	if got := string(read(t, dir, "title/title.txt")); got != "Keepers of the Light: A Short History of Lighthouses" {
		t.Errorf("title.txt = %q", got)
	}
	if got["title"].OutputStr != "Keepers of the Light: A Short History of Lighthouses" {
		t.Errorf("title output_str = %q", got["title"].OutputStr)
	}
	ico, _ := fixtures.Read("favicon.ico", "")
	if !bytes.Equal(read(t, dir, "favicon/favicon.ico"), ico) {
		t.Error("favicon.ico is not the site's favicon")
	}
	var h struct {
		URL             string            `json:"url"`
		Status          int               `json:"status"`
		ResponseHeaders map[string]string `json:"response_headers"`
	}
	if err := json.Unmarshal(read(t, dir, "headers/headers.json"), &h); err != nil {
		t.Fatal(err)
	}
	if h.Status != 200 || h.ResponseHeaders["X-Fixture"] != "folio" && h.ResponseHeaders["x-fixture"] != "folio" {
		t.Errorf("headers.json: status %d, headers %v", h.Status, h.ResponseHeaders)
	}
	img, err := png.Decode(bytes.NewReader(read(t, dir, "screenshot/screenshot.png")))
	if err != nil {
		t.Fatal(err)
	}
	if w := img.Bounds().Dx(); w != 800 {
		t.Errorf("screenshot width %d, want RESOLUTION's 800", w)
	}
	if pdf := read(t, dir, "pdf/output.pdf"); !bytes.HasPrefix(pdf, []byte("%PDF-")) {
		t.Errorf("output.pdf starts %q", pdf[:min(8, len(pdf))])
	}
	if dom := string(read(t, dir, "dom/output.html")); !strings.Contains(dom, "Inserted by script") || !strings.HasPrefix(dom, "<!DOCTYPE html>") {
		t.Errorf("dom/output.html lacks the script's text or the doctype: %.200s", dom)
	}
	sf := string(read(t, dir, "singlefile/singlefile.html"))
	for _, want := range []string{"data:image/png;base64,", "data:font/ttf;base64,", "Inserted by script"} {
		if !strings.Contains(sf, want) {
			t.Errorf("singlefile.html lacks %q", want)
		}
	}
	if strings.Contains(sf, "<script") {
		t.Error("singlefile.html keeps a script")
	}
	if strings.Count(strings.ToLower(sf), "<!doctype") != 1 || !strings.HasPrefix(sf, "<!DOCTYPE html>") {
		t.Errorf("singlefile.html does not start with one doctype: %.80q", sf)
	}
	if strings.Contains(sf, "&#34;Fixture Sans&#34;") || !strings.Contains(sf, `font-family: "Fixture Sans"`) {
		t.Error("singlefile.html escapes the CSS of its style elements")
	}
	if txt := string(read(t, dir, "readability/content.txt")); !strings.Contains(txt, "Fresnel") {
		t.Errorf("readability content.txt: %.200s", txt)
	}
	if txt := string(read(t, dir, "htmltotext/htmltotext.txt")); !strings.Contains(txt, "Pharos of Alexandria") || strings.Contains(txt, "<p") {
		t.Errorf("htmltotext.txt: %.200s", txt)
	}
	var hs struct {
		RootHash string `json:"root_hash"`
		Files    []struct {
			Path string `json:"path"`
		} `json:"files"`
	}
	if err := json.Unmarshal(read(t, dir, "hashes/hashes.json"), &hs); err != nil {
		t.Fatal(err)
	}
	if len(hs.RootHash) != 64 || len(hs.Files) < 10 {
		t.Errorf("hashes.json: root %q, %d files", hs.RootHash, len(hs.Files))
	}
	if len(got["screenshot"].OutputFiles) == 0 || got["screenshot"].OutputSize == 0 {
		t.Errorf("screenshot result lists no files: %+v", got["screenshot"])
	}
}

// A page saved by singlefile renders with the server gone: its DOM text
// matches the live page's.
func TestSingleFileRendersOffline(t *testing.T) {
	srv := serve(t)
	b := browser(t)
	cfg := testConfig(t)
	dir, got := capture(t, b, cfg, srv.URL+"/index.html", "singlefile", "dom")
	if got["singlefile"].Status != Succeeded {
		t.Fatalf("singlefile: %+v", got["singlefile"])
	}
	srv.Close()
	page := b.Load(context.Background(), "file://"+filepath.Join(dir, "singlefile/singlefile.html"), cfg)
	defer page.Close()
	if page.Err != nil {
		t.Fatal(page.Err)
	}
	ctx, cancel, _ := page.Context(context.Background())
	defer cancel()
	offline, err := bodyText(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(offline, "Inserted by script") || !strings.Contains(offline, "Keepers of the Light") {
		t.Errorf("offline text: %.300s", offline)
	}
	loaded, err := imagesLoaded(ctx)
	if err != nil || !loaded {
		t.Errorf("the offline page's image did not load (err %v)", err)
	}
	// The web font and the background image come from the saved page.
	styled, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.fonts.ready.then(() =>
		document.fonts.check('16px "Fixture Sans"') &&
		[...document.fonts].some(f => f.family.includes("Fixture Sans") && f.status === "loaded") &&
		getComputedStyle(document.body).backgroundImage.startsWith('url("data:image/png'))`,
		chromedp.EvalAwaitPromise))
	if err != nil || !styled {
		t.Errorf("the offline page lacks its font or background (err %v)", err)
	}
}

func TestStaticFilesAreSavedAsTheyAre(t *testing.T) {
	srv := serve(t)
	cfg := testConfig(t)
	for _, name := range []string{"doc.pdf", "image.png"} {
		dir, got := capture(t, browser(t), cfg, srv.URL+"/"+name)
		if got["staticfile"].Status != Succeeded || got["staticfile"].OutputStr != "staticfile/"+name {
			t.Fatalf("%s: staticfile %+v", name, got["staticfile"])
		}
		want, _ := fixtures.Read(name, "")
		if !bytes.Equal(read(t, dir, "staticfile/"+name), want) {
			t.Errorf("%s: saved bytes differ", name)
		}
		for _, p := range []string{"screenshot", "dom", "singlefile", "title"} {
			if got[p].Status != NoResults {
				t.Errorf("%s: %s status %q (%s), want noresults", name, p, got[p].Status, got[p].OutputStr)
			}
		}
	}
}

func TestPagesThatFail(t *testing.T) {
	srv := serve(t)
	cfg := testConfig(t, "CHROME_PAGELOAD_TIMEOUT", "2", "TIMEOUT", "5")
	for _, c := range []struct{ path, reason string }{
		{"/404", "HTTP 404"},
		{"/loop/a", "ERR_TOO_MANY_REDIRECTS"},
		{"/never", "did not finish loading"},
	} {
		_, got := capture(t, browser(t), cfg, srv.URL+c.path, "screenshot", "dom", "title")
		for _, p := range []string{"screenshot", "dom", "title"} {
			if got[p].Status != Failed || !strings.Contains(got[p].OutputStr, c.reason) {
				t.Errorf("%s: %s = %q %q, want failed with %q", c.path, p, got[p].Status, got[p].OutputStr, c.reason)
			}
		}
	}
}

func TestRedirectsAreFollowed(t *testing.T) {
	srv := serve(t)
	dir, got := capture(t, browser(t), testConfig(t), srv.URL+"/redirect/3", "headers", "title")
	if got["title"].Status != Succeeded {
		t.Fatalf("title: %+v", got["title"])
	}
	var h struct {
		FinalURL string `json:"final_url"`
		Status   int    `json:"status"`
	}
	if err := json.Unmarshal(read(t, dir, "headers/headers.json"), &h); err != nil {
		t.Fatal(err)
	}
	if h.FinalURL != srv.URL+"/index.html" || h.Status != 200 {
		t.Errorf("headers.json final_url %q status %d", h.FinalURL, h.Status)
	}
}

func bodyText(ctx context.Context) (string, error) {
	return chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`))
}

func imagesLoaded(ctx context.Context) (bool, error) {
	return chromedp.Run(ctx, chromedp.Evaluate[bool](`Array.from(document.images).every(i => i.complete && i.naturalWidth > 0) && document.images.length > 0`))
}

// A browser killed while it loads a page fails that snapshot only: the
// next one gets a new browser.
func TestBrowserKilledMidRun(t *testing.T) {
	// The browser is killed once its tab asks for /hang, which never
	// answers: the kill lands mid-load however slow the machine is.
	asked := make(chan struct{})
	var once sync.Once
	mux := http.NewServeMux()
	mux.Handle("/", fixtures.Handler())
	mux.HandleFunc("/hang", func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() { close(asked) })
		<-r.Context().Done()
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	cfg := testConfig(t, "TIMEOUT", "10", "CHROME_SETTLE_TIMEOUT", "0")
	b, err := StartBrowser(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	go func() {
		<-asked
		if p := chromedp.FromContext(b.ctx).Browser.Process(); p != nil {
			p.Kill()
		}
	}()
	_, got := capture(t, b, cfg, srv.URL+"/hang", "title", "screenshot")
	for _, p := range []string{"title", "screenshot"} {
		if got[p].Status != Failed || got[p].OutputStr != errTabLost.Error() {
			t.Errorf("%s on the killed browser: %q %q, want %q", p, got[p].Status, got[p].OutputStr, errTabLost)
		}
	}
	_, got = capture(t, b, cfg, srv.URL+"/about.html", "title", "screenshot")
	for _, p := range []string{"title", "screenshot"} {
		if got[p].Status != Succeeded {
			t.Errorf("%s after the restart: %q %q", p, got[p].Status, got[p].OutputStr)
		}
	}
	if n := b.Launches(); n != 2 {
		t.Errorf("browser launched %d times, want 2", n)
	}
}

// A browser that dies after the page loaded, between two plugins, fails the plugins that follow with the same line a kill
// during the load gives, whether or not folio has yet noticed the death.
func TestBrowserKilledBetweenPlugins(t *testing.T) {
	srv := serve(t)
	for _, reaped := range []bool{false, true} {
		t.Run(fmt.Sprintf("reaped=%v", reaped), func(t *testing.T) {
			cfg := testConfig(t, "TIMEOUT", "20", "CHROME_SETTLE_TIMEOUT", "0")
			b, err := StartBrowser(cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			ps, err := Builtins().Select([]string{"title", "screenshot", "dom"}, cfg)
			if err != nil {
				t.Fatal(err)
			}
			r := &Runner{Plugins: ps, Browser: b, Config: cfg, HTTP: NewHTTPClient(cfg), IDs: archive.RandomIDs, Now: time.Now,
				Before: func(p Plugin) error {
					if p != ps[1] {
						return nil
					}
					b.mu.Lock()
					ctx := b.ctx
					b.mu.Unlock()
					chromedp.FromContext(ctx).Browser.Process().Kill()
					if reaped {
						<-ctx.Done()
					}
					return nil
				}}
			got := map[string]archive.Result{}
			job := &Job{URL: srv.URL + "/about.html", Dir: t.TempDir(), SnapshotID: "0190a1b2c3d4e5f60718293a4b5c6d7e"}
			if err := r.Capture(context.Background(), job, false, func(res archive.Result) error {
				got[res.Plugin] = res
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if first := ps[0].Name(); got[first].Status != Succeeded {
				t.Errorf("%s before the kill: %q %q", first, got[first].Status, got[first].OutputStr)
			}
			for _, p := range []string{ps[1].Name(), ps[2].Name()} {
				if got[p].Status != Failed || got[p].OutputStr != errTabLost.Error() {
					t.Errorf("%s after the kill: %q %q, want %q", p, got[p].Status, got[p].OutputStr, errTabLost)
				}
			}
		})
	}
}

// CHROME_CDP_URL attaches to a browser someone else runs.
func TestAttachToRunningBrowser(t *testing.T) {
	srv := serve(t)
	exe := FindChromium(testConfig(t))
	if exe == "" {
		t.Fatal(ErrNoBrowser)
	}
	profile := t.TempDir()
	cmd := exec.Command(exe, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--remote-debugging-port=0", "--user-data-dir="+profile, "about:blank")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Every process of that Chromium is gone before the profile is
	// removed: its helpers write there too.
	defer func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if syscall.Kill(-cmd.Process.Pid, 0) != nil {
				break
			}
		}
	}()
	var port string
	for deadline := time.Now().Add(20 * time.Second); port == "" && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if data, err := os.ReadFile(filepath.Join(profile, "DevToolsActivePort")); err == nil {
			port, _, _ = strings.Cut(string(data), "\n")
		}
	}
	if port == "" {
		t.Fatal("Chromium wrote no DevToolsActivePort")
	}
	cfg := testConfig(t, "CHROME_CDP_URL", "http://127.0.0.1:"+port)
	b, err := StartBrowser(cfg)
	if err != nil {
		t.Fatal(err)
	}
	_, got := capture(t, b, cfg, srv.URL+"/index.html", "title")
	b.Close()
	if got["title"].Status != Succeeded {
		t.Errorf("title through the attached browser: %+v", got["title"])
	}
	resp, err := http.Get("http://127.0.0.1:" + port + "/json/version")
	if err != nil {
		t.Fatalf("closing an attached browser stopped it: %v", err)
	}
	resp.Body.Close()
}
