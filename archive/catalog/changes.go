package catalog

import (
	"context"
	"fmt"
	"strconv"
)

// Generation names a state of the catalog for its change feed. Every
// reindex that adds, updates or drops a row writes those rows with the
// next generation number N and then records it; a catalog built from
// scratch (a new file, or reindex --full) starts a new Epoch, after which
// older generations mean nothing.
type Generation struct {
	Epoch string // when the catalog was last built from scratch; "" before its first reindex
	N     int64
}

// Generation returns the catalog's current generation: every row written
// so far has a generation at most N.
func (c *Catalog) Generation(ctx context.Context) (Generation, error) {
	epoch, err := c.metaString(ctx, metaBuilt)
	if err != nil {
		return Generation{}, err
	}
	n, err := c.generation(ctx)
	return Generation{Epoch: epoch, N: n}, err
}

func (c *Catalog) generation(ctx context.Context) (int64, error) {
	s, err := c.metaString(ctx, metaGen)
	if err != nil || s == "" {
		return 0, err
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("read catalog %s: generation %q: %w", c.path, s, err)
	}
	return n, nil
}

// Changed returns the snapshot folders whose rows were added, updated or
// dropped after since, in no particular order; a folder may be listed
// twice. ok is false when since is not a generation of this catalog's
// epoch (it was rebuilt, or since is from the future): the caller must
// then read everything, as nothing tells what changed.
func (c *Catalog) Changed(ctx context.Context, since Generation) (dirs []string, ok bool, err error) {
	cur, err := c.Generation(ctx)
	if err != nil {
		return nil, false, err
	}
	if cur.Epoch == "" || since.Epoch != cur.Epoch || since.N > cur.N {
		return nil, false, nil
	}
	rows, err := c.db.QueryContext(ctx, `SELECT dir FROM snapshots WHERE gen > ?1 UNION ALL SELECT dir FROM removed WHERE gen > ?1`, since.N)
	if err != nil {
		return nil, false, fmt.Errorf("read catalog %s: %w", c.path, err)
	}
	defer rows.Close()
	for rows.Next() {
		var d string
		if err := rows.Scan(&d); err != nil {
			return nil, false, fmt.Errorf("read catalog %s: %w", c.path, err)
		}
		dirs = append(dirs, d)
	}
	if err := rows.Err(); err != nil {
		return nil, false, fmt.Errorf("read catalog %s: %w", c.path, err)
	}
	return dirs, true, nil
}
