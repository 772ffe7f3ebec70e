package export

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A folder whose ctime is not older than the trust window may change
// again within the same tick unseen: its ctime is not kept, so the next
// export lists it again. An older one is kept and not listed again while
// its ctime holds.
func TestFolderTrust(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "snap", "wget"), 0o755); err != nil {
		t.Fatal(err)
	}
	recent := folders{root: root, trustBefore: time.Now().Add(-time.Hour).UnixNano()}
	if f := recent.read("snap", 0, 0); f.ctime != 0 || f.sig == 0 {
		t.Errorf("a folder changed within the window: %+v, want its names and no ctime", f)
	}
	old := folders{root: root, trustBefore: time.Now().Add(time.Hour).UnixNano()}
	f := old.read("snap", 0, 0)
	if f.ctime == 0 || f.sig == 0 {
		t.Fatalf("an older folder: %+v, want its names and ctime", f)
	}
	// Held: the names are not read again while the ctime holds (a sig
	// passed in is returned as it is).
	if g := old.read("snap", f.ctime, 42); g.sig != 42 {
		t.Errorf("a folder whose ctime holds was listed again: %+v", g)
	}
}

func TestCutPartialRune(t *testing.T) {
	for in, want := range map[string]string{
		"abc":               "abc",
		"caf\xc3":           "caf",               // é cut after its first byte
		"\xe2\x82":          "",                  // € cut after two bytes
		"x\xf0\x9f\x98":     "x",                 // an emoji cut after three
		"x\xf0\x9f\x98\x80": "x\xf0\x9f\x98\x80", // whole
		"caf\xe9 au lait":   "caf\xe9 au lait",   // Latin-1: kept, not trimmed away
		"caf\xe9":           "caf",               // a lead byte at the end reads as a character cut short
	} {
		if got := string(cutPartialRune([]byte(in))); got != want {
			t.Errorf("cutPartialRune(%q) = %q, want %q", in, got, want)
		}
	}
}
