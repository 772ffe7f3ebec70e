package migrate_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/gen"
	"github.com/folio-archive/folio/layout"
	"github.com/folio-archive/folio/migrate"
)

func otherIDs() archive.IDSource {
	var n atomic.Int64
	return func() string { return fmt.Sprintf("ee%030x", n.Add(1)) }
}

// writeMigrated writes what the mover leaves once it has copied an item:
// the target folder with its index.jsonl.
func writeMigrated(t *testing.T, dir string, it migrate.Item) string {
	t.Helper()
	s := it.Snapshot
	s.FSVersion = layout.Current
	date := s.BookmarkedAt
	if date.IsZero() {
		date = s.CreatedAt
	}
	rel, err := layout.SnapshotDir(it.User, date, s.URL, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
	ix, _ := archive.ParseIndex(nil)
	ix.SetSnapshot(s)
	if err := archive.WriteIndex(p, ix); err != nil {
		t.Fatal(err)
	}
	return rel
}

// An orphan folder copied by an interrupted run (target written, legacy
// folder not yet deleted) keeps the identity the first run gave it: same
// id, same timestamp (no collision bump against itself), same crawl.
func TestScanInterruptedOrphanKeepsIdentity(t *testing.T) {
	dir := t.TempDir()
	if _, err := gen.Legacy(dir, gen.LegacyOptions{Version: gen.Legacy04, NoDB: true, Edges: []gen.Edge{gen.EdgeOrphan}}); err != nil {
		t.Fatal(err)
	}
	first := scan(t, dir, migrate.ScanOptions{})
	it := findItem(t, first, "https://orphan.example.com/", "1710000000")
	writeMigrated(t, dir, it)
	again := scan(t, dir, migrate.ScanOptions{IDs: otherIDs()})
	got := findItem(t, again, "https://orphan.example.com/", "1710000000")
	if got.Snapshot.ID != it.Snapshot.ID || got.Source != it.Source || got.Snapshot.CrawlID != it.Snapshot.CrawlID || got.User != it.User {
		t.Errorf("rerun gave %s %s crawl %s, first run %s %s crawl %s", got.Snapshot.ID, got.Source, got.Snapshot.CrawlID,
			it.Snapshot.ID, it.Source, it.Snapshot.CrawlID)
	}
	if again.Current != 0 || len(again.Items) != 1 {
		t.Errorf("current %d items %d", again.Current, len(again.Items))
	}
}

// Rows without a crawl keep the automatic crawl an interrupted run created,
// and rows already migrated count as current.
func TestScanInterruptedKeepsAutoCrawl(t *testing.T) {
	dir := t.TempDir()
	if _, err := gen.Legacy(dir, gen.LegacyOptions{Version: gen.Legacy07, N: 3, Seed: 2}); err != nil {
		t.Fatal(err)
	}
	first := scan(t, dir, migrate.ScanOptions{})
	done := first.Items[0]
	writeMigrated(t, dir, done)
	if err := os.RemoveAll(filepath.Join(dir, filepath.FromSlash(done.Source))); err != nil {
		t.Fatal(err)
	}
	again := scan(t, dir, migrate.ScanOptions{IDs: otherIDs()})
	if again.Current != 1 || len(again.Items) != 2 {
		t.Fatalf("current %d items %d, want 1 and 2", again.Current, len(again.Items))
	}
	for _, it := range again.Items {
		if it.Snapshot.ID == done.Snapshot.ID {
			t.Errorf("migrated row %s listed again", it.Snapshot.ID)
		}
		if it.Snapshot.CrawlID != done.Snapshot.CrawlID {
			t.Errorf("crawl %s, want the first run's %s", it.Snapshot.CrawlID, done.Snapshot.CrawlID)
		}
	}
	// Fully migrated: nothing to do.
	for _, it := range again.Items {
		writeMigrated(t, dir, it)
		if err := os.RemoveAll(filepath.Join(dir, filepath.FromSlash(it.Source))); err != nil {
			t.Fatal(err)
		}
	}
	final := scan(t, dir, migrate.ScanOptions{})
	if final.Current != 3 || len(final.Items) != 0 || len(final.Invalid) != 0 {
		t.Errorf("current %d items %d invalid %d", final.Current, len(final.Items), len(final.Invalid))
	}
}

// Results that carry no id of their own (0.4 index.json entries, 0.5 rows
// without uuid) get the same id on every scan, whatever the id source.
func TestScanResultIDsStable(t *testing.T) {
	for _, v := range []string{gen.Legacy04, gen.Legacy07} {
		dir := t.TempDir()
		if _, err := gen.Legacy(dir, gen.LegacyOptions{Version: v, N: 4, Seed: 4}); err != nil {
			t.Fatal(err)
		}
		a := scan(t, dir, migrate.ScanOptions{})
		b := scan(t, dir, migrate.ScanOptions{IDs: otherIDs()})
		for i := range a.Items {
			ra, rb := a.Items[i].Results, b.Items[i].Results
			if len(ra) == 0 || len(ra) != len(rb) {
				t.Fatalf("%s: %d and %d results", v, len(ra), len(rb))
			}
			seen := map[string]bool{}
			for k := range ra {
				if ra[k].ID != rb[k].ID || seen[ra[k].ID] {
					t.Errorf("%s: result %d ids %s / %s", v, k, ra[k].ID, rb[k].ID)
				}
				seen[ra[k].ID] = true
			}
		}
	}
}
