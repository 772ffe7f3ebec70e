package main_test

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// nobody is the user an unreadable-file test runs folio as when the tests
// run as root, for whom mode 000 does not stop a read.
const nobody = 65534

// TestUpdateUnreadableFile: bad input "unreadable files". A legacy folder
// holding a file folio may not read — an output, or the index itself —
// fails with one message naming the file and stays as it was; the other
// folders migrate. As root (CI) folio runs as nobody over a collection
// nobody owns.
func TestUpdateUnreadableFile(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "data")
	updCollection(t, dir, 3)
	bad := []string{filepath.Join(dir, "archive/1500086400/screenshot.png"), filepath.Join(dir, "archive/1500000000/index.json")}
	for _, p := range bad {
		if err := os.Chmod(p, 0); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(folioBin(t), "--data-dir", dir, "update", "--migrate-only")
	cmd.Env = append(os.Environ(), "FOLIO_MIGRATE_COPY=1") // a rename would move the file without reading it
	if os.Geteuid() == 0 {
		cmd.Path = asNobody(t, root, dir, cmd.Path)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	}
	before := map[string]map[string]string{}
	for _, p := range bad {
		before[p] = updTree(t, filepath.Dir(p))
	}
	r := updExec(t, cmd)
	if r.code != 3 {
		t.Fatalf("exit %d, want 3 (partial)\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "Failed:            2") || !strings.Contains(r.stdout, "Skipped:           1") {
		t.Errorf("summary does not count the two folders as failed:\n%s", r.stdout)
	}
	for _, p := range bad {
		if !strings.Contains(r.stderr, p+": permission denied") {
			t.Errorf("no clear message naming %s:\n%s", p, r.stderr)
		}
		if d := updDiff(before[p], updTree(t, filepath.Dir(p))); d != "" {
			t.Errorf("folder with an unreadable file changed:\n%s", d)
		}
	}
	if _, err := os.Lstat(filepath.Join(dir, "archive/1500172800")); !errors.Is(err, fs.ErrNotExist) {
		t.Error("the readable folder was not migrated")
	}
}

// asNobody hands the collection at dir (under root, a test's temp dir) to
// the user nobody and returns a copy of the folio binary nobody may run.
func asNobody(t *testing.T, root, dir, bin string) string {
	t.Helper()
	for _, d := range []string{filepath.Dir(root), root} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for d := filepath.Dir(filepath.Dir(root)); ; d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err != nil || fi.Mode().Perm()&0o001 == 0 {
			t.Skipf("running as root, where mode 000 does not stop a read, and nobody cannot search %s on the way to the temp dir: set TMPDIR to a folder others may search", d)
		}
		if d == filepath.Dir(d) {
			break
		}
	}
	err := filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, nobody, nobody)
	})
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	own := filepath.Join(root, "folio")
	dst, err := os.OpenFile(own, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	return own
}

// TestUpdateCorruptDatabase: bad input "corrupt databases". folio update
// stops before moving anything, exits 1 with one message naming
// index.sqlite3, and the collection (the database too) is as it was.
func TestUpdateCorruptDatabase(t *testing.T) {
	dir := t.TempDir()
	updCollection(t, dir, 3)
	db := filepath.Join(dir, "index.sqlite3")
	if err := os.WriteFile(db, []byte(strings.Repeat("\x00\xffnot sqlite", 400)), 0o644); err != nil {
		t.Fatal(err)
	}
	before := updTree(t, dir)
	r := updRun(t, dir, nil, "update", "--migrate-only")
	if r.code != 1 || !strings.Contains(r.stderr, db+": file is not a database") {
		t.Errorf("exit %d, want 1 and a message naming %s:\n%s", r.code, db, r.stderr)
	}
	if d := updDiff(before, updTree(t, dir)); d != "" {
		t.Errorf("a run on a corrupt database changed the collection:\n%s", d)
	}
}
