package catalog_test

import (
	"database/sql"
	"fmt"
	"testing"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/archive/catalog"
)

// pragmas reads the page size and journal mode of the catalog file of c.
func pragmas(t *testing.T, c *archive.Collection) (int, string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+c.Path(archive.CatalogFile)+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var size int
	var mode string
	if err := db.QueryRow(`PRAGMA page_size`).Scan(&size); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil {
		t.Fatal(err)
	}
	return size, mode
}

// TestCatalogPages checks that a catalog folio creates has 16 KiB pages
// and is in WAL mode, and that one made with SQLite's default 4 KiB pages
// (every catalog made before) is used as it is, not rebuilt.
func TestCatalogPages(t *testing.T) {
	c := newCollection(t)
	for i := range 40 {
		writeSnapshot(t, c, "alice", snapshot(i, fmt.Sprintf("Page %d about velvet", i), "tag"))
	}
	cat := openCatalog(t, c)
	if st, err := cat.Reindex(ctx, catalog.ReindexOptions{}); err != nil || st.Added != 40 {
		t.Fatalf("reindex: %+v, %v", st, err)
	}
	if size, mode := pragmas(t, c); size != 16384 || mode != "wal" {
		t.Errorf("new catalog: page size %d, journal mode %q; want 16384, wal", size, mode)
	}
	cat.Close()

	// A catalog file as folio made it before: default pages, WAL mode.
	old := newCollection(t)
	for i := range 40 {
		writeSnapshot(t, old, "bob", snapshot(i, fmt.Sprintf("Old page %d", i)))
	}
	db, err := sql.Open("sqlite", "file:"+old.Path(archive.CatalogFile))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`PRAGMA journal_mode = WAL`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	cat = openCatalog(t, old)
	if cat.Rebuilt {
		t.Error("a catalog with 4 KiB pages was rebuilt")
	}
	if st, err := cat.Reindex(ctx, catalog.ReindexOptions{}); err != nil || st.Added != 40 {
		t.Fatalf("reindex of the old catalog: %+v, %v", st, err)
	}
	n := 0
	if err := cat.Each(ctx, catalog.Query{Search: "old"}, func(catalog.Entry) error { n++; return nil }); err != nil || n != 40 {
		t.Errorf("search of the old catalog: %d rows, %v; want 40", n, err)
	}
	if size, mode := pragmas(t, old); size != 4096 || mode != "wal" {
		t.Errorf("old catalog: page size %d, journal mode %q; want 4096, wal", size, mode)
	}
}
