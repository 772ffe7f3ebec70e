package catalog_test

import (
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/folio-archive/folio/archive/catalog"
)

// changed returns the sorted, deduplicated folders Changed names since g.
func changed(t *testing.T, cat *catalog.Catalog, g catalog.Generation) ([]string, bool) {
	t.Helper()
	dirs, ok, err := cat.Changed(ctx, g)
	if err != nil {
		t.Fatal(err)
	}
	set := map[string]bool{}
	for _, d := range dirs {
		set[d] = true
	}
	out := []string{}
	for d := range set {
		out = append(out, d)
	}
	sort.Strings(out)
	return out, ok
}

func generation(t *testing.T, cat *catalog.Catalog) catalog.Generation {
	t.Helper()
	g, err := cat.Generation(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestChangeFeed edits, adds and deletes folders by hand and checks that
// Changed names exactly those since the generation before, that a reindex
// that changes nothing keeps the generation, and that a full reindex
// starts a new epoch.
func TestChangeFeed(t *testing.T) {
	c := newCollection(t)
	cat := openCatalog(t, c)
	if _, ok := changed(t, cat, catalog.Generation{}); ok {
		t.Fatal("a catalog never reindexed has a change feed")
	}
	dirs := smallTree(t, c)
	reindex(t, cat, false)
	g1 := generation(t, cat)
	if g1.Epoch == "" || g1.N != 1 {
		t.Fatalf("after the first reindex: %+v", g1)
	}
	if got, ok := changed(t, cat, g1); !ok || len(got) != 0 {
		t.Fatalf("nothing changed yet: %v %v", got, ok)
	}
	if got, ok := changed(t, cat, catalog.Generation{Epoch: g1.Epoch}); !ok || len(got) != len(dirs) {
		t.Fatalf("since generation 0: %d folders (%v), want every cataloged one", len(got), ok)
	}
	reindex(t, cat, false)
	if g := generation(t, cat); g != g1 {
		t.Fatalf("a reindex that changed nothing moved the generation: %+v -> %+v", g1, g)
	}

	edited := writeSnapshot(t, c, "system", snapshot(1, "Edited by hand"))
	added := writeSnapshot(t, c, "system", snapshot(9, "New"))
	gone := ""
	for _, d := range dirs {
		if strings.HasPrefix(d, "archive/users/alice/") {
			gone = d
		}
	}
	if err := os.RemoveAll(c.Path(gone)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond)
	st, _ := reindex(t, cat, false)
	if st.Added != 1 || st.Updated != 1 || st.Removed != 1 {
		t.Fatalf("reindex: %+v", st)
	}
	g2 := generation(t, cat)
	if g2.Epoch != g1.Epoch || g2.N != 2 {
		t.Fatalf("after one change: %+v", g2)
	}
	want := []string{added, edited, gone}
	sort.Strings(want)
	if got, ok := changed(t, cat, g1); !ok || !reflect.DeepEqual(got, want) {
		t.Fatalf("changed since %d: %v (%v), want %v", g1.N, got, ok, want)
	}
	if got, ok := changed(t, cat, g2); !ok || len(got) != 0 {
		t.Fatalf("changed since %d: %v", g2.N, got)
	}
	// Dirs selects those folders (the dropped one has no row).
	es := entries(t, cat, catalog.Query{Dirs: want})
	if len(es) != 2 || es[0].Dir != added || es[1].Dir != edited {
		t.Fatalf("Dirs query: %v", es)
	}
	if es := entries(t, cat, catalog.Query{Dirs: []string{}}); len(es) != 0 {
		t.Fatalf("an empty Dirs list selected %d rows", len(es))
	}

	if _, ok := changed(t, cat, catalog.Generation{Epoch: g2.Epoch, N: g2.N + 1}); ok {
		t.Fatal("a generation from the future has a change feed")
	}
	reindex(t, cat, true)
	g3 := generation(t, cat)
	if g3.Epoch == g2.Epoch {
		t.Fatalf("a full reindex kept the epoch %s", g3.Epoch)
	}
	if _, ok := changed(t, cat, g2); ok {
		t.Fatal("a generation of the previous epoch has a change feed")
	}
}
