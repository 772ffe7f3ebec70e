package main_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/folio-archive/folio/archive"
)

// linkLevels are the folders below archive/users/ a snapshot's path runs
// through, each of which the readers ignore when it is a symlink: a
// writer must refuse to write through any of them.
var linkLevels = []struct{ name, rel string }{
	{"user", "archive/users/system"},
	{"snapshots", "archive/users/system/snapshots"},
	{"date", "archive/users/system/snapshots/20200913"},
	{"domain", "archive/users/system/snapshots/20200913/linked.example"},
}

// writeRel writes data to the file rel (slash path) below dir, making its
// folders.
func writeRel(t testing.TB, dir, rel, data string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// linkOutside makes rel (below the collection dir) a symlink to a fresh
// folder outside the collection and returns that folder.
func linkOutside(t *testing.T, dir, rel string) string {
	t.Helper()
	elsewhere := t.TempDir()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, p); err != nil {
		t.Fatal(err)
	}
	return elsewhere
}

// emptyDir fails the test when the folder at p holds anything.
func emptyDir(t *testing.T, p string) {
	t.Helper()
	entries, err := os.ReadDir(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) > 0 {
		var names []string
		filepath.WalkDir(p, func(q string, _ os.DirEntry, _ error) error {
			names = append(names, q)
			return nil
		})
		t.Errorf("folio wrote outside the collection, through a symlinked folder:\n%s", strings.Join(names, "\n"))
	}
}

// TestUpdateRefusesSymlinkedFolders: issue 30 item 1. With a folder below
// archive/users/ that is a symlink to a folder outside the collection, a
// migration must not move legacy folders through it (the catalog ignores
// it, so they would vanish from status and verify). Each snapshot headed
// there fails alone with a line naming the symlink; the others migrate;
// exit 3.
func TestUpdateRefusesSymlinkedFolders(t *testing.T) {
	for _, lv := range linkLevels {
		t.Run(lv.name, func(t *testing.T) {
			dir := t.TempDir()
			if _, err := archive.Init(dir, false); err != nil {
				t.Fatal(err)
			}
			w := func(rel, data string) { writeRel(t, dir, rel, data) }
			// Five folders of 2020-09-13 headed for linked.example, and
			// one of another day and domain.
			var linked []string
			for i := 0; i < 5; i++ {
				ts := fmt.Sprint(1599955200 + i*60)
				linked = append(linked, "archive/"+ts)
				w("archive/"+ts+"/index.json", fmt.Sprintf(`{"url": "https://linked.example/%d", "timestamp": %q, "title": "t"}`, i, ts))
				w("archive/"+ts+"/output.html", "<p>kept</p>")
			}
			w("archive/1600128000/index.json", `{"url": "https://other.example/", "timestamp": "1600128000"}`)
			elsewhere := linkOutside(t, dir, lv.rel)
			before := updTree(t, filepath.Join(dir, "archive"))

			r := updRun(t, dir, nil, "update", "--migrate-only")
			if r.code != 3 {
				t.Fatalf("exit %d, want 3 (partial)\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			emptyDir(t, elsewhere)
			after := updTree(t, filepath.Join(dir, "archive"))
			for _, l := range linked {
				for rel, v := range before {
					if strings.HasPrefix(rel, strings.TrimPrefix(l, "archive/")+"/") && after[rel] != v {
						t.Errorf("%s changed: %q -> %q", rel, v, after[rel])
					}
				}
				n := 0
				for _, line := range strings.Split(r.stderr, "\n") {
					if strings.Contains(line, l) && strings.Contains(line, lv.rel+" is a symlink") {
						n++
					}
				}
				if n == 0 {
					t.Errorf("no line says %s failed because %s is a symlink:\n%s", l, lv.rel, r.stderr)
				}
			}
			if lv.name != "user" && lv.name != "snapshots" {
				if _, err := os.Lstat(filepath.Join(dir, "archive/1600128000")); err == nil {
					t.Errorf("the folder headed elsewhere was not migrated:\n%s", r.stderr)
				}
			}
			// A second run refuses again and still writes nothing there.
			if r := updRun(t, dir, nil, "update", "--migrate-only"); r.code != 3 {
				t.Errorf("second run: exit %d, want 3\n%s", r.code, r.stderr)
			}
			emptyDir(t, elsewhere)
		})
	}
}

// TestAddRefusesSymlinkedFolders: issue 30 item 1 for add. A snapshot
// whose folder would be made through a symlinked folder below
// archive/users/ is refused with one line naming the symlink; the other
// URLs are added; exit 3.
func TestAddRefusesSymlinkedFolders(t *testing.T) {
	for _, lv := range linkLevels {
		t.Run(lv.name, func(t *testing.T) {
			dir := newCollection(t)
			elsewhere := linkOutside(t, dir, lv.rel)
			in := filepath.Join(t.TempDir(), "urls.jsonl")
			jsonl := `{"url": "https://linked.example/a", "bookmarked_at": "2020-09-13T10:00:00Z"}
{"url": "https://other.example/b", "bookmarked_at": "2020-09-14T10:00:00Z"}
`
			if err := os.WriteFile(in, []byte(jsonl), 0o644); err != nil {
				t.Fatal(err)
			}
			_, stderr, code := runFolio(t, "add", "-D", dir, "--index-only", "--from", in)
			if code != 3 {
				t.Fatalf("exit %d, want 3 (partial)\n%s", code, stderr)
			}
			emptyDir(t, elsewhere)
			n := 0
			for _, line := range strings.Split(stderr, "\n") {
				if strings.Contains(line, "https://linked.example/a") && strings.Contains(line, lv.rel+" is a symlink") {
					n++
				}
			}
			if n != 1 {
				t.Errorf("want one line naming the URL and the symlink %s:\n%s", lv.rel, stderr)
			}
			if lv.name != "user" && lv.name != "snapshots" {
				if len(snapshots(t, dir)) != 1 {
					t.Errorf("the other URL was not added:\n%s", stderr)
				}
			}
		})
	}
}

// TestUpdateRefusesSymlinkedLegacyIndex: issue 30 item 4. A legacy
// folder whose index.json is a symlink — to a file outside the
// collection, or to another collection's index.json — is reported in one
// line and left as it is; nothing of the linked file is imported.
func TestUpdateRefusesSymlinkedLegacyIndex(t *testing.T) {
	dir := t.TempDir()
	if _, err := archive.Init(dir, false); err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	passwd := filepath.Join(outside, "passwd")
	other := filepath.Join(outside, "other/archive/1500000000/index.json")
	writeRel(t, outside, "passwd", "root:x:0:0:root:/root:/bin/bash\n")
	writeRel(t, outside, "other/archive/1500000000/index.json", `{"url": "https://secret.example/private", "timestamp": "1500000000", "title": "Secret title"}`)
	links := map[string]string{"archive/1599955200": passwd, "archive/1599955260": other}
	for rel, target := range links {
		writeRel(t, dir, rel+"/output.html", "<p>x</p>")
		if err := os.Symlink(target, filepath.Join(dir, rel, "index.json")); err != nil {
			t.Fatal(err)
		}
	}
	good := "archive/1599955320"
	writeRel(t, dir, good+"/index.json", `{"url": "https://good.example/", "timestamp": "1599955320"}`)
	before := updTree(t, dir)

	r := updRun(t, dir, nil, "update", "--migrate-only")
	if r.code != 3 {
		t.Fatalf("exit %d, want 3 (partial)\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	after := updTree(t, dir)
	for rel := range links {
		for p, v := range before {
			if strings.HasPrefix(p, rel+"/") && after[p] != v {
				t.Errorf("%s changed: %q -> %q", p, v, after[p])
			}
		}
		if !strings.Contains(r.stderr, rel+"/index.json") || !regexpLine(r.stderr, rel+"/index.json", "symlink") {
			t.Errorf("no line names %s/index.json as a symlink:\n%s", rel, r.stderr)
		}
	}
	if _, err := os.Lstat(filepath.Join(dir, good)); err == nil {
		t.Errorf("the good folder was not migrated:\n%s", r.stderr)
	}
	out, _, _ := runFolio(t, "list", "-D", dir)
	for _, leak := range []string{"secret.example", "Secret title", "root:x"} {
		if strings.Contains(out, leak) {
			t.Errorf("the catalog holds %q from a file outside the collection:\n%s", leak, out)
		}
		filepath.WalkDir(filepath.Join(dir, "archive/users"), func(p string, d os.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				if data, _ := os.ReadFile(p); strings.Contains(string(data), leak) {
					t.Errorf("%s holds %q from a file outside the collection", p, leak)
				}
			}
			return nil
		})
	}
}

// regexpLine reports whether some line of text holds both a and b.
func regexpLine(text, a, b string) bool {
	for _, line := range strings.Split(text, "\n") {
		if strings.Contains(line, a) && strings.Contains(line, b) {
			return true
		}
	}
	return false
}

// TestUpdateQuotesControlCharacters: issue 30 item 12. Folder names with a
// newline (or another control character) are printed quoted, so a name
// cannot forge or break a line of the migration's output.
func TestUpdateQuotesControlCharacters(t *testing.T) {
	dir := t.TempDir()
	updCollection(t, dir, 2)
	writeRel(t, dir, "archive/hello\nwarning: forged skip\x1b[2J/index.json", `{"url": "https://x.example/"}`)
	dashed := filepath.Join(dir, "archive/users/system/snapshots/20240102", "y.example\nwarning: forged read", "0190f3c2-a1b2-7c3d-8e4f-5a6b7c8d0001")
	if err := os.MkdirAll(dashed, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(dashed, "index.jsonl")); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"update", "--migrate-only", "--dry-run"}, {"update", "--migrate-only"}, {"reindex", "--full"}} {
		r := updRun(t, dir, nil, args...)
		out := r.stdout + r.stderr
		wants := []string{`hello\nwarning: forged skip\x1b[2J`, `y.example\nwarning: forged read`}
		if args[0] == "reindex" {
			wants = wants[1:] // the legacy folder is migrated by now, or named in the catalog's own words
		}
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(line, "warning: forged") || strings.Contains(line, "\x1b") {
				t.Errorf("%v: a folder name printed raw forged a line: %q\n%s", args, line, out)
			}
		}
		for _, want := range wants {
			if !strings.Contains(out, want) {
				t.Errorf("%v: output does not name %s quoted:\n%s", args, want, out)
			}
		}
	}
}
