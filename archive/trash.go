package archive

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// TrashDir holds the snapshot folders 'folio remove --delete' moved out
// of the tree, as TrashDir/<YYYYMMDD-HHMMSS>/<folder path>: moving one
// back to its path restores it (run 'folio reindex' after).
const TrashDir = ".folio/trash"

// ErrOtherFilesystem: a snapshot folder is on another filesystem than
// TrashDir, so it cannot be moved there by rename; it is left in place.
var ErrOtherFilesystem = errors.New("on another filesystem than " + TrashDir)

// Trash moves the snapshot folder rel (a slash path relative to the data
// dir) to TrashDir/stamp/rel by rename, never copying or deleting a file,
// and removes the folders above it left empty, up to the snapshots root.
// It returns the folder's new path relative to the data dir. The caller
// holds the collection's writer lock.
func (c *Collection) Trash(stamp, rel string) (string, error) {
	rel = path.Clean(rel)
	if !strings.HasPrefix(rel, ArchiveDir+"/") || strings.Contains(stamp, "/") || stamp == "" {
		return "", fmt.Errorf("move %s to %s: not a snapshot folder", rel, TrashDir)
	}
	dst := path.Join(TrashDir, stamp, rel)
	src := c.Path(rel)
	fail := func(err error) (string, error) {
		return "", fmt.Errorf("move %s to %s: %w", rel, dst, err)
	}
	var sst, tst unix.Stat_t
	if err := unix.Lstat(src, &sst); err != nil {
		return fail(err)
	}
	if sst.Mode&unix.S_IFMT != unix.S_IFDIR {
		return fail(errors.New("not a folder"))
	}
	if err := os.MkdirAll(c.Path(TrashDir), 0o755); err != nil {
		return fail(err)
	}
	if err := unix.Stat(c.Path(TrashDir), &tst); err != nil {
		return fail(err)
	}
	if sst.Dev != tst.Dev {
		return fail(ErrOtherFilesystem)
	}
	if err := os.MkdirAll(filepath.Dir(c.Path(dst)), 0o755); err != nil {
		return fail(err)
	}
	if err := renameNoReplace(src, c.Path(dst)); err != nil {
		c.pruneEmpty(path.Dir(dst), TrashDir)
		if errors.Is(err, unix.EXDEV) {
			err = ErrOtherFilesystem
		}
		return fail(err)
	}
	if err := SyncDir(filepath.Dir(c.Path(dst))); err != nil {
		return fail(err)
	}
	if err := SyncDir(filepath.Dir(src)); err != nil {
		return fail(err)
	}
	return dst, c.pruneEmpty(path.Dir(rel), snapshotsRoot(rel))
}

// renameNoReplace renames old to new, failing when new exists.
func renameNoReplace(old, new string) error {
	err := unix.Renameat2(unix.AT_FDCWD, old, unix.AT_FDCWD, new, unix.RENAME_NOREPLACE)
	if err != unix.EINVAL && err != unix.ENOSYS {
		return err
	}
	// A filesystem without RENAME_NOREPLACE: the lock keeps other folio
	// processes out between the check and the rename.
	if _, err := os.Lstat(new); err == nil {
		return fs.ErrExist
	}
	return unix.Rename(old, new)
}

// snapshotsRoot is the folder above a snapshot folder that is never
// removed: archive/users/<user>/snapshots, or archive for a legacy folder.
func snapshotsRoot(rel string) string {
	parts := strings.Split(rel, "/")
	if len(parts) > 4 && parts[1] == "users" {
		return strings.Join(parts[:4], "/")
	}
	return ArchiveDir
}

// pruneEmpty removes dir and the folders above it while they are empty,
// stopping below root.
func (c *Collection) pruneEmpty(dir, root string) error {
	for ; dir != root && strings.HasPrefix(dir, root+"/"); dir = path.Dir(dir) {
		err := unix.Rmdir(c.Path(dir))
		if err == unix.ENOTEMPTY || err == unix.EEXIST || errors.Is(err, unix.ENOENT) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("remove empty folder %s: %w", dir, err)
		}
		if err := SyncDir(c.Path(path.Dir(dir))); err != nil {
			return err
		}
	}
	return nil
}

// TrashUsage is what TrashDir holds.
type TrashUsage struct {
	Folders int   // snapshot folders
	Files   int   // files, of any kind
	Bytes   int64 // size of the regular files
}

// Trashed measures TrashDir without following links.
func (c *Collection) Trashed() (TrashUsage, error) {
	var u TrashUsage
	root := c.Path(TrashDir)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) && p == root {
			return fs.SkipAll
		}
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		parts := strings.Split(filepath.ToSlash(rel), "/")
		if d.IsDir() {
			// <stamp>/archive/<timestamp> or <stamp>/archive/users/<user>/snapshots/<date>/<domain>/<id>
			if len(parts) == 3 && parts[1] == ArchiveDir && parts[2] != "users" || len(parts) == 8 && parts[2] == "users" {
				u.Folders++
			}
			return nil
		}
		u.Files++
		if d.Type().IsRegular() {
			info, err := d.Info()
			if err != nil {
				return err
			}
			u.Bytes += info.Size()
		}
		return nil
	})
	if err != nil {
		return u, fmt.Errorf("measure %s: %w", root, err)
	}
	return u, nil
}

// PurgeTrash deletes TrashDir and everything in it. It is first renamed
// to a temp name, so that a purge cut short leaves no half-emptied trash
// that looks whole. The caller holds the collection's writer lock.
func (c *Collection) PurgeTrash() error {
	root := c.Path(TrashDir)
	tmp := c.Path(StateDir + "/trash" + TempMarker + "purge")
	if err := os.RemoveAll(tmp); err != nil { // left by a purge cut short
		return fmt.Errorf("purge %s: %w", tmp, err)
	}
	if err := os.Rename(root, tmp); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("purge %s: %w", root, err)
	}
	if err := SyncDir(c.Path(StateDir)); err != nil {
		return err
	}
	if err := os.RemoveAll(tmp); err != nil {
		return fmt.Errorf("purge %s: %w", root, err)
	}
	return nil
}
