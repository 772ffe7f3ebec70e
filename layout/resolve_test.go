package layout_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/folio-archive/folio/layout"
)

// TestResolveNoSymlinks checks that the resolved path names where the
// data really is, so rules on names can be applied to it.
func TestResolveNoSymlinks(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "root")
	for _, d := range []string{"a/b/snap/sub", "logs", ".folio"} {
		if err := os.MkdirAll(filepath.Join(root, filepath.FromSlash(d)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"conf", "logs/x.log", "a/b/snap/sub/page.html"} {
		if err := os.WriteFile(filepath.Join(root, filepath.FromSlash(f)), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, target := range map[string]string{
		"a/b/snap/conf.txt": "../../../conf",
		"a/b/snap/lg":       "../../../logs",
		"a/b/snap/abs":      filepath.Join(root, ".folio"),
		"a/b/snap/alias":    "sub/page.html",
		"a/b/snap/hop":      "lg/../.folio",
		"a/b/snap/top":      "../../..",
		"a/b/snap/out":      "../../../..",
	} {
		if err := os.Symlink(target, filepath.Join(root, filepath.FromSlash(name))); err != nil {
			t.Skipf("symlinks unavailable: %v", err)
		}
	}
	for rel, want := range map[string]string{
		"a/b/snap/conf.txt":      "conf",
		"a/b/snap/lg/x.log":      "logs/x.log",
		"a/b/snap/lg":            "logs",
		"a/b/snap/abs":           ".folio",
		"a/b/snap/alias":         "a/b/snap/sub/page.html",
		"a/b/snap/hop":           ".folio",
		"a/b/snap/top":           ".",
		"a/b/snap/top/a/b/snap":  "a/b/snap",
		"a/b/snap/sub/page.html": "a/b/snap/sub/page.html",
	} {
		got, fi, err := layout.ResolveNoSymlinks(root, rel)
		if err != nil || got != want || fi == nil || fi.Mode()&fs.ModeSymlink != 0 {
			t.Errorf("ResolveNoSymlinks(%q) = %q, %v, %v, want %q", rel, got, fi, err, want)
		}
	}
	if _, _, err := layout.ResolveNoSymlinks(root, "a/b/snap/out/x"); !errors.Is(err, layout.ErrUnsafePath) {
		t.Errorf("a link out of root: %v, want ErrUnsafePath", err)
	}
	if _, _, err := layout.ResolveNoSymlinks(root, "a/b/snap/none"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file: %v, want ErrNotExist", err)
	}
}
