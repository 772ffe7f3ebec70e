package catalog_test

import (
	"database/sql"
	"fmt"
	"testing"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/archive/catalog"
)

// TestReindexFlushesSearchOncePerBatch checks that a reindex writes the
// terms of a batch of folders to each full-text table as one segment: a
// statement that opens a statement journal in the middle of a batch (a
// multi-row INSERT into snapshots did) makes FTS5 write what it holds
// as a segment of its own, and a reindex then spends its time merging
// them.
func TestReindexFlushesSearchOncePerBatch(t *testing.T) {
	c := newCollection(t)
	for i := range 300 {
		writeSnapshot(t, c, "alice", snapshot(i, fmt.Sprintf("Page %d about velvet", i), "tag", fmt.Sprint("t", i)))
	}
	cat := openCatalog(t, c)
	st, err := cat.Reindex(ctx, catalog.ReindexOptions{BatchSize: 1000})
	if err != nil || st.Added != 300 {
		t.Fatalf("reindex: %+v, %v", st, err)
	}
	db, err := sql.Open("sqlite", "file:"+c.Path(archive.CatalogFile)+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, table := range []string{"search", "metasearch"} {
		var segments int
		if err := db.QueryRow(`SELECT count(DISTINCT segid) FROM ` + table + `_idx`).Scan(&segments); err != nil {
			t.Fatal(err)
		}
		if segments != 1 {
			t.Errorf("%s: %d segments after one batch, want 1", table, segments)
		}
	}
}
