package catalog_test

import (
	"fmt"
	"os"
	"path"
	"testing"
	"time"

	"github.com/folio-archive/folio/archive/catalog"
)

// TestScopedReindex: a reindex scoped to some folders handles exactly
// what changed in them and leaves the rest of the catalog alone.
func TestScopedReindex(t *testing.T) {
	c := newCollection(t)
	var dirs []string
	for i := range 6 {
		dirs = append(dirs, writeSnapshot(t, c, "system", snapshot(i+1, "first")))
	}
	writeFile(t, c, "archive/1609459200/index.json", legacyLink)
	cat := openCatalog(t, c)
	reindex(t, cat, false)

	later := time.Now().Add(time.Minute)
	retitle := func(i int, title string) {
		writeSnapshot(t, c, "system", snapshot(i+1, title))
		os.Chtimes(c.Path(dirs[i]+"/index.jsonl"), later, later)
	}
	retitle(0, "edited")     // in the scope
	retitle(1, "not looked") // outside it
	if err := os.RemoveAll(c.Path(dirs[2])); err != nil {
		t.Fatal(err)
	}
	added := writeSnapshot(t, c, "system", snapshot(40, "new"))
	writeFile(t, c, "archive/1609459200/htmltotext.txt", "petrels")
	scope := []string{
		dirs[0] + "/readability/content.txt", // a path inside a folder means the folder
		dirs[2],
		path.Dir(added), // its domain folder: listed whole
		"archive/1609459200/htmltotext.txt",
		"archive/1609459200",
		"outside/archive",
	}
	st, err := cat.Reindex(ctx, catalog.ReindexOptions{Scope: scope})
	if err != nil {
		t.Fatal(err)
	}
	// The domain folder of the new snapshot also holds dirs[0..5] (one
	// domain, one date per snapshot here), so count what the scope holds.
	want := catalog.ReindexStats{Added: 1, Updated: 2, Removed: 1, TextRead: 2}
	st.Scanned, st.Unchanged = 0, 0
	if st != want {
		t.Fatalf("scoped reindex: %+v, want %+v", st, want)
	}
	titles := map[string]string{}
	for _, e := range entries(t, cat, catalog.Query{}) {
		titles[e.Dir] = e.Snapshot.Title
	}
	if titles[dirs[0]] != "edited" || titles[dirs[1]] != "first" || titles[added] != "new" {
		t.Errorf("titles after the scoped reindex: %q", titles)
	}
	if _, ok := titles[dirs[2]]; ok {
		t.Errorf("the deleted folder is still cataloged")
	}
	if got := found(t, cat, "petrels"); len(got) != 1 {
		t.Errorf("the legacy folder's new text: found %q", got)
	}

	// Nothing in the scope: nothing done. The whole archive: a full look.
	if st, _ := cat.Reindex(ctx, catalog.ReindexOptions{Scope: []string{}}); st != (catalog.ReindexStats{}) {
		t.Errorf("empty scope: %+v", st)
	}
	st, err = cat.Reindex(ctx, catalog.ReindexOptions{Scope: []string{"archive/users/../"}})
	if err != nil || st.Updated != 1 || st.Scanned != 7 {
		t.Errorf("a scope of the whole archive: %+v %v, want dirs[1] updated among 7", st, err)
	}
}

// TestScopedReindexOfManyFolders: a scope too large to query folder by
// folder gives the same answer.
func TestScopedReindexOfManyFolders(t *testing.T) {
	c := newCollection(t)
	var dirs []string
	for i := range 3 {
		dirs = append(dirs, writeSnapshot(t, c, "system", snapshot(i+1, "first")))
	}
	cat := openCatalog(t, c)
	reindex(t, cat, false)
	writeSnapshot(t, c, "system", snapshot(2, "edited"))
	later := time.Now().Add(time.Minute)
	os.Chtimes(c.Path(dirs[1]+"/index.jsonl"), later, later)
	scope := []string{dirs[1], dirs[2]}
	for i := range 300 {
		scope = append(scope, fmt.Sprintf("archive/users/system/snapshots/20990101/gone.example/%032x", i))
	}
	st, err := cat.Reindex(ctx, catalog.ReindexOptions{Scope: scope})
	if err != nil || st.Scanned != 2 || st.Updated != 1 || st.Removed != 0 || st.Unchanged != 1 {
		t.Errorf("%+v %v, want 2 folders looked at, 1 updated", st, err)
	}
	// As many folders above the snapshot level: one pass over the catalog.
	writeSnapshot(t, c, "system", snapshot(3, "edited too"))
	os.Chtimes(c.Path(dirs[2]+"/index.jsonl"), later, later)
	scope = []string{path.Dir(dirs[2])}
	for i := range 300 {
		scope = append(scope, fmt.Sprintf("archive/users/system/snapshots/2099%04d", i))
	}
	st, err = cat.Reindex(ctx, catalog.ReindexOptions{Scope: scope})
	if err != nil || st.Scanned != 3 || st.Updated != 1 || st.Removed != 0 {
		t.Errorf("%+v %v, want the 3 folders of one domain looked at, 1 updated", st, err)
	}
}
