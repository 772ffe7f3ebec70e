package main_test

import (
	"archive/tar"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/klauspost/compress/zstd"

	"github.com/folio-archive/folio/gen"
)

// exportCollection generates n snapshots and retitles the oldest one that has a
// singlefile capture to needle, so it lands on the last root page.
func exportCollection(t testing.TB, n int, needle string) (string, gen.Entry) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "data")
	m, err := gen.Current(dir, gen.Options{N: n, Seed: 42, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	list := append([]gen.Entry(nil), m.Snapshots...)
	sort.Slice(list, func(a, b int) bool { return list[a].BookmarkedAt.Before(list[b].BookmarkedAt) })
	for _, e := range list {
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(e.Dir), "singlefile", "singlefile.html")); err == nil && e.Status == "sealed" {
			if err := gen.RetitleIndex(filepath.Join(dir, filepath.FromSlash(e.Dir)), needle); err != nil {
				t.Fatal(err)
			}
			return dir, e
		}
	}
	t.Fatal("no snapshot with a singlefile capture")
	return "", gen.Entry{}
}

func TestExportCommand(t *testing.T) {
	dir, _ := exportCollection(t, 30, "Needle")
	stdout, stderr, code := runFolio(t, "-D", dir, "export", "--page-size", "10")
	if code != 0 {
		t.Fatalf("export: exit %d\n%s", code, stderr)
	}
	if want := "file://" + dir + "/index.html\n"; stdout != want {
		t.Errorf("stdout %q, want %q", stdout, want)
	}
	if !strings.Contains(stderr, "exported 30 snapshots") {
		t.Errorf("stderr: %s", stderr)
	}
	_, stderr, _ = runFolio(t, "-D", dir, "export", "--page-size", "10")
	if !strings.Contains(stderr, "0 pages written, 30 unchanged") {
		t.Errorf("second export: %s", stderr)
	}

	out := filepath.Join(t.TempDir(), "public")
	bundle := filepath.Join(t.TempDir(), "site.tar.zst")
	if _, stderr, code := runFolio(t, "-D", dir, "export", "--out", out, "--gzip", "--bundle", bundle, "--status", "sealed"); code != 0 {
		t.Fatalf("export --out: exit %d\n%s", code, stderr)
	}
	names := exportTarNames(t, bundle)
	for _, want := range []string{"index.html", "index.jsonl", "_headers", "site/folio.js", "index.html.gz"} {
		if !names[want] {
			t.Errorf("bundle lacks %s", want)
		}
	}
	for n := range names {
		if strings.HasPrefix(n, ".folio") || strings.Contains(n, "sqlite3") || strings.HasPrefix(n, "sources/") || strings.HasPrefix(n, "logs/") {
			t.Errorf("bundle holds %s", n)
		}
	}

	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"-D", dir, "export", "--bundle", "x.zip"}, 2, ".tar.zst"},
		{[]string{"-D", dir, "export", "--before", "yesterday"}, 2, "--before"},
		{[]string{"-D", dir, "export", "-f", "fuzzy", "x"}, 2, "fuzzy"},
		{[]string{"-D", t.TempDir(), "export"}, 1, "not a folio or ArchiveBox collection"},
		{[]string{"-D", dir, "export", "--out", dir + "/archive/x"}, 1, "archive"},
	} {
		_, stderr, code := runFolio(t, tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.msg) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, code, stderr, tc.code, tc.msg)
		}
	}
}

func exportTarNames(t *testing.T, p string) map[string]bool {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := zstd.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	tr := tar.NewReader(zr)
	names := map[string]bool{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names[strings.TrimSuffix(h.Name, "/")] = true
	}
	return names
}

// exportChromium finds the browser for the browser tests: skipped with a loud
// message outside CI when it is missing, a failure in CI.
func exportChromium(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome"} {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("chromium not found, and browser tests must run in CI")
	}
	t.Skip("SKIPPING BROWSER TEST: chromium not found (install Debian's chromium; CI runs this test)")
	return ""
}

// exportBrowser starts a headless Chromium with a fresh profile and returns a
// tab context.
func exportBrowser(t *testing.T) context.Context {
	t.Helper()
	exe := exportChromium(t)
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe), chromedp.Headless, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck, chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.WindowSize(1200, 900),
	}
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox)
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelA() })
	if err := chromedp.Do(ctx); err != nil { // start the browser without a deadline
		t.Fatal(err)
	}
	return ctx
}

// exportBrowse opens the export's root page at rootURL, types into the filter
// box and expects needle (on the last page) among the rows, opens its
// detail page and waits for the preview frame to load singlefile.html,
// and fails on any console error or uncaught exception.
func exportBrowse(t *testing.T, ctx context.Context, rootURL, needle string) {
	t.Helper()
	mctx, mcancel := context.WithCancel(ctx)
	var (
		mu     sync.Mutex
		errs   []string
		doneCh = make(chan struct{})
	)
	go func() {
		defer close(doneCh)
		for m, err := range chromedp.Console(mctx) {
			if err != nil {
				return
			}
			if m.Type == "error" || m.IsException() {
				mu.Lock()
				errs = append(errs, fmt.Sprintf("console %s: %s (%s:%d)", m.Type, m.Text, m.URL, m.Line))
				mu.Unlock()
			}
		}
	}()
	defer func() {
		time.Sleep(300 * time.Millisecond) // let the last messages arrive
		mcancel()
		<-doneCh
		mu.Lock()
		defer mu.Unlock()
		for _, e := range errs {
			t.Error(e)
		}
	}()
	step := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		c, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		if err := chromedp.Do(c, actions...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	step("open root page", chromedp.Navigate(rootURL), chromedp.WaitVisible(chromedp.CSS("#static-search")))
	text, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#page-rows")))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(text, needle) {
		t.Fatalf("needle already on the first page; the test wants it on another")
	}
	word := strings.Fields(needle)[1]
	step("filter", chromedp.SendKeys(chromedp.CSS("#static-search"), word),
		chromedp.WaitVisible(chromedp.CSS("#search-rows tr")))
	c, cancel := context.WithTimeout(ctx, 20*time.Second)
	got, err := chromedp.Run(c, chromedp.Poll[string](`(function(){var t=document.getElementById('search-rows').innerText;return t.indexOf(`+exportJS(needle)+`)>=0?t:null})()`))
	cancel()
	if err != nil {
		rows, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById('search-rows').innerText + ' | ' + document.getElementById('search-state').innerText`))
		t.Fatalf("filtered rows never showed %q: %v\nrows: %s", needle, err, rows)
	}
	// One row: a filtered row shows what a page's row does (preview,
	// icons, size), so it is many lines of text.
	if n, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('#search-rows tr').length`)); n != 1 {
		t.Errorf("filter %q left %d rows: %q", word, n, got)
	}
	count, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#visible-count")))
	if count != "1" {
		t.Errorf("visible count %q after filtering", count)
	}
	hidden, _ := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.getElementById('page-rows').hidden`))
	if !hidden {
		t.Errorf("page rows still shown while filtering")
	}
	step("open detail page", chromedp.Click(chromedp.CSS("#search-rows a.snapshot-title")),
		chromedp.WaitVisible(chromedp.CSS("#preview-frame[data-loaded]")))
	title, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("h1")))
	if !strings.Contains(title, needle) {
		t.Errorf("detail page h1 %q", title)
	}
	tree, err := chromedp.Call(ctx, page.GetFrameTree, cdp.Empty{})
	if err != nil {
		t.Fatal(err)
	}
	var frames []string
	loaded := false
	for _, ch := range tree.FrameTree.ChildFrames {
		frames = append(frames, ch.Frame.URL+" "+ch.Frame.UnreachableURL)
		if strings.HasSuffix(ch.Frame.URL, "/singlefile/singlefile.html") && ch.Frame.UnreachableURL == "" {
			loaded = true
		}
	}
	if !loaded {
		// A sandboxed frame has an opaque origin and may run out of
		// process, as a target of its own.
		targets, err := chromedp.Targets(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, ti := range targets {
			frames = append(frames, string(ti.Type)+" "+ti.URL)
			if ti.Type == "iframe" && strings.HasSuffix(ti.URL, "/singlefile/singlefile.html") {
				loaded = true
			}
		}
	}
	t.Logf("frames: %v", frames)
	if !loaded {
		t.Errorf("preview frame did not load singlefile.html: %v", frames)
	}
	sandbox, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById('preview-frame').getAttribute('sandbox')`))
	if sandbox != "" {
		t.Errorf("preview sandbox %q", sandbox)
	}
}

func exportJS(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func TestExportInBrowserFromFile(t *testing.T) {
	ctx := exportBrowser(t)
	needle := "Needle unicorn 🦄 <b>bold</b> & co"
	dir, _ := exportCollection(t, 45, needle)
	if _, stderr, code := runFolio(t, "-D", dir, "export", "--page-size", "10"); code != 0 {
		t.Fatalf("export: %s", stderr)
	}
	exportBrowse(t, ctx, "file://"+dir+"/index.html", needle)
}

// TestExportRefusesToEmptyASite: a selection that would drop most of a
// published --out site (a typo in --tag) is refused with one line and
// changes nothing; --allow-shrink lets it through.
func TestExportRefusesToEmptyASite(t *testing.T) {
	dir, _ := exportCollection(t, 12, "Needle")
	out := filepath.Join(t.TempDir(), "public")
	if _, stderr, code := runFolio(t, "-D", dir, "export", "--out", out); code != 0 {
		t.Fatalf("export: exit %d\n%s", code, stderr)
	}
	before := fmt.Sprint(updTree(t, out))
	_, stderr, code := runFolio(t, "-D", dir, "export", "--out", out, "--tag", "no-such-tag")
	want := "folio: export to " + out + " would drop 12 of the 12 snapshots its site holds (the selection matches 0); check the patterns and filters, or pass --allow-shrink\n"
	if code != 1 || !strings.HasSuffix(stderr, want) || !strings.Contains(stderr, "the selection matches no snapshot in the catalog") {
		t.Fatalf("exit %d, stderr %q, want exit 1 and the line %q", code, stderr, want)
	}
	if fmt.Sprint(updTree(t, out)) != before {
		t.Error("the refused export changed the site")
	}
	// In place, or with --allow-shrink, the selection goes through.
	if _, stderr, code := runFolio(t, "-D", dir, "export", "--out", out, "--tag", "no-such-tag", "--allow-shrink"); code != 0 {
		t.Fatalf("--allow-shrink: exit %d\n%s", code, stderr)
	}
	if fmt.Sprint(updTree(t, out)) == before {
		t.Error("--allow-shrink changed nothing")
	}
}

// TestExportSearchesCapturedTextFromFile: words only present in a
// snapshot's captured text are not found by the filter box until its
// "captured text" box is ticked; then the snapshot, on another page, is.
func TestExportSearchesCapturedTextFromFile(t *testing.T) {
	ctx := exportBrowser(t)
	needle := "Harbour notes"
	dir, e := exportCollection(t, 45, needle)
	p := filepath.Join(dir, filepath.FromSlash(e.Dir), "readability", "content.txt")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("An article about the Zanzibar  QUOKKAFISH\nand its habits."), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := runFolio(t, "-D", dir, "export", "--page-size", "10"); code != 0 {
		t.Fatalf("export: %s", stderr)
	}
	shards, _ := filepath.Glob(filepath.Join(dir, "site", "text", "*.js"))
	found := 0
	for _, s := range shards {
		if data, _ := os.ReadFile(s); strings.Contains(string(data), `"an article about the zanzibar quokkafish and its habits."`) {
			found++
		}
	}
	if len(shards) != 5 || found != 1 { // 45 snapshots in pages of 10: the first of 5, four of 10
		t.Fatalf("%d text shards, %d holding the text", len(shards), found)
	}

	poll := func(what, js string) string {
		t.Helper()
		c, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		got, err := chromedp.Run(c, chromedp.Poll[string](js))
		if err != nil {
			state, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById('search-state').innerText + ' | ' + document.getElementById('search-rows').innerText`))
			t.Fatalf("%s: %v (state | rows: %s)", what, err, state)
		}
		return got
	}
	if _, err := chromedp.Run(ctx, chromedp.Navigate("file://"+dir+"/index.html")); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS("#static-search")), chromedp.SendKeys(chromedp.CSS("#static-search"), "quokkafish habits")); err != nil {
		t.Fatal(err)
	}
	poll("titles only", `(function(){var s=document.getElementById('search-state').innerText;return s==='matches from all pages'&&document.getElementById('visible-count').innerText==='0'?s:null})()`)
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#static-search-text"))); err != nil {
		t.Fatal(err)
	}
	poll("captured text", `(function(){var t=document.getElementById('search-rows').innerText;return t.indexOf(`+exportJS(needle)+`)>=0&&document.getElementById('search-state').innerText.indexOf('captured text included')>=0?t:null})()`)
	if count, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#visible-count"))); count != "1" {
		t.Errorf("visible count %q after the text search", count)
	}
}

// TestExportPagesSpeakOneVocabulary: the root page names statuses as the
// detail pages do, a queued snapshot shows a still label, no value shows
// as "...", and an empty collection's page says how to add pages.
func TestExportPagesSpeakOneVocabulary(t *testing.T) {
	dir, _ := exportCollection(t, 30, "Needle")
	if _, stderr, code := runFolio(t, "-D", dir, "export", "--page-size", "100"); code != 0 {
		t.Fatalf("export: %s", stderr)
	}
	root, err := os.ReadFile(filepath.Join(dir, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	page := string(root)
	for _, bad := range []string{"spinner", ">...<", `status-sealed">sealed<`} {
		if strings.Contains(page, bad) {
			t.Errorf("root page holds %q", bad)
		}
	}
	for _, want := range []string{`<span class="status-pill status-archived">archived</span>`, `<span class="snapshot-preview-empty pending-label">queued</span>`} {
		if !strings.Contains(page, want) {
			t.Errorf("root page lacks %q", want)
		}
	}

	empty := filepath.Join(t.TempDir(), "empty")
	if _, stderr, code := runFolio(t, "init", "-D", empty); code != 0 {
		t.Fatalf("init: %s", stderr)
	}
	if _, stderr, code := runFolio(t, "-D", empty, "export"); code != 0 {
		t.Fatalf("export of an empty collection: %s", stderr)
	}
	root, _ = os.ReadFile(filepath.Join(empty, "index.html"))
	if !strings.Contains(string(root), "No snapshots yet. Archive a page with <code>folio add URL</code>") {
		t.Errorf("empty collection's page:\n%s", root)
	}
}

// TestExportShowsOutputAddedByHand: media dropped into a snapshot folder
// with no record shows on the next plain export, in place and in an --out
// copy, which also gets the file.
func TestExportShowsOutputAddedByHand(t *testing.T) {
	dir, e := exportCollection(t, 30, "Needle")
	out := filepath.Join(t.TempDir(), "public")
	for _, args := range [][]string{{"export"}, {"export", "--out", out}} {
		if _, stderr, code := runFolio(t, append([]string{"-D", dir}, args...)...); code != 0 {
			t.Fatalf("%v: exit %d\n%s", args, code, stderr)
		}
	}
	clip := filepath.Join(dir, filepath.FromSlash(e.Dir), "ytdlp", "Clip from the talk.mp4")
	if err := os.MkdirAll(filepath.Dir(clip), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(clip, []byte("not really an mp4"), 0o644); err != nil {
		t.Fatal(err)
	}
	const want = `<video controls preload="none" src="./ytdlp/Clip%20from%20the%20talk.mp4"></video>`
	for _, root := range []string{dir, out} {
		args := []string{"-D", dir, "export"}
		if root == out {
			args = append(args, "--out", out)
		}
		_, stderr, code := runFolio(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d\n%s", args, code, stderr)
		}
		if !strings.Contains(stderr, "1 pages written, 29 unchanged") && !strings.Contains(stderr, "1 page written, 29 unchanged") {
			t.Errorf("%v: %s", args, stderr)
		}
		page, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(e.Dir), "index.html"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(page), want) {
			t.Errorf("%s: the page does not play the clip added by hand", root)
		}
	}
	if _, err := os.Stat(filepath.Join(out, filepath.FromSlash(e.Dir), "ytdlp", "Clip from the talk.mp4")); err != nil {
		t.Errorf("--out copy lacks the clip: %v", err)
	}
}

// TestExportKilledLeavesNoTemps kills export in the middle of atomic
// writes (FOLIO_FAULT=temp:N exits with the temp file written and not
// renamed, as kill -9 would): the next export removes every temp file the
// killed one left, in the snapshot folders (.index.html.folio-tmp-*) and
// in site/, in place and in an --out copy.
func TestExportKilledLeavesNoTemps(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec string
		out  bool
	}{
		{"asset", "temp:1", false},
		{"page", "temp:12", false},
		{"later page", "temp:30", false},
		{"out page", "temp:15", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, _ := catCollection(t, 24)
			catRun(t, dir, "reindex").want(t, 0)
			args := []string{"export", "--workers", "1"}
			root := dir
			if tc.out {
				root = filepath.Join(t.TempDir(), "site")
				args = append(args, "--out", root)
			}
			if !crashFault(t, dir, tc.spec, nil, args...) {
				t.Fatal("the fault point was never reached")
			}
			left := crashTemps(t, root)
			if len(left) == 0 {
				t.Fatal("the killed export left no temp file to clean")
			}
			t.Logf("left: %v", left)
			catRun(t, dir, args...).want(t, 0)
			crashNoTemps(t, root)
			crashNoTemps(t, dir)
		})
	}
}

// TestExportAddedSnapshotKeepsOlderPages: the root pages are cut from the
// oldest end, so a snapshot added at the newest end is written to the
// first root page and its shards only; the older pages, which do not say
// how many snapshots there are, stay as they were (same bytes, same
// mtime), and a --full export after it finds nothing to write.
func TestExportAddedSnapshotKeepsOlderPages(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	m, err := gen.Current(dir, gen.Options{N: 44, Seed: 11, NoSync: true, Plain: true})
	if err != nil {
		t.Fatal(err)
	}
	order := append([]gen.Entry(nil), m.Snapshots...)
	sort.SliceStable(order, func(a, b int) bool { return order[a].BookmarkedAt.After(order[b].BookmarkedAt) })
	newest := filepath.Join(dir, filepath.FromSlash(order[0].Dir))
	parked := filepath.Join(t.TempDir(), "parked")
	if err := os.Rename(newest, parked); err != nil {
		t.Fatal(err)
	}
	export := func(args ...string) {
		t.Helper()
		if _, stderr, code := runFolio(t, append([]string{"-D", dir, "export", "--page-size", "10"}, args...)...); code != 0 {
			t.Fatalf("export %v: exit %d\n%s", args, code, stderr)
		}
	}
	export() // 43 snapshots: the first page of 13, three of 10
	before := updTree(t, dir)
	time.Sleep(20 * time.Millisecond) // a distinct mtime for a file written again
	if err := os.Rename(parked, newest); err != nil {
		t.Fatal(err)
	}
	export() // 44: the first page of 14
	after := updTree(t, dir)
	want := map[string]bool{"index.html": true, "index.jsonl": true, "site/search/1.js": true, "site/text/1.js": true}
	for rel, b := range before {
		if changed := after[rel] != b; changed != want[rel] {
			t.Errorf("%s changed = %v, want %v", rel, changed, want[rel])
		}
	}
	for _, n := range []string{"2", "3", "4"} {
		if _, ok := after["site/page-"+n+".html"]; !ok {
			t.Errorf("site/page-%s.html missing", n)
		}
	}
	if _, ok := after["site/page-5.html"]; ok {
		t.Error("site/page-5.html written: 44 snapshots in pages of 10 make four")
	}
	first, _ := os.ReadFile(filepath.Join(dir, "index.html"))
	second, _ := os.ReadFile(filepath.Join(dir, "site", "page-2.html"))
	if !strings.Contains(string(first), `<span id="count-of">of 44 snapshots</span>`) || strings.Count(string(first), `class="snapshot-row`) != 14 {
		t.Errorf("index.html does not list 14 of 44 snapshots")
	}
	if !strings.Contains(string(second), `<span id="count-of">snapshots on this page</span>`) || strings.Contains(string(second), "of 44") || strings.Count(string(second), `class="snapshot-row`) != 10 {
		t.Errorf("site/page-2.html does not list 10 snapshots without the total")
	}
	if !strings.Contains(string(first), order[0].Dir) {
		t.Errorf("index.html does not list the snapshot added")
	}
	// --full leaves a page whose bytes are on disk as it is (the root
	// manifest it writes anew: its bytes must be the same).
	export("--full")
	full := updTree(t, dir)
	for rel, a := range after {
		f := full[rel]
		if rel == "index.jsonl" {
			a, f = strings.Join(strings.Fields(a)[:2], " "), strings.Join(strings.Fields(f)[:2], " ")
		}
		if f != a {
			t.Errorf("--full after the addition wrote %s otherwise", rel)
		}
	}
}
