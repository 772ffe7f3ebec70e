package main_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/gen"
)

// listed returns the URLs of the snapshots folio list prints, with how
// many times each is printed.
func listed(t *testing.T, dir string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, l := range catLines(catRun(t, dir, "list", "--csv", "url").want(t, 0).stdout)[1:] {
		out[strings.Trim(l, `"`)]++
	}
	return out
}

func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// loneSnapshot returns a snapshot that is the only one of its date folder.
func loneSnapshot(t *testing.T, dir string, m *gen.Manifest) gen.Entry {
	t.Helper()
	for _, s := range m.Snapshots {
		if entries, _ := os.ReadDir(filepath.Join(dir, path.Dir(path.Dir(s.Dir)))); len(entries) == 1 && strings.HasPrefix(s.URL, "http") {
			return s
		}
	}
	t.Fatal("no snapshot alone in its date folder")
	return gen.Entry{}
}

func TestRemoveCommand(t *testing.T) {
	dir, m := catCollection(t, 20)
	catRun(t, dir, "export").want(t, 0)
	s := m.Snapshots[3]

	r := catRun(t, dir, "remove", "-f", "exact", s.URL).want(t, 0)
	lines := catLines(r.stdout)
	// The collection was exported: remove brings the site up to date and
	// ends with its root page.
	if len(lines) != 3 || !strings.HasSuffix(lines[0], "\t"+s.URL+"\t"+s.Dir) || lines[1] != "1 snapshot to remove" ||
		lines[2] != "file://"+filepath.Join(dir, "index.html") {
		t.Errorf("plan: %q", r.stdout)
	}
	if !strings.Contains(r.stderr, "removed 1 snapshot from the catalog; the folders are kept and listed in removed/hidden.jsonl") {
		t.Errorf("stderr: %q", r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, s.Dir, "index.jsonl")); err != nil {
		t.Errorf("remove without --delete touched the folder: %v", err)
	}
	var h archive.Hidden
	if data, err := os.ReadFile(filepath.Join(dir, archive.HiddenFile)); err != nil || json.Unmarshal(data, &h) != nil || h.Dir != s.Dir || h.ID != s.ID {
		t.Errorf("hidden file: %s, %v", data, err)
	}
	all := len(m.Snapshots) + 1
	for _, args := range [][]string{nil, {"reindex"}, {"reindex", "--full"}} {
		if args != nil {
			catRun(t, dir, args...).want(t, 0)
		}
		if got := listed(t, dir); got[s.URL] != 0 || total(got) != all-1 {
			t.Errorf("after %v: list has %d snapshots (want %d), %s %d times", args, total(got), all-1, s.URL, got[s.URL])
		}
	}
	// The next export, incremental, leaves it out of the site.
	catRun(t, dir, "export").want(t, 0)
	manifest, err := os.ReadFile(filepath.Join(dir, "index.jsonl"))
	if err != nil || strings.Contains(string(manifest), s.ID) || strings.Count(string(manifest), "\n") != all-1 {
		t.Errorf("export after remove: %v, %d lines, holds %s: %v", err, strings.Count(string(manifest), "\n"), s.ID, strings.Contains(string(manifest), s.ID))
	}

	// --unhide brings it back; --jsonl prints records on stdout only.
	r = catRun(t, dir, "remove", "--unhide", s.Dir).want(t, 0)
	if !strings.Contains(r.stderr, "brought back 1 snapshot") || listed(t, dir)[s.URL] == 0 {
		t.Errorf("--unhide: %q", r.stderr)
	}
	r = catRun(t, dir, "remove", "--jsonl", "-f", "exact", s.URL).want(t, 0)
	var rec map[string]string
	if err := json.Unmarshal([]byte(r.stdout), &rec); err != nil || rec["dir"] != s.Dir || rec["url"] != s.URL || rec["id"] != s.ID || rec["trash"] != "" {
		t.Errorf("--jsonl: %q, %v", r.stdout, err)
	}
	if !strings.Contains(r.stderr, "\t"+s.Dir+"\n") {
		t.Errorf("--jsonl: the plan goes to stderr: %q", r.stderr)
	}
}

func TestRemoveDelete(t *testing.T) {
	dir, m := catCollection(t, 20)
	catRun(t, dir, "reindex").want(t, 0)
	s := loneSnapshot(t, dir, m)
	payload := "every byte \x00\xff of it\n"
	if err := os.WriteFile(filepath.Join(dir, s.Dir, "note.bin"), []byte(payload), 0o644); err != nil {
		t.Fatal(err)
	}

	// Without a terminal to ask on, --delete needs --yes.
	r := catRun(t, dir, "remove", "--delete", "-f", "exact", s.URL).want(t, 2)
	if r.stderr != "folio: stdin is not a terminal to ask on: pass --yes to confirm (nothing was changed)\nrun 'folio remove --help' for usage\n" || r.stdout != "" {
		t.Errorf("--delete without --yes: %q %q", r.stderr, r.stdout)
	}
	if listed(t, dir)[s.URL] == 0 {
		t.Fatal("a refused --delete removed the snapshot")
	}

	r = catRun(t, dir, "remove", "--delete", "--yes", "--jsonl", "-f", "exact", s.URL).want(t, 0)
	var rec map[string]string
	if err := json.Unmarshal([]byte(r.stdout), &rec); err != nil || rec["dir"] != s.Dir {
		t.Fatalf("--jsonl: %q, %v", r.stdout, err)
	}
	stamp, rest, _ := strings.Cut(strings.TrimPrefix(rec["trash"], archive.TrashDir+"/"), "/")
	if len(stamp) != len("20060102-150405") || rest != s.Dir {
		t.Errorf("trash path %q", rec["trash"])
	}
	if data, err := os.ReadFile(filepath.Join(dir, rec["trash"], "note.bin")); err != nil || string(data) != payload {
		t.Errorf("the trash holds %q, %v; want the file as it was", data, err)
	}
	if _, err := os.Stat(filepath.Join(dir, rec["trash"], "index.jsonl")); err != nil {
		t.Error(err)
	}
	dateDir := path.Dir(path.Dir(s.Dir))
	if _, err := os.Stat(filepath.Join(dir, dateDir)); !os.IsNotExist(err) {
		t.Errorf("empty parents of the moved folder are kept: %s: %v", dateDir, err)
	}
	if _, err := os.Stat(filepath.Join(dir, path.Dir(dateDir))); err != nil {
		t.Errorf("the snapshots root went too: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, archive.HiddenFile)); !os.IsNotExist(err) {
		t.Errorf("a deleted snapshot was listed as hidden: %v", err)
	}
	catRun(t, dir, "reindex", "--full").want(t, 0)
	if got := listed(t, dir); got[s.URL] != 0 || total(got) != len(m.Snapshots) {
		t.Errorf("after --delete: %d snapshots listed, %s %d times", total(got), s.URL, got[s.URL])
	}

	// --purge-trash frees what the trash holds.
	r = catRun(t, dir, "remove", "--purge-trash", "--dry-run").want(t, 0)
	if !strings.Contains(r.stdout, "would free 1 snapshot folder, 2 files") {
		t.Errorf("--purge-trash --dry-run: %q", r.stdout)
	}
	catRun(t, dir, "remove", "--purge-trash").want(t, 2)
	r = catRun(t, dir, "remove", "--purge-trash", "--yes").want(t, 0)
	if !strings.HasPrefix(r.stdout, "freed 1 snapshot folder, 2 files") {
		t.Errorf("--purge-trash: %q", r.stdout)
	}
	if _, err := os.Stat(filepath.Join(dir, archive.TrashDir)); !os.IsNotExist(err) {
		t.Errorf("the trash is still there: %v", err)
	}
	if r := catRun(t, dir, "remove", "--purge-trash", "--yes").want(t, 0); !strings.Contains(r.stderr, "removed/trash is empty") {
		t.Errorf("purge of an empty trash: %q", r.stderr)
	}
}

// TestRemoveDeleteOtherFilesystem: a folder that rename cannot move into
// removed/trash stays where it is and in the catalog; remove exits 3.
func TestRemoveDeleteOtherFilesystem(t *testing.T) {
	other, err := os.MkdirTemp("/dev/shm", "folio-remove-")
	if err != nil {
		t.Skipf("no /dev/shm to put the archive on another filesystem: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(other) })
	dir := t.TempDir()
	var a, b unix.Stat_t
	if unix.Stat(other, &a) != nil || unix.Stat(dir, &b) != nil || a.Dev == b.Dev {
		t.Skip("/dev/shm is on the same filesystem as the test's temp dir")
	}
	m, err := gen.Current(other, gen.Options{N: 5, Seed: 42, Minimal: true, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	// archive/ is a symlink to another disk, as users set it up.
	if err := os.Symlink(filepath.Join(other, "archive"), filepath.Join(dir, "archive")); err != nil {
		t.Fatal(err)
	}
	catRun(t, dir, "reindex").want(t, 0)
	s := m.Snapshots[0]
	r := catRun(t, dir, "remove", "--delete", "--yes", "-f", "exact", s.URL).want(t, 3)
	if !strings.Contains(r.stderr, "on another filesystem than removed/trash") || !strings.Contains(r.stderr, "the folder is kept") {
		t.Errorf("stderr: %q", r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, s.Dir, "index.jsonl")); err != nil {
		t.Errorf("the folder moved: %v", err)
	}
	if listed(t, dir)[s.URL] == 0 {
		t.Error("a folder that was not moved left the catalog")
	}
}

func TestRemoveDryRun(t *testing.T) {
	dir, m := catCollection(t, 10)
	catRun(t, dir, "reindex").want(t, 0)
	before, list := updTree(t, dir), catRun(t, dir, "list").want(t, 0).stdout
	r := catRun(t, dir, "remove", "--dry-run", "--delete", "--all").want(t, 0)
	if lines := catLines(r.stdout); len(lines) != len(m.Snapshots)+2 || lines[len(lines)-1] != "11 snapshots would be removed (dry run: nothing changed)" {
		t.Errorf("plan: %q", r.stdout)
	}
	if !reflect.DeepEqual(updTree(t, dir), before) || catRun(t, dir, "list").want(t, 0).stdout != list {
		t.Error("--dry-run changed the tree or the catalog")
	}
	for _, p := range []string{archive.HiddenFile, archive.TrashDir} {
		if _, err := os.Stat(filepath.Join(dir, p)); !os.IsNotExist(err) {
			t.Errorf("--dry-run wrote %s", p)
		}
	}
}

func TestRemoveUsage(t *testing.T) {
	dir, _ := catCollection(t, 3)
	catRun(t, dir, "reindex").want(t, 0)
	list := catRun(t, dir, "list").want(t, 0).stdout
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"remove"}, "folio: no snapshots chosen: give a PATTERN, a filter (--tag, --status, --after, --before) or --all"},
		{[]string{"remove", "--all", "example"}, "folio: --all selects every snapshot: leave out the patterns and filters, or --all"},
		{[]string{"remove", "--purge-trash", "--tag", "x"}, "folio: --purge-trash empties the trash"},
		{[]string{"remove", "--unhide"}, "folio: --unhide needs a selection"},
		{[]string{"remove", "-f", "regex", "("}, `folio: regex "(": error parsing regexp`},
		{[]string{"remove", "--status", "done"}, `folio: --status "done": unknown`},
	} {
		r := catRun(t, dir, tc.args...).want(t, 2)
		lines := strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n")
		if len(lines) != 2 || !strings.HasPrefix(lines[0], tc.msg) || lines[1] != "run 'folio remove --help' for usage" || r.stdout != "" {
			t.Errorf("%v: stderr %q stdout %q, want the line %q", tc.args, r.stderr, r.stdout, tc.msg)
		}
	}
	// A selection that matches nothing says so and exits 0, as list does.
	r := catRun(t, dir, "remove", "no-such-url-anywhere").want(t, 0)
	if r.stdout != "" || !strings.Contains(r.stderr, "the selection matches no snapshot in the catalog: nothing removed") {
		t.Errorf("no match: %q %q", r.stdout, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, archive.HiddenFile)); !os.IsNotExist(err) || catRun(t, dir, "list").want(t, 0).stdout != list {
		t.Error("a remove that matched nothing changed something")
	}

	lock := lockCollection(t, dir)
	defer lock.Unlock()
	r = catRun(t, dir, "remove", "--all", "--dry-run").want(t, 11)
	if !strings.Contains(r.stderr, "collection is locked") {
		t.Errorf("locked: %q", r.stderr)
	}
	catRun(t, dir, "remove", "--all").want(t, 11)
}

// TestRemoveDeleteKilled kills 'remove --delete' after some folders went
// to the trash (FOLIO_FAULT exits at once, as kill -9 would): the rerun,
// of the same command or of another remove, finishes the removal and
// exits 0 with the catalog agreeing with the tree and nothing of the plan
// left in the tree.
func TestRemoveDeleteKilled(t *testing.T) {
	for _, tc := range []struct {
		name  string
		spec  string
		rerun []string
	}{
		{"same command", "trashed:4", []string{"remove", "--delete", "--yes", "--before", "2020-01-01"}},
		{"before any move", "journaled:1", []string{"remove", "--delete", "--yes", "--before", "2020-01-01"}},
		{"after the catalog", "dropped:1", []string{"remove", "--delete", "--yes", "--before", "2020-01-01"}},
		{"other remove", "trashed:1", []string{"remove", "--delete", "--yes", "-f", "exact", "https://no.such.example/"}},
		{"unhide", "trashed:6", []string{"remove", "--unhide", "archive/no/such/folder"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, _ := catCollection(t, 40)
			catRun(t, dir, "reindex").want(t, 0)
			planned := catLines(catRun(t, dir, "list", "--before", "2020-01-01", "--csv", "dir").want(t, 0).stdout)[1:]
			if len(planned) < 8 {
				t.Fatalf("only %d snapshots bookmarked before 2020", len(planned))
			}
			if !crashFault(t, dir, tc.spec, nil, "remove", "--delete", "--yes", "--before", "2020-01-01") {
				t.Fatal("the fault point was never reached")
			}
			r := catRun(t, dir, tc.rerun...)
			if tc.name == "unhide" && r.code == 1 && strings.Contains(r.stderr, "folio: no removed snapshot matches archive/no/such/folder") {
				r.code = 0 // it finished the removal, then found nothing to bring back
			}
			if r.code != 0 {
				t.Fatalf("rerun: exit %d\n%s", r.code, r.stderr)
			}
			for _, d := range planned {
				d = strings.Trim(d, `"`)
				if _, err := os.Lstat(filepath.Join(dir, d)); !os.IsNotExist(err) {
					t.Errorf("%s is still in the tree after the rerun: %v", d, err)
				}
			}
			crashAgrees(t, dir)
			if n := len(catLines(catRun(t, dir, "list", "--before", "2020-01-01").want(t, 0).stdout)); n != 0 {
				t.Errorf("%d snapshots bookmarked before 2020 are still listed", n)
			}
			if u := catRun(t, dir, "remove", "--purge-trash", "--dry-run").want(t, 0); !strings.Contains(u.stdout, fmt.Sprintf("would free %d snapshot folders", len(planned))) {
				t.Errorf("the trash does not hold the %d folders: %s", len(planned), u.stdout)
			}
			catRun(t, dir, "remove", "--delete", "--yes", "--before", "2020-01-01").want(t, 0)
		})
	}
}

// TestRemoveKilledThenReindex: a reindex run after the kill (before any
// remove) makes the catalog agree with the tree, where a folder in the
// trash is gone; the next remove then finishes the plan.
func TestRemoveKilledThenReindex(t *testing.T) {
	dir, _ := catCollection(t, 30)
	catRun(t, dir, "reindex").want(t, 0)
	if !crashFault(t, dir, "trashed:3", nil, "remove", "--delete", "--yes", "--before", "2020-01-01") {
		t.Fatal("the fault point was never reached")
	}
	catRun(t, dir, "reindex").want(t, 0)
	crashAgrees(t, dir)
	catRun(t, dir, "remove", "--delete", "--yes", "-f", "exact", "https://no.such.example/").want(t, 0)
	crashAgrees(t, dir)
	if n := len(catLines(catRun(t, dir, "list", "--before", "2020-01-01").want(t, 0).stdout)); n != 0 {
		t.Errorf("%d snapshots bookmarked before 2020 are still listed", n)
	}
}

// TestRemoveStuckFolderDoesNotBlock: a folder of a cut-short removal that
// cannot move yet (here a file took its place) keeps its journal for the
// next remove, but never stops the removal asked for now: that one is
// done, and the command ends partial.
func TestRemoveStuckFolderDoesNotBlock(t *testing.T) {
	dir, _ := catCollection(t, 30)
	catRun(t, dir, "reindex").want(t, 0)
	planned := catLines(catRun(t, dir, "list", "--before", "2020-01-01", "--csv", "dir").want(t, 0).stdout)[1:]
	if !crashFault(t, dir, "trashed:1", nil, "remove", "--delete", "--yes", "--before", "2020-01-01") {
		t.Fatal("the fault point was never reached")
	}
	stuck := ""
	for _, d := range planned {
		p := filepath.Join(dir, strings.Trim(d, `"`))
		if _, err := os.Lstat(p); err == nil {
			stuck = p
		}
	}
	if stuck == "" {
		t.Fatal("the kill left no planned folder in the tree")
	}
	if err := os.RemoveAll(stuck); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(stuck, []byte("not a folder"), 0o644); err != nil {
		t.Fatal(err)
	}
	other := catLines(catRun(t, dir, "list", "--after", "2020-01-01", "--csv", "url").want(t, 0).stdout)[1]
	other = strings.Trim(other, `"`)
	r := catRun(t, dir, "remove", "--yes", "-f", "exact", other)
	if r.code != 3 || !strings.Contains(r.stderr, "tried again by the next remove") {
		t.Fatalf("remove beside a stuck removal: exit %d, want 3 and a word of the stuck folder\n%s", r.code, r.stderr)
	}
	if l := catRun(t, dir, "list", "-f", "exact", other).want(t, 0).stdout; l != "" {
		t.Errorf("%s is still listed: the removal asked for was not done", other)
	}
}
