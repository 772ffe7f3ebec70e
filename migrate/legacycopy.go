package migrate

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/folio-archive/folio/archive"
)

// A legacy database is read from a copy (readLegacyDB) in a folder of
// $TMPDIR named copyPrefix<pid>-<random>, which its process holds an
// flock on while it reads. A run killed meanwhile leaves the folder
// behind (a database's size each); the next migration removes those of
// processes that are gone (removeStaleCopies). The copy stays in $TMPDIR
// rather than the collection's .folio/: --dry-run reads the database too,
// without the collection's lock, and must not write into the collection,
// which may be read-only.
const copyPrefix = "folio-legacydb-"

// legacyFile checks that the legacy database file at path is a regular
// file, not a symlink, fifo or device, before anything opens it (opening a
// device can have effects of its own). A missing file is
// fs.ErrNotExist.
func legacyFile(path string) error {
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		return &fs.PathError{Op: "lstat", Path: path, Err: err}
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		return nil
	case unix.S_IFLNK:
		return fmt.Errorf("%w (a symlink, not followed: copy the database into the collection to migrate it)", archive.ErrNotRegular)
	case unix.S_IFDIR:
		return fmt.Errorf("%w (a folder)", archive.ErrNotRegular)
	}
	return fmt.Errorf("%w (%s)", archive.ErrNotRegular, archive.FileKind(st.Mode))
}

// newCopyDir makes the folder a legacy database is copied into and locks
// it; release removes it and drops the lock.
func newCopyDir() (dir string, release func(), err error) {
	dir, err = os.MkdirTemp("", copyPrefix+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return "", nil, err
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err == nil {
		err = unix.Flock(fd, unix.LOCK_SH)
		if err != nil {
			unix.Close(fd)
		}
	}
	if err != nil {
		os.RemoveAll(dir)
		return "", nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	return dir, func() {
		os.RemoveAll(dir)
		unix.Close(fd)
	}, nil
}

// copyRegular copies the regular file src to dst, which must not exist:
// never through a symlink, never blocking on a fifo, and at most the
// size the open file had (a file that grows is cut there).
func copyRegular(src, dst string) error {
	if err := legacyFile(src); err != nil {
		return err
	}
	fd, st, err := archive.OpenRegular(src, true)
	if err != nil {
		return err
	}
	in := os.NewFile(uintptr(fd), src)
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, io.LimitReader(in, st.Size)); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// removeStaleCopies removes the legacy database copies in $TMPDIR that
// killed runs left: folders of this user named copyPrefix<pid>-… whose
// process is gone and that no process holds locked (a process in another
// pid namespace sharing $TMPDIR still holds its lock). Anything else is
// kept. It returns how many it removed and the first error.
func removeStaleCopies() (int, error) {
	tmp := os.TempDir()
	entries, err := os.ReadDir(tmp)
	if err != nil {
		return 0, fmt.Errorf("list %s: %w", tmp, err)
	}
	n := 0
	var first error
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), copyPrefix)
		if !ok || !e.IsDir() {
			continue
		}
		digits, _, ok := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(digits)
		if !ok || err != nil || pid <= 0 || pid == os.Getpid() || alive(pid) {
			continue // an older folio's copy, or one in use: nothing proves it stale
		}
		removed, err := removeUnlocked(filepath.Join(tmp, e.Name()))
		if removed {
			n++
		}
		if err != nil && first == nil {
			first = err
		}
	}
	return n, first
}

// alive reports whether a process with this pid exists (one of another
// user counts).
func alive(pid int) bool {
	err := unix.Kill(pid, 0)
	return err == nil || errors.Is(err, unix.EPERM)
}

// removeUnlocked removes the copy folder dir if it belongs to this user
// and no process holds its lock.
func removeUnlocked(dir string) (bool, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return false, nil // gone, or a symlink: not a copy of ours
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || int(st.Uid) != os.Geteuid() {
		return false, nil
	}
	if err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB); err != nil {
		return false, nil // in use
	}
	if err := os.RemoveAll(dir); err != nil {
		return false, fmt.Errorf("remove %s: %w", dir, err)
	}
	return true, nil
}
