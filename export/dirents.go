package export

import (
	"encoding/binary"
	"io/fs"
	"os"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/folio-archive/folio/internal/rawsys"
)

// direntBufs are getdents(2) buffers, reused across listings.
var direntBufs = sync.Pool{New: func() any { b := make([]byte, 16<<10); return &b }}

// readDir lists a folder in directory order, never through a symlink,
// with raw open, getdents and close calls: os.File would add an fcntl per
// folder (os.NewFile asks whether the descriptor is non-blocking), and an
// export lists two or three folders per snapshot.
func readDir(path string) ([]fs.DirEntry, error) {
	return readDirAt(unix.AT_FDCWD, path, path)
}

// readDirAt is readDir of name below the open folder dirfd; path is the
// folder's absolute path, which errors and the entries' Info use.
func readDirAt(dirfd int, name, path string) ([]fs.DirEntry, error) {
	fd, entries, err := openListed(dirfd, name, path)
	if err == nil {
		rawsys.Close(fd)
	}
	return entries, err
}

// openListed is readDirAt that leaves the folder open: the caller closes
// fd (when err is nil).
func openListed(dirfd int, name, path string) (fd int, entries []fs.DirEntry, err error) {
	fd, err = rawsys.Openat(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW)
	if err != nil {
		return -1, nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	if entries, err = listDir(fd, path); err != nil {
		rawsys.Close(fd)
		return -1, nil, err
	}
	return fd, entries, nil
}

// listDir lists the open folder fd (at path) from where its offset is.
func listDir(fd int, path string) ([]fs.DirEntry, error) {
	bp := direntBufs.Get().(*[]byte)
	defer direntBufs.Put(bp)
	buf := *bp
	var out []fs.DirEntry
	for {
		n, err := rawsys.Getdents(fd, buf)
		if err != nil {
			return nil, &os.PathError{Op: "readdirent", Path: path, Err: err}
		}
		if n <= 0 {
			return out, nil
		}
		// struct linux_dirent64: ino u64, off i64, reclen u16, type u8,
		// then the NUL-terminated name.
		for rec := buf[:n]; len(rec) >= 19; {
			reclen := int(binary.NativeEndian.Uint16(rec[16:18]))
			if reclen < 19 || reclen > len(rec) {
				break
			}
			ino, typ, name := binary.NativeEndian.Uint64(rec[0:8]), rec[18], rec[19:reclen]
			rec = rec[reclen:]
			for i, c := range name {
				if c == 0 {
					name = name[:i]
					break
				}
			}
			if ino == 0 || string(name) == "." || string(name) == ".." {
				continue
			}
			e := &dirent{dir: path, name: string(name)}
			if e.typ, err = direntType(fd, e.name, typ); err != nil {
				continue // removed since it was listed
			}
			out = append(out, e)
		}
	}
}

// direntType is the type bits of an entry; a filesystem that does not
// say (DT_UNKNOWN) is asked with an lstat, as os.File.ReadDir does (a
// DT_ value is the S_IF bits of a stat mode shifted down by 12).
func direntType(dirfd int, name string, typ byte) (fs.FileMode, error) {
	if typ == unix.DT_UNKNOWN {
		var st unix.Stat_t
		if err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return 0, err
		}
		typ = byte(st.Mode & unix.S_IFMT >> 12)
	}
	switch typ {
	case unix.DT_REG:
		return 0, nil
	case unix.DT_DIR:
		return fs.ModeDir, nil
	case unix.DT_LNK:
		return fs.ModeSymlink, nil
	case unix.DT_FIFO:
		return fs.ModeNamedPipe, nil
	case unix.DT_SOCK:
		return fs.ModeSocket, nil
	case unix.DT_CHR:
		return fs.ModeDevice | fs.ModeCharDevice, nil
	case unix.DT_BLK:
		return fs.ModeDevice, nil
	}
	return fs.ModeIrregular, nil
}

// dirent is one entry of readDir.
type dirent struct {
	dir, name string
	typ       fs.FileMode
}

func (e *dirent) Name() string               { return e.name }
func (e *dirent) IsDir() bool                { return e.typ.IsDir() }
func (e *dirent) Type() fs.FileMode          { return e.typ }
func (e *dirent) Info() (fs.FileInfo, error) { return os.Lstat(e.dir + "/" + e.name) }
func (e *dirent) String() string             { return fs.FormatDirEntry(e) }

var _ fs.DirEntry = (*dirent)(nil)
