package export

import (
	"os"
	"path/filepath"
	"sort"
	"testing"

	"golang.org/x/sys/unix"
)

// TestReadDirMatchesOS: the raw getdents listing names and types the
// entries as os.ReadDir does, and refuses a symlinked folder.
func TestReadDirMatchesOS(t *testing.T) {
	dir := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(dir, "file.txt"), []byte("x"), 0o644))
	must(os.Mkdir(filepath.Join(dir, "sub"), 0o755))
	must(os.Symlink("sub", filepath.Join(dir, "link")))
	must(unix.Mkfifo(filepath.Join(dir, "fifo"), 0o644))
	for i := range 600 { // more than one getdents buffer
		must(os.WriteFile(filepath.Join(dir, "many-"+string(rune('a'+i%26))+string(rune('a'+i/26))), nil, 0o644))
	}
	got, err := readDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(got, func(i, j int) bool { return got[i].Name() < got[j].Name() })
	if len(got) != len(want) {
		t.Fatalf("readDir listed %d entries, os.ReadDir %d", len(got), len(want))
	}
	for i := range want {
		if got[i].Name() != want[i].Name() || got[i].Type() != want[i].Type() || got[i].IsDir() != want[i].IsDir() {
			t.Errorf("entry %d: got %s, want %s", i, got[i], want[i])
		}
	}
	if _, err := readDir(filepath.Join(dir, "link")); err == nil {
		t.Error("readDir followed a symlinked folder")
	}
}
