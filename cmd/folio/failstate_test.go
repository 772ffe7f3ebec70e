package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// A capture of a host that does not answer archives nothing but hashes:
// it is failed, not archived, in add's summary, status, list, the root
// page and its own page, which says why each capture method failed.
func TestUnreachableCaptureShowsFailed(t *testing.T) {
	dir := newCollection(t)
	addr, _ := deadPort(t)
	url := "http://" + addr + "/"
	out, stderr, code := runFolio(t, "add", "-D", dir, url)
	if code != 3 {
		t.Fatalf("add exit %d, want 3\n%s\n%s", code, out, stderr)
	}
	for _, want := range []string{"[X] Add finished: 1 snapshot failed (nothing archived)\n", "Failed:            1\n",
		"Partial:           0\n", "Retry with:        folio update --status failed\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("add summary lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "snapshots have") || !strings.Contains(stderr, "nothing archived") {
		t.Errorf("add:\n%s\n%s", out, stderr)
	}

	out, stderr, code = runFolio(t, "status", "-D", dir)
	for _, want := range []string{"by state           failed 1\n", "failed             1 snapshot (", "partial            0 snapshots (",
		"next               folio update --status failed"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("status (exit %d) lacks %q:\n%s%s", code, want, out, stderr)
		}
	}
	out, _, _ = runFolio(t, "status", "-D", dir, "--json")
	var st struct{ Failed, Partial int }
	if err := json.Unmarshal([]byte(out), &st); err != nil || st.Failed != 1 || st.Partial != 0 {
		t.Errorf("status --json: %+v %v\n%s", st, err, out)
	}

	for status, n := range map[string]int{"failed": 1, "sealed": 1, "archived": 0, "partial": 0, "queued": 0} {
		out, stderr, code := runFolio(t, "list", "-D", dir, "--status", status, "--csv", "url,state")
		lines := strings.Split(strings.TrimSpace(out), "\r\n")
		if code != 0 || len(lines) != 1+n || n == 1 && lines[1] != url+`,failed` {
			t.Errorf("list --status %s: exit %d\n%s%s", status, code, out, stderr)
		}
	}
	if _, stderr, code := runFolio(t, "list", "-D", dir, "--status", "broken"); code != 2 || !strings.Contains(stderr, "archived, partial, failed") {
		t.Errorf("list --status broken: exit %d %s", code, stderr)
	}
	if out, _, _ := runFolio(t, "list", "--help"); !strings.Contains(out, "failed (finished, nothing kept") {
		t.Errorf("list --help does not say what failed means:\n%s", out)
	}

	if out, stderr, code := runFolio(t, "export", "-D", dir); code != 0 {
		t.Fatalf("export exit %d\n%s\n%s", code, out, stderr)
	}
	root := string(mustRead(t, filepath.Join(dir, "index.html")))
	if !strings.Contains(root, `<span class="status-pill status-failed">failed</span>`) || strings.Contains(root, ">archived</span>") ||
		!strings.Contains(root, `1 output</small><small class="failures">10 failed</small>`) {
		t.Errorf("root page row:\n%s", between(root, `<tr class="snapshot-row`, "</tr>"))
	}
	snaps := snapshots(t, dir)
	if len(snaps) != 1 {
		t.Fatalf("%d snapshots", len(snaps))
	}
	page := string(mustRead(t, filepath.Join(snaps[0].dir, "index.html")))
	failed := between(page, `<section class="failed">`, "</section>")
	for _, want := range []string{`<span class="status-pill status-failed">failed</span>`, "failed: nothing was archived"} {
		if !strings.Contains(page, want) {
			t.Errorf("detail page lacks %q", want)
		}
	}
	for _, plugin := range []string{"screenshot", "dom", "title"} {
		if !strings.Contains(failed, "<li>"+plugin+" (failed): ") {
			t.Errorf("Failed list lacks %s:\n%s", plugin, failed)
		}
	}
	if !strings.Contains(failed, "ERR_CONNECTION_REFUSED") || strings.Contains(page, `id="preview-frame"`) {
		t.Errorf("detail page: a preview, or no reason in the Failed list:\n%s", page)
	}
	manifest := string(mustRead(t, filepath.Join(dir, "index.jsonl")))
	if !strings.Contains(manifest, `"is_archived": false`) {
		t.Errorf("root manifest calls the failed snapshot archived:\n%s", manifest)
	}
}

// between returns s from the first start to the end that follows it.
func between(s, start, end string) string {
	i := strings.Index(s, start)
	if i < 0 {
		return ""
	}
	j := strings.Index(s[i:], end)
	if j < 0 {
		return s[i:]
	}
	return s[i : i+j+len(end)]
}

// A capture that kept the page but had a capture method fail is partial:
// counted apart from the failed ones, shown with its own pill, its page
// previewing what was kept and saying why the method failed.
func TestPartialCaptureShowsPartial(t *testing.T) {
	srv := fixtureServer(t)
	dir := newCollection(t)
	writeHook(t, dir, "refuser", "on_Snapshot__80_refuser.sh",
		"#!/bin/sh\necho '{\"type\":\"ArchiveResult\",\"status\":\"failed\",\"output_str\":\"the service said no\"}'\nexit 1\n")
	out, stderr, code := runFolio(t, "add", "-D", dir, "--plugins", "dom,refuser", srv.URL+"/index.html", srv.URL+"/about.html")
	if code != 3 || !strings.Contains(out, "[X] Add finished: 2 snapshots partial (archived, some plugin failed)\n") ||
		!strings.Contains(out, "Failed:            0\n") || !strings.Contains(out, "Partial:           2\n") ||
		!strings.Contains(out, "Retry with:        folio update --status partial\n") {
		t.Fatalf("add exit %d\n%s\n%s", code, out, stderr)
	}
	out, _, _ = runFolio(t, "status", "-D", dir)
	if !strings.Contains(out, "by state           partial 2\n") || !strings.Contains(out, "partial            2 snapshots (") ||
		!strings.Contains(out, "next               folio update --status partial") {
		t.Errorf("status:\n%s", out)
	}
	for status, n := range map[string]int{"partial": 2, "failed": 0, "archived": 0} {
		if out, _, code := runFolio(t, "list", "-D", dir, "--status", status); code != 0 || strings.Count(out, "\n") != n {
			t.Errorf("list --status %s: exit %d\n%s", status, code, out)
		}
	}
	// export selects by state as list does.
	out, stderr, code = runFolio(t, "export", "-D", dir, "--status", "partial", "--out", filepath.Join(t.TempDir(), "site"))
	if code != 0 || !strings.Contains(stderr, "exported 2 snapshots") {
		t.Errorf("export --status partial: exit %d\n%s%s", code, out, stderr)
	}
	if _, stderr, code := runFolio(t, "export", "-D", dir); code != 0 {
		t.Fatalf("export: %s", stderr)
	}
	root := string(mustRead(t, filepath.Join(dir, "index.html")))
	if strings.Count(root, `<span class="status-pill status-partial">partial</span>`) != 2 || !strings.Contains(root, `<small class="failures">1 failed</small>`) {
		t.Errorf("root page:\n%s", between(root, `<tr class="snapshot-row`, "</tr>"))
	}
	page := string(mustRead(t, filepath.Join(snapshots(t, dir)[0].dir, "index.html")))
	if !strings.Contains(page, `id="preview-frame"`) || !strings.Contains(page, "<li>refuser (failed): <span class=\"failed-reason\">the service said no</span></li>") {
		t.Errorf("detail page:\n%s", page)
	}
}

// add takes a file:// URL as ArchiveBox does: Chromium captures the local
// page into a localhost folder, and the links it holds to other local
// files are not followed. Its records match ArchiveBox's in the details:
// hashes' output_str in abx-plugins' "%.1fMB" form, output_files
// mimetypes from Python's built-in table.
func TestAddFileURL(t *testing.T) {
	dir := newCollection(t)
	site := t.TempDir()
	secret := filepath.Join(site, "secret.txt")
	page := filepath.Join(site, "page one.html")
	html := `<!doctype html><html><head><title>Local page</title></head><body><h1>Hello from disk</h1>
<p>Words enough for a text capture of the page.</p><a href="file://` + secret + `">secret</a></body></html>`
	if err := os.WriteFile(page, []byte(html), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(secret, []byte("not for the archive\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// (.log files are hook logs, which output_files leaves out; the
	// archive package's table test has .log.)
	names := []string{"a.vtt", "a.srt", "a.m3u8", "a.tgz", "a.wacz", "a.xml", "a.epub"}
	hook := "#!/bin/sh\nfor f in " + strings.Join(names, " ") + "; do echo x > $f; done\n" +
		`echo '{"type":"ArchiveResult","status":"succeeded","output_str":"subtitles/a.vtt"}'` + "\n"
	writeHook(t, dir, "subtitles", "on_Snapshot__80_subtitles.sh", hook)
	url := "file://" + strings.ReplaceAll(page, " ", "%20")
	out, stderr, code := runFolio(t, "add", "-D", dir, "--depth", "1", "--plugins", "title,dom,screenshot,subtitles,hashes", url)
	if code != 0 {
		t.Fatalf("add exit %d\n%s\n%s", code, out, stderr)
	}
	snaps := snapshots(t, dir)
	if len(snaps) != 1 {
		t.Fatalf("%d snapshots, want the page alone (its file link not followed)", len(snaps))
	}
	s := snaps[0]
	if s.snap.URL != url || s.snap.Title != "Local page" || filepath.Base(filepath.Dir(s.dir)) != "localhost" {
		t.Errorf("snapshot %+v in %s", s.snap, s.dir)
	}
	for _, p := range []string{"title", "dom", "screenshot"} {
		if r := s.results[p]; r.Status != "succeeded" {
			t.Errorf("%s: %s %s", p, r.Status, r.OutputStr)
		}
	}
	if dom := string(mustRead(t, filepath.Join(s.dir, "dom/output.html"))); !strings.Contains(dom, "Hello from disk") {
		t.Errorf("dom/output.html: %.200s", dom)
	}
	if h := s.results["hashes"].OutputStr; !regexp.MustCompile(`^\d+\.\dMB [0-9a-f]{12}$`).MatchString(h) {
		t.Errorf("hashes output_str %q, want abx-plugins' %%.1fMB form", h)
	}
	want := map[string]string{"a.vtt": "text/vtt", "a.srt": "text/plain", "a.m3u8": "application/vnd.apple.mpegurl",
		"a.tgz": "application/x-tar", "a.wacz": "application/octet-stream",
		"a.xml": "text/xml", "a.epub": "application/octet-stream"}
	got := map[string]string{}
	for _, f := range s.results["subtitles"].OutputFiles {
		got[f.Path] = f.Mimetype
	}
	for name, mt := range want {
		if got[name] != mt {
			t.Errorf("output_files %s: mimetype %q, want %q", name, got[name], mt)
		}
	}
	if out, _, _ := runFolio(t, "list", "-D", dir, "--status", "archived", "--csv", "url"); !strings.Contains(out, url) {
		t.Errorf("list --status archived:\n%s", out)
	}
}

// writeHook installs an executable ArchiveBox hook for plugin in the
// collection's custom_plugins folder.
func writeHook(t *testing.T, dir, plugin, name, script string) {
	t.Helper()
	hookDir := filepath.Join(dir, "custom_plugins", plugin)
	if err := os.MkdirAll(hookDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(hookDir, name), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
}
