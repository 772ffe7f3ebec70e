package export_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"folio/archive"
	"folio/export"
	"folio/gen"
)

// generated makes a collection of n synthetic snapshots (odd names,
// unicode, %, missing outputs, hostile titles) in a temp folder.
func generated(t testing.TB, n int, seed uint64) (*archive.Collection, *gen.Manifest) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "data")
	if keep := os.Getenv("FOLIO_KEEP_EXPORT"); keep != "" {
		dir = keep
	}
	m, err := gen.Current(dir, gen.Options{N: n, Seed: seed, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	c, err := archive.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return c, m
}

func run(t testing.TB, opts export.Options) export.Stats {
	t.Helper()
	st, err := export.Run(context.Background(), opts, archive.Discard)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestSmoke(t *testing.T) {
	c, _ := generated(t, 60, 1)
	st := run(t, export.Options{Collection: c, PageSize: 20})
	t.Logf("%+v", st)
}
