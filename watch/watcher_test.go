package watch_test

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/folio-archive/folio/watch"
)

// TestWatcherPollsWhatItCannotWatch runs the real watcher with fewer
// watches than the tree has folders: changes in the folders left over
// still reach the catalog, by polling them, and it says so.
func TestWatcherPollsWhatItCannotWatch(t *testing.T) {
	c, m, h, out := collection(t, 10)
	w, err := watch.New(watch.Options{Dir: c.Dir, MaxWatches: 4, Quiet: 50 * time.Millisecond}, out)
	if err != nil {
		t.Fatal(err)
	}
	ready := make(chan int, 1)
	w.Ready = func(watches int, polling bool) { ready <- watches }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	applied := make(chan watch.Batch, 100)
	go func() {
		done <- w.Run(ctx, func(ctx context.Context, b watch.Batch) error {
			_, err := h.Apply(ctx, b)
			applied <- b
			return err
		})
	}()
	defer func() {
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("Run ended with %v", err)
		}
	}()
	select {
	case n := <-ready:
		if n != 4 {
			t.Errorf("%d watches, want 4", n)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the watcher did not start")
	}
	// Four watches hold the top of the tree (it is watched level by
	// level): every snapshot folder is left to polling.
	if warn := strings.Join(out.warn, "\n"); !strings.Contains(warn, "4 folders are watched (the most asked for)") {
		t.Errorf("no word of the folders left over: %q", out.warn)
	}
	if b := <-applied; !b.Rescan {
		t.Fatalf("the first batch is %+v, want the look at the whole tree", b)
	}
	var rels []string
	for _, s := range m.Snapshots[:3] {
		retitle(t, c.Path(s.Dir), "changed while polled")
		rels = append(rels, s.Dir)
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		got := dirs(t, c)
		n := 0
		for _, rel := range rels {
			if got[rel].Snapshot.Title == "changed while polled" {
				n++
			}
		}
		if n == len(rels) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d changes reached the catalog; the watcher said %q", n, len(rels), out.info)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// The changes came in a look at the unwatched folders. The batch
	// reaches applied only after its changes reached the catalog, so it
	// may still be on its way.
	wait := time.After(15 * time.Second)
	var roots []string
	for polled := false; !polled; {
		select {
		case b := <-applied:
			polled, roots = len(b.Roots) > 0 && !b.Rescan, b.Roots
		case <-wait:
			t.Fatal("no batch looked at the unwatched folders")
		}
	}
	// A polled folder removed is polled no more: once the batch with its
	// removal (reported by its parent's watch) is applied, no look names it.
	gone := roots[len(roots)-1]
	if err := os.RemoveAll(c.Path(gone)); err != nil {
		t.Fatal(err)
	}
	for removed := false; ; {
		select {
		case b := <-applied:
			for _, e := range b.Events {
				removed = removed || e.Path == gone && e.Removed
			}
			if removed && len(b.Roots) > 0 {
				if slices.Contains(b.Roots, gone) {
					t.Fatalf("a look after its removal names %s: %v", gone, b.Roots)
				}
				return
			}
		case <-wait:
			t.Fatalf("no removal of %s and look after it", gone)
		}
	}
}
