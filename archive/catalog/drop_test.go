package catalog_test

import (
	"os"
	"path"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/archive/catalog"
)

func catalogDirs(t testing.TB, cat *catalog.Catalog) []string {
	t.Helper()
	var dirs []string
	for _, e := range entries(t, cat, catalog.Query{}) {
		dirs = append(dirs, e.Dir)
	}
	slices.Sort(dirs)
	return dirs
}

// TestDropAndHide: Drop takes rows out of the catalog and records them in
// the change feed; a folder listed in the hidden file stays out through
// every kind of reindex and Drift, and comes back once its line is gone.
func TestDropAndHide(t *testing.T) {
	c := newCollection(t)
	dirs := smallTree(t, c)
	cat := openCatalog(t, c)
	reindex(t, cat, false)
	before, err := cat.Generation(ctx)
	if err != nil {
		t.Fatal(err)
	}

	hidden, gone := dirs[0], dirs[len(dirs)-1] // a legacy folder and a current one
	if !strings.HasPrefix(hidden, "archive/1609") || !strings.HasPrefix(gone, "archive/users/") {
		t.Fatalf("tree order changed: %v", dirs)
	}
	if err := c.Hide([]archive.Hidden{{Dir: hidden, ID: "x", Time: time.Unix(1700000000, 0).UTC()}}); err != nil {
		t.Fatal(err)
	}
	n, err := cat.Drop(ctx, []string{hidden, gone, "archive/users/nobody/snapshots/20240101/example.com/none"})
	if err != nil || n != 2 {
		t.Fatalf("Drop: %d, %v; want 2 rows", n, err)
	}
	changed, ok, err := cat.Changed(ctx, before)
	if err != nil || !ok {
		t.Fatalf("Changed: %v %v", ok, err)
	}
	slices.Sort(changed)
	if want := []string{hidden, gone}; !slices.Equal(changed, want) {
		t.Errorf("change feed after Drop: %v, want %v", changed, want)
	}
	left := slices.DeleteFunc(slices.Clone(dirs), func(d string) bool { return d == hidden || d == gone })
	if got := catalogDirs(t, cat); !slices.Equal(got, left) {
		t.Fatalf("after Drop: %v, want %v", got, left)
	}

	// The dropped folder still in the tree and not hidden comes back; the
	// hidden one does not, whatever the reindex.
	left = slices.DeleteFunc(slices.Clone(dirs), func(d string) bool { return d == hidden })
	d, err := cat.Drift(ctx, 0)
	if err != nil || d.New != 1 || d.Scanned != len(dirs)-1 {
		t.Errorf("Drift: %+v, %v; want one new folder and the hidden one not scanned", d, err)
	}
	reindex(t, cat, false)
	if got := catalogDirs(t, cat); !slices.Equal(got, left) {
		t.Errorf("after an incremental reindex: %v, want %v", got, left)
	}
	reindex(t, cat, true)
	if got := catalogDirs(t, cat); !slices.Equal(got, left) {
		t.Errorf("after a full reindex: %v, want %v", got, left)
	}
	for _, scope := range [][]string{{hidden}, {path.Dir(hidden)}, {hidden + "/index.json"}} {
		if _, err := cat.Reindex(ctx, catalog.ReindexOptions{Scope: scope}); err != nil {
			t.Fatal(err)
		}
		if got := catalogDirs(t, cat); !slices.Equal(got, left) {
			t.Errorf("after a reindex scoped to %v: %v, want %v", scope, got, left)
		}
	}
	// A fresh catalog built from the tree leaves it out too.
	cat.Close()
	if err := os.Remove(c.Path(archive.CatalogFile)); err != nil {
		t.Fatal(err)
	}
	cat = openCatalog(t, c)
	reindex(t, cat, false)
	if got := catalogDirs(t, cat); !slices.Equal(got, left) {
		t.Errorf("after rebuilding the catalog: %v, want %v", got, left)
	}

	// A row hidden while the catalog still has it is dropped by the next
	// reindex as gone.
	if err := c.Hide([]archive.Hidden{{Dir: dirs[2]}, {Dir: hidden}}); err != nil {
		t.Fatal(err)
	}
	if st, _ := reindex(t, cat, false); st.Removed != 1 {
		t.Errorf("reindex after Hide of a cataloged folder: %+v, want 1 removed", st)
	}

	// Unhide brings them back; a line folio cannot read survives rewrites.
	f, err := os.OpenFile(c.Path(archive.HiddenFile), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("not json\n")
	f.Close()
	found, err := c.Unhide([]string{hidden, dirs[2], "archive/elsewhere"})
	if err != nil || len(found) != 2 {
		t.Fatalf("Unhide: %v, %v", found, err)
	}
	if data, _ := os.ReadFile(c.Path(archive.HiddenFile)); string(data) != "not json\n" {
		t.Errorf("hidden file after Unhide: %q", data)
	}
	reindex(t, cat, false)
	if got := catalogDirs(t, cat); !slices.Equal(got, dirs) {
		t.Errorf("after Unhide: %v, want %v", got, dirs)
	}
}
