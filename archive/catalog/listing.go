package catalog

import (
	"context"
	"fmt"
)

// loadListings reads the catalog's listings of date folders.
func (c *Catalog) loadListings(ctx context.Context) (map[string]listing, error) {
	var n int
	if err := c.db.QueryRowContext(ctx, `SELECT count(*) FROM folders`).Scan(&n); err != nil {
		return nil, fmt.Errorf("read catalog %s: %w", c.path, err)
	}
	m := make(map[string]listing, n)
	rows, err := c.db.QueryContext(ctx, `SELECT dir, stamp, domains FROM folders`)
	if err != nil {
		return nil, fmt.Errorf("read catalog %s: %w", c.path, err)
	}
	defer rows.Close()
	for rows.Next() {
		var dir string
		var l listing
		var domains []byte
		if err := rows.Scan(&dir, &l.stamp, &domains); err != nil {
			return nil, fmt.Errorf("read catalog %s: %w", c.path, err)
		}
		l.domains = string(domains)
		m[dir] = l
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read catalog %s: %w", c.path, err)
	}
	return m, nil
}

// saveListings brings the folders table in line with a walk: the new
// listings it made are stored, and those it neither trusted nor made
// again (folders gone, changed too recently, or not reached) are dropped.
func (c *Catalog) saveListings(ctx context.Context, w *walker, batch int) error {
	keep := make(map[string]bool, len(w.trusted)+len(w.listed))
	for _, d := range w.trusted {
		keep[d] = true
	}
	for _, l := range w.listed {
		keep[l.dir] = true
	}
	var drop []string
	for d := range w.listings {
		if !keep[d] {
			drop = append(drop, d)
		}
	}
	listed := w.listed
	for len(drop) > 0 || len(listed) > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := min(len(drop), batch)
		m := min(len(listed), batch-n)
		if err := c.writeListings(ctx, drop[:n], listed[:m]); err != nil {
			return fmt.Errorf("write catalog %s: %w", c.path, err)
		}
		drop, listed = drop[n:], listed[m:]
	}
	return nil
}

// writeListings drops and stores listings in one transaction.
func (c *Catalog) writeListings(ctx context.Context, drop []string, listed []listingRow) error {
	tx, err := c.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	del, err := tx.PrepareContext(ctx, `DELETE FROM folders WHERE dir = ?`)
	if err != nil {
		return err
	}
	ins, err := tx.PrepareContext(ctx, `INSERT OR REPLACE INTO folders (dir, stamp, domains) VALUES (?,?,?)`)
	if err != nil {
		return err
	}
	for _, d := range drop {
		if _, err := del.ExecContext(ctx, d); err != nil {
			return err
		}
	}
	for _, l := range listed {
		if _, err := ins.ExecContext(ctx, l.dir, l.stamp, []byte(l.domains)); err != nil {
			return err
		}
	}
	return tx.Commit()
}
