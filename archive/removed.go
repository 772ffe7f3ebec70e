package archive

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strconv"

	"golang.org/x/sys/unix"
)

// RemovedDir holds what 'folio remove' took out of the collection: the
// hidden list (HiddenFile) and the trash (TrashDir). It is part of the
// tree, like archive/ and invalid/, so that the catalog in StateDir stays
// a cache that a reindex rebuilds from the tree alone; it lies outside
// archive/, so neither folio's walk nor ArchiveBox's importers, which
// look for snapshots only there, take a trashed folder for a live one.
const RemovedDir = "removed"

// Where folio kept the hidden list and the trash before they moved to
// RemovedDir. moveRemoved moves them.
const (
	oldHiddenFile = StateDir + "/hidden.jsonl"
	oldTrashDir   = StateDir + "/trash"
)

// makeRemovedDir creates the folder rel below RemovedDir (and RemovedDir),
// durably: each folder it creates is synced into its parent.
func (c *Collection) makeRemovedDir(rel string) error {
	var missing []string
	for d := rel; d != "." && d != ""; d = path.Dir(d) {
		if _, err := os.Lstat(c.Path(d)); err == nil {
			break
		}
		missing = append(missing, d)
	}
	for i := len(missing) - 1; i >= 0; i-- {
		d := missing[i]
		if err := os.Mkdir(c.Path(d), 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("create %s: %w", c.Path(d), err)
		}
		if err := SyncDir(c.Path(path.Dir(d))); err != nil {
			return err
		}
	}
	return nil
}

// moveRemoved moves the hidden list and the trash an earlier folio kept in
// StateDir (which users delete as a cache) into RemovedDir. Each trash
// batch moves by one rename (its journal, when a removal was cut short,
// moves with it); the hidden list is merged into HiddenFile, which is
// written atomically and read back before the old list is deleted. A move
// killed at any point is finished by the next one, and once done there is
// nothing to move: the caller holds the collection's writer lock (Lock
// calls it).
func (c *Collection) moveRemoved() error {
	if err := c.moveOldTrash(); err != nil {
		return err
	}
	if err := c.moveOldHidden(); err != nil {
		return err
	}
	return c.sweepRemoved()
}

// sweepRemoved removes what writes killed half way left in RemovedDir:
// temp files of the hidden list and of trash journals (never below a
// batch's archive/), a purge's set-aside trash, and batch folders left
// empty (a removal killed while its journal was written had moved
// nothing). The caller holds the collection's writer lock.
func (c *Collection) sweepRemoved() error {
	if err := RemoveTemps(c.Path(RemovedDir), nil); err != nil {
		return err
	}
	batches, err := os.ReadDir(c.Path(TrashDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", c.Path(TrashDir), err)
	}
	for _, b := range batches {
		dir := TrashDir + "/" + b.Name()
		if !b.IsDir() {
			continue
		}
		if err := RemoveTemps(c.Path(dir), nil); err != nil {
			return err
		}
		if err := c.pruneEmpty(dir, TrashDir); err != nil {
			return err
		}
	}
	return nil
}

func (c *Collection) moveOldTrash() error {
	// What a purge cut short had set aside: the user asked for it to go.
	purge := c.Path(oldTrashDir + TempMarker + "purge")
	if err := os.RemoveAll(purge); err != nil {
		return fmt.Errorf("purge %s: %w", purge, err)
	}
	entries, err := os.ReadDir(c.Path(oldTrashDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("move %s to %s: %w", oldTrashDir, TrashDir, err)
	}
	if len(entries) > 0 {
		if err := c.makeRemovedDir(TrashDir); err != nil {
			return err
		}
	}
	for _, e := range entries {
		src := oldTrashDir + "/" + e.Name()
		dst, err := c.freeName(TrashDir + "/" + e.Name())
		if err != nil {
			return err
		}
		if err := renameNoReplace(c.Path(src), c.Path(dst)); err != nil {
			if errors.Is(err, unix.EXDEV) {
				err = fmt.Errorf("%s is on another filesystem than %s: move it there by hand", StateDir, RemovedDir)
			}
			return fmt.Errorf("move %s to %s: %w", src, dst, err)
		}
		if err := SyncDir(c.Path(TrashDir)); err != nil {
			return err
		}
		if err := SyncDir(c.Path(oldTrashDir)); err != nil {
			return err
		}
	}
	if err := os.Remove(c.Path(oldTrashDir)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", c.Path(oldTrashDir), err)
	}
	return SyncDir(c.Path(StateDir))
}

// freeName returns rel, or rel-1, rel-2... when rel is taken (a trash
// batch of the same second in both places).
func (c *Collection) freeName(rel string) (string, error) {
	for i := 0; ; i++ {
		name := rel
		if i > 0 {
			name += "-" + strconv.Itoa(i)
		}
		_, err := os.Lstat(c.Path(name))
		if errors.Is(err, fs.ErrNotExist) {
			return name, nil
		}
		if err != nil {
			return "", fmt.Errorf("move to %s: %w", name, err)
		}
	}
}

func (c *Collection) moveOldHidden() error {
	if _, err := os.Lstat(c.Path(oldHiddenFile)); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	old, err := c.hiddenLines(oldHiddenFile)
	if err != nil {
		return err
	}
	lines, err := c.hiddenLines(HiddenFile)
	if err != nil {
		return err
	}
	merged := mergeHidden(lines, old)
	if len(merged) > len(lines) {
		if err := c.writeHidden(merged); err != nil {
			return err
		}
		// Read back: the old list goes only once the new one holds it.
		if lines, err = c.hiddenLines(HiddenFile); err != nil {
			return err
		}
		if len(mergeHidden(lines, old)) != len(lines) {
			return fmt.Errorf("move %s to %s: %s does not hold every line of %s after it was written", oldHiddenFile, HiddenFile, HiddenFile, oldHiddenFile)
		}
	}
	if err := os.Remove(c.Path(oldHiddenFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", c.Path(oldHiddenFile), err)
	}
	return SyncDir(c.Path(StateDir))
}

// mergeHidden appends to lines those of more it does not hold: a folder
// it lists already, or a line it holds byte for byte, is left out.
func mergeHidden(lines, more [][]byte) [][]byte {
	dirs := hiddenSet(lines)
	raw := map[string]bool{}
	for _, l := range lines {
		raw[string(bytes.TrimSpace(l))] = true
	}
	out := lines
	for _, l := range more {
		h, ok := parseHidden(l)
		if ok && dirs[h.Dir] || !ok && raw[string(bytes.TrimSpace(l))] {
			continue
		}
		if ok {
			dirs[h.Dir] = true
		} else {
			raw[string(bytes.TrimSpace(l))] = true
		}
		out = append(out, l)
	}
	return out
}
