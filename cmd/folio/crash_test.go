package main_test

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/folio-archive/folio/archive"
)

// crashCatalog is what the catalog says of the collection: every
// snapshot's folder, id, URL and status, and every record, sorted.
func crashCatalog(t testing.TB, dir string) []string {
	t.Helper()
	rows := catLines(catRun(t, dir, "list", "--csv", "dir,id,url,status").want(t, 0).stdout)
	if len(rows) > 0 {
		rows = rows[1:]
	}
	rows = append(rows, catLines(catRun(t, dir, "list", "--jsonl").want(t, 0).stdout)...)
	sort.Strings(rows)
	return rows
}

// crashTruth is what a catalog rebuilt from the tree alone says: the
// collection is copied, its catalog left behind, and 'reindex --full'
// run on the copy.
func crashTruth(t testing.TB, dir string) []string {
	t.Helper()
	cp := filepath.Join(t.TempDir(), "copy")
	if out, err := exec.Command("cp", "-a", dir, cp).CombinedOutput(); err != nil {
		t.Fatalf("copy the collection: %v\n%s", err, out)
	}
	matches, _ := filepath.Glob(filepath.Join(cp, archive.StateDir, "catalog*"))
	for _, m := range matches {
		os.Remove(m)
	}
	catRun(t, cp, "reindex", "--full").want(t, 0)
	return crashCatalog(t, cp)
}

// crashAgrees fails t unless the catalog of dir says what its tree says.
func crashAgrees(t testing.TB, dir string) {
	t.Helper()
	got, want := crashCatalog(t, dir), crashTruth(t, dir)
	if strings.Join(got, "\n") == strings.Join(want, "\n") {
		return
	}
	in := map[string]bool{}
	for _, l := range want {
		in[l] = true
	}
	var diff []string
	for _, l := range got {
		if !in[l] {
			diff = append(diff, "catalog only: "+l)
		}
		delete(in, l)
	}
	for l := range in {
		diff = append(diff, "tree only: "+l)
	}
	sort.Strings(diff)
	t.Fatalf("the catalog (%d rows) disagrees with the tree (%d rows):\n%s", len(got), len(want), strings.Join(diff, "\n"))
}

// crashTemps lists the temp files and folders anywhere below root.
func crashTemps(t testing.TB, root string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && archive.IsTemp(d.Name()) {
			rel, _ := filepath.Rel(root, p)
			out = append(out, rel)
			if d.IsDir() {
				return filepath.SkipDir
			}
		}
		return nil
	})
	return out
}

// crashFault runs folio in dir with FOLIO_FAULT=spec and wants it to die
// there (exit 99); it reports whether it did (false: the point was never
// reached and the command exited 0).
func crashFault(t testing.TB, dir, spec string, env []string, args ...string) bool {
	t.Helper()
	r := updRun(t, dir, append(env, "FOLIO_FAULT="+spec), args...)
	switch r.code {
	case 99:
		return true
	case 0:
		return false
	}
	t.Fatalf("folio %v with FOLIO_FAULT=%s: exit %d, want 99\n%s", args, spec, r.code, r.stderr)
	return false
}

// crashNoTemps fails t when a temp file is left below dir.
func crashNoTemps(t testing.TB, dir string) {
	t.Helper()
	if left := crashTemps(t, dir); len(left) > 0 {
		t.Fatalf("temp files left: %s", strings.Join(left, ", "))
	}
}

func crashSpec(step string, n int) string { return fmt.Sprintf("%s:%d", step, n) }

// TestCrashMatrix kills remove --delete, export and add at sampled points
// (FOLIO_FAULT exits at once, no deferred function run, as kill -9 would;
// "temp:N" in the middle of the Nth atomic write) and asserts that the
// rerun exits 0 with the catalog agreeing with the tree and no temp file
// left anywhere in the collection, nor a removal journal.
func TestCrashMatrix(t *testing.T) {
	srv := fixtureServer(t)
	type point struct {
		cmd   string
		spec  string
		args  []string
		rerun []string
	}
	remove := []string{"remove", "--delete", "--yes", "--before", "2020-01-01"}
	export := []string{"export", "--workers", "2"}
	add := []string{"add", "--plugins", "title,hashes", srv.URL + "/index.html", srv.URL + "/about.html"}
	resume := []string{"add", "--resume", "--plugins", "title,hashes"}
	points := []point{
		{"remove", "journaled:1", remove, remove},
		{"remove", "trashed:3", remove, remove},
		{"remove", "dropped:1", remove, []string{"remove", "-f", "exact", "https://no.such.example/"}},
		{"export", "temp:1", export, export},
		{"export", "temp:9", export, export},
		{"export", "page:5", export, export},
		{"export", "state:1", export, export},
		{"export --full", "temp:10", append(export, "--full"), export},
		{"add", "temp:3", add, resume},
		{"add", "sealed:1", add, resume},
	}
	for _, pt := range points {
		t.Run(pt.cmd+"/"+pt.spec, func(t *testing.T) {
			var dir string
			switch pt.cmd {
			case "add": // only pages of the fixture server: nothing leaves loopback
				dir = newCollection(t)
			default:
				dir, _ = catCollection(t, 12)
				catRun(t, dir, "reindex").want(t, 0)
			}
			if pt.cmd == "export --full" {
				// Another title: every page the --full export renders
				// differs from the one on disk, and is written over it.
				catRun(t, dir, "export", "--title", "Before").want(t, 0)
			}
			env := []string{"TMPDIR=" + t.TempDir()}
			if !crashFault(t, dir, pt.spec, env, pt.args...) {
				t.Fatalf("%s was never reached", pt.spec)
			}
			if r := updRun(t, dir, env, pt.rerun...); r.code != 0 {
				t.Fatalf("rerun %v: exit %d\n%s", pt.rerun, r.code, r.stderr)
			}
			crashNoTemps(t, dir)
			if j, _ := filepath.Glob(filepath.Join(dir, archive.TrashDir, "*", archive.TrashJournal)); len(j) > 0 {
				t.Errorf("removal journals left: %v", j)
			}
			crashAgrees(t, dir)
		})
	}
}
