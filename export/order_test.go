package export

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"folio/archive"
	"folio/gen"
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
