package catalog

import (
	"context"
	"database/sql"
	"fmt"
)

// openWalk sets w up to walk the whole tree against the catalog: the
// rows of snapshot folders and the listings of date folders are read in
// the order of their paths as the walk goes, and the folders that could
// not be cataloged (few) whole. close ends the reads.
func (c *Catalog) openWalk(ctx context.Context, w *walker) (close func(), err error) {
	if w.bad, err = c.loadBad(ctx); err != nil {
		return nil, err
	}
	w.rows, err = openSorted(ctx, c, `SELECT dir, rowid, stamp, index_file, text_stamp FROM snapshots INDEXED BY snapshots_known ORDER BY dir`,
		func(rows *sql.Rows) (string, *known, error) {
			var dir string
			k := &known{}
			err := rows.Scan(&dir, &k.rowid, &k.stamp, &k.indexFile, &k.textStamp)
			return dir, k, err
		})
	if err != nil {
		return nil, err
	}
	w.listings, err = openSorted(ctx, c, `SELECT dir, stamp, domains FROM folders ORDER BY dir`,
		func(rows *sql.Rows) (string, listing, error) {
			var dir string
			var l listing
			var domains []byte
			err := rows.Scan(&dir, &l.stamp, &domains)
			l.domains = string(domains)
			return dir, l, err
		})
	if err != nil {
		w.rows.close()
		return nil, err
	}
	return func() {
		w.rows.close()
		w.listings.close()
	}, nil
}

// saveListings brings the folders table in line with a walk: the new
// listings it made are stored, and those it neither trusted nor made
// again (folders gone, changed too recently, or not reached) are dropped.
func (c *Catalog) saveListings(ctx context.Context, w *walker, batch int) error {
	drop, listed := w.dropped, w.listed
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
