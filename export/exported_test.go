package export

import (
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/layout"
)

func manifestLine(dir, title string) []byte {
	return appendManifest(nil, &manifestRecord{Dir: dir, Snapshot: archive.Snapshot{ID: "0123456789abcdef0123456789abcdef",
		URL: "https://example.com/", Title: title}})
}

// TestManifestDir reads archive_path back from the lines appendManifest
// writes, odd names included, and refuses anything but a clean folder
// below archive/.
func TestManifestDir(t *testing.T) {
	for _, dir := range []string{
		"archive/users/admin/snapshots/20200101/example.com/0123456789abcdef0123456789abcdef",
		`archive/users/admin/snapshots/20200101/ex"am\ple.com/0123456789abcdef0123456789abcdef`,
		"archive/users/zoë/snapshots/unknown/münchen.de_8080/0123456789abcdef0123456789abcdef",
		"archive/1600000000.123",
	} {
		line := manifestLine(dir, `"archive_path": "archive/other", `+strings.Repeat("x", 100))
		if got, ok := manifestDir(line); !ok || got != dir {
			t.Errorf("manifestDir(%s) = %q, %v, want %q", line[:80], got, ok, dir)
		}
	}
	for _, line := range []string{
		string(manifestLine("site", "")), string(manifestLine("archive/../x", "")), string(manifestLine("archive/a//b", "")),
		string(manifestLine("archive/", "")), string(manifestLine("archive", "")), string(manifestLine("archive/a/", "")),
		`{"TYPE": "core.models.Snapshot", "archive_path": "archive/a`, `{"archive_path": "archive/a", "TYPE": "core.models.Snapshot"}`,
		`{"TYPE": "core.models.ArchiveResult", "archive_path": "archive/a"}`, "", "\n",
	} {
		if got, ok := manifestDir([]byte(line)); ok {
			t.Errorf("manifestDir(%q) = %q, want none", line, got)
		}
	}
}

// TestExportedPages reads the set from a manifest and again when the
// manifest is replaced; a line longer than the read buffer counts too.
func TestExportedPages(t *testing.T) {
	root := t.TempDir()
	a := "archive/users/admin/snapshots/20200101/a.example/0123456789abcdef0123456789abcdef"
	b := "archive/users/admin/snapshots/20200101/b.example/0123456789abcdef0123456789abcdef"
	write := func(lines ...[]byte) {
		t.Helper()
		var all []byte
		for _, l := range lines {
			all = append(all, l...)
		}
		if err := archive.WriteFile(filepath.Join(root, ManifestFile), all, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	x := newExportedPages(root)
	if x.current() || x.has(a) {
		t.Fatal("a folder without a manifest has exported pages")
	}
	write(manifestLine(a, strings.Repeat("long title ", 20000)))
	if !x.has(a) || x.has(b) || x.has(path.Dir(a)) {
		t.Errorf("after the first manifest: a %v, b %v", x.has(a), x.has(b))
	}
	write(manifestLine(b, ""), []byte("not json\n"), manifestLine(a, "")[:40])
	if x.has(a) || !x.has(b) {
		t.Errorf("after the second manifest: a %v, b %v", x.has(a), x.has(b))
	}
	os.Remove(filepath.Join(root, ManifestFile))
	if x.current() || x.has(b) {
		t.Errorf("after the manifest was removed: b %v", x.has(b))
	}
}

func FuzzManifestDir(f *testing.F) {
	f.Add(manifestLine("archive/users/admin/snapshots/20200101/example.com/0123456789abcdef0123456789abcdef", "t"))
	f.Add([]byte(manifestHead + `archive/a\"b\u00e9\\"}`))
	f.Add([]byte(manifestHead + `archive/a/../../x"}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		dir, ok := manifestDir(line)
		if !ok {
			return
		}
		if !strings.HasPrefix(dir, "archive/") || path.Clean(dir) != dir {
			t.Fatalf("manifestDir gave %q", dir)
		}
		if _, err := layout.Join("/root", dir); err != nil {
			t.Fatalf("manifestDir gave %q: %v", dir, err)
		}
	})
}
