package catalog

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// Stats summarises the catalog.
type Stats struct {
	Snapshots     int            // cataloged snapshot folders
	ByStatus      map[string]int // snapshot status ("" for records without one)
	ByState       map[string]int // Entry.State: archived, partial, failed, queued...
	ByLayout      map[string]int // LayoutCurrent, LayoutLegacy
	ByUser        map[string]int // current-layout folders per owner
	LegacyNoIndex int            // legacy folders without a usable index file
	Results       int            // ArchiveResult records
	Succeeded     int            // results with status succeeded
	Failed        int            // results with status failed
	Tags          int            // distinct tag names
	ArchiveSize   int64          // sum of the snapshots' archive_size
	BuiltAt       time.Time      // last build from scratch; zero if never built
	UpdatedAt     time.Time      // last completed reindex; zero if never
}

// Stats counts what the catalog holds.
func (c *Catalog) Stats(ctx context.Context) (Stats, error) {
	st := Stats{ByStatus: map[string]int{}, ByState: map[string]int{}, ByLayout: map[string]int{}, ByUser: map[string]int{}}
	wrap := func(err error) error { return fmt.Errorf("read catalog %s: %w", c.path, err) }
	groups := []struct {
		query string
		into  map[string]int
	}{
		{`SELECT status, count(*) FROM snapshots GROUP BY status`, st.ByStatus},
		{`SELECT state, count(*) FROM snapshots GROUP BY state`, st.ByState},
		{`SELECT layout, count(*) FROM snapshots GROUP BY layout`, st.ByLayout},
		{`SELECT user, count(*) FROM snapshots WHERE layout = 'current' GROUP BY user`, st.ByUser},
	}
	for _, g := range groups {
		rows, err := c.db.QueryContext(ctx, g.query)
		if err != nil {
			return st, wrap(err)
		}
		for rows.Next() {
			var k string
			var n int
			if err := rows.Scan(&k, &n); err != nil {
				rows.Close()
				return st, wrap(err)
			}
			g.into[k] = n
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return st, wrap(err)
		}
	}
	var size sql.NullInt64
	if err := c.db.QueryRowContext(ctx, `SELECT count(*), sum(archive_size), count(*) FILTER (WHERE layout = 'legacy' AND index_file = '') FROM snapshots`).Scan(&st.Snapshots, &size, &st.LegacyNoIndex); err != nil {
		return st, wrap(err)
	}
	st.ArchiveSize = size.Int64
	var results, outputs, failures sql.NullInt64
	if err := c.db.QueryRowContext(ctx, `SELECT sum(num_results), sum(num_outputs), sum(num_failures) FROM snapshots`).Scan(&results, &outputs, &failures); err != nil {
		return st, wrap(err)
	}
	st.Results, st.Succeeded, st.Failed = int(results.Int64), int(outputs.Int64), int(failures.Int64)
	if err := c.db.QueryRowContext(ctx, `SELECT count(DISTINCT name) FROM tags`).Scan(&st.Tags); err != nil {
		return st, wrap(err)
	}
	var err error
	if st.BuiltAt, err = c.meta(ctx, metaBuilt); err != nil {
		return st, err
	}
	if st.UpdatedAt, err = c.meta(ctx, metaUpdated); err != nil {
		return st, err
	}
	return st, nil
}
