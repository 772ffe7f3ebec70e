package archive_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/folio-archive/folio/archive"
)

// TestLockMovesRemovalStateIntoTheTree: the lock moves an earlier
// folio's .folio/hidden.jsonl and .folio/trash/ into removed/, keeping
// lines it cannot read, listing no folder twice, and renaming a batch
// whose name is taken instead of merging into it.
func TestLockMovesRemovalStateIntoTheTree(t *testing.T) {
	dir := t.TempDir()
	res, err := archive.Init(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	c := res.Collection
	write := func(rel, data string) {
		t.Helper()
		p := c.Path(rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	a := `{"dir":"archive/a","hidden_at":"2024-01-01T00:00:00Z"}`
	b := `{"dir":"archive/b","hidden_at":"2024-01-01T00:00:00Z"}`
	write(".folio/hidden.jsonl", a+"\nkept as it is\n")
	write(archive.HiddenFile, a+"\n"+b+"\n")
	write(".folio/trash/20240101-000000/archive/1704067200/index.json", "old")
	write(archive.TrashDir+"/20240101-000000/archive/1704067201/index.json", "new")
	write(".folio/trash.folio-tmp-purge/archive/x", "set aside by a purge cut short")
	write(archive.RemovedDir+"/.hidden.jsonl.folio-tmp-0a0b0c", "half")

	for range 2 { // the second lock finds nothing left to do
		l, err := c.Lock("test")
		if err != nil {
			t.Fatal(err)
		}
		l.Unlock()
	}
	data, err := os.ReadFile(c.Path(archive.HiddenFile))
	if want := a + "\n" + b + "\nkept as it is\n"; err != nil || string(data) != want {
		t.Errorf("%s: %q, %v; want %q", archive.HiddenFile, data, err, want)
	}
	for rel, want := range map[string]string{
		archive.TrashDir + "/20240101-000000/archive/1704067201/index.json":   "new",
		archive.TrashDir + "/20240101-000000-1/archive/1704067200/index.json": "old",
	} {
		if got, err := os.ReadFile(c.Path(rel)); err != nil || string(got) != want {
			t.Errorf("%s: %q, %v; want %q", rel, got, err, want)
		}
	}
	for _, rel := range []string{".folio/hidden.jsonl", ".folio/trash", ".folio/trash.folio-tmp-purge", archive.RemovedDir + "/.hidden.jsonl.folio-tmp-0a0b0c"} {
		if _, err := os.Lstat(c.Path(rel)); !os.IsNotExist(err) {
			t.Errorf("%s is still there: %v", rel, err)
		}
	}
	hidden, err := c.HiddenDirs()
	if err != nil || !hidden["archive/a"] || !hidden["archive/b"] || len(hidden) != 2 {
		t.Errorf("HiddenDirs: %v, %v", hidden, err)
	}
	if u, err := c.Trashed(); err != nil || u.Folders != 2 {
		t.Errorf("Trashed: %+v, %v", u, err)
	}
}
