package archive

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/sys/unix"
)

// TrashDir holds the snapshot folders 'folio remove --delete' moved out
// of the tree, as TrashDir/<YYYYMMDD-HHMMSS>/<folder path>: moving one
// back to its path restores it (run 'folio reindex' after). It is in
// RemovedDir, outside archive/, where neither folio's walk nor
// ArchiveBox's importers look for snapshots.
const TrashDir = RemovedDir + "/trash"

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
	if err := c.makeRemovedDir(TrashDir); err != nil {
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

// TrashJournal is the plan of one 'folio remove --delete', in its batch
// folder TrashDir/<stamp>/ (so that it moves with the trash): one JSON
// line per snapshot folder to move. It is written durably before the
// first folder moves and removed once every folder of the plan has moved
// (or was kept and reported) and the catalog has dropped their rows: a
// batch that still holds one was cut short, and the next remove finishes
// it (see ResumeTrash).
const TrashJournal = "remove.journal"

// TrashItem is one snapshot folder of a trash batch.
type TrashItem struct {
	Dir       string `json:"dir"` // slash path relative to the data dir
	ID        string `json:"id,omitempty"`
	URL       string `json:"url,omitempty"`
	Timestamp string `json:"timestamp,omitempty"`
}

// TrashBatch is what one 'folio remove --delete' moves to
// TrashDir/<Stamp>/.
type TrashBatch struct {
	Stamp string
	Items []TrashItem
}

// journalPath is the batch's TrashJournal, relative to the data dir.
func journalPath(stamp string) string { return path.Join(TrashDir, stamp, TrashJournal) }

// BeginTrash writes batch's journal, durably, before anything moves. The
// caller holds the collection's writer lock.
func (c *Collection) BeginTrash(b TrashBatch) error {
	if b.Stamp == "" || strings.ContainsAny(b.Stamp, "/.") {
		return fmt.Errorf("begin removal: bad batch name %q", b.Stamp)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for _, it := range b.Items {
		if err := enc.Encode(it); err != nil {
			return err
		}
	}
	p := c.Path(journalPath(b.Stamp))
	if err := c.makeRemovedDir(path.Join(TrashDir, b.Stamp)); err != nil {
		return fmt.Errorf("write %s: %w", p, err)
	}
	return WriteFile(p, buf.Bytes(), 0o644)
}

// EndTrash removes the batch's journal: the removal is finished.
func (c *Collection) EndTrash(stamp string) error {
	p := c.Path(journalPath(stamp))
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", p, err)
	}
	return SyncDir(filepath.Dir(p))
}

// UnfinishedTrash returns the batches whose journal is still there (a
// removal cut short), oldest first.
func (c *Collection) UnfinishedTrash() ([]TrashBatch, error) {
	root := c.Path(TrashDir)
	d, err := os.Open(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", root, err)
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", root, err)
	}
	sort.Strings(names)
	var out []TrashBatch
	for _, stamp := range names {
		p := c.Path(journalPath(stamp))
		data, err := ReadRegular(p)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, unix.ENOTDIR) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", p, err)
		}
		b := TrashBatch{Stamp: stamp}
		for i, line := range bytes.Split(data, []byte("\n")) {
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			var it TrashItem
			if err := json.Unmarshal(line, &it); err != nil || it.Dir == "" {
				return nil, fmt.Errorf("read %s: line %d is not a folder of the removal", p, i+1)
			}
			b.Items = append(b.Items, it)
		}
		out = append(out, b)
	}
	return out, nil
}

// ErrTrashTaken: a folder of an unfinished removal is both in the trash
// and in the tree (something was put at its path since); the one in the
// tree is left where it is.
var ErrTrashTaken = errors.New("is in the trash and a folder has taken its place in the tree")

// ResumeTrash settles the folder rel of the unfinished batch stamp: moved
// to the trash if it is still in the tree, its emptied parents removed if
// it had moved already. gone reports that the folder is out of the tree,
// so its catalog row must go. A folder that cannot move fails as Trash
// does (ErrOtherFilesystem, ...) and stays; one in both places fails with
// ErrTrashTaken. The caller holds the collection's writer lock.
func (c *Collection) ResumeTrash(stamp, rel string) (gone bool, err error) {
	rel = path.Clean(rel)
	if !strings.HasPrefix(rel, ArchiveDir+"/") {
		return false, fmt.Errorf("move %s to %s: not a snapshot folder", rel, TrashDir)
	}
	dst := path.Join(TrashDir, stamp, rel)
	_, serr := os.Lstat(c.Path(rel))
	_, derr := os.Lstat(c.Path(dst))
	switch {
	case serr == nil && derr == nil:
		return false, fmt.Errorf("%s %w (%s)", rel, ErrTrashTaken, dst)
	case serr == nil:
		if _, err := c.Trash(stamp, rel); err != nil {
			return false, err
		}
		return true, nil
	case !errors.Is(serr, fs.ErrNotExist):
		return false, fmt.Errorf("move %s to %s: %w", rel, dst, serr)
	}
	// Moved before the cut (or gone by other means: the tree is the truth).
	return true, c.pruneEmpty(path.Dir(rel), snapshotsRoot(rel))
}

// TrashRun is how FinishTrash reaches the caller.
type TrashRun struct {
	// Drop takes the folders now out of the tree out of the catalog.
	Drop func(dirs []string) error
	// Warn is told what went wrong with a folder; kept says that the
	// folder stays in the tree (else it moved, and only removing its
	// emptied parents failed).
	Warn func(err error, kept bool)
	// Stop, when it reports true, ends the moves early (Ctrl-C): the
	// folders not moved yet stay in the tree and in the catalog.
	Stop func() bool
	// Fault, when set, is called with "trashed" after each folder moved
	// and "dropped" after the catalog dropped them (FOLIO_FAULT).
	Fault func(step, what string) error
}

// FinishTrash carries out the batch whose journal BeginTrash wrote, or
// finishes one a kill cut short (they are the same: the tree is the
// truth): each folder still in the tree moves to the trash, each already
// out of it has its emptied parents removed; then Drop is handed every
// folder out of the tree and the journal is removed. It returns the
// folders out of the tree and how many stayed. When a folder failed for
// a reason that may pass (anything but ErrOtherFilesystem or
// ErrTrashTaken) the journal is kept, so that the next remove tries it
// again, and the error wraps ErrPartial.
func (c *Collection) FinishTrash(b TrashBatch, run TrashRun) (gone []string, kept int, err error) {
	fault := run.Fault
	if fault == nil {
		fault = func(string, string) error { return nil }
	}
	retry := 0
	for _, it := range b.Items {
		if run.Stop != nil && run.Stop() {
			break
		}
		out, err := c.ResumeTrash(b.Stamp, it.Dir)
		if out {
			gone = append(gone, it.Dir)
		}
		if err != nil {
			if !out {
				kept++
				if !errors.Is(err, ErrOtherFilesystem) && !errors.Is(err, ErrTrashTaken) {
					retry++
				}
			}
			run.Warn(err, !out)
			continue
		}
		if err := fault("trashed", it.Dir); err != nil {
			return gone, kept, err
		}
	}
	if err := run.Drop(gone); err != nil {
		return gone, kept, err
	}
	if err := fault("dropped", b.Stamp); err != nil {
		return gone, kept, err
	}
	if retry > 0 {
		return gone, kept, fmt.Errorf("%d folders of the removal %s could not be moved and are tried again by the next remove: %w", retry, journalPath(b.Stamp), ErrPartial)
	}
	return gone, kept, c.EndTrash(b.Stamp)
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
	tmp := c.Path(TrashDir + TempMarker + "purge")
	if err := os.RemoveAll(tmp); err != nil { // left by a purge cut short
		return fmt.Errorf("purge %s: %w", tmp, err)
	}
	if err := os.Rename(root, tmp); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("purge %s: %w", root, err)
	}
	if err := SyncDir(c.Path(RemovedDir)); err != nil {
		return err
	}
	if err := os.RemoveAll(tmp); err != nil {
		return fmt.Errorf("purge %s: %w", root, err)
	}
	return nil
}
