package archive

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/folio-archive/folio/internal/rawsys"
)

// TempMarker is part of every temporary file or folder name folio creates;
// readers skip such entries and recovery removes strays left by a crash.
const TempMarker = ".folio-tmp-"

// IsTemp reports whether name is a temporary file of an unfinished write.
func IsTemp(name string) bool { return strings.Contains(name, TempMarker) }

// IsStaging reports whether name is a staging folder's: ".<name>" and
// TempMarker and a suffix, where a copy builds a folder before renaming it
// to <name>.
func IsStaging(name string) bool {
	return strings.HasPrefix(name, ".") && strings.Index(name, TempMarker) > 1
}

// StagedName is the name the staging folder name was to be renamed to.
func StagedName(name string) string {
	return name[1:strings.Index(name, TempMarker)]
}

// FaultTemp is the step at which an atomic write calls the hook SetFault
// installs: its temp file holds the data and is not yet renamed.
const FaultTemp = "temp"

var writeFault atomic.Pointer[func(step, path string) error]

// SetFault installs fault (nil removes it) as the hook every atomic write
// calls at FaultTemp with its target path; a non-nil error fails the
// write. It is the testing knob FOLIO_FAULT reaches writes with: a hook
// that exits the process there leaves a temp file as a kill would.
func SetFault(fault func(step, path string) error) {
	if fault == nil {
		writeFault.Store(nil)
		return
	}
	writeFault.Store(&fault)
}

// WriteFile writes data to path atomically: a uniquely named temp file in
// the same folder is written, length-checked, synced and renamed over path,
// then the folder is synced. On any error the temp file is removed and path
// is untouched.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	return WriteFileWith(path, perm, func(w io.Writer) error {
		n, err := w.Write(data)
		if err == nil && n != len(data) {
			err = io.ErrShortWrite
		}
		return err
	})
}

// WriteFileWith is WriteFile for content produced by a function, for files
// too large to hold in memory.
func WriteFileWith(path string, perm os.FileMode, write func(io.Writer) error) error {
	return writeAtomic(path, perm, write, true)
}

// writeAtomic writes through a temp file renamed over path; with durable
// set, the file and its folder are fsynced too.
func writeAtomic(path string, perm os.FileMode, write func(io.Writer) error, durable bool) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	var suffix [6]byte
	if _, err := rand.Read(suffix[:]); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := filepath.Join(dir, "."+base+TempMarker+hex.EncodeToString(suffix[:]))
	// Raw open, no poller: os.OpenFile would try to register the file
	// with the network poller, which costs system calls per file.
	fd, err := unix.Open(tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, uint32(perm.Perm()))
	if err != nil {
		// The temp file's name would only puzzle the user: name its folder.
		return fmt.Errorf("write %s: %w", path, &os.PathError{Op: "create a file in", Path: filepath.Clean(dir), Err: err})
	}
	f := &fdFile{fd: fd, name: tmp}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
			err = fmt.Errorf("write %s: %w", path, err)
		}
	}()
	cw := &countingWriter{w: f}
	if err = write(cw); err != nil {
		return err
	}
	if hook := writeFault.Load(); hook != nil {
		if err = (*hook)(FaultTemp, path); err != nil {
			return err
		}
	}
	var st unix.Stat_t
	if err = unix.Fstat(fd, &st); err != nil {
		return &os.PathError{Op: "stat", Path: tmp, Err: err}
	}
	if st.Size != cw.n {
		return fmt.Errorf("wrote %d bytes but the file holds %d", cw.n, st.Size)
	}
	if durable {
		if err = f.Sync(); err != nil {
			return err
		}
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = unix.Rename(tmp, path); err != nil {
		return &os.LinkError{Op: "rename", Old: tmp, New: path, Err: err}
	}
	if !durable {
		return nil
	}
	return SyncDir(dir)
}

// fdFile is a temp file of an atomic write, written with raw write(2)
// calls: an *os.File costs an fcntl when it is made (os.NewFile asks
// whether the descriptor is non-blocking), once per page of an export.
// It becomes one only for ReadFrom, whose copy from another file happens
// in the kernel.
type fdFile struct {
	fd   int
	name string
	f    *os.File // once ReadFrom made one; it owns fd
}

func (w *fdFile) Write(p []byte) (int, error) {
	if w.f != nil {
		return w.f.Write(p)
	}
	n := 0
	for n < len(p) {
		k, err := unix.Write(w.fd, p[n:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return n, &os.PathError{Op: "write", Path: w.name, Err: err}
		}
		n += k
	}
	return n, nil
}

func (w *fdFile) ReadFrom(r io.Reader) (int64, error) {
	if w.f == nil {
		w.f = os.NewFile(uintptr(w.fd), w.name)
	}
	return w.f.ReadFrom(r)
}

func (w *fdFile) Sync() error {
	if w.f != nil {
		return w.f.Sync()
	}
	if err := unix.Fsync(w.fd); err != nil {
		return &os.PathError{Op: "sync", Path: w.name, Err: err}
	}
	return nil
}

// Close closes the file; a second call does nothing.
func (w *fdFile) Close() error {
	if w.fd < 0 {
		return nil
	}
	fd := w.fd
	w.fd = -1
	if w.f != nil {
		return w.f.Close()
	}
	if err := unix.Close(fd); err != nil {
		return &os.PathError{Op: "close", Path: w.name, Err: err}
	}
	return nil
}

// Batch writes many regenerable files (export pages, search shards) so
// that each appears atomically — temp file, length check, rename, so a
// reader never sees a partial file — but makes them durable together: Sync
// flushes the filesystem once with syncfs(2) instead of two fsyncs per
// file, which at 100k pages is the difference between seconds and minutes.
//
// Until Sync returns, a crash may leave some of the batch's files empty or
// old. A Batch is therefore only for files that something else still on
// disk can give again until the sync: export pages (the export state that
// claims them is written with WriteFile only after Sync) and the new
// index.jsonl of a migrated snapshot (its legacy source and the migration
// journal survive until the run's syncfs). A file that replaces the only
// copy of its content never goes through a Batch.
type Batch struct {
	root string
}

// NewBatch returns a Batch for files on the filesystem holding root.
func NewBatch(root string) *Batch { return &Batch{root: root} }

// WriteFile writes data to path atomically, durable after Sync.
func (b *Batch) WriteFile(path string, data []byte, perm os.FileMode) error {
	return b.WriteFileWith(path, perm, func(w io.Writer) error {
		n, err := w.Write(data)
		if err == nil && n != len(data) {
			err = io.ErrShortWrite
		}
		return err
	})
}

// WriteFileUnlessSame is WriteFile for files that are often written
// again with the bytes they hold already (an export's pages under
// --full): when path is a regular file of one link holding exactly data,
// it is left as it is and same is true. Nothing is written then: no new
// inode, no rename, its mtime kept, so a sync of the folder to a host
// copies nothing. Comparing costs a stat and, when the sizes agree, a
// read; writing costs a create, a write, a rename and the old inode's
// release.
func (b *Batch) WriteFileUnlessSame(path string, data []byte, perm os.FileMode) (same bool, err error) {
	if SameContent(path, data) {
		return true, nil
	}
	return false, b.WriteFile(path, data, perm)
}

// SameContent reports whether path is a regular file of one link, not a
// symlink, that holds exactly data. Any error answers false.
func SameContent(path string, data []byte) bool {
	fd, st, err := OpenRegular(path, true)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	if st.Nlink != 1 || st.Size != int64(len(data)) {
		return false
	}
	bp := compareBufs.Get().(*[]byte)
	defer compareBufs.Put(bp)
	if cap(*bp) < len(data) {
		*bp = make([]byte, len(data))
	}
	buf := (*bp)[:len(data)]
	for n := 0; n < len(buf); {
		k, err := unix.Read(fd, buf[n:])
		if err == unix.EINTR {
			continue
		}
		if err != nil || k == 0 {
			return false
		}
		n += k
	}
	return bytes.Equal(buf, data)
}

var compareBufs = sync.Pool{New: func() any { return new([]byte) }}

// WriteFileWith is WriteFile for content produced by a function.
func (b *Batch) WriteFileWith(path string, perm os.FileMode, write func(io.Writer) error) error {
	return writeAtomic(path, perm, write, false)
}

// Sync makes every file the batch wrote durable.
func (b *Batch) Sync() error {
	f, err := os.Open(b.root)
	if err != nil {
		return fmt.Errorf("sync %s: %w", b.root, err)
	}
	defer f.Close()
	if err := unix.Syncfs(int(f.Fd())); err != nil {
		return fmt.Errorf("sync %s: %w", b.root, err)
	}
	return nil
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// ReadFrom lets io.Copy reach the temp file's own ReadFrom, which copies
// from another file inside the kernel (copy_file_range on Linux): a large
// file spliced from an older one is not read into memory.
func (c *countingWriter) ReadFrom(r io.Reader) (int64, error) {
	n, err := io.Copy(c.w, r)
	c.n += n
	return n, err
}

// ReadFd reads the open regular file fd to its end with raw read(2)
// calls, into a buffer of size+1 bytes (size: its fstat size), so that a
// file read whole costs one read: a read of a regular file that returns
// fewer bytes than asked, having reached size, has found the end (a file
// grown since its stat fills the extra byte and is read on). Errors are
// the raw errno; the caller names the file.
func ReadFd(fd int, size int64) ([]byte, error) {
	data := make([]byte, 0, max(size, 0)+1)
	for {
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
		asked := cap(data) - len(data)
		n, err := rawsys.Read(fd, data[len(data):cap(data)])
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return data, nil
		}
		data = data[:len(data)+n]
		if n < asked && int64(len(data)) >= size {
			return data, nil
		}
	}
}

// Dirent is one entry of a directory listing.
type Dirent struct {
	Name string
	Type uint8 // unix.DT_*; DT_UNKNOWN when the filesystem does not say
}

// ReadDirFd lists the open directory fd with raw getdents(2) calls into
// buf (scratch space), "." and ".." left out, in the order the filesystem
// gives them, each entry with the type the listing tells: a folder of
// small files is looked at without a stat per entry. Errors are the raw
// errno; the caller names the folder.
func ReadDirFd(fd int, buf []byte) ([]Dirent, error) {
	var out []Dirent
	for {
		n, err := rawsys.Getdents(fd, buf)
		if err != nil {
			return nil, err
		}
		if n <= 0 {
			return out, nil
		}
		for b := buf[:n]; len(b) > 0; {
			// struct linux_dirent64: ino u64, off s64, reclen u16, type u8, name.
			reclen := int(binary.NativeEndian.Uint16(b[16:18]))
			if reclen <= 19 || reclen > len(b) {
				return nil, errors.New("malformed directory entry")
			}
			typ := b[18]
			name := b[19:reclen]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			b = b[reclen:]
			if string(name) == "." || string(name) == ".." {
				continue
			}
			out = append(out, Dirent{Name: string(name), Type: typ})
		}
	}
}

// ErrNotRegular: a file folio reads, such as an index, is a fifo, a
// device or a socket.
var ErrNotRegular = errors.New("not a regular file")

// ReadRegular reads the file at path, which must be a regular file (or a
// symlink to one), without blocking on a fifo (see OpenRegular). Errors
// are *fs.PathError, as from os.ReadFile.
func ReadRegular(path string) ([]byte, error) { return readRegular(path, false) }

// ReadIndexFile is ReadRegular for a snapshot's index.jsonl or index.json,
// which is never read through a symlink: a link there could name any
// file, in the collection or out of it, and the catalog does not follow
// it either. A symlink fails with ErrNotRegular.
func ReadIndexFile(path string) ([]byte, error) { return readRegular(path, true) }

func readRegular(path string, nofollow bool) ([]byte, error) {
	fd, st, err := OpenRegular(path, nofollow)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	data, err := ReadFd(fd, st.Size)
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: path, Err: err}
	}
	return data, nil
}

// OpenRegular opens the regular file at path for reading and returns its
// fd and fstat. It never blocks on a fifo: the file is opened non-blocking
// (which changes nothing for a regular file), and a folder fails with
// EISDIR, anything else but a regular file with ErrNotRegular naming its
// kind. With nofollow a symlink fails with ErrNotRegular too. Errors are
// *fs.PathError.
func OpenRegular(path string, nofollow bool) (int, unix.Stat_t, error) {
	return OpenRegularAt(unix.AT_FDCWD, path, nofollow)
}

// OpenRegularAt is OpenRegular for name below the open folder dirfd
// (unix.AT_FDCWD: the current directory); errors name name.
func OpenRegularAt(dirfd int, name string, nofollow bool) (int, unix.Stat_t, error) {
	var st unix.Stat_t
	flags := unix.O_RDONLY | unix.O_NONBLOCK | unix.O_CLOEXEC
	if nofollow {
		flags |= unix.O_NOFOLLOW
	}
	fd, err := rawsys.Openat(dirfd, name, flags)
	if nofollow && err == unix.ELOOP {
		return -1, st, &fs.PathError{Op: "open", Path: name, Err: fmt.Errorf("%w (a symlink, not followed)", ErrNotRegular)}
	}
	if err != nil {
		return -1, st, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	if err := rawsys.Fstat(fd, &st); err != nil {
		rawsys.Close(fd)
		return -1, st, &fs.PathError{Op: "stat", Path: name, Err: err}
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		return fd, st, nil
	case unix.S_IFDIR:
		err = unix.EISDIR
	default:
		err = fmt.Errorf("%w (%s)", ErrNotRegular, FileKind(st.Mode))
	}
	rawsys.Close(fd)
	return -1, st, &fs.PathError{Op: "read", Path: name, Err: err}
}

// FileKind names the kind of special file a stat mode describes: "fifo",
// "socket", "character device", "block device".
func FileKind(mode uint32) string {
	switch mode & unix.S_IFMT {
	case unix.S_IFIFO:
		return "fifo"
	case unix.S_IFSOCK:
		return "socket"
	case unix.S_IFCHR:
		return "character device"
	case unix.S_IFBLK:
		return "block device"
	}
	return "special file"
}

// SyncDir fsyncs a directory so a rename or create inside it is durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}
