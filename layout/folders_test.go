package layout

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRealFolders(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"archive/users/u/snapshots/20200913/real.example/id", "elsewhere"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		"archive/users/linkeduser":                          "u",
		"archive/users/u/snapshots/20200914":                "20200913",
		"archive/users/u/snapshots/20200913/out.example":    "../../../../../elsewhere",
		"archive/users/u/snapshots/20200913/real.example/x": "id",
	} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "archive/users/u/snapshots/20200913/file.example"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for rel, bad := range map[string]string{
		"archive/users/u/snapshots/20200913/real.example/id":    "",
		"archive/users/u/snapshots/20200913/new.example/id":     "", // missing: made real by the writer
		"archive/users/new/snapshots/20200913/new.example/id":   "",
		"invalid/20200913/name":                                 "", // not below archive/users/
		"archive/users/linkeduser/snapshots/20200913/a/id":      "archive/users/linkeduser is a symlink",
		"archive/users/u/snapshots/20200914/real.example/id":    "archive/users/u/snapshots/20200914 is a symlink",
		"archive/users/u/snapshots/20200913/out.example/id":     "archive/users/u/snapshots/20200913/out.example is a symlink",
		"archive/users/u/snapshots/20200913/real.example/x":     "archive/users/u/snapshots/20200913/real.example/x is a symlink",
		"archive/users/u/snapshots/20200913/file.example/id":    "archive/users/u/snapshots/20200913/file.example is not a folder",
		"archive/users/u/snapshots/20200913/real.example/id/..": "",
	} {
		err := RealFolders(root, rel)
		switch {
		case bad == "" && err != nil:
			t.Errorf("%s: %v", rel, err)
		case bad != "" && (!errors.Is(err, ErrLinkedFolder) || !strings.HasPrefix(err.Error(), bad)):
			t.Errorf("%s: %v, want %q...", rel, err, bad)
		}
	}
}
