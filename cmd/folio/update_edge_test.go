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
// holding a file folio may not read fails with one message naming the
// file and stays as it was; the other folders migrate. As root (CI) folio
// runs as nobody over a collection nobody owns.
func TestUpdateUnreadableFile(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "data")
	updCollection(t, dir, 3)
	bad := filepath.Join(dir, "archive/1500086400/screenshot.png")
	if err := os.Chmod(bad, 0); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(folioBin(t), "--data-dir", dir, "update", "--migrate-only")
	cmd.Env = append(os.Environ(), "FOLIO_MIGRATE_COPY=1") // a rename would move the file without reading it
	if os.Geteuid() == 0 {
		cmd.Path = asNobody(t, root, dir, cmd.Path)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	}
	before := updTree(t, filepath.Join(dir, "archive/1500086400"))
	r := updExec(t, cmd)
	if r.code != 3 {
		t.Fatalf("exit %d, want 3 (partial)\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, bad+": permission denied") || !strings.Contains(r.stdout, "Failed:            1") {
		t.Errorf("no clear message naming %s:\n%s\n%s", bad, r.stdout, r.stderr)
	}
	if d := updDiff(before, updTree(t, filepath.Join(dir, "archive/1500086400"))); d != "" {
		t.Errorf("folder with an unreadable file changed:\n%s", d)
	}
	for _, done := range []string{"archive/1500000000", "archive/1500172800"} {
		if _, err := os.Lstat(filepath.Join(dir, done)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s was not migrated", done)
		}
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
