package catalog

import (
	"context"
	"strconv"
)

// Drop deletes the rows of the snapshot folders dirs (slash paths
// relative to the data dir) and returns how many it deleted. The change
// feed records each as removed, so an incremental export leaves the
// snapshots out. A folder still in the tree comes back with the next
// reindex unless it is listed in archive.HiddenFile. The caller holds the
// collection's writer lock.
func (c *Catalog) Drop(ctx context.Context, dirs []string) (int, error) {
	if len(dirs) == 0 {
		return 0, nil
	}
	prev, err := c.generation(ctx)
	if err != nil {
		return 0, err
	}
	gen := prev + 1
	m, err := c.loadScoped(ctx, dirs)
	if err != nil {
		return 0, err
	}
	var ids []int64
	var rowDirs, bad []string
	for d, k := range m {
		if k.rowid != 0 {
			ids = append(ids, k.rowid)
			rowDirs = append(rowDirs, d)
		} else {
			bad = append(bad, d)
		}
	}
	if err := c.deleteRows(ctx, ids, rowDirs, bad, gen, 2000); err != nil {
		return 0, err
	}
	if len(ids) > 0 {
		if err := c.setMeta(ctx, map[string]string{metaGen: strconv.FormatInt(gen, 10)}); err != nil {
			return 0, err
		}
	}
	return len(ids), nil
}
