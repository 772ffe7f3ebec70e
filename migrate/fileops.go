package migrate

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/folio-archive/folio/archive"
)

// The copy path touches every file of a snapshot several times (walk,
// copy, verify, recheck, delete), so the operations below use raw system
// calls: relative to an open directory where the walk holds one, with no
// FileInfo values and no os.File (whose poller registration costs a
// system call of its own on every open). Errors are *fs.PathError, so
// errors.Is(err, fs.ErrNotExist) holds as with package os.

// walkTree lists root and everything below it without following symlinks,
// parents before children, names sorted. A special file fails the walk with
// ErrSpecialFile.
func walkTree(root string) ([]treeEntry, error) {
	var st unix.Stat_t
	if err := unix.Lstat(root, &st); err != nil {
		return nil, &fs.PathError{Op: "lstat", Path: root, Err: err}
	}
	w := treeWalker{root: root, buf: make([]byte, 8<<10)}
	if err := w.walk(unix.AT_FDCWD, root, "", &st); err != nil {
		return nil, err
	}
	return w.out, nil
}

type treeWalker struct {
	root string
	buf  []byte // directory listing scratch space
	out  []treeEntry
}

// walk adds the entry name of the open directory parent (rel below the
// root, st its lstat) and, for a directory, everything below it.
func (w *treeWalker) walk(parent int, name, rel string, st *unix.Stat_t) error {
	e := treeEntry{rel: rel, mode: fileMode(st), size: st.Size,
		mtime: time.Unix(st.Mtim.Unix()), atime: time.Unix(st.Atim.Unix())}
	switch {
	case e.isLink():
		t, err := readlinkAt(parent, name)
		if err != nil {
			return &fs.PathError{Op: "readlink", Path: under(w.root, rel), Err: err}
		}
		e.target, e.size = t, 0
	case e.isDir():
		e.size = 0
	case e.isRegular():
	default:
		return fmt.Errorf("%w %s (%s)", ErrSpecialFile, under(w.root, rel), archive.FileKind(st.Mode))
	}
	w.out = append(w.out, e)
	if !e.isDir() {
		return nil
	}
	fd, err := unix.Openat(parent, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return &fs.PathError{Op: "open", Path: under(w.root, rel), Err: err}
	}
	defer unix.Close(fd)
	names, err := w.list(fd)
	if err != nil {
		return &fs.PathError{Op: "read", Path: under(w.root, rel), Err: err}
	}
	sort.Strings(names)
	for _, n := range names {
		var cst unix.Stat_t
		if err := unix.Fstatat(fd, n, &cst, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return &fs.PathError{Op: "lstat", Path: under(w.root, path.Join(rel, n)), Err: err}
		}
		if err := w.walk(fd, n, path.Join(rel, n), &cst); err != nil {
			return err
		}
	}
	return nil
}

// list returns the names in the open directory fd, "." and ".." excluded.
func (w *treeWalker) list(fd int) ([]string, error) {
	entries, err := archive.ReadDirFd(fd, w.buf)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name
	}
	return names, nil
}

// readlinkAt returns the link text of the symlink name in dirfd.
func readlinkAt(dirfd int, name string) (string, error) {
	buf := make([]byte, unix.PathMax+1)
	n, err := unix.Readlinkat(dirfd, name, buf)
	if err != nil {
		return "", err
	}
	return string(buf[:n]), nil
}

// fileMode is the fs.FileMode of a stat, as package os computes it.
func fileMode(st *unix.Stat_t) fs.FileMode {
	m := fs.FileMode(st.Mode & 0o777)
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFBLK:
		m |= fs.ModeDevice
	case unix.S_IFCHR:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFDIR:
		m |= fs.ModeDir
	case unix.S_IFIFO:
		m |= fs.ModeNamedPipe
	case unix.S_IFLNK:
		m |= fs.ModeSymlink
	case unix.S_IFSOCK:
		m |= fs.ModeSocket
	}
	if st.Mode&unix.S_ISGID != 0 {
		m |= fs.ModeSetgid
	}
	if st.Mode&unix.S_ISUID != 0 {
		m |= fs.ModeSetuid
	}
	if st.Mode&unix.S_ISVTX != 0 {
		m |= fs.ModeSticky
	}
	return m
}

// openRegular opens p for reading, never through a symlink and never
// blocking on a fifo, and returns its stat; ok is false when p is not a
// regular file.
func openRegular(p string) (fd int, st unix.Stat_t, ok bool, err error) {
	fd, st, err = archive.OpenRegular(p, true)
	var pe *fs.PathError
	if errors.As(err, &pe) && (pe.Err == unix.ELOOP || pe.Err == unix.EISDIR || errors.Is(pe.Err, archive.ErrNotRegular)) {
		return -1, st, false, nil
	}
	return fd, st, err == nil, err
}

// compareResult is what comparing a destination file with its source found.
type compareResult int

const (
	fileSame       compareResult = iota
	fileMissing                  // no destination
	fileNotRegular               // the destination is a symlink, folder or special file
	fileSizeDiffers
	fileDiffers
)

// compareFiles compares the regular file src with dst: both opened once,
// their sizes from fstat, then every byte. dstSize is the destination's
// size when it is a regular file.
func compareFiles(src, dst string) (r compareResult, dstSize int64, err error) {
	fb, stb, ok, err := openRegular(dst)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fileMissing, 0, nil
	case err != nil:
		return 0, 0, err
	case !ok:
		return fileNotRegular, 0, nil
	}
	defer unix.Close(fb)
	fa, sta, ok, err := openRegular(src)
	if err != nil {
		return 0, 0, err
	}
	if !ok {
		return 0, 0, fmt.Errorf("%w: %s is no longer a regular file", ErrMismatch, src)
	}
	defer unix.Close(fa)
	if sta.Size != stb.Size {
		return fileSizeDiffers, stb.Size, nil
	}
	same, err := sameBytes(fa, fb, sta.Size, src, dst)
	if err != nil || !same {
		return fileDiffers, stb.Size, err
	}
	return fileSame, stb.Size, nil
}

// sameBytes compares the first size bytes of two open files, which must
// both be that long.
func sameBytes(fa, fb int, size int64, a, b string) (bool, error) {
	pa, pb := bufPool.Get().(*[]byte), bufPool.Get().(*[]byte)
	defer bufPool.Put(pa)
	defer bufPool.Put(pb)
	for left := size; left > 0; {
		k := int(min(left, int64(len(*pa))))
		ba, bb := (*pa)[:k], (*pb)[:k]
		if err := readFull(fa, ba, a); err != nil {
			return false, err
		}
		if err := readFull(fb, bb, b); err != nil {
			return false, err
		}
		if string(ba) != string(bb) {
			return false, nil
		}
		left -= int64(k)
	}
	return true, nil
}

// readFull fills buf from fd; a file that ends first has changed since
// its size was taken.
func readFull(fd int, buf []byte, name string) error {
	for len(buf) > 0 {
		n, err := unix.Read(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return &fs.PathError{Op: "read", Path: name, Err: err}
		}
		if n == 0 {
			return fmt.Errorf("%w: %s is shorter than it was", ErrMismatch, name)
		}
		buf = buf[n:]
	}
	return nil
}

// noCopyRange is set once copy_file_range has refused a pair of files
// (another filesystem on an older kernel, a filesystem without it): the
// copies that follow go straight to read and write.
var noCopyRange atomic.Bool

// copyData copies n bytes from the open file in to out: in the kernel with
// copy_file_range where it can, else by read and write.
func copyData(out, in int, n int64, name string) (int64, error) {
	var w int64
	for w < n && !noCopyRange.Load() {
		k, err := unix.CopyFileRange(in, nil, out, nil, int(min(n-w, 1<<30)), 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			if w == 0 && (err == unix.EXDEV || err == unix.ENOSYS || err == unix.EINVAL || err == unix.EOPNOTSUPP) {
				noCopyRange.Store(true)
				break
			}
			return w, err
		}
		if k == 0 {
			return w, fmt.Errorf("%s is shorter than it was", name)
		}
		w += int64(k)
	}
	if w == n {
		return w, nil
	}
	p := bufPool.Get().(*[]byte)
	defer bufPool.Put(p)
	for w < n {
		buf := (*p)[:min(n-w, int64(len(*p)))]
		k, err := unix.Read(in, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return w, err
		}
		if k == 0 {
			return w, fmt.Errorf("%s is shorter than it was", name)
		}
		if err := writeAll(out, buf[:k]); err != nil {
			return w, err
		}
		w += int64(k)
	}
	return w, nil
}

func writeAll(fd int, b []byte) error {
	for len(b) > 0 {
		n, err := unix.Write(fd, b)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}
