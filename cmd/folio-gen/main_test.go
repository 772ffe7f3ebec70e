package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/folio-archive/folio/archive"
)

func TestGenerate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	var out, errb bytes.Buffer
	if code := run([]string{"-n", "12", "-seed", "3", "-users", "system,eve", dir}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.HasPrefix(out.String(), "wrote 12 snapshots") {
		t.Fatalf("stdout %q", out.String())
	}
	var n int
	for _, user := range []string{"system", "eve"} {
		matches, err := filepath.Glob(filepath.Join(dir, archive.UsersDir, user, "snapshots", "*", "*", "*", archive.IndexFile))
		if err != nil {
			t.Fatal(err)
		}
		n += len(matches)
	}
	if n != 12 {
		t.Fatalf("%d index.jsonl files, want 12", n)
	}
}

func TestUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"-help"}, 0, "usage: folio-gen"},
		{[]string{}, 2, "want exactly one DIR"},
		{[]string{"-base", "yesterday", "x"}, 2, `-base "yesterday"`},
		{[]string{"-years", "0", "x"}, 2, "-years must be positive"},
		{[]string{"-n", "many", "x"}, 2, "invalid value"},
	} {
		var out, errb bytes.Buffer
		if code := run(tc.args, &out, &errb); code != tc.code || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q", tc.args, code, errb.String())
		}
	}
	// A folder that is not a collection is refused and left alone.
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "mine.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := run([]string{"-n", "3", dir}, &out, &errb); code != 1 || !strings.Contains(errb.String(), "not empty") {
		t.Fatalf("exit %d, stderr %q", code, errb.String())
	}
}
