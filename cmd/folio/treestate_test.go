package main_test

import (
	"io"
	"io/fs"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/gen"
)

// treeFiles maps every file below root (slash paths relative to root) to
// its content; nil when root does not exist.
func treeFiles(t *testing.T, root string) map[string]string {
	t.Helper()
	var out map[string]string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if out == nil {
			out = map[string]string{}
		}
		if d.Type().IsRegular() {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			out[filepath.ToSlash(rel)] = string(data)
		}
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return out
}

// removeBoth removes the snapshot of the URL snaps[0] without --delete
// and that of snaps[1] with it.
func removeBoth(t *testing.T, dir string, snaps []string) {
	t.Helper()
	catRun(t, dir, "remove", "-f", "exact", snaps[0]).want(t, 0)
	catRun(t, dir, "remove", "--delete", "--yes", "-f", "exact", snaps[1]).want(t, 0)
}

// TestRemovedStateSurvivesTheCatalog: what 'folio remove' did lives in
// the tree, so deleting .folio/ (the catalog) and reindexing gives the
// same list, and the trash is kept whole.
func TestRemovedStateSurvivesTheCatalog(t *testing.T) {
	dir, m := catCollection(t, 20)
	catRun(t, dir, "reindex").want(t, 0)
	del := loneSnapshot(t, dir, m)
	hid := m.Snapshots[3]
	if hid.Dir == del.Dir {
		hid = m.Snapshots[4]
	}
	removeBoth(t, dir, []string{hid.URL, del.URL})
	before := catRun(t, dir, "list").want(t, 0).stdout
	if strings.Contains(before, hid.URL) || strings.Contains(before, del.URL) {
		t.Fatalf("list after remove still shows them:\n%s", before)
	}
	trash := treeFiles(t, filepath.Join(dir, archive.TrashDir))
	if _, ok := trash[strings.SplitN(firstKey(trash), "/", 2)[0]+"/"+del.Dir+"/index.jsonl"]; !ok {
		t.Fatalf("the trash does not hold %s: %v", del.Dir, trash)
	}
	for _, p := range []string{archive.HiddenFile, archive.TrashDir} {
		if strings.HasPrefix(p, archive.StateDir+"/") {
			t.Errorf("%s is under %s, which is the catalog's cache", p, archive.StateDir)
		}
	}

	for _, args := range [][]string{{"reindex"}, {"reindex", "--full"}, {"list"}} {
		if err := os.RemoveAll(filepath.Join(dir, archive.StateDir)); err != nil {
			t.Fatal(err)
		}
		r := catRun(t, dir, args...).want(t, 0)
		if got := catRun(t, dir, "list").want(t, 0).stdout; got != before {
			t.Errorf("rm -rf .folio && folio %s: list changed: %d lines, want %d; holds the hidden %v, the deleted %v\n%s", strings.Join(args, " "), strings.Count(got, "\n"), strings.Count(before, "\n"), strings.Contains(got, hid.URL), strings.Contains(got, del.URL), r.stderr)
		}
		if got := treeFiles(t, filepath.Join(dir, archive.TrashDir)); !reflect.DeepEqual(got, trash) {
			t.Errorf("rm -rf .folio && folio %s: the trash holds %d files, want %d", strings.Join(args, " "), len(got), len(trash))
		}
	}

	// The removed state, in the tree, is never served nor published.
	catRun(t, dir, "export").want(t, 0)
	base, _ := exportServe(t, dir)
	for _, p := range []string{archive.HiddenFile, archive.TrashDir + "/" + firstKey(trash), archive.RemovedDir + "/"} {
		resp, err := http.Get(base + p)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("serve %s: %d, want 404: %.80s", p, resp.StatusCode, body)
		}
	}
	out := filepath.Join(t.TempDir(), "site")
	catRun(t, dir, "export", "--out", out).want(t, 0)
	if _, err := os.Lstat(filepath.Join(out, archive.RemovedDir)); !os.IsNotExist(err) {
		t.Errorf("export --out published %s: %v", archive.RemovedDir, err)
	}
	if files := treeFiles(t, out); strings.Contains(strings.Join(slices.Collect(maps.Keys(files)), "\n"), del.Dir) {
		t.Errorf("export --out holds the deleted snapshot %s", del.Dir)
	}

	// --unhide and --purge-trash work on the state in the tree.
	r := catRun(t, dir, "remove", "--unhide", hid.Dir).want(t, 0)
	if !strings.Contains(r.stderr, "brought back 1 snapshot") || listed(t, dir)[hid.URL] != 1 {
		t.Errorf("--unhide: %s", r.stderr)
	}
	catRun(t, dir, "remove", "--purge-trash", "--yes").want(t, 0)
	if _, err := os.Lstat(filepath.Join(dir, archive.TrashDir)); !os.IsNotExist(err) {
		t.Errorf("the trash is still there after --purge-trash: %v", err)
	}
}

// firstKey is the least key of m, "" when it is empty.
func firstKey(m map[string]string) string {
	for _, k := range slices.Sorted(maps.Keys(m)) {
		return k
	}
	return ""
}

// TestRemovedStateMovesOutOfFolio: the hidden list and the trash an
// earlier folio kept in .folio/ move into the tree on the next command
// that takes the lock, whole, an unfinished removal included; a move cut
// short is finished by the next command.
func TestRemovedStateMovesOutOfFolio(t *testing.T) {
	for _, cut := range []bool{false, true} {
		name := "whole"
		if cut {
			name = "cut short"
		}
		t.Run(name, func(t *testing.T) {
			dir, m := catCollection(t, 30)
			catRun(t, dir, "reindex").want(t, 0)
			del := loneSnapshot(t, dir, m)
			var hid string
			for _, s := range m.Snapshots {
				if s.Dir != del.Dir && s.BookmarkedAt.Year() >= 2020 {
					hid = s.URL
					break
				}
			}
			removeBoth(t, dir, []string{hid, del.URL})
			if !crashFault(t, dir, "trashed:2", nil, "remove", "--delete", "--yes", "--before", "2020-01-01") {
				t.Fatal("the fault point was never reached")
			}
			// and a batch of an earlier day, as an older folio left it.
			older := filepath.Join(dir, archive.TrashDir, "20200101-000000", "archive", "1577836800")
			if err := os.MkdirAll(older, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(older, "index.json"), []byte(`{"url": "https://old.example/", "timestamp": "1577836800"}`), 0o644); err != nil {
				t.Fatal(err)
			}
			trash := treeFiles(t, filepath.Join(dir, archive.TrashDir))
			hidden, err := os.ReadFile(filepath.Join(dir, archive.HiddenFile))
			if err != nil {
				t.Fatal(err)
			}
			batches, _ := os.ReadDir(filepath.Join(dir, archive.TrashDir))
			if len(batches) < 2 {
				t.Fatalf("%d trash batches, want 2 or more", len(batches))
			}

			// Put them where folio kept them before: .folio/hidden.jsonl and
			// .folio/trash/<stamp>/, the same files.
			oldHidden, oldTrash := filepath.Join(dir, ".folio", "hidden.jsonl"), filepath.Join(dir, ".folio", "trash")
			mustRename(t, filepath.Join(dir, archive.HiddenFile), oldHidden)
			mustRename(t, filepath.Join(dir, archive.TrashDir), oldTrash)
			if err := os.Remove(filepath.Join(dir, archive.RemovedDir)); err != nil {
				t.Fatal(err)
			}
			if cut {
				// A move killed after the hidden list was written in the
				// tree and one batch renamed.
				if err := os.MkdirAll(filepath.Join(dir, archive.TrashDir), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, archive.HiddenFile), hidden, 0o644); err != nil {
					t.Fatal(err)
				}
				mustRename(t, filepath.Join(oldTrash, batches[0].Name()), filepath.Join(dir, archive.TrashDir, batches[0].Name()))
			}

			// A command that only reads already honours the old list.
			if strings.Contains(catRun(t, dir, "list").want(t, 0).stdout, hid) {
				t.Errorf("the hidden snapshot is listed before the move")
			}
			// The next command that takes the lock moves them.
			catRun(t, dir, "reindex").want(t, 0)
			before := catRun(t, dir, "list").want(t, 0).stdout
			if strings.Contains(before, hid) {
				t.Errorf("the hidden snapshot is listed")
			}
			for _, p := range []string{oldHidden, oldTrash} {
				if _, err := os.Lstat(p); !os.IsNotExist(err) {
					t.Errorf("%s is still there: %v", p, err)
				}
			}
			if got, err := os.ReadFile(filepath.Join(dir, archive.HiddenFile)); err != nil || string(got) != string(hidden) {
				t.Errorf("%s holds %q (%v), want %q", archive.HiddenFile, got, err, hidden)
			}
			if got := treeFiles(t, filepath.Join(dir, archive.TrashDir)); !reflect.DeepEqual(got, trash) {
				t.Errorf("the trash holds %d files, want %d: %v", len(got), len(trash), slices.Sorted(maps.Keys(got)))
			}

			// The removal cut short is finished from its new place.
			catRun(t, dir, "remove", "--delete", "--yes", "-f", "exact", "https://no.such.example/").want(t, 0)
			crashAgrees(t, dir)
			if n := len(catLines(catRun(t, dir, "list", "--before", "2020-01-01").want(t, 0).stdout)); n != 0 {
				t.Errorf("%d snapshots bookmarked before 2020 are still listed", n)
			}
			after := catRun(t, dir, "list").want(t, 0).stdout
			if err := os.RemoveAll(filepath.Join(dir, archive.StateDir)); err != nil {
				t.Fatal(err)
			}
			catRun(t, dir, "reindex").want(t, 0)
			if got := catRun(t, dir, "list").want(t, 0).stdout; got != after {
				t.Errorf("rm -rf .folio && folio reindex: list changed: %d lines, want %d", strings.Count(got, "\n"), strings.Count(after, "\n"))
			}
		})
	}
}

func mustRename(t *testing.T, from, to string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(from, to); err != nil {
		t.Fatal(err)
	}
}

// TestVerifyKeepsReportingBrokenFolders: a snapshot folder whose index
// does not parse, or that has none, is reported by every verify until it
// is fixed, whatever the catalog holds (reindexed, or deleted).
func TestVerifyKeepsReportingBrokenFolders(t *testing.T) {
	dir, m := catCollection(t, 6)
	catRun(t, dir, "reindex").want(t, 0)
	catRun(t, dir, "verify").want(t, 0)
	s := m.Snapshots[2]
	ix := filepath.Join(dir, s.Dir, "index.jsonl")
	good, err := os.ReadFile(ix)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ix, []byte("broken\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A folder with no index at all, where a snapshot folder goes.
	bare := "archive/users/system/snapshots/20240601/bare.example.net/0190f3c2a1b27c3d8e4f5a6b7c8d0009"
	if err := os.MkdirAll(filepath.Join(dir, bare, "screenshot"), 0o755); err != nil {
		t.Fatal(err)
	}
	names := func(r catResult) {
		t.Helper()
		for _, d := range []string{s.Dir, bare} {
			if !strings.Contains(r.stdout, d) {
				t.Errorf("verify does not name %s:\n%s", d, r.stdout)
			}
		}
	}
	if r := catRun(t, dir, "verify").want(t, 3); !strings.Contains(r.stdout, s.Dir) {
		t.Errorf("verify does not name %s:\n%s", s.Dir, r.stdout)
	}
	catRun(t, dir, "reindex") // says what it could not read
	for range 2 {
		r := catRun(t, dir, "verify").want(t, 3)
		names(r)
		if !strings.Contains(r.stdout, "index      "+s.Dir+"/index.jsonl: ") {
			t.Errorf("verify after reindex:\n%s", r.stdout)
		}
	}
	if err := os.RemoveAll(filepath.Join(dir, archive.StateDir)); err != nil {
		t.Fatal(err)
	}
	names(catRun(t, dir, "verify").want(t, 3))

	// Fixed: until the catalog has read it, it is a folder the catalog
	// does not know; then nothing is wrong.
	if err := os.WriteFile(ix, good, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(dir, bare)); err != nil {
		t.Fatal(err)
	}
	r := catRun(t, dir, "verify").want(t, 3)
	if !strings.Contains(r.stdout, "catalog    "+s.Dir+": ") {
		t.Errorf("verify after the fix, before reindex:\n%s", r.stdout)
	}
	catRun(t, dir, "reindex").want(t, 0)
	if r := catRun(t, dir, "verify").want(t, 0); !strings.Contains(r.stderr, "no problems found") {
		t.Errorf("verify after the fix:\n%s", r.stderr)
	}
}

// TestRemoveKilledMidWrite: a remove killed while it writes the hidden
// list or a trash journal leaves a temp file in removed/; the next
// command that takes the lock removes it, and the removal can be redone.
func TestRemoveKilledMidWrite(t *testing.T) {
	dir, m := catCollection(t, 12)
	catRun(t, dir, "reindex").want(t, 0)
	before := catRun(t, dir, "list").want(t, 0).stdout
	for _, args := range [][]string{
		{"remove", "-f", "exact", m.Snapshots[1].URL},
		{"remove", "--delete", "--yes", "-f", "exact", m.Snapshots[2].URL},
	} {
		if !crashFault(t, dir, "temp:1", nil, args...) {
			t.Fatalf("%v: the fault point was never reached", args)
		}
		if len(crashTemps(t, filepath.Join(dir, archive.RemovedDir))) == 0 {
			t.Fatalf("%v: the kill left no temp file in %s", args, archive.RemovedDir)
		}
		catRun(t, dir, "reindex").want(t, 0)
		crashNoTemps(t, dir)
		if got := catRun(t, dir, "list").want(t, 0).stdout; got != before {
			t.Errorf("%v killed before its list was written: the list changed", args)
		}
		if entries, _ := os.ReadDir(filepath.Join(dir, archive.TrashDir)); len(entries) != 0 {
			t.Errorf("%v: empty trash batches are left: %d", args, len(entries))
		}
		catRun(t, dir, args...).want(t, 0)
		before = catRun(t, dir, "list").want(t, 0).stdout
		if strings.Contains(before, args[len(args)-1]) {
			t.Errorf("%v redone: still listed", args)
		}
	}
}

// TestWatchHonoursRemoved: 'folio watch' on a collection whose catalog
// was deleted keeps a removed snapshot out, also when its folder is
// edited by hand while watched.
func TestWatchHonoursRemoved(t *testing.T) {
	dir, m := catCollection(t, 10)
	catRun(t, dir, "reindex").want(t, 0)
	hid, marker := m.Snapshots[2], m.Snapshots[5]
	catRun(t, dir, "remove", "-f", "exact", hid.URL).want(t, 0)
	if err := os.RemoveAll(filepath.Join(dir, archive.StateDir)); err != nil {
		t.Fatal(err)
	}
	w := startFolio(t, "-D", dir, "watch")
	await(t, "watching", w, func() bool { return strings.Contains(w.stderr(), "watching ") })
	if err := gen.RetitleIndex(filepath.Join(dir, filepath.FromSlash(hid.Dir)), "Edited while removed"); err != nil {
		t.Fatal(err)
	}
	if err := gen.RetitleIndex(filepath.Join(dir, filepath.FromSlash(marker.Dir)), "Edited after it"); err != nil {
		t.Fatal(err)
	}
	list := func() string { return catRun(t, dir, "list", "--csv", "url,title").stdout }
	await(t, "the edit after it in the catalog", w, func() bool { return strings.Contains(list(), "Edited after it") })
	if l := list(); strings.Contains(l, hid.URL) || strings.Contains(l, "Edited while removed") {
		t.Errorf("watch brought the removed snapshot back:\n%s", l)
	}
	if code := w.interrupt(t); code != 130 {
		t.Errorf("watch exit code after SIGINT: %d, want 130", code)
	}
}
