package archive_test

import (
	"strings"
	"testing"
	"time"

	"github.com/folio-archive/folio/archive"
)

func TestParseHashesForms(t *testing.T) {
	// The older map form: sizes under any of their names, folders left out.
	m, err := archive.ParseHashes([]byte(`{".": {"size": 0}, "media/": {"mime_type": "inode/directory"},
		"screenshot.png": {"num_bytes": 12, "hash_sha256": "ABC"}, "output.pdf": {"size": 7, "mime_type": "application/pdf"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Files) != 2 || m.Files["screenshot.png"] != (archive.HashEntry{12, "abc"}) || m.Files["output.pdf"] != (archive.HashEntry{7, ""}) || m.Root != "" {
		t.Errorf("map form: %+v", m)
	}
	// ArchiveBox's form: files in order, is_dir entries left out.
	m, err = archive.ParseHashes([]byte(`{"root_hash": "r", "tree_levels": [["x"]], "files": [
		{"path": "a/b.txt", "hash": "h1", "size": 3}, {"path": "a", "is_dir": true}, {"path": "c.txt", "bytes": 5}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(m.Order, ",") != "a/b.txt,c.txt" || m.Files["c.txt"] != (archive.HashEntry{5, ""}) || m.Root != "r" || strings.Join(m.Leaves, ",") != "h1," || !m.Taken.IsZero() {
		t.Errorf("list form: %+v", m)
	}
	// When the hashes were taken, as Python's isoformat writes it (no
	// fraction when the microseconds are 0).
	for ts, want := range map[string]time.Time{
		"2024-05-01T12:30:00.250000+00:00": time.Date(2024, 5, 1, 12, 30, 0, 250e6, time.UTC),
		"2024-05-01T14:30:00+02:00":        time.Date(2024, 5, 1, 12, 30, 0, 0, time.UTC),
		"yesterday":                        {},
	} {
		m, err := archive.ParseHashes([]byte(`{"root_hash": "", "files": [], "metadata": {"timestamp": "` + ts + `"}}`))
		if err != nil || !m.Taken.Equal(want) {
			t.Errorf("metadata.timestamp %s: %v, %v; want %v", ts, m.Taken, err, want)
		}
	}
	for doc, want := range map[string]string{
		`{"files": [{"path": "../../etc/passwd", "size": 1}]}`: "a path outside the snapshot folder",
		`{"files": [{"size": 1}]}`:                             "file 1 of its files list has no path",
		`{"files": [1]}`:                                       "file 1 of its files list is not an object",
		`{"files": [{"path": "a"}`:                             "it ends early",
		`[1, 2]`:                                               "not a JSON object",
	} {
		if _, err := archive.ParseHashes([]byte(doc)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", doc, err, want)
		}
	}
}
