package catalog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"
	"golang.org/x/sync/semaphore"

	"github.com/folio-archive/folio/archive"
)

// ReindexOptions controls Reindex.
type ReindexOptions struct {
	Full    bool // read every folder again, changed or not
	Workers int  // folders read in parallel; 0 means GOMAXPROCS
	Printer archive.Printer
	// OnProblem is called, from one goroutine at a time, for every folder
	// or file that could not be read or was read only in part. When nil,
	// problems are reported through Printer.Warnf.
	OnProblem func(Problem)
	// Now is the clock for the catalog's built/updated times; nil means
	// time.Now.
	Now func() time.Time
	// BatchSize is the number of snapshot folders written per
	// transaction; 0 means 2000.
	BatchSize int
	// NoText leaves the text of captures out of the search index this
	// time: titles, URLs, tags and notes are still indexed, and the next
	// reindex without NoText reads the text it skipped.
	NoText bool
	// Scope, when not nil, limits the reindex to these folders (slash
	// paths relative to the data dir): snapshot folders, and folders
	// above them whose whole subtree is looked at. Rows of folders in
	// the scope that are gone are dropped; the rest of the catalog is
	// left as it is. A watcher that saw which folders changed passes
	// them here. An empty, non-nil Scope looks at nothing.
	Scope []string
	// Polled says the Scope's folders are looked at on a timer, not
	// because changes were seen there (a watcher out of inotify watches
	// looks at thousands each second): their captured text is looked at
	// only when their index changed, as a reindex of the whole tree does,
	// not as closely as the few folders a watcher names.
	Polled bool
}

// ReindexStats counts what Reindex did.
type ReindexStats struct {
	Scanned    int // snapshot folders found in the tree
	Added      int // new in the catalog
	Updated    int // read again because their index changed
	Removed    int // catalog rows whose folder is gone
	Unchanged  int // index unchanged, not read
	TextRead   int // folders whose capture text was read for search
	Problems   int // problems reported
	Unreadable int // folders found but not cataloged (a subset of Problems)
}

// Reindex brings the catalog in line with the tree. By default it is
// incremental: a folder is read only when it is new or the size, mtime or
// inode of its index file changed, and rows of vanished folders are
// dropped. The caller must hold the collection's writer lock.
func (c *Catalog) Reindex(ctx context.Context, opts ReindexOptions) (ReindexStats, error) {
	var stats ReindexStats
	if opts.Workers <= 0 {
		opts.Workers = runtime.GOMAXPROCS(0)
	}
	if opts.Printer == nil {
		opts.Printer = archive.Discard
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = 2000
	}
	prevGen, err := c.generation(ctx)
	if err != nil {
		return stats, err
	}
	gen := prevGen + 1 // of every row this reindex writes or drops
	report := opts.OnProblem
	if report == nil {
		report = func(p Problem) { opts.Printer.Warnf("%s", p.Error()) }
	}
	problem := func(p Problem) {
		stats.Problems++
		report(p)
	}

	// A full reindex reads every folder again but replaces rows in
	// place, batch by batch, so readers never see an emptied catalog.
	w := &walker{root: c.coll.Dir, workers: opts.Workers, force: opts.Full, text: !opts.NoText,
		trustBefore: opts.Now().Add(-ListingAge).UnixNano()}
	if opts.Scope != nil {
		w.scope = cleanScope(opts.Scope) // nil when it holds the whole tree
	}
	w.closely = w.scope != nil && !opts.Polled
	if w.skip, err = c.coll.HiddenDirs(); err != nil {
		return stats, err
	}
	scoped := w.scope != nil
	fresh := false // the catalog was empty
	if scoped {
		if w.known, err = c.loadScoped(ctx, w.scope); err != nil {
			return stats, err
		}
	} else {
		done, err := c.openWalk(ctx, w)
		if err != nil {
			return stats, err
		}
		defer done()
		fresh = w.rows.done && w.rows.n == 0 && len(w.bad) == 0
		w.empty = fresh
	}
	folders := make(chan folder, 256)
	depth := rowQueue
	if scoped {
		depth = scopedRowQueue // a few folders: no commit to wait through
	}
	rows := make(chan entryRow, depth)
	queued := semaphore.NewWeighted(rowQueueBytes)

	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		defer close(folders)
		return w.walk(gctx, folders)
	})
	g.Go(func() error {
		defer close(rows)
		// A few readers for the whole walk rather than a goroutine per
		// folder, whose start and stack growth cost 0.8 s of CPU at 100k.
		readers, rctx := errgroup.WithContext(gctx)
		for range opts.Workers {
			readers.Go(func() error {
				for f := range folders {
					if err := rctx.Err(); err != nil {
						return err
					}
					r := readFolder(c.coll.Dir, f, false)
					if err := queued.Acquire(rctx, r.weight()); err != nil {
						return err
					}
					select {
					case rows <- r:
					case <-rctx.Done():
						return rctx.Err()
					}
				}
				return nil
			})
		}
		err := readers.Wait()
		// Drain so the walker never blocks on a full channel.
		for range folders {
		}
		return err
	})
	g.Go(func() error {
		return c.write(gctx, rows, gen, opts, &stats, problem, func(done int) {
			opts.Printer.Progress("reindex", w.scanned.Load(), 0)
		}, func(r *entryRow) { queued.Release(r.weight()) })
	})
	err = g.Wait()
	if err == nil {
		err = ctx.Err()
	}
	stats.Scanned = int(w.scanned.Load())
	stats.Unchanged = int(w.unchanged.Load())
	stats.Unreadable += int(w.unreadable.Load())
	sort.Slice(w.problems, func(i, j int) bool { return w.problems[i].Path < w.problems[j].Path })
	for _, p := range w.problems {
		problem(p)
	}
	if err != nil {
		return stats, fmt.Errorf("reindex %s: %w", c.coll.Dir, err)
	}

	// Rows whose folder the walk did not see are gone, unless they lie
	// below a folder the walk could not list.
	var gone []int64
	var goneDirs, goneBad []string
	for _, r := range w.gone {
		switch {
		case w.hidden(r.dir):
		case r.rowid != 0:
			gone = append(gone, r.rowid)
			goneDirs = append(goneDirs, r.dir)
		default:
			goneBad = append(goneBad, r.dir)
		}
	}
	if err := c.deleteRows(ctx, gone, goneDirs, goneBad, gen, opts.BatchSize); err != nil {
		return stats, err
	}
	if !scoped {
		if err := c.saveListings(ctx, w, opts.BatchSize); err != nil {
			return stats, err
		}
	}
	stats.Removed += len(gone)

	now := opts.Now().UTC().Format(time.RFC3339Nano)
	meta := map[string]string{}
	if !scoped {
		meta[metaUpdated] = now // a scoped reindex has not seen the whole tree
	}
	if stats.Added+stats.Updated+stats.Removed > 0 {
		meta[metaGen] = strconv.FormatInt(gen, 10)
	}
	var clear []string
	if opts.Full || fresh {
		// A new epoch: the change feed's older tombstones mean nothing.
		meta[metaBuilt] = now
		clear = append(clear, `DELETE FROM removed WHERE gen < `+strconv.FormatInt(gen, 10))
	}
	if err := c.setMeta(ctx, meta, clear...); err != nil {
		return stats, err
	}
	opts.Printer.Progress("reindex", int64(stats.Scanned), int64(stats.Scanned))
	return stats, nil
}

// loadKnown reads, in one query, what the catalog knows of each folder.
func (c *Catalog) loadKnown(ctx context.Context) (map[string]*known, error) {
	var n int
	if err := c.db.QueryRowContext(ctx, `SELECT count(*) FROM snapshots`).Scan(&n); err != nil {
		return nil, fmt.Errorf("read catalog %s: %w", c.path, err)
	}
	m := make(map[string]*known, n)
	rows, err := c.db.QueryContext(ctx, `SELECT rowid, dir, stamp, index_file, text_stamp FROM snapshots INDEXED BY snapshots_known`)
	if err != nil {
		return nil, fmt.Errorf("read catalog %s: %w", c.path, err)
	}
	defer rows.Close()
	for rows.Next() {
		var dir string
		k := &known{}
		if err := rows.Scan(&k.rowid, &dir, &k.stamp, &k.indexFile, &k.textStamp); err != nil {
			return nil, fmt.Errorf("read catalog %s: %w", c.path, err)
		}
		m[dir] = k
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read catalog %s: %w", c.path, err)
	}
	rows.Close()
	bad, err := c.loadBad(ctx)
	if err != nil {
		return nil, err
	}
	maps.Copy(m, bad)
	return m, nil
}

// loadBad reads the folders that could not be cataloged, with their
// problems.
func (c *Catalog) loadBad(ctx context.Context) (map[string]*known, error) {
	m := map[string]*known{}
	rows, err := c.db.QueryContext(ctx, `SELECT dir, stamp, problems FROM problems`)
	if err != nil {
		return nil, fmt.Errorf("read catalog %s: %w", c.path, err)
	}
	defer rows.Close()
	for rows.Next() {
		var dir, text string
		k := &known{}
		if err := rows.Scan(&dir, &k.stamp, &text); err != nil {
			return nil, fmt.Errorf("read catalog %s: %w", c.path, err)
		}
		k.problems = decodeProblems(text)
		m[dir] = k
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read catalog %s: %w", c.path, err)
	}
	return m, nil
}

// encodeProblems stores problems one per line as path, tab, reason.
func encodeProblems(ps []Problem) string {
	var b strings.Builder
	for _, p := range ps {
		b.WriteString(strings.ReplaceAll(p.Path, "\n", " "))
		b.WriteByte('\t')
		b.WriteString(strings.ReplaceAll(p.Err.Error(), "\n", " "))
		b.WriteByte('\n')
	}
	return b.String()
}

func decodeProblems(s string) []Problem {
	var out []Problem
	for _, line := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
		if p, reason, ok := strings.Cut(line, "\t"); ok {
			out = append(out, Problem{Path: p, Err: errors.New(reason)})
		}
	}
	return out
}

const (
	insertSnapshot = `INSERT INTO snapshots (rowid, dir, layout, user, index_file, index_size,
	index_mtime, stamp, id, crawl_id, url, title, tags, timestamp, bookmarked_at, created_at,
	sort_time, depth, status, state, fs_version, archive_size, notes, schema_version, num_results,
	num_outputs, num_failures, record, text_stamp, gen) VALUES `
	snapshotRow = `(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`
	insertTag   = `INSERT OR IGNORE INTO tags (name, snap) VALUES `
	tagRow      = `(?,?)`
	// Tags are inserted rowsPerInsert rows per statement: fewer
	// statements to run. Snapshot rows are not: a multi-row INSERT that
	// may abort (a plain INSERT into a table with a key) runs in a
	// statement journal, and opening one makes both FTS5 tables write
	// their pending terms out as a new segment, which later merges read
	// and write again. At 100k snapshots, inserting them 32 at a time
	// cost 1.4 s of CPU in those flushes and 1 s in the merges.
	rowsPerInsert = 32
)

func multiRow(prefix, row string, n int) string {
	return prefix + strings.TrimSuffix(strings.Repeat(row+",", n), ",")
}

// writer holds the prepared statements of one transaction and the rows
// waiting for a multi-row INSERT.
type writer struct {
	tx                     *sql.Tx
	insSnap, insTag        *sql.Stmt // one row
	insTagN                *sql.Stmt // rowsPerInsert rows
	delSnap, delTag        *sql.Stmt
	insProblem, delProblem *sql.Stmt
	insRemoved             *sql.Stmt
	// The search index: a row inserted, or for a folder whose text was
	// not read again, its other columns updated; deleted with the row.
	insSearch, updSearch, delSearch *sql.Stmt
	// The metadata's own index (metasearch), kept with it.
	insMeta, updMeta, delMeta *sql.Stmt

	gen     int64 // of the rows this transaction writes
	tagArgs []any
}

func (c *Catalog) begin(ctx context.Context, gen int64) (*writer, error) {
	tx, err := c.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	w := &writer{tx: tx, gen: gen}
	for _, p := range []struct {
		stmt **sql.Stmt
		sql  string
	}{
		{&w.insSnap, insertSnapshot + snapshotRow},
		{&w.insTag, insertTag + tagRow},
		{&w.insTagN, multiRow(insertTag, tagRow, rowsPerInsert)},
		{&w.delSnap, `DELETE FROM snapshots WHERE rowid = ?`},
		{&w.delTag, `DELETE FROM tags WHERE snap = ?`},
		{&w.insProblem, `INSERT OR REPLACE INTO problems (dir, stamp, problems) VALUES (?,?,?)`},
		{&w.delProblem, `DELETE FROM problems WHERE dir = ?`},
		{&w.insRemoved, `INSERT OR REPLACE INTO removed (dir, gen) VALUES (?,?)`},
		{&w.insSearch, `INSERT INTO search (rowid, title, url, tags, notes, body) VALUES (?,?,?,?,?,?)`},
		{&w.updSearch, `UPDATE search SET title = ?, url = ?, tags = ?, notes = ? WHERE rowid = ?`},
		{&w.delSearch, `DELETE FROM search WHERE rowid = ?`},
		{&w.insMeta, `INSERT INTO metasearch (rowid, title, url, tags, notes) VALUES (?,?,?,?,?)`},
		{&w.updMeta, `UPDATE metasearch SET title = ?, url = ?, tags = ?, notes = ? WHERE rowid = ?`},
		{&w.delMeta, `DELETE FROM metasearch WHERE rowid = ?`},
	} {
		if *p.stmt, err = tx.PrepareContext(ctx, p.sql); err != nil {
			tx.Rollback()
			return nil, err
		}
	}
	return w, nil
}

func (w *writer) delete(ctx context.Context, rowid int64) error {
	for _, s := range []*sql.Stmt{w.delSnap, w.delTag} {
		if _, err := s.ExecContext(ctx, rowid); err != nil {
			return err
		}
	}
	return nil
}

// drop deletes the row of dir for good, leaving a tombstone for the
// change feed (a row that is written again is not dropped: it comes back
// with the new generation).
func (w *writer) drop(ctx context.Context, rowid int64, dir string) error {
	if err := w.delete(ctx, rowid); err != nil {
		return err
	}
	for _, s := range []*sql.Stmt{w.delSearch, w.delMeta} {
		if _, err := s.ExecContext(ctx, rowid); err != nil {
			return err
		}
	}
	_, err := w.insRemoved.ExecContext(ctx, dir, w.gen)
	return err
}

// insert writes r with the given rowid, replacing the row it had
// (deleted first by the caller) when r.known has one; its tags are queued
// for a multi-row insert.
func (w *writer) insert(ctx context.Context, r *entryRow, rowid int64) error {
	s := &r.snap
	tags := archive.TagString(s.Tags)
	replaced := r.known != nil && r.known.rowid != 0
	_, err := w.insSnap.ExecContext(ctx, rowid, r.dir, r.layout, r.user, r.indexFile, r.size,
		r.mtime, r.stamp, s.ID, s.CrawlID, s.URL, s.Title, tags, s.Timestamp,
		micros(s.BookmarkedAt), micros(s.CreatedAt), r.sortTime, s.Depth, s.Status, r.state, s.FSVersion,
		s.ArchiveSize, s.Notes, s.SchemaVersion, r.nresults, r.tally.Outputs(), r.tally.Failures(), r.record,
		r.textStamp, w.gen)
	if err != nil {
		return err
	}
	switch {
	case replaced && !r.readText:
		_, err = w.updSearch.ExecContext(ctx, s.Title, s.URL, tags, s.Notes, rowid)
	case replaced:
		if _, err = w.delSearch.ExecContext(ctx, rowid); err == nil {
			_, err = w.insSearch.ExecContext(ctx, rowid, s.Title, s.URL, tags, s.Notes, r.text)
		}
	default:
		_, err = w.insSearch.ExecContext(ctx, rowid, s.Title, s.URL, tags, s.Notes, r.text)
	}
	if err == nil && replaced {
		_, err = w.updMeta.ExecContext(ctx, s.Title, s.URL, tags, s.Notes, rowid)
	} else if err == nil {
		_, err = w.insMeta.ExecContext(ctx, rowid, s.Title, s.URL, tags, s.Notes)
	}
	if err != nil {
		return err
	}
	for _, t := range s.Tags {
		w.tagArgs = append(w.tagArgs, t, rowid)
	}
	return w.flush(ctx, false)
}

// flush runs the queued tag inserts: full multi-row statements, and with
// all also the rest one row at a time.
func (w *writer) flush(ctx context.Context, all bool) error {
	const cols = 2
	args := w.tagArgs
	for len(args) >= cols*rowsPerInsert {
		if _, err := w.insTagN.ExecContext(ctx, args[:cols*rowsPerInsert]...); err != nil {
			return err
		}
		args = args[cols*rowsPerInsert:]
	}
	for all && len(args) > 0 {
		if _, err := w.insTag.ExecContext(ctx, args[:cols]...); err != nil {
			return err
		}
		args = args[cols:]
	}
	w.tagArgs = append(w.tagArgs[:0], args...)
	return nil
}

// Read folders wait for the writer in a queue of up to rowQueue rows
// holding up to rowQueueBytes (entryRow.weight). It is deep enough that
// the readers go on while the writer commits a batch: a commit at 100k
// snapshots takes about 35 ms, in which two readers read some 900
// folders, and with 64 places they stopped after 2 ms and left a core
// idle (reindex into an empty catalog: 0.85x the time with 1024). The
// bytes bound it when rows carry capture text, up to MaxText each. A
// scoped reindex (a watcher's, after each change) keeps a short queue:
// 1024 rows are 580 KB to allocate and clear every time.
const (
	rowQueue       = 1024
	scopedRowQueue = 64
	rowQueueBytes  = 32 << 20
)

// weight is what r counts against rowQueueBytes: its largest parts and
// a share for the rest, at most the whole budget.
func (r *entryRow) weight() int64 {
	return min(int64(len(r.text)+len(r.record)+len(r.results))+1024, rowQueueBytes)
}

// write is the one goroutine that writes: it takes read folders from rows
// and commits them in batches of opts.BatchSize folders per transaction,
// calling written with each row it takes out of the queue.
func (c *Catalog) write(ctx context.Context, rows <-chan entryRow, gen int64, opts ReindexOptions, stats *ReindexStats, problem func(Problem), progress func(int), written func(*entryRow)) (err error) {
	var (
		w *writer
		n int
	)
	defer func() {
		if w != nil {
			w.tx.Rollback()
		}
		if err != nil {
			err = fmt.Errorf("write catalog %s: %w", c.path, err)
		}
	}()
	var next int64 // the rowid of the next new row
	if err := c.db.QueryRowContext(ctx, `SELECT coalesce(max(rowid), 0) + 1 FROM snapshots`).Scan(&next); err != nil {
		return err
	}
	commit := func() error {
		if w == nil {
			return nil
		}
		if err := w.flush(ctx, true); err != nil {
			return err
		}
		err := w.tx.Commit()
		w, n = nil, 0
		return err
	}
	for r := range rows {
		written(&r) // out of the queue: the readers may fill its place
		for _, p := range r.problems {
			problem(p)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if w == nil {
			if w, err = c.begin(ctx, gen); err != nil {
				return err
			}
		}
		if k := r.known; k != nil {
			switch {
			case k.rowid != 0 && !r.ok:
				err = w.drop(ctx, k.rowid, r.dir)
			case k.rowid != 0:
				err = w.delete(ctx, k.rowid) // and written again below
			default:
				_, err = w.delProblem.ExecContext(ctx, r.dir)
			}
			if err != nil {
				return err
			}
		}
		switch {
		case !r.ok:
			stats.Unreadable++
			if r.known != nil && r.known.rowid != 0 {
				stats.Removed++
			}
			if _, err := w.insProblem.ExecContext(ctx, r.dir, r.stamp, encodeProblems(r.problems)); err != nil {
				return err
			}
		default:
			rowid := next
			if r.known != nil && r.known.rowid != 0 {
				rowid = r.known.rowid // deleted above, in this transaction
			} else {
				next++
			}
			if err := w.insert(ctx, &r, rowid); err != nil {
				return err
			}
			if r.readText {
				stats.TextRead++
			}
			if r.known != nil && r.known.rowid != 0 {
				stats.Updated++
			} else {
				stats.Added++
			}
		}
		if n++; n >= opts.BatchSize {
			if err := commit(); err != nil {
				return err
			}
			progress(stats.Added + stats.Updated)
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return commit()
}

// deleteRows drops the rows ids of the folders dirs (tombstones at
// generation gen) and the problems of the folders bad.
func (c *Catalog) deleteRows(ctx context.Context, ids []int64, dirs, bad []string, gen int64, batch int) error {
	if len(bad) > 0 {
		w, err := c.begin(ctx, gen)
		if err != nil {
			return fmt.Errorf("write catalog %s: %w", c.path, err)
		}
		for _, dir := range bad {
			if _, err := w.delProblem.ExecContext(ctx, dir); err != nil {
				w.tx.Rollback()
				return fmt.Errorf("write catalog %s: %w", c.path, err)
			}
		}
		if err := w.tx.Commit(); err != nil {
			return fmt.Errorf("write catalog %s: %w", c.path, err)
		}
	}
	for len(ids) > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := min(len(ids), batch)
		w, err := c.begin(ctx, gen)
		if err != nil {
			return fmt.Errorf("write catalog %s: %w", c.path, err)
		}
		for i, id := range ids[:n] {
			if err := w.drop(ctx, id, dirs[i]); err != nil {
				w.tx.Rollback()
				return fmt.Errorf("write catalog %s: %w", c.path, err)
			}
		}
		if err := w.tx.Commit(); err != nil {
			return fmt.Errorf("write catalog %s: %w", c.path, err)
		}
		ids, dirs = ids[n:], dirs[n:]
	}
	return nil
}

// setMeta sets meta keys, running the statements also in the same
// transaction.
func (c *Catalog) setMeta(ctx context.Context, kv map[string]string, also ...string) error {
	tx, err := c.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("write catalog %s: %w", c.path, err)
	}
	defer tx.Rollback()
	for _, stmt := range also {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("write catalog %s: %w", c.path, err)
		}
	}
	for k, v := range kv {
		if _, err := tx.ExecContext(ctx, `INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`, k, v); err != nil {
			return fmt.Errorf("write catalog %s: %w", c.path, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("write catalog %s: %w", c.path, err)
	}
	return nil
}
