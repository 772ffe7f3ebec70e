package catalog_test

import (
	"database/sql"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/archive/catalog"
)

// TestReindexTrustsOnlyUnchangedListings runs reindexes whose clock is an
// hour ahead, so that every date and domain folder's listing is kept and
// trusted while its stamp holds, and changes the tree by hand between
// them: a snapshot folder added to a listed domain folder, one removed, a
// domain folder renamed, and a folder whose mtime is set back as cp -a
// and rsync -a do. Each reindex must find the tree as it is.
func TestReindexTrustsOnlyUnchangedListings(t *testing.T) {
	c := newCollection(t)
	cat := openCatalog(t, c)
	later := func() time.Time { return time.Now().Add(time.Hour) }
	check := func(step string) {
		t.Helper()
		if _, err := cat.Reindex(ctx, catalog.ReindexOptions{Now: later}); err != nil {
			t.Fatal(err)
		}
		var want []string
		err := filepath.WalkDir(c.Path("archive"), func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && d.Name() == "index.jsonl" {
				rel, _ := filepath.Rel(c.Dir, filepath.Dir(p))
				want = append(want, filepath.ToSlash(rel))
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range entries(t, cat, catalog.Query{}) {
			got = append(got, e.Dir)
		}
		sort.Strings(want)
		sort.Strings(got)
		if len(got) != len(want) {
			t.Fatalf("%s: catalog has %d folders, the tree %d:\n%v\n%v", step, len(got), len(want), got, want)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("%s: catalog has %s, the tree %s", step, got[i], want[i])
			}
		}
		drift, err := cat.Drift(ctx, 2)
		if err != nil || drift.Stale() {
			t.Fatalf("%s: drift right after a reindex: %+v %v", step, drift, err)
		}
	}
	for i := range 4 {
		writeSnapshot(t, c, "system", snapshot(i, "one"))
	}
	check("first")
	check("nothing changed") // the listings are trusted now

	// A change in the same clock tick as the last look would keep the
	// stamp; real reindexes never trust a folder that recent.
	tick := func() { time.Sleep(20 * time.Millisecond) }
	tick()
	writeSnapshot(t, c, "system", snapshot(30, "added")) // a new date folder
	s := snapshot(1, "sibling")
	s.ID = "0190f3c2a1b27c3d8e4f5a6b7c8dffff"
	sibling := writeSnapshot(t, c, "system", s) // a new folder in a domain folder already listed
	check("added")

	tick()
	if err := os.RemoveAll(c.Path(sibling)); err != nil {
		t.Fatal(err)
	}
	check("removed")

	tick()
	dom := filepath.Dir(c.Path(sibling))
	if err := os.Rename(dom, filepath.Join(filepath.Dir(dom), "example.net")); err != nil {
		t.Fatal(err)
	}
	check("domain renamed")

	// rsync -a: a new folder, then the parent's mtime set back.
	tick()
	s.ID = "0190f3c2a1b27c3d8e4f5a6b7c8deeee"
	rel := writeSnapshot(t, c, "system", s)
	parent := filepath.Dir(c.Path(rel))
	old := time.Now().Add(-48 * time.Hour)
	if err := os.Chtimes(parent, old, old); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(filepath.Dir(parent), old, old); err != nil {
		t.Fatal(err)
	}
	// Drift, which only reads, sees it too.
	if d, err := cat.Drift(ctx, 2); err != nil || d.New != 1 {
		t.Fatalf("drift after a folder added with its parent's mtime set back: %+v %v", d, err)
	}
	check("mtime set back")
}

// TestListingsOfAnOlderFolioAreReadAgain: listings an older folio kept
// (stamps without the version, no staging folder names) are not trusted:
// the staging folder a crash left beside a snapshot is counted at once,
// not only once its domain folder changes.
func TestListingsOfAnOlderFolioAreReadAgain(t *testing.T) {
	c := newCollection(t)
	cat := openCatalog(t, c)
	later := func() time.Time { return time.Now().Add(time.Hour) }
	rel := writeSnapshot(t, c, "system", snapshot(1, "one"))
	staging := "." + filepath.Base(rel)[:31] + "e" + archive.TempMarker + "1"
	if err := os.Mkdir(filepath.Join(filepath.Dir(c.Path(rel)), staging), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := cat.Reindex(ctx, catalog.ReindexOptions{Now: later}); err != nil {
		t.Fatal(err)
	}
	if d, err := cat.Drift(ctx, 2); err != nil || d.Staging != 1 {
		t.Fatalf("drift: %+v %v, want one staging folder", d, err)
	}

	// What an older folio kept: the same listings without the staging
	// name, their stamps without the version.
	db, err := sql.Open("sqlite", c.Path(archive.CatalogFile))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT dir, stamp, domains FROM folders`)
	if err != nil {
		t.Fatal(err)
	}
	old := map[string][2]string{}
	for rows.Next() {
		var dir, stamp string
		var domains []byte
		if err := rows.Scan(&dir, &stamp, &domains); err != nil {
			t.Fatal(err)
		}
		d := strings.ReplaceAll(string(domains), "/"+staging, "")
		old[dir] = [2]string{strings.TrimPrefix(stamp, "2:"), strings.ReplaceAll(d, "/2:", "/")}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(old) == 0 {
		t.Fatal("the reindex kept no listing")
	}
	for dir, v := range old {
		if _, err := db.Exec(`UPDATE folders SET stamp = ?, domains = ? WHERE dir = ?`, v[0], []byte(v[1]), dir); err != nil {
			t.Fatal(err)
		}
	}
	if d, err := cat.Drift(ctx, 2); err != nil || d.Staging != 1 {
		t.Fatalf("drift over an older folio's listings: %+v %v, want one staging folder", d, err)
	}
}
