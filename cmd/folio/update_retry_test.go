package main_test

import (
	"bytes"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/folio-archive/folio/fixtures"
)

// The tests of 'folio update' without --migrate-only (and of add
// --update) capture with the real Chromium from a host that is at first
// not served and then served on the same loopback port.

// retryCollection is newCollection with only title, screenshot and
// hashes enabled, so a capture stays quick and every enabled plugin is
// one the test looks at.
func retryCollection(t *testing.T) string {
	t.Helper()
	dir := newCollection(t)
	conf := "\n[ARCHIVE_METHOD_TOGGLES]\n"
	for _, p := range []string{"STATICFILE", "HEADERS", "FAVICON", "SINGLEFILE", "PDF", "DOM", "READABILITY", "HTMLTOTEXT", "WARC"} {
		conf += p + "_ENABLED = False\n"
	}
	f, err := os.OpenFile(filepath.Join(dir, "ArchiveBox.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(conf); err != nil {
		t.Fatal(err)
	}
	return dir
}

// deadPort returns a loopback address nothing listens on (it was free a
// moment ago) and a func that serves the fixture site there (until the
// server it returns is closed).
func deadPort(t *testing.T) (addr string, serve func() *http.Server) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr = ln.Addr().String()
	ln.Close()
	return addr, func() *http.Server {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatalf("serve on %s again: %v", addr, err)
		}
		srv := &http.Server{Handler: fixtures.Handler(), ReadHeaderTimeout: 10 * time.Second}
		go srv.Serve(ln)
		t.Cleanup(func() { srv.Close() })
		return srv
	}
}

// addUnreachable adds url while its host is not served: every page
// plugin fails, the add exits 3.
func addUnreachable(t *testing.T, dir, url string) added {
	t.Helper()
	out, stderr, code := runFolio(t, "add", "-D", dir, url)
	if code != 3 {
		t.Fatalf("add of an unserved host: exit %d, want 3\n%s\n%s", code, out, stderr)
	}
	snaps := snapshots(t, dir)
	if len(snaps) != 1 {
		t.Fatalf("%d snapshots", len(snaps))
	}
	s := snaps[0]
	for _, p := range []string{"title", "screenshot"} {
		if s.results[p].Status != "failed" {
			t.Fatalf("%s before the host is served: %+v", p, s.results[p])
		}
	}
	return s
}

func TestUpdateRetriesFailedPlugins(t *testing.T) {
	dir := retryCollection(t)
	addr, serve := deadPort(t)
	url := "http://" + addr + "/index.html"
	before := addUnreachable(t, dir, url)
	index := filepath.Join(before.dir, "index.jsonl")
	// A record of a type folio does not write survives the rewrites.
	foreign := `{"type": "Process", "id": "incomplete"}`
	f, err := os.OpenFile(index, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(foreign + "\n")
	f.Close()

	// The site says it failed; once the host answers, update turns it
	// archived there too (the detail page's path is the folder's).
	page := filepath.Join(before.dir, "index.html")
	pill := func(state string) string {
		return `<span class="status-pill status-` + state + `">` + state + `</span>`
	}
	shows := func(when, state, not string) {
		t.Helper()
		if out, stderr, code := runFolio(t, "export", "-D", dir); code != 0 {
			t.Fatalf("export %s: exit %d\n%s\n%s", when, code, out, stderr)
		}
		for _, p := range []string{filepath.Join(dir, "index.html"), page} {
			if html := string(mustRead(t, p)); !strings.Contains(html, pill(state)) || strings.Contains(html, pill(not)) {
				t.Errorf("%s: %s does not show the snapshot %s", when, p, state)
			}
		}
		if list, _, _ := runFolio(t, "list", "-D", dir, "--status", state, "--csv", "url"); !strings.Contains(list, url) {
			t.Errorf("%s: list --status %s does not find it:\n%s", when, state, list)
		}
	}
	shows("after the failed capture", "failed", "archived")

	serve()
	plan, stderr, code := runFolio(t, "update", "-D", dir, "--dry-run")
	if code != 0 || !strings.Contains(plan, "screenshot,title,hashes") || !strings.Contains(plan, url) {
		t.Fatalf("dry run: exit %d\n%s\n%s", code, plan, stderr)
	}
	if got := mustRead(t, index); !bytes.Contains(got, []byte(`"status": "failed"`)) {
		t.Fatalf("the dry run changed index.jsonl:\n%s", got)
	}

	out, stderr, code := runFolio(t, "update", "-D", dir)
	if code != 0 || !strings.Contains(out, "[√] Update complete") || !strings.Contains(out, "Updated:           1") {
		t.Fatalf("update: exit %d\n%s\n%s", code, out, stderr)
	}
	snaps := snapshots(t, dir)
	if len(snaps) != 1 {
		t.Fatalf("%d snapshots after update", len(snaps))
	}
	s := snaps[0]
	if s.snap.Status != "sealed" || s.snap.Title != "Keepers of the Light: A Short History of Lighthouses" {
		t.Errorf("snapshot after update: %+v", s.snap)
	}
	for _, p := range []string{"title", "screenshot", "hashes"} {
		if r := s.results[p]; r.Status != "succeeded" || r.ID != before.results[p].ID {
			t.Errorf("%s after update: %+v (the record of the earlier run was %s)", p, r, before.results[p].ID)
		}
	}
	if _, err := os.Stat(filepath.Join(s.dir, "screenshot/screenshot.png")); err != nil {
		t.Error(err)
	}
	if h := mustRead(t, filepath.Join(s.dir, "hashes/hashes.json")); !bytes.Contains(h, []byte("screenshot/screenshot.png")) {
		t.Errorf("hashes.json does not list the new screenshot:\n%s", h)
	}
	data := mustRead(t, index)
	if !bytes.Contains(data, []byte(foreign+"\n")) || bytes.Count(data, []byte(`"type": "ArchiveResult"`)) != 3 {
		t.Errorf("index.jsonl after update:\n%s", data)
	}
	list, _, code := runFolio(t, "list", "-D", dir, "--csv", "url,status,title")
	if code != 0 || !strings.Contains(list, url+`,sealed,Keepers of the Light`) {
		t.Errorf("list after update: exit %d\n%s", code, list)
	}

	shows("after update", "archived", "failed")

	out, stderr, code = runFolio(t, "update", "-D", dir)
	if code != 0 || !strings.Contains(stderr, "Nothing to update") {
		t.Errorf("second update: exit %d\n%s\n%s", code, out, stderr)
	}
	if again := mustRead(t, index); !bytes.Equal(again, data) {
		t.Errorf("the second update changed index.jsonl")
	}
}

func TestAddUpdateRetriesTheExistingSnapshot(t *testing.T) {
	dir := retryCollection(t)
	addr, serve := deadPort(t)
	url := "http://" + addr + "/index.html"
	addUnreachable(t, dir, url)
	serve()
	out, stderr, code := runFolio(t, "add", "-D", dir, "--update", url)
	if code != 0 || !strings.Contains(out, "Updated:           1") || !strings.Contains(out, "Created:           0") {
		t.Fatalf("add --update: exit %d\n%s\n%s", code, out, stderr)
	}
	snaps := snapshots(t, dir)
	if len(snaps) != 1 || snaps[0].results["screenshot"].Status != "succeeded" || snaps[0].snap.Status != "sealed" {
		t.Fatalf("after add --update: %+v", snaps)
	}
	out, stderr, code = runFolio(t, "add", "-D", dir, "--update", url)
	if code != 0 || len(snapshots(t, dir)) != 1 || !strings.Contains(stderr, "nothing to run again") {
		t.Errorf("add --update of a complete snapshot: exit %d\n%s\n%s", code, out, stderr)
	}
}

func TestUpdateOverwriteKeepsOutputUntilTheNewSucceeds(t *testing.T) {
	dir := retryCollection(t)
	addr, serve := deadPort(t)
	url := "http://" + addr + "/index.html"
	addUnreachable(t, dir, url)
	srv := serve()
	if out, stderr, code := runFolio(t, "update", "-D", dir); code != 0 {
		t.Fatalf("update: exit %d\n%s\n%s", code, out, stderr)
	}
	s := snapshots(t, dir)[0]
	png := filepath.Join(s.dir, "screenshot/screenshot.png")
	shot := mustRead(t, png)

	// The host is gone again: the new screenshot fails, the old one
	// stays with its record.
	srv.Close()
	r := updRun(t, dir, nil, "update", "--overwrite", "--plugins", "screenshot")
	if r.code != 3 || !strings.Contains(r.stderr, "its earlier result is kept") {
		t.Fatalf("update --overwrite of an unserved host: exit %d, want 3\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	after := snapshots(t, dir)[0]
	if !bytes.Equal(mustRead(t, png), shot) {
		t.Errorf("the screenshot was not kept")
	}
	if after.results["screenshot"].Status != "succeeded" || !after.results["screenshot"].EndTS.Equal(s.results["screenshot"].EndTS) {
		t.Errorf("screenshot record after a failed overwrite: %+v", after.results["screenshot"])
	}
	leftovers, _ := filepath.Glob(filepath.Join(s.dir, "*folio-tmp*"))
	if len(leftovers) > 0 {
		t.Errorf("left behind: %v", leftovers)
	}

	// Overwritten for real: a new record, a new screenshot file.
	serve()
	r = updRun(t, dir, nil, "update", "--overwrite", "--plugins", "screenshot")
	if r.code != 0 {
		t.Fatalf("update --overwrite: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if got := snapshots(t, dir)[0].results["screenshot"]; got.Status != "succeeded" || !got.StartTS.After(s.results["screenshot"].EndTS) {
		t.Errorf("screenshot after overwrite: %+v", got)
	}
}

func TestUpdateKilledPutsFoldersBack(t *testing.T) {
	dir := retryCollection(t)
	srv := fixtureServer(t)
	url := srv.URL + "/index.html"
	if out, stderr, code := runFolio(t, "add", "-D", dir, url); code != 0 {
		t.Fatalf("add: exit %d\n%s\n%s", code, out, stderr)
	}
	s := snapshots(t, dir)[0]
	png := filepath.Join(s.dir, "screenshot/screenshot.png")
	shot := mustRead(t, png)
	old := s.results["screenshot"]

	// Killed while the earlier screenshot/ is moved aside: the next run
	// puts it back before anything else.
	crashFault(t, dir, "aside:1", nil, "update", "--overwrite", "--plugins", "screenshot")
	if _, err := os.Stat(png); err == nil {
		t.Fatal("the fault did not hit while screenshot/ was moved aside")
	}
	r := updRun(t, dir, nil, "update", "--plugins", "title")
	if r.code != 0 {
		t.Fatalf("update after the kill: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if !bytes.Equal(mustRead(t, png), shot) {
		t.Error("the earlier screenshot did not come back")
	}
	after := snapshots(t, dir)[0]
	if !after.results["screenshot"].StartTS.Equal(old.StartTS) || after.snap.Status != "sealed" {
		t.Errorf("after the rerun: %s %+v", after.snap.Status, after.results["screenshot"])
	}

	// Killed once the new result is recorded, before the earlier folder
	// is removed: the next run removes it and keeps the new one.
	crashFault(t, dir, "result:1", nil, "update", "--overwrite", "--plugins", "screenshot")
	if r := updRun(t, dir, nil, "update"); r.code != 0 {
		t.Fatalf("update after the second kill: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	after = snapshots(t, dir)[0]
	if !after.results["screenshot"].StartTS.After(old.StartTS) || after.snap.Status != "sealed" {
		t.Errorf("after the second rerun: %s %+v", after.snap.Status, after.results["screenshot"])
	}
	if _, err := os.Stat(png); err != nil {
		t.Error(err)
	}
	leftovers, _ := filepath.Glob(filepath.Join(s.dir, "*folio-tmp*"))
	if len(leftovers) > 0 {
		t.Errorf("left behind: %v", leftovers)
	}
}

// Two hooks of one plugin write one folder: running the failed one again
// (and --overwrite running both, one failing) never loses what the other
// wrote.
func TestUpdateKeepsTheOtherHooksOutput(t *testing.T) {
	dir := newCollection(t)
	page := filepath.Join(t.TempDir(), "page.html")
	if err := os.WriteFile(page, []byte("<title>Local</title><p>hi</p>"), 0o644); err != nil {
		t.Fatal(err)
	}
	flag := filepath.Join(t.TempDir(), "works")
	writeHook(t, dir, "media", "on_Snapshot__60_media_a.sh", "#!/bin/sh\nif [ -f "+flag+" ]; then echo a > a.txt\n"+
		`echo '{"type":"ArchiveResult","status":"succeeded","output_str":"media/a.txt"}'`+"\nelse\n"+
		`echo '{"type":"ArchiveResult","status":"failed","output_str":"not yet"}'`+"\nexit 1\nfi\n")
	writeHook(t, dir, "media", "on_Snapshot__61_media_b.sh", "#!/bin/sh\necho b > b.txt\n"+
		`echo '{"type":"ArchiveResult","status":"succeeded","output_str":"media/b.txt"}'`+"\n")
	url := "file://" + page
	if out, stderr, code := runFolio(t, "add", "-D", dir, "--plugins", "media", url); code != 3 {
		t.Fatalf("add: exit %d, want 3\n%s\n%s", code, out, stderr)
	}
	s := snapshots(t, dir)[0]
	b := filepath.Join(s.dir, "media", "b.txt")
	mustRead(t, b)
	if err := os.WriteFile(flag, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, stderr, code := runFolio(t, "update", "-D", dir, "--plugins", "media"); code != 0 {
		t.Fatalf("update: exit %d\n%s\n%s", code, out, stderr)
	}
	for _, f := range []string{b, filepath.Join(s.dir, "media", "a.txt")} {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("after the failed hook ran again: %v", err)
		}
	}
	os.Remove(flag)
	if err := os.WriteFile(b, []byte("b, first run\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, stderr, code := runFolio(t, "update", "-D", dir, "--plugins", "media", "--overwrite"); code != 3 {
		t.Fatalf("update --overwrite with hook a failing: exit %d, want 3\n%s\n%s", code, out, stderr)
	}
	if _, err := os.Stat(b); err != nil {
		t.Errorf("after --overwrite: %v", err)
	}
}
