package catalog

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/folio-archive/folio/archive"
)

// Entry is one cataloged snapshot folder.
type Entry struct {
	Dir      string           // snapshot folder, slash path relative to the data dir
	Layout   string           // LayoutCurrent or LayoutLegacy
	User     string           // owner for the current layout, "" for legacy folders
	Snapshot archive.Snapshot // the first Snapshot record (or index.json for legacy folders)
	Results  []archive.Result // filled only when Query.WithResults, read from the index file
	// ResultsErr says why Results could not be read (with WithResults).
	ResultsErr error

	IndexFile  string // "index.jsonl", "index.json", or "" for a legacy folder without index
	IndexSize  int64  // of the index file the entry was read from
	IndexMTime time.Time

	// Record is the Snapshot record in the canonical per-snapshot shape
	// (ArchiveBox's Snapshot.to_json, Python JSON style, one line without
	// "\n"). Callers may stream it without encoding anything.
	Record      []byte
	NumOutputs  int // succeeded results (the last of each plugin and hook)
	NumFailures int // failed results (the last of each plugin and hook)
	// State is the snapshot's status read with its results
	// (archive.Tally.State): queued, started, paused, archived, partial,
	// failed, or "" for a record with neither status nor results.
	State string

	// With Query.Snippets: words around the match, matched words between
	// SnippetOpen and SnippetClose, and the match's bm25 score (lower is
	// better).
	Snippet string
	Rank    float64

	// TextStamp identifies the captured text the search index holds for
	// the snapshot ("" when it holds none), as Texts returns it: it
	// changes when the text does.
	TextStamp string
}

const entryColumns = `s.dir, s.layout, s.user, s.index_file, s.index_size, s.index_mtime, s.id,
	s.crawl_id, s.url, s.title, s.tags, s.timestamp, s.bookmarked_at, s.created_at, s.depth,
	s.status, s.fs_version, s.archive_size, s.notes, s.schema_version, s.num_outputs,
	s.num_failures, s.record, s.text_stamp, s.state`

const recordColumns = `s.dir, s.layout, s.user, s.index_file, s.url, s.num_outputs, s.num_failures, s.record, s.state`

// Each calls fn for every snapshot q selects, in q's order, streaming rows
// from the catalog: memory does not grow with the collection. An error
// from fn stops the iteration and is returned.
//
// With q.WithResults, each entry's results are read from its index file
// (the catalog counts results but does not store them), several files at
// a time, and entries are still delivered in order.
func (c *Catalog) Each(ctx context.Context, q Query, fn func(Entry) error) error {
	cq, err := q.compile()
	if err != nil {
		return err
	}
	if err := c.checkStatus(ctx, q.Status); err != nil {
		return err
	}
	if !q.WithResults {
		return c.scan(ctx, q, cq, fn)
	}
	return c.eachWithResults(ctx, q, cq, fn)
}

// eachWithResults runs scan in one goroutine, reads the results of the
// entries in a pool of workers, and calls fn in scan order.
func (c *Catalog) eachWithResults(ctx context.Context, q Query, cq *compiled, fn func(Entry) error) error {
	type pending struct {
		e    Entry
		done chan struct{}
	}
	workers := runtime.GOMAXPROCS(0)
	window := 8 * workers
	order := make(chan *pending, window)
	work := make(chan *pending, window)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		defer close(order)
		defer close(work)
		return c.scan(gctx, q, cq, func(e Entry) error {
			p := &pending{e: e, done: make(chan struct{})}
			for _, ch := range []chan *pending{order, work} {
				select {
				case ch <- p:
				case <-gctx.Done():
					return gctx.Err()
				}
			}
			return nil
		})
	})
	for range workers {
		g.Go(func() error {
			for p := range work {
				p.e.Results, p.e.ResultsErr = c.readResults(p.e)
				close(p.done)
			}
			return nil
		})
	}
	g.Go(func() error {
		for p := range order {
			select {
			case <-p.done:
			case <-gctx.Done():
				return gctx.Err()
			}
			if err := fn(p.e); err != nil {
				return err
			}
		}
		return nil
	})
	return g.Wait()
}

// readResults reads an entry's ArchiveResult records from its folder, as
// Reindex does.
func (c *Catalog) readResults(e Entry) ([]archive.Result, error) {
	name := e.Dir[strings.LastIndexByte(e.Dir, '/')+1:]
	r := readFolder(c.coll.Dir, folder{dir: e.Dir, layout: e.Layout, user: e.User, name: name}, true)
	if !r.ok {
		if len(r.problems) > 0 {
			return nil, r.problems[0]
		}
		return nil, fmt.Errorf("%s: %w", e.Dir, ErrNoIndex)
	}
	ix, _ := archive.ParseIndex(r.results)
	return append(ix.Results(), r.legacyResults...), nil
}

func (c *Catalog) scan(ctx context.Context, q Query, cq *compiled, fn func(Entry) error) error {
	cols := entryColumns
	if q.RecordOnly {
		cols = recordColumns
	}
	var batch []snippetRow // rows waiting for their snippets, made a batch at a time
	if q.Snippets {
		cols += ", s.rowid, " + cmp.Or(cq.rank, rankSQL)
		batch = make([]snippetRow, 0, snippetBatch(q.Limit))
	}
	if cq.tiered && !plainMatch(q.Search) {
		// The tiers wrap the expression in a column filter; a mistake in
		// it is reported as the user wrote it, not as wrapped. Quoted
		// phrases (MatchWords) cannot be mistaken, and for a prefix
		// this check costs as much as the search.
		var one int
		err := c.db.QueryRowContext(ctx, `SELECT 1 FROM search WHERE search MATCH ? LIMIT 1`, q.Search).Scan(&one)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return c.queryError(q, err)
		}
	}
	query := `SELECT ` + cols + ` FROM ` + cq.from + cq.whereSQL() + ` ORDER BY ` + cq.order
	if q.Limit > 0 && len(cq.regex) == 0 {
		query += fmt.Sprintf(` LIMIT %d`, q.Limit)
	}
	rows, err := c.db.QueryContext(ctx, query, cq.args...)
	if err != nil {
		return c.queryError(q, err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var (
			e                   Entry
			s                   = &e.Snapshot
			rowid               int64
			mtime               int64
			tags                string
			bookmarked, created sql.NullInt64
		)
		dest := []any{&e.Dir, &e.Layout, &e.User, &e.IndexFile, &e.IndexSize, &mtime, &s.ID,
			&s.CrawlID, &s.URL, &s.Title, &tags, &s.Timestamp, &bookmarked, &created, &s.Depth,
			&s.Status, &s.FSVersion, &s.ArchiveSize, &s.Notes, &s.SchemaVersion, &e.NumOutputs,
			&e.NumFailures, &e.Record, &e.TextStamp, &e.State}
		if q.RecordOnly {
			dest = []any{&e.Dir, &e.Layout, &e.User, &e.IndexFile, &s.URL, &e.NumOutputs, &e.NumFailures, &e.Record, &e.State}
		}
		if q.Snippets {
			dest = append(dest, &rowid, &e.Rank)
		}
		if err := rows.Scan(dest...); err != nil {
			return fmt.Errorf("query catalog %s: %w", c.path, err)
		}
		if !cq.match(s.URL) {
			continue
		}
		if !q.RecordOnly {
			s.Tags = archive.SplitTags(tags)
			s.BookmarkedAt, s.CreatedAt = fromMicros(bookmarked), fromMicros(created)
		}
		if mtime != 0 {
			e.IndexMTime = time.Unix(0, mtime)
		}
		if q.Snippets {
			// (A batch made while the cursor is open takes a second connection.)
			if batch = append(batch, snippetRow{e, rowid}); len(batch) == cap(batch) {
				if err := c.snippets(ctx, q, batch, fn); err != nil {
					return err
				}
				batch = batch[:0]
			}
		} else if err := fn(e); err != nil {
			return err
		}
		if n++; q.Limit > 0 && n >= q.Limit {
			break
		}
	}
	if err := rows.Err(); err != nil {
		return c.queryError(q, err)
	}
	if len(batch) > 0 {
		rows.Close()
		return c.snippets(ctx, q, batch, fn)
	}
	return nil
}

// queryError wraps an error of a catalog query, as ErrQuery when it is
// about q's search expression.
func (c *Catalog) queryError(q Query, err error) error {
	if q.Search != "" {
		if serr := searchError(q.Search, err); serr != nil {
			return serr
		}
	}
	return fmt.Errorf("query catalog %s: %w", c.path, err)
}

// Empty reports whether the catalog has no snapshot. Unlike a Count of
// everything it reads one row, not the whole table (11 ms at 100k
// snapshots, paid by every list and search that asks first).
func (c *Catalog) Empty(ctx context.Context) (bool, error) {
	var some bool
	if err := c.db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM snapshots)`).Scan(&some); err != nil {
		return false, fmt.Errorf("read catalog %s: %w", c.path, err)
	}
	return !some, nil
}

// Count returns how many snapshots q selects (ignoring Sort).
func (c *Catalog) Count(ctx context.Context, q Query) (int, error) {
	cq, err := q.compile()
	if err != nil {
		return 0, err
	}
	if err := c.checkStatus(ctx, q.Status); err != nil {
		return 0, err
	}
	if len(cq.regex) > 0 {
		n := 0
		rows, err := c.db.QueryContext(ctx, `SELECT s.url FROM `+cq.from+cq.whereSQL(), cq.args...)
		if err != nil {
			return 0, c.queryError(q, err)
		}
		defer rows.Close()
		for rows.Next() {
			var u string
			if err := rows.Scan(&u); err != nil {
				return 0, fmt.Errorf("query catalog %s: %w", c.path, err)
			}
			if cq.match(u) {
				n++
			}
		}
		if err := rows.Err(); err != nil {
			return 0, c.queryError(q, err)
		}
		if q.Limit > 0 {
			n = min(n, q.Limit)
		}
		return n, nil
	}
	var n int
	from := cq.from
	if q.Search != "" && len(cq.where) == 1 {
		from = "search" // the match is the only filter: no join needed
	}
	if err := c.db.QueryRowContext(ctx, `SELECT count(*) FROM `+from+cq.whereSQL(), cq.args...).Scan(&n); err != nil {
		return 0, c.queryError(q, err)
	}
	if q.Limit > 0 {
		n = min(n, q.Limit)
	}
	return n, nil
}
