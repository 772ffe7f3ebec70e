package main_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/fixtures"
)

// The tests of `folio add` run the real binary with the real Chromium
// against the fixture site on loopback.

func fixtureServer(t *testing.T) *fixtures.Server {
	t.Helper()
	srv, err := fixtures.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// newCollection makes an empty collection with a small viewport, so
// screenshots and PDFs stay quick.
func newCollection(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if _, stderr, code := runFolio(t, "init", "-D", dir); code != 0 {
		t.Fatalf("init: %s", stderr)
	}
	conf := "[SERVER_CONFIG]\nRESOLUTION = 800,600\nTIMEOUT = 20\nCHROME_PAGELOAD_TIMEOUT = 5\n"
	if err := os.WriteFile(filepath.Join(dir, "ArchiveBox.conf"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// added is one snapshot folder with its parsed index.jsonl.
type added struct {
	dir     string
	snap    archive.Snapshot
	results map[string]archive.Result
}

// snapshots reads every current-layout snapshot of the collection from the
// tree, oldest first.
func snapshots(t *testing.T, dir string) []added {
	t.Helper()
	var out []added
	matches, _ := filepath.Glob(filepath.Join(dir, "archive/users/*/snapshots/*/*/*/index.jsonl"))
	for _, m := range matches {
		ix, bad, err := archive.ReadIndex(filepath.Dir(m))
		if err != nil || len(bad) > 0 {
			t.Fatalf("%s: %v %v", m, err, bad)
		}
		s, _ := ix.Snapshot()
		a := added{dir: filepath.Dir(m), snap: s, results: map[string]archive.Result{}}
		for _, r := range ix.Results() {
			a.results[r.Plugin] = r
		}
		out = append(out, a)
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].snap.Timestamp < out[j-1].snap.Timestamp; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

func byURL(list []added, url string) []added {
	var out []added
	for _, a := range list {
		if a.snap.URL == url {
			out = append(out, a)
		}
	}
	return out
}

func TestAddCapturesPages(t *testing.T) {
	srv := fixtureServer(t)
	dir := newCollection(t)
	page, pdf := srv.URL+"/index.html", srv.URL+"/doc.pdf"
	stdout, stderr, code := runFolio(t, "add", "-D", dir, "--tag", "lighthouses,history", page, pdf)
	if code != 0 {
		t.Fatalf("add exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "[√] Add complete") || !strings.Contains(stdout, "Sealed:            2") {
		t.Errorf("summary:\n%s", stdout)
	}
	snaps := snapshots(t, dir)
	if len(snaps) != 2 {
		t.Fatalf("%d snapshots", len(snaps))
	}
	s := byURL(snaps, page)[0]
	if s.snap.Status != "sealed" || s.snap.Title != "Keepers of the Light: A Short History of Lighthouses" ||
		strings.Join(s.snap.Tags, ",") != "history,lighthouses" || s.snap.FSVersion != "0.9.4" || s.snap.CrawlID == "" {
		t.Errorf("snapshot record %+v", s.snap)
	}
	if want := filepath.Join("archive/users/system/snapshots", s.snap.BookmarkedAt.UTC().Format("20060102"),
		strings.ReplaceAll(strings.TrimPrefix(srv.URL, "http://"), ":", "_"), s.snap.ID); !strings.HasSuffix(s.dir, want) {
		t.Errorf("folder %s, want …/%s", s.dir, want)
	}
	for plugin, file := range map[string]string{
		"title": "title/title.txt", "favicon": "favicon/favicon.ico", "headers": "headers/headers.json",
		"screenshot": "screenshot/screenshot.png", "pdf": "pdf/output.pdf", "dom": "dom/output.html",
		"singlefile": "singlefile/singlefile.html", "readability": "readability/content.html",
		"htmltotext": "htmltotext/htmltotext.txt", "hashes": "hashes/hashes.json",
	} {
		r := s.results[plugin]
		if r.Status != "succeeded" || r.SnapshotID != s.snap.ID || r.StartTS.IsZero() || r.EndTS.Before(r.StartTS) || len(r.OutputFiles) == 0 {
			t.Errorf("%s result: %+v", plugin, r)
		}
		if _, err := os.Stat(filepath.Join(s.dir, file)); err != nil {
			t.Errorf("%s: %v", plugin, err)
		}
	}
	img, err := png.DecodeConfig(bytes.NewReader(mustRead(t, filepath.Join(s.dir, "screenshot/screenshot.png"))))
	if err != nil || img.Width != 800 {
		t.Errorf("screenshot: %v, width %d (RESOLUTION says 800)", err, img.Width)
	}
	if dom := string(mustRead(t, filepath.Join(s.dir, "dom/output.html"))); !strings.Contains(dom, "Inserted by script") {
		t.Error("the DOM capture lacks the text the page's script inserted")
	}
	st := byURL(snaps, pdf)[0]
	want, _ := fixtures.Read("doc.pdf", "")
	if got := mustRead(t, filepath.Join(st.dir, "staticfile/doc.pdf")); !bytes.Equal(got, want) {
		t.Error("the PDF was not saved as it is")
	}
	if r := st.results["screenshot"]; r.Status != "noresults" {
		t.Errorf("screenshot of a PDF: %q %q", r.Status, r.OutputStr)
	}

	// The input is kept, the crawl links the snapshot, the catalog has
	// it, and the export shows its outputs.
	kept, _ := filepath.Glob(filepath.Join(dir, "sources/*__cli_add.txt"))
	if len(kept) != 1 || string(mustRead(t, kept[0])) != page+"\n"+pdf+"\n" {
		t.Errorf("sources: %v", kept)
	}
	links, _ := filepath.Glob(filepath.Join(dir, "archive/users/system/crawls/*/*/"+s.snap.CrawlID+"/snapshots/*/"+s.snap.ID))
	if len(links) != 1 {
		t.Errorf("crawl links %v", links)
	} else if target, err := filepath.EvalSymlinks(links[0]); err != nil || target != s.dir {
		t.Errorf("crawl link resolves to %q (%v), want %s", target, err, s.dir)
	}
	out, stderr, code := runFolio(t, "list", "-D", dir, "--jsonl", "--tag", "lighthouses")
	if code != 0 || strings.Count(out, "\n") != 2 || !strings.Contains(out, `"status": "sealed"`) {
		t.Errorf("list: %d %s %s", code, out, stderr)
	}
	if _, stderr, code := runFolio(t, "export", "-D", dir); code != 0 {
		t.Fatalf("export: %s", stderr)
	}
	detail := string(mustRead(t, filepath.Join(s.dir, "index.html")))
	for _, want := range []string{"screenshot/screenshot.png", "singlefile/singlefile.html", "Keepers of the Light"} {
		if !strings.Contains(detail, want) {
			t.Errorf("the detail page lacks %q", want)
		}
	}

	// The same URL again is a new capture, shown beside the first; with
	// --skip-existing it is not.
	if _, stderr, code := runFolio(t, "add", "-D", dir, "--plugins", "title", page); code != 0 {
		t.Fatalf("second add: %s", stderr)
	}
	again := byURL(snapshots(t, dir), page)
	if len(again) != 2 || again[0].snap.ID == again[1].snap.ID {
		t.Fatalf("captures of %s: %d", page, len(again))
	}
	if r := again[1].results; len(r) != 1 || r["title"].Status != "succeeded" {
		t.Errorf("--plugins title ran %v", r)
	}
	out, _, code = runFolio(t, "add", "-D", dir, "--skip-existing", page)
	if code != 0 || !strings.Contains(out, "Already present:   1") || len(byURL(snapshots(t, dir), page)) != 2 {
		t.Errorf("--skip-existing: exit %d\n%s", code, out)
	}
	if _, stderr, code := runFolio(t, "export", "-D", dir); code != 0 {
		t.Fatalf("export: %s", stderr)
	}
	if detail := string(mustRead(t, filepath.Join(again[1].dir, "index.html"))); !strings.Contains(detail, "Other captures of this URL") {
		t.Error("the second capture's page does not list the first")
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestAddInputFormats(t *testing.T) {
	srv := fixtureServer(t)
	for _, c := range []struct {
		file string
		n    int
	}{{"bookmarks.html", 3}, {"feed.xml", 2}, {"atom.xml", 2}, {"urls.jsonl", 3}, {"urls.txt", 3}} {
		t.Run(c.file, func(t *testing.T) {
			dir := newCollection(t)
			data, err := fixtures.Read(c.file, srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			in := filepath.Join(t.TempDir(), c.file)
			if err := os.WriteFile(in, data, 0o644); err != nil {
				t.Fatal(err)
			}
			out, stderr, code := runFolio(t, "add", "-D", dir, "--index-only", "--from", in)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			snaps := snapshots(t, dir)
			if len(snaps) < c.n {
				t.Fatalf("%d snapshots, want at least %d\n%s", len(snaps), c.n, out)
			}
			for _, s := range snaps {
				if s.snap.Status != "queued" || len(s.results) != 0 || !strings.HasPrefix(s.snap.URL, srv.URL) {
					t.Errorf("%+v", s.snap)
				}
			}
		})
	}
}

func TestAddBadInput(t *testing.T) {
	dir := newCollection(t)
	// Nothing valid: exit 2, one line per bad item, nothing written.
	_, stderr, code := runFolio(t, "add", "-D", dir, "ftp://example.com/x", "javascript:alert(1)", "not a url")
	if code != 2 || !strings.Contains(stderr, "no valid URL") || !strings.Contains(stderr, "ftp://example.com/x") {
		t.Errorf("exit %d\n%s", code, stderr)
	}
	if kept, _ := filepath.Glob(filepath.Join(dir, "sources/*")); len(kept) != 0 || len(snapshots(t, dir)) != 0 {
		t.Errorf("an add with no valid URL wrote %v", kept)
	}
	if _, stderr, code := runFolio(t, "add", "-D", dir); code != 2 || !strings.Contains(stderr, "no URLs given") {
		t.Errorf("no input: exit %d %s", code, stderr)
	}
	for _, args := range [][]string{{"--depth", "2", "http://127.0.0.1:9/"}, {"--parser", "xml", "http://127.0.0.1:9/"},
		{"--plugins", "nosuch", "http://127.0.0.1:9/"}, {"--parallel", "0", "http://127.0.0.1:9/"}} {
		_, stderr, code := runFolio(t, append([]string{"add", "-D", dir}, args...)...)
		if code == 0 || len(snapshots(t, dir)) != 0 {
			t.Errorf("%v: exit %d %s", args, code, stderr)
		}
	}
	// Some valid: the rest are reported and the valid ones added.
	out, stderr, code := runFolio(t, "add", "-D", dir, "--index-only", "http://127.0.0.1:9/ok", "mailto:someone@example.com")
	if code != 0 || !strings.Contains(stderr, "arguments line 2") || !strings.Contains(out, "Invalid input:     1") || len(snapshots(t, dir)) != 1 {
		t.Errorf("exit %d\n%s\n%s", code, out, stderr)
	}
}

func TestAddRecordsFailures(t *testing.T) {
	srv := fixtureServer(t)
	dir := newCollection(t)
	urls := []string{srv.URL + "/404", srv.URL + "/loop/a", srv.URL + "/never", srv.URL + "/about.html"}
	out, stderr, code := runFolio(t, append([]string{"add", "-D", dir, "--plugins", "title,screenshot,dom", "--parallel", "4", "--per-domain", "4"}, urls...)...)
	if code != 3 {
		t.Fatalf("exit %d, want 3\n%s\n%s", code, out, stderr)
	}
	snaps := snapshots(t, dir)
	for _, c := range []struct{ url, reason string }{
		{urls[0], "HTTP 404"}, {urls[1], "ERR_TOO_MANY_REDIRECTS"}, {urls[2], "did not finish loading"},
	} {
		s := byURL(snaps, c.url)
		if len(s) != 1 || s[0].snap.Status != "sealed" {
			t.Fatalf("%s: %+v", c.url, s)
		}
		r := s[0].results["screenshot"]
		if r.Status != "failed" || !strings.Contains(r.OutputStr, c.reason) {
			t.Errorf("%s: screenshot %q %q", c.url, r.Status, r.OutputStr)
		}
		if !strings.Contains(stderr, c.url) {
			t.Errorf("stderr does not name %s", c.url)
		}
	}
	if s := byURL(snaps, urls[3]); len(s) != 1 || s[0].results["screenshot"].Status != "succeeded" {
		t.Errorf("the good page beside the bad ones: %+v", s)
	}
	// Nothing of the three bad pages was kept: they failed, not partial.
	if !strings.Contains(out, "3 snapshots failed (nothing archived)") || !strings.Contains(out, "Failed:            3\n") || !strings.Contains(out, "Partial:           0\n") {
		t.Errorf("summary:\n%s", out)
	}
}

func TestAddDepthOne(t *testing.T) {
	srv := fixtureServer(t)
	dir := newCollection(t)
	out, stderr, code := runFolio(t, "add", "-D", dir, "--depth", "1", "--plugins", "title", srv.URL+"/links.html")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	snaps := snapshots(t, dir)
	got := map[string]int{}
	for _, s := range snaps {
		got[strings.TrimPrefix(s.snap.URL, srv.URL)] = s.snap.Depth
		if s.snap.Status != "sealed" {
			t.Errorf("%s: %s", s.snap.URL, s.snap.Status)
		}
	}
	want := map[string]int{"/links.html": 0, "/index.html": 1, "/about.html": 1, "/fog-signals.html": 1, "/slow": 1, "/headers": 1}
	if len(got) != len(want) {
		t.Errorf("snapshots %v, want %v", got, want)
	}
	for u, d := range want {
		if g, ok := got[u]; !ok || g != d {
			t.Errorf("%s: depth %d (present %v), want %d", u, g, ok, d)
		}
	}
}

func TestAddHooks(t *testing.T) {
	srv := fixtureServer(t)
	dir := newCollection(t)
	hook := `#!/bin/sh
# Counts the words of the page's text, which htmltotext wrote before.
words=$(wc -w < "$SNAP_DIR/htmltotext/htmltotext.txt")
echo "$words" > words.txt
echo '{"type":"ArchiveResult","status":"succeeded","output_str":"wordcount/words.txt"}'
`
	writeHook(t, dir, "wordcount", "on_Snapshot__80_wordcount.sh", hook)
	_, stderr, code := runFolio(t, "add", "-D", dir, "--plugins", "htmltotext,wordcount", srv.URL+"/index.html")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	s := snapshots(t, dir)[0]
	r := s.results["wordcount"]
	if r.Status != "succeeded" || r.HookName != "on_Snapshot__80_wordcount" || len(r.Cmd) != 2 {
		t.Errorf("hook result %+v", r)
	}
	if n := strings.TrimSpace(string(mustRead(t, filepath.Join(s.dir, "wordcount/words.txt")))); n == "0" || n == "" {
		t.Errorf("words.txt = %q", n)
	}
}

// Ctrl-C stops the run with exit 130: what finished is sealed, the rest
// waits queued, and --resume finishes it.
func TestAddInterruptAndResume(t *testing.T) {
	srv := fixtureServer(t)
	dir := newCollection(t)
	var urls []string
	for i := range 6 {
		urls = append(urls, srv.URL+"/slow?n="+string(rune('a'+i)))
	}
	cmd := exec.Command(folioBin(t), append([]string{"add", "-D", dir, "--parallel", "1", "--plugins", "title,hashes"}, urls...)...)
	cmd.Env = append(os.Environ(), "FOLIO_DATA_DIR=")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Interrupt once the first snapshot is sealed.
	deadline := time.Now().Add(60 * time.Second)
	for !anySealed(t, dir) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no snapshot sealed in time\n%s", errb.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
		t.Fatalf("exit %v, want 130\n%s\n%s", err, out.String(), errb.String())
	}
	if !strings.Contains(out.String(), "Add interrupted") {
		t.Errorf("summary:\n%s", out.String())
	}
	sealed, queued := 0, 0
	for _, s := range snapshots(t, dir) {
		switch s.snap.Status {
		case "sealed":
			sealed++
		case "queued":
			queued++
		default:
			t.Errorf("%s left %s", s.snap.URL, s.snap.Status)
		}
	}
	if sealed == 0 || queued == 0 || sealed+queued != 6 {
		t.Fatalf("sealed %d, queued %d", sealed, queued)
	}
	stdout, stderr, code := runFolio(t, "add", "-D", dir, "--resume", "--plugins", "title,hashes")
	if code != 0 || !strings.Contains(stdout, "Resumed:           "+strconv.Itoa(queued)) {
		t.Fatalf("resume: exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, s := range snapshots(t, dir) {
		if s.snap.Status != "sealed" || s.results["title"].Status != "succeeded" {
			t.Errorf("after resume %s: %s %+v", s.snap.URL, s.snap.Status, s.results["title"])
		}
	}
}

func anySealed(t *testing.T, dir string) bool {
	matches, _ := filepath.Glob(filepath.Join(dir, "archive/users/*/snapshots/*/*/*/index.jsonl"))
	for _, m := range matches {
		f, err := os.Open(m)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		if sc.Scan() {
			var rec struct{ Status string }
			if json.Unmarshal(sc.Bytes(), &rec) == nil && rec.Status == "sealed" {
				f.Close()
				return true
			}
		}
		f.Close()
	}
	return false
}

// Two adds at once: the second waits for nothing and exits 11; the first
// is not disturbed.
func TestAddWhileAnotherAddRuns(t *testing.T) {
	srv := fixtureServer(t)
	dir := newCollection(t)
	cmd := exec.Command(folioBin(t), "add", "-D", dir, "--plugins", "title", srv.URL+"/slow")
	cmd.Env = append(os.Environ(), "FOLIO_DATA_DIR=")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for len(snapshots(t, dir)) == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	_, stderr, code := runFolio(t, "add", "-D", dir, "--plugins", "title", srv.URL+"/about.html")
	if code != 11 || !strings.Contains(stderr, "locked") {
		t.Errorf("second add: exit %d %s", code, stderr)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("first add: %v", err)
	}
	if s := snapshots(t, dir); len(s) != 1 || s[0].snap.Status != "sealed" {
		t.Errorf("snapshots %+v", s)
	}
}

// The example wget hook of docs/hooks runs as the README says.
func TestAddExampleWgetHook(t *testing.T) {
	srv := fixtureServer(t)
	dir := newCollection(t)
	script := mustRead(t, filepath.Join("..", "..", "docs", "hooks", "wget", "on_Snapshot__61_wget.sh"))
	hookDir := filepath.Join(dir, "custom_plugins", "wget")
	if err := os.MkdirAll(hookDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(hookDir, "on_Snapshot__61_wget.sh"), script, 0o755); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := runFolio(t, "add", "-D", dir, "--plugins", "wget", srv.URL+"/index.html")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	s := snapshots(t, dir)[0]
	if r := s.results["wget"]; r.Status != "succeeded" || len(r.OutputFiles) < 3 {
		t.Fatalf("wget result %+v", r)
	}
	host := strings.TrimPrefix(srv.URL, "http://")
	for _, f := range []string{"index.html", "style.css", "image.png"} {
		if _, err := os.Stat(filepath.Join(s.dir, "wget", host, f)); err != nil {
			t.Errorf("the mirror lacks %s: %v", f, err)
		}
	}
}

// Without a browser for the browser plugins, add stops before it writes
// anything; plugins that need none still run.
func TestAddWithoutChromium(t *testing.T) {
	dir := newCollection(t)
	cmd := exec.Command(folioBin(t), "add", "-D", dir, "http://127.0.0.1:9/page")
	cmd.Env = append(os.Environ(), "FOLIO_DATA_DIR=", "CHROME_BINARY=/nonexistent/chromium")
	var errb bytes.Buffer
	cmd.Stderr = &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(errb.String(), "no Chromium found") {
		t.Fatalf("exit %v: %s", err, errb.String())
	}
	if kept, _ := filepath.Glob(filepath.Join(dir, "sources/*")); len(kept) != 0 || len(snapshots(t, dir)) != 0 {
		t.Errorf("a run that could not start wrote %v", kept)
	}
	cmd = exec.Command(folioBin(t), "add", "-D", dir, "--plugins", "hashes", "http://127.0.0.1:9/page")
	cmd.Env = append(os.Environ(), "FOLIO_DATA_DIR=", "CHROME_BINARY=/nonexistent/chromium")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("hashes only: %v\n%s", err, out)
	}
	if s := snapshots(t, dir); len(s) != 1 || s[0].results["hashes"].Status != "succeeded" {
		t.Errorf("%+v", s)
	}
}

// TestAddKilledLeavesNoTemps kills add in the middle of atomic writes
// (FOLIO_FAULT=temp:N exits with the temp file written and not renamed,
// as kill -9 would; Chromium dies with folio): the next add removes the
// temp files and the half-made snapshot folder the killed one left, and
// the Chromium profile it left in $TMPDIR, but not a profile a living
// process holds.
func TestAddKilledLeavesNoTemps(t *testing.T) {
	srv := fixtureServer(t)
	for _, tc := range []struct {
		name string
		spec string
	}{
		{"making the folder", "temp:2"}, // 1 is the sources/ file
		{"capturing", "temp:5"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := newCollection(t)
			tmp := t.TempDir()
			env := []string{"FOLIO_DATA_DIR=", "TMPDIR=" + tmp}
			args := []string{"add", "--plugins", "title,dom,hashes", srv.URL + "/index.html"}
			if !crashFault(t, dir, tc.spec, env, args...) {
				t.Fatal("the fault point was never reached")
			}
			left := crashTemps(t, dir)
			profiles, _ := filepath.Glob(filepath.Join(tmp, "folio-chromium-*"))
			if len(left) == 0 || len(profiles) == 0 {
				t.Fatalf("the killed add left temp files %v and Chromium profiles %v: nothing to clean", left, profiles)
			}
			// The killed folio's Chromium shuts down on its own; the rerun
			// comes once it has, as a user's would.
			waitNoChromium(t, tmp)
			// A profile whose lock is held stands for a folio still running.
			live := filepath.Join(tmp, "folio-chromium-live")
			os.Mkdir(live, 0o755)
			lock, err := os.Create(filepath.Join(live, ".folio-profile.lock"))
			if err != nil {
				t.Fatal(err)
			}
			defer lock.Close()
			if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
				t.Fatal(err)
			}
			r := updRun(t, dir, env, "add", "--resume", "--plugins", "title,dom,hashes")
			if r.code != 0 {
				t.Fatalf("rerun: exit %d\n%s", r.code, r.stderr)
			}
			crashNoTemps(t, dir)
			if after, _ := filepath.Glob(filepath.Join(tmp, "folio-chromium-*")); len(after) != 1 || after[0] != live {
				t.Errorf("Chromium profiles after the rerun: %v, want only %s", after, live)
			}
			crashAgrees(t, dir)
			for _, s := range snapshots(t, dir) {
				if s.snap.Status != "sealed" {
					t.Errorf("%s is %s after the rerun", s.dir, s.snap.Status)
				}
			}
		})
	}
}

// waitNoChromium waits until no process runs with a profile below tmp.
func waitNoChromium(t *testing.T, tmp string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
		running := false
		for _, c := range cmdlines {
			if b, err := os.ReadFile(c); err == nil && strings.Contains(string(b), "--user-data-dir="+tmp) {
				running = true
				break
			}
		}
		if !running {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the killed add's Chromium still runs after 30 s")
		}
	}
}
