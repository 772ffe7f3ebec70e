package verify

import (
	"strings"
	"testing"
)

func TestParseManifestForms(t *testing.T) {
	// The older map form: sizes under any of their names, folders left out.
	m, err := parseManifest([]byte(`{".": {"size": 0}, "media/": {"mime_type": "inode/directory"},
		"screenshot.png": {"num_bytes": 12, "hash_sha256": "ABC"}, "output.pdf": {"size": 7, "mime_type": "application/pdf"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(m.files) != 2 || m.files["screenshot.png"] != (entry{12, "abc"}) || m.files["output.pdf"] != (entry{7, ""}) || m.root != "" {
		t.Errorf("map form: %+v", m)
	}
	// ArchiveBox's form: files in order, is_dir entries left out.
	m, err = parseManifest([]byte(`{"root_hash": "r", "tree_levels": [["x"]], "files": [
		{"path": "a/b.txt", "hash": "h1", "size": 3}, {"path": "a", "is_dir": true}, {"path": "c.txt", "bytes": 5}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(m.order, ",") != "a/b.txt,c.txt" || m.files["c.txt"] != (entry{5, ""}) || m.root != "r" || strings.Join(m.leaves, ",") != "h1," {
		t.Errorf("list form: %+v", m)
	}
	for doc, want := range map[string]string{
		`{"files": [{"path": "../../etc/passwd", "size": 1}]}`: "a path outside the snapshot folder",
		`{"files": [{"size": 1}]}`:                             "file 1 of its files list has no path",
		`{"files": [1]}`:                                       "file 1 of its files list is not an object",
		`{"files": [{"path": "a"}`:                             "it ends early",
		`[1, 2]`:                                               "not a JSON object",
	} {
		if _, err := parseManifest([]byte(doc)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", doc, err, want)
		}
	}
}
