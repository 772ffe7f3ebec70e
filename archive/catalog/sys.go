package catalog

import (
	"errors"
	"io/fs"

	"golang.org/x/sys/unix"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/internal/rawsys"
)

// A reindex makes one directory listing per folder above the snapshot
// level and one index read per snapshot, so these are done with raw
// system calls: no sorting, no FileInfo values, no poller registration.

// dirent is one entry of a directory listing.
type dirent = archive.Dirent

// listDir returns the entries of the directory at path, "." and ".."
// excluded, in the order the filesystem gives them. buf is scratch space.
func listDir(path string, buf []byte) ([]dirent, error) {
	fd, err := openDir(path)
	if err != nil {
		return nil, err
	}
	defer rawsys.Close(fd)
	return listDirFd(fd, buf)
}

// openDir opens a directory, never through a symlink.
func openDir(path string) (int, error) {
	fd, err := rawsys.Openat(unix.AT_FDCWD, path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW)
	if err != nil {
		return -1, errnoErr(err)
	}
	return fd, nil
}

// openDirAt opens the directory name below the open directory dirfd,
// never through a symlink.
func openDirAt(dirfd int, name string) (int, error) {
	fd, err := rawsys.Openat(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW)
	if err != nil {
		return -1, errnoErr(err)
	}
	return fd, nil
}

// listDirFd lists the open directory fd (see archive.ReadDirFd).
func listDirFd(fd int, buf []byte) ([]dirent, error) {
	out, err := archive.ReadDirFd(fd, buf)
	if err != nil {
		return nil, errnoErr(err)
	}
	return out, nil
}

// isDir resolves an entry's type, with an lstat when the listing did not
// say; symlinks are never directories here.
func isDir(d dirent, parent string) bool {
	switch d.Type {
	case unix.DT_DIR:
		return true
	case unix.DT_UNKNOWN:
		var st unix.Stat_t
		return unix.Lstat(parent+"/"+d.Name, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR
	}
	return false
}

// stampAt is the stamp of the file rel below the open directory dirfd:
// a stat relative to a folder the walk holds open, without resolving the
// whole path again.
func stampAt(dirfd int, rel string) string {
	var st unix.Stat_t
	err := rawsys.Lstatat(dirfd, rel, &st)
	return string(appendStat(nil, &st, err))
}

// fileStat is what the catalog keeps of an index file.
type fileStat struct {
	size, mtime int64 // mtime in ns
	ino         uint64
}

// readIndexFile reads a regular file without following a symlink. It
// returns the file's stat taken before the read, so a write racing with
// the read shows up as a change next time.
func readIndexFile(path string) (fileStat, []byte, error) {
	return readHead(path, -1)
}

// readHead is readIndexFile reading at most limit bytes (all when limit
// is negative).
func readHead(path string, limit int64) (fileStat, []byte, error) {
	fd, st, err := archive.OpenRegular(path, true)
	if err != nil {
		// The catalog's problems name the folder: keep the bare reason.
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		if err == unix.ELOOP || err == unix.EISDIR || errors.Is(err, archive.ErrNotRegular) {
			return fileStat{}, nil, ErrNotRegular
		}
		return fileStat{}, nil, errnoErr(err)
	}
	defer rawsys.Close(fd)
	fst := fileStat{size: st.Size, mtime: st.Mtim.Nano(), ino: st.Ino}
	var data []byte
	if limit < 0 {
		data, err = archive.ReadFd(fd, st.Size)
	} else {
		data = make([]byte, min(st.Size, limit))
		n := 0
		for n < len(data) {
			m, rerr := rawsys.Read(fd, data[n:])
			if rerr != nil || m == 0 {
				err = rerr
				break
			}
			n += m
		}
		data = data[:n]
	}
	if err != nil {
		return fileStat{}, nil, errnoErr(err)
	}
	return fst, data, nil
}

// stamp encodes the stat as statStamp does for one file.
func (s fileStat) stamp() string {
	var st unix.Stat_t
	st.Size, st.Ino = s.size, s.ino
	st.Mtim = unix.NsecToTimespec(s.mtime)
	return string(appendRegularStamp(nil, &st))
}

// errnoErr maps ENOENT to fs.ErrNotExist so callers can use errors.Is.
func errnoErr(err error) error {
	if err == unix.ENOENT {
		return fs.ErrNotExist
	}
	return err
}
