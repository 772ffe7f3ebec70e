package capture

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/layout"
	"github.com/folio-archive/folio/plugins"
)

// queuedFolder writes a snapshot folder, status queued, at dir.
func queuedFolder(t *testing.T, dir, id string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ix := &archive.Index{}
	now := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	ix.SetSnapshot(archive.Snapshot{ID: id, URL: "https://example.com/", Timestamp: "1704067200.0",
		BookmarkedAt: now, CreatedAt: now, Status: "queued", FSVersion: "0.9.0"})
	if err := archive.WriteIndex(dir, ix); err != nil {
		t.Fatal(err)
	}
}

// A job's folder comes from the queue: a worker refuses one that climbs
// out of the tree or goes through a symlinked domain folder, and writes
// nothing outside the snapshot folders; the tree's listing skips the
// symlinked folder too.
func TestCapturerRefusesFoldersOutsideTheTree(t *testing.T) {
	res, err := archive.Init(filepath.Join(t.TempDir(), "data"), false)
	if err != nil {
		t.Fatal(err)
	}
	c := res.Collection
	outside := filepath.Join(t.TempDir(), "outside")
	const id = "0123456789abcdef0123456789abcdef"
	queuedFolder(t, filepath.Join(outside, id), id)
	date := c.Path("archive/users/system/snapshots/20240101")
	if err := os.MkdirAll(date, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(date, "example.com")); err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(c.Dir, filepath.Join(outside, id))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := plugins.LoadConfig(c.Path("ArchiveBox.conf"), nil)
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewCapturer(c, Options{Plugins: []string{"hashes"}, Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for _, tc := range []struct {
		dir  string
		want error
	}{
		{"archive/users/system/snapshots/20240101/example.com/" + id, layout.ErrLinkedFolder},
		{filepath.ToSlash(rel), ErrNotSnapshotFolder},
		{"archive/users/system/snapshots/20240101/x/../../../../../../" + filepath.ToSlash(rel), ErrNotSnapshotFolder},
		{filepath.Join(outside, id), ErrNotSnapshotFolder},
	} {
		err := w.Capture(context.Background(), Pending{ID: id, Dir: tc.dir})
		if !errors.Is(err, tc.want) {
			t.Errorf("capture of job folder %s: %v, want %v", tc.dir, err, tc.want)
		}
	}
	entries, err := os.ReadDir(filepath.Join(outside, id))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != archive.IndexFile {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("the folder outside the tree holds %v, want only %s", names, archive.IndexFile)
	}
	if ix, _, err := archive.ReadIndex(filepath.Join(outside, id)); err != nil {
		t.Fatal(err)
	} else if rec, _ := ix.Snapshot(); rec.Status != "queued" {
		t.Errorf("the snapshot outside the tree is %s, want queued", rec.Status)
	}
	pending, err := ListUnfinished(c, func(err error) { t.Error(err) })
	if err != nil {
		t.Fatal(err)
	}
	if len(pending) != 0 {
		t.Errorf("ListUnfinished lists %v through a symlinked domain folder", pending)
	}
}
