package export

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/archive/catalog"
	"github.com/folio-archive/folio/gen"
)

// TestStateAfterSync checks the crash-safety order of an export: every
// page, shard and the manifest is written through the batch, the batch is
// synced, and only then is the state file that claims them written. A
// state written before the sync could, after a crash, claim pages that
// never reached the disk, and the next export would keep them.
func TestStateAfterSync(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	if _, err := gen.Current(dir, gen.Options{N: 30, Seed: 4, NoSync: true}); err != nil {
		t.Fatal(err)
	}
	c, err := archive.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var events []string
	testEvent = func(e string) {
		mu.Lock()
		events = append(events, e)
		mu.Unlock()
	}
	defer func() { testEvent = func(string) {} }()
	for _, opts := range []Options{
		{Collection: c, PageSize: 7},
		{Collection: c, PageSize: 7, Out: filepath.Join(t.TempDir(), "site"), Gzip: true},
	} {
		events = nil
		if _, err := Run(context.Background(), opts, archive.Discard); err != nil {
			t.Fatal(err)
		}
		synced, stated, writes := -1, -1, 0
		for i, e := range events {
			switch {
			case e == "sync":
				synced = i
			case e == "state":
				stated = i
			case strings.HasPrefix(e, "write "):
				writes++
				if synced >= 0 {
					t.Errorf("out=%q: %s after the sync", opts.Out, e)
				}
			}
		}
		if writes < 30+5+1 {
			t.Errorf("out=%q: %d writes, want every page, shard and the manifest", opts.Out, writes)
		}
		if synced < 0 || stated < synced {
			t.Errorf("out=%q: state written at step %d, sync at %d: the state must follow the sync", opts.Out, stated, synced)
		}
	}
}

// generatedIn makes a generated collection of n snapshots in a temp
// folder and returns its path, manifest and collection.
func generatedIn(t *testing.T, n int, seed uint64) (string, *gen.Manifest, *archive.Collection) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "data")
	m, err := gen.Current(dir, gen.Options{N: n, Seed: seed, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	c, err := archive.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return dir, m, c
}

// TestOnePass checks that a re-export after a change that leaves every
// URL's captures as they were streams the catalog once and rewrites only
// what changed, that a change another capture's page shows falls back to
// the second pass, and that both leave the site a --full export writes.
func TestOnePass(t *testing.T) {
	dir, m, c := generatedIn(t, 90, 5)
	var mu sync.Mutex
	passes, copies := 0, 0
	testEvent = func(e string) {
		mu.Lock()
		defer mu.Unlock()
		switch e {
		case "pass2":
			passes++
		case "copy manifest records":
			copies++
		}
	}
	defer func() { testEvent = func(string) {} }()
	export := func(full bool) (Stats, int) {
		t.Helper()
		passes = 0
		st, err := Run(context.Background(), Options{Collection: c, PageSize: 20, Full: full}, archive.Discard)
		if err != nil {
			t.Fatal(err)
		}
		return st, passes
	}
	read := func(rel string) string {
		t.Helper()
		data, err := os.ReadFile(filepath.Join(dir, rel))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	if st, n := export(false); n != 1 || st.Written != 90 {
		t.Fatalf("first export: %d second passes, %+v", n, st)
	}
	if st, n := export(false); n != 0 || st.Written != 0 || st.RootWritten != 0 {
		t.Fatalf("unchanged: %d second passes, %+v", n, st)
	}
	urls := map[string][]int{}
	for i, s := range m.Snapshots {
		urls[s.URL] = append(urls[s.URL], i)
	}
	single, shared := -1, -1
	for i, s := range m.Snapshots {
		switch n := len(urls[s.URL]); {
		case n == 1 && single < 0:
			single = i
		case n > 1 && shared < 0:
			shared = i
		}
	}
	if single < 0 || shared < 0 {
		t.Fatal("the generated collection needs a URL captured once and one captured more than once")
	}
	time.Sleep(10 * time.Millisecond)
	if err := gen.RetitleIndex(filepath.Join(dir, m.Snapshots[single].Dir), "Once"); err != nil {
		t.Fatal(err)
	}
	st, n := export(false)
	if n != 0 || st.Written != 1 || st.RootWritten != 1 {
		t.Fatalf("after retitling a single capture: %d second passes, %+v", n, st)
	}
	if copies == 0 {
		t.Error("the manifest was encoded anew, not copied from the previous one")
	}
	manifest := read(ManifestFile)
	if !strings.Contains(manifest, `"Once"`) {
		t.Error("the manifest misses the new title")
	}
	if err := gen.RetitleIndex(filepath.Join(dir, m.Snapshots[shared].Dir), "Twice"); err != nil {
		t.Fatal(err)
	}
	st, n = export(false)
	group := len(urls[m.Snapshots[shared].URL])
	if n != 1 || st.Written != int64(group) {
		t.Fatalf("after retitling one of %d captures: %d second passes, %+v", group, n, st)
	}
	other := urls[m.Snapshots[shared].URL][0]
	if other == shared {
		other = urls[m.Snapshots[shared].URL][1]
	}
	if page := read(m.Snapshots[other].Dir + "/" + RootPage); !strings.Contains(page, "Twice") {
		t.Error("the other capture's page misses the new title")
	}
	incremental := map[string]string{ManifestFile: read(ManifestFile), RootPage: read(RootPage)}
	for i := range m.Snapshots {
		incremental[m.Snapshots[i].Dir] = read(m.Snapshots[i].Dir + "/" + RootPage)
	}
	export(true)
	if got := read(ManifestFile); got != incremental[ManifestFile] {
		t.Error("the incremental manifest differs from a full export's")
	}
	if got := read(RootPage); got != incremental[RootPage] {
		t.Error("the incremental root page differs from a full export's")
	}
	for i := range m.Snapshots {
		if got := read(m.Snapshots[i].Dir + "/" + RootPage); got != incremental[m.Snapshots[i].Dir] {
			t.Errorf("%s: the incremental page differs from a full export's", m.Snapshots[i].Dir)
		}
	}
}

// TestEachAhead checks that eachAhead hands over the selection in the
// catalog's order, and that an error of its callback ends it with that
// error, the catalog's reader not left waiting.
func TestEachAhead(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	if _, err := gen.Current(dir, gen.Options{N: 3*aheadBatch + 17, Seed: 9, NoSync: true, Minimal: true}); err != nil {
		t.Fatal(err)
	}
	c, err := archive.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cat, err := catalog.Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	if _, err := cat.Reindex(ctx, catalog.ReindexOptions{}); err != nil {
		t.Fatal(err)
	}
	var want, got []string
	if err := cat.Each(ctx, catalog.Query{}, func(e catalog.Entry) error { want = append(want, e.Dir); return nil }); err != nil {
		t.Fatal(err)
	}
	s := &site{cat: cat}
	if err := s.eachAhead(ctx, catalog.Query{}, func(e *catalog.Entry) error { got = append(got, e.Dir); return nil }); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("eachAhead handed over %d entries, not the %d of Each in its order", len(got), len(want))
	}
	stop := errors.New("stop")
	n := 0
	err = s.eachAhead(ctx, catalog.Query{}, func(*catalog.Entry) error {
		if n++; n == aheadBatch+5 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || n != aheadBatch+5 {
		t.Fatalf("after the callback's error: %v, %d calls", err, n)
	}
}
