package migrate_test

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/gen"
	"github.com/folio-archive/folio/layout"
	"github.com/folio-archive/folio/migrate"
)

var testNow = time.Date(2026, 9, 1, 12, 0, 0, 0, time.UTC)

// counterIDs is a deterministic id source: 32-hex ids ff000000...n.
func counterIDs() archive.IDSource {
	var n atomic.Int64
	return func() string { return fmt.Sprintf("ff%030x", n.Add(1)) }
}

func scan(t testing.TB, dir string, opts migrate.ScanOptions) *migrate.Inventory {
	t.Helper()
	c, err := archive.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if opts.IDs == nil {
		opts.IDs = counterIDs()
	}
	if opts.Now == nil {
		opts.Now = func() time.Time { return testNow }
	}
	inv, err := migrate.Scan(context.Background(), c, opts)
	if err != nil {
		t.Fatalf("scan %s: %v", dir, err)
	}
	return inv
}

func bucket(s archive.Snapshot) string {
	if !s.BookmarkedAt.IsZero() {
		return layout.Bucket(s.BookmarkedAt)
	}
	return layout.Bucket(s.CreatedAt)
}

// checkInventory compares an inventory with what the generator expects.
func checkInventory(t *testing.T, m *gen.LegacyManifest, inv *migrate.Inventory) {
	t.Helper()
	type key struct{ url, ts string }
	items := map[key]migrate.Item{}
	for _, it := range inv.Items {
		k := key{it.Snapshot.URL, it.Snapshot.Timestamp}
		if _, dup := items[k]; dup {
			t.Errorf("two items for %s @ %s", k.url, k.ts)
		}
		items[k] = it
	}
	if len(inv.Items) != len(m.Snapshots) {
		t.Errorf("%d items, want %d", len(inv.Items), len(m.Snapshots))
	}
	ids := map[string]bool{}
	for _, e := range m.Snapshots {
		it, ok := items[key{e.URL, e.Timestamp}]
		if !ok {
			t.Errorf("no item for %s @ %q (edge %q)", e.URL, e.Timestamp, e.Edge)
			continue
		}
		s := it.Snapshot
		where := fmt.Sprintf("%s @ %s (edge %q)", e.URL, e.Timestamp, e.Edge)
		if e.ID != "" && s.ID != e.ID {
			t.Errorf("%s: id %s, want %s", where, s.ID, e.ID)
		}
		if !layout.IsCompactID(s.ID) || ids[s.ID] {
			t.Errorf("%s: id %q not compact or not unique", where, s.ID)
		}
		ids[s.ID] = true
		if it.User != e.User {
			t.Errorf("%s: user %q, want %q", where, it.User, e.User)
		}
		if s.Title != e.Title {
			t.Errorf("%s: title %q, want %q", where, s.Title, e.Title)
		}
		if !slices.Equal(s.Tags, archive.NormalizeTags(e.Tags)) {
			t.Errorf("%s: tags %q, want %q", where, s.Tags, e.Tags)
		}
		if got := bucket(s); got != e.Date {
			t.Errorf("%s: date bucket %s, want %s", where, got, e.Date)
		}
		if s.Status != e.Status {
			t.Errorf("%s: status %q, want %q", where, s.Status, e.Status)
		}
		if it.Source != e.Source {
			t.Errorf("%s: source %q, want %q", where, it.Source, e.Source)
		}
		if it.Crawl == nil || it.Crawl.ID != s.CrawlID || !layout.IsCompactID(s.CrawlID) {
			t.Errorf("%s: crawl %+v, crawl_id %q", where, it.Crawl, s.CrawlID)
		}
		for _, r := range it.Results {
			if r.SnapshotID != s.ID || !layout.IsCompactID(r.ID) {
				t.Errorf("%s: result %s has snapshot %q id %q", where, r.Plugin, r.SnapshotID, r.ID)
			}
		}
	}
	var wantInvalid, gotInvalid []string
	for _, f := range m.Invalid {
		wantInvalid = append(wantInvalid, f.Path)
	}
	for _, f := range inv.Invalid {
		gotInvalid = append(gotInvalid, f.Source)
	}
	sort.Strings(wantInvalid)
	sort.Strings(gotInvalid)
	if !slices.Equal(gotInvalid, wantInvalid) {
		t.Errorf("invalid %q, want %q", gotInvalid, wantInvalid)
	}
	got := append([]string(nil), inv.Symlinks...)
	want := append([]string(nil), m.Symlinks...)
	sort.Strings(got)
	sort.Strings(want)
	if !slices.Equal(got, want) {
		t.Errorf("symlinks %q, want %q", got, want)
	}
	if inv.Current != m.Current {
		t.Errorf("current %d, want %d", inv.Current, m.Current)
	}
	skipped := map[string]bool{}
	for _, s := range inv.Skipped {
		skipped[s.Source] = true
	}
	for _, u := range m.Untouched {
		if u.Path != "archive/.DS_Store" && !skipped[u.Path] {
			t.Errorf("%s not listed as skipped", u.Path)
		}
	}
}

func TestScanGeneratedCollections(t *testing.T) {
	for _, v := range gen.LegacyVersions {
		for _, noDB := range []bool{false, true} {
			name := v
			if noDB {
				name += "-nodb"
			}
			t.Run(name, func(t *testing.T) {
				dir := t.TempDir()
				m, err := gen.Legacy(dir, gen.LegacyOptions{Version: v, N: 12, Seed: 7, Edges: gen.AllEdges, NoDB: noDB})
				if err != nil {
					t.Fatal(err)
				}
				inv := scan(t, dir, migrate.ScanOptions{})
				wantDB := v
				if v == gen.Legacy09Dash {
					wantDB = migrate.DB09
				}
				if noDB {
					wantDB = ""
				}
				if inv.DBVersion != wantDB {
					t.Errorf("db version %q, want %q", inv.DBVersion, wantDB)
				}
				checkInventory(t, m, inv)
				if t.Failed() {
					for _, it := range inv.Items {
						t.Logf("item %s %s %q user=%s src=%q from=%s", it.Snapshot.ID, it.Snapshot.Timestamp, it.Snapshot.URL, it.User, it.Source, it.From)
					}
					for _, s := range inv.Skipped {
						t.Logf("skipped %s: %s", s.Source, s.Reason)
					}
				}
			})
		}
	}
}

func mustTime(t testing.TB, s string) time.Time {
	t.Helper()
	tm, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	return tm
}

type countingPrinter struct {
	mu         sync.Mutex
	last, tot  int64
	infos, bad int
}

func (p *countingPrinter) Infof(string, ...any) { p.mu.Lock(); p.infos++; p.mu.Unlock() }
func (p *countingPrinter) Warnf(string, ...any) { p.mu.Lock(); p.bad++; p.mu.Unlock() }
func (p *countingPrinter) Progress(phase string, done, total int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if phase != "scan" || done > total {
		p.bad++
	}
	if done > p.last {
		p.last, p.tot = done, total
	}
}

// Scan reports its progress over every folder it reads.
func TestScanProgress(t *testing.T) {
	dir := t.TempDir()
	if _, err := gen.Legacy(dir, gen.LegacyOptions{Version: gen.Legacy09Dash, N: 9, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	p := &countingPrinter{}
	scan(t, dir, migrate.ScanOptions{Printer: p})
	if p.bad != 0 || p.last != 9 || p.tot != 9 {
		t.Errorf("progress ended at %d of %d with %d bad calls", p.last, p.tot, p.bad)
	}
}
