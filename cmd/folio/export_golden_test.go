package main_test

import (
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/folio-archive/folio/gen"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files under testdata/")

// goldenExport is the digest of every file an export of gen's collection
// of 240 snapshots (seed 29) writes; it was taken from the code before
// the export was made faster, so a faster export must write the very same
// bytes. A change meant to alter the pages (templates, CSS) regenerates it
// with: go test -run TestExportBytesGolden ./cmd/folio/ -update
const goldenExport = "testdata/export-golden.txt"

// TestExportBytesGolden exports a fixed generated collection in full, then
// again after one snapshot changed (the incremental path), and compares
// the digest of every exported file with the golden one.
func TestExportBytesGolden(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "coll")
	m, err := gen.Current(dir, gen.Options{N: 240, Seed: 29})
	if err != nil {
		t.Fatal(err)
	}
	// The root manifest shows each index's mtime: fix them.
	stamp := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	setTimes := func() {
		for i := range m.Snapshots {
			if err := os.Chtimes(m.IndexPath(i), stamp, stamp); err != nil {
				t.Fatal(err)
			}
		}
	}
	setTimes()
	if _, stderr, code := runFolio(t, "export", "-D", dir, "--full"); code != 0 {
		t.Fatalf("export --full: exit %d\n%s", code, stderr)
	}
	full := exportDigest(t, dir)
	if err := gen.RetitleIndex(filepath.Dir(m.IndexPath(7)), "Retitled <by> the golden test & co"); err != nil {
		t.Fatal(err)
	}
	setTimes()
	if _, stderr, code := runFolio(t, "export", "-D", dir); code != 0 {
		t.Fatalf("export after one change: exit %d\n%s", code, stderr)
	}
	got := "# export --full\n" + full + "# export after retitling snapshot 7\n" + exportDigest(t, dir)
	if *updateGolden {
		if err := os.WriteFile(goldenExport, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(goldenExport)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		g, w := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		bad := 0
		for i := 0; i < max(len(g), len(w)) && bad < 10; i++ {
			var gl, wl string
			if i < len(g) {
				gl = g[i]
			}
			if i < len(w) {
				wl = w[i]
			}
			if gl != wl {
				t.Errorf("line %d: got %q, want %q", i+1, gl, wl)
				bad++
			}
		}
		t.Fatalf("the exported files differ from %s (regenerate with -update only when the pages are meant to change)", goldenExport)
	}
}

// exportDigest lists "path sha256" for every file an export writes
// (snapshot pages, root pages, shards, assets, the root manifest), sorted
// by path, and one digest of all the other files under archive/: the proof
// that nothing else changed. The .folio and logs folders are left out.
func exportDigest(t *testing.T, dir string) string {
	t.Helper()
	var lines, rest []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == ".folio" || rel == "logs" {
				return filepath.SkipDir
			}
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		if strings.HasPrefix(rel, "archive/") && !(d.Name() == "index.html" && isSnapshotDir(filepath.Dir(p))) {
			rest = append(rest, rel+" "+hex.EncodeToString(sum[:]))
			return nil
		}
		lines = append(lines, rel+" "+hex.EncodeToString(sum[:16]))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	sort.Strings(rest)
	sum := sha256.Sum256([]byte(strings.Join(rest, "\n")))
	lines = append(lines, "(the other "+strconv.Itoa(len(rest))+" files under archive/) "+hex.EncodeToString(sum[:16]))
	return strings.Join(lines, "\n") + "\n"
}

func isSnapshotDir(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "index.jsonl"))
	return err == nil
}
