// Package catalog is folio's rebuildable index of a collection: a SQLite
// file at .folio/catalog.sqlite3 that mirrors the snapshot folders of the
// tree so that listing, filtering and counting never walk payload files.
//
// The tree is the truth. The catalog is a cache: its schema version lives
// in PRAGMA user_version, and a file with another version, or one that
// SQLite cannot read, is deleted and rebuilt from the tree, never migrated.
//
// Tables: snapshots (one row per snapshot folder: the columns queries
// filter and sort on, the Snapshot record re-encoded in its canonical
// shape for streaming, the stat of the index file for incremental
// reindexes, its state, and counts of its ArchiveResult records), search (the FTS5
// index of titles, URLs, tags, notes and capture text), tags (name,
// snapshot), problems (folders that could not be cataloged, with the
// stat they had), folders (listings of date folders), removed
// (folders whose rows were dropped, by generation: the change feed's
// tombstones) and meta (built and updated times, the generation).
// ArchiveResult records themselves are not copied: they are most of the bytes of every
// index.jsonl, and Each reads them from the tree when asked.
package catalog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"strconv"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver (pure Go, no cgo)

	"github.com/folio-archive/folio/archive"
)

// schemaVersion is stored in PRAGMA user_version. Bump it whenever the
// schema or the meaning of a column changes: every older catalog is then
// rebuilt from the tree.
const schemaVersion = 8

// Layouts of snapshot folders.
const (
	LayoutCurrent = "current" // archive/users/<user>/snapshots/<date>/<domain>/<id>
	LayoutLegacy  = "legacy"  // archive/<timestamp>
)

// busyTimeout is how long a connection waits for another process's
// transaction before giving up. Writers keep transactions short, so this
// is only reached when something is stuck.
const busyTimeout = 10 * time.Second

// searchColumns are the columns and tokenizer of the search table, also
// those of the small table snippets are made in (see snippets).
const searchColumns = `title, url, tags, notes, body,
		tokenize = 'unicode61 remove_diacritics 2'`

var schema = []string{
	`CREATE TABLE meta (
		key   TEXT PRIMARY KEY,
		value TEXT NOT NULL
	) WITHOUT ROWID`,
	`CREATE TABLE snapshots (
		rowid          INTEGER PRIMARY KEY,
		dir            TEXT NOT NULL,
		layout         TEXT NOT NULL,
		user           TEXT NOT NULL,
		index_file     TEXT NOT NULL,
		index_size     INTEGER NOT NULL,
		index_mtime    INTEGER NOT NULL,
		stamp          TEXT NOT NULL,
		id             TEXT NOT NULL,
		crawl_id       TEXT NOT NULL,
		url            TEXT NOT NULL,
		title          TEXT NOT NULL,
		tags           TEXT NOT NULL,
		timestamp      TEXT NOT NULL,
		bookmarked_at  INTEGER,
		created_at     INTEGER,
		sort_time      INTEGER NOT NULL,
		depth          INTEGER NOT NULL,
		status         TEXT NOT NULL,
		-- The snapshot's state (archive.Tally.State): its status read
		-- with its results, archived, partial or failed once finished.
		state          TEXT NOT NULL,
		fs_version     TEXT NOT NULL,
		archive_size   INTEGER NOT NULL,
		notes          TEXT NOT NULL,
		schema_version TEXT NOT NULL,
		-- ArchiveResult records are counted here and read from the
		-- index file when asked for (Query.WithResults): storing them
		-- would make the catalog as large as all index files together.
		num_results    INTEGER NOT NULL,
		num_outputs    INTEGER NOT NULL,
		num_failures   INTEGER NOT NULL,
		record         TEXT NOT NULL,
		-- The stat of the text files search indexes (textStamp) when they
		-- were last looked at, so that a reindex reads them again only
		-- when they change; "" when they were not (reindex --no-text).
		text_stamp     TEXT NOT NULL,
		-- The generation of the reindex that last wrote the row: the
		-- change feed (Changed) reads the rows of later generations.
		gen            INTEGER NOT NULL
	)`,
	`CREATE INDEX snapshots_time ON snapshots (sort_time, dir)`,
	`CREATE INDEX snapshots_state ON snapshots (state)`,
	// Full-text search: one row per snapshot, keyed by the snapshot's
	// rowid. A plain FTS5 table keeps its own copy of the text in its
	// shadow tables, out of snapshots, so listing never pages through
	// capture text; unlike a contentless table it can make snippets, and
	// unlike an external-content table a row is replaced or dropped by
	// rowid alone, without handing back the old text. unicode61 with
	// remove_diacritics 2 folds "München" and "munchen" together.
	`CREATE VIRTUAL TABLE search USING fts5(` + searchColumns + `)`,
	// The same snapshots' titles, URLs, tags and notes alone, for the
	// first tier of a ranked search (rankBy): its doclists and sizes are
	// a tenth of search's, which holds the capture text, so ranking the
	// snapshots a common word names in their titles reads a tenth of the
	// pages (a ranked search of 100k snapshots: 33-54 ms instead of
	// 70-130 ms).
	`CREATE VIRTUAL TABLE metasearch USING fts5(title, url, tags, notes,
		tokenize = 'unicode61 remove_diacritics 2')`,
	`CREATE UNIQUE INDEX snapshots_dir ON snapshots (dir)`,
	// What a walk compares with the tree (read in path order by
	// openWalk's cursor), in an index of its own: reading it pages
	// through about a tenth of the table, whose rows hold whole records
	// (0.47 s of CPU at 100k snapshots before).
	`CREATE INDEX snapshots_known ON snapshots (dir, stamp, index_file, text_stamp)`,
	`CREATE INDEX snapshots_gen ON snapshots (gen)`,
	// The listings of date folders and their domain folders, so that a
	// reindex lists only the folders whose stamp changed (see listing in
	// walk.go).
	`CREATE TABLE folders (
		dir     TEXT PRIMARY KEY,
		stamp   TEXT NOT NULL,
		domains BLOB NOT NULL
	) WITHOUT ROWID`,
	// Tombstones of the change feed: a folder whose row a reindex
	// dropped, with that reindex's generation.
	`CREATE TABLE removed (
		dir TEXT PRIMARY KEY,
		gen INTEGER NOT NULL
	) WITHOUT ROWID`,
	`CREATE TABLE tags (
		name TEXT NOT NULL,
		snap INTEGER NOT NULL,
		PRIMARY KEY (name, snap)
	) WITHOUT ROWID`,
	`CREATE INDEX tags_snap ON tags (snap)`,
	// Folders that could not be cataloged, so that an unchanged bad
	// folder is reported again without being read again.
	`CREATE TABLE problems (
		dir      TEXT PRIMARY KEY,
		stamp    TEXT NOT NULL,
		problems TEXT NOT NULL
	) WITHOUT ROWID`,
}

// Catalog is an open catalog of one collection. It is safe for concurrent
// use; Reindex must be called by a holder of the collection's writer lock.
type Catalog struct {
	coll *archive.Collection
	db   *sql.DB
	path string

	// Rebuilt is set when Open found no usable catalog (missing, another
	// schema version, unreadable) and created an empty one.
	Rebuilt bool
}

// Open opens the collection's catalog, creating it when it does not exist.
// A catalog with another schema version or one SQLite cannot read is
// deleted together with its -wal and -shm files and created empty; the
// caller learns that from Catalog.Rebuilt and an empty Stats.
func Open(ctx context.Context, c *archive.Collection) (*Catalog, error) {
	return openCatalog(ctx, c, false)
}

// OpenMapped is Open for a process that runs a search and exits: its
// connections read the file through a memory map (PRAGMA mmap_size)
// rather than copying its pages into page caches of their own. A fresh
// process fills those caches from nothing, and new memory costs a page
// fault each 4 KiB (about 12 µs on a virtual machine whose host backs
// the memory on first touch) where mapping a page the kernel caches
// already costs a fifth of that: a search of 100k snapshots for two words
// took 0.86× the time. Long work keeps Open, so that its resident memory
// does not count the pages of the file it went through.
func OpenMapped(ctx context.Context, c *archive.Collection) (*Catalog, error) {
	return openCatalog(ctx, c, true)
}

func openCatalog(ctx context.Context, c *archive.Collection, mapped bool) (*Catalog, error) {
	path := c.Path(archive.CatalogFile)
	if err := os.MkdirAll(c.Path(archive.StateDir), 0o755); err != nil {
		return nil, fmt.Errorf("open catalog: %w", err)
	}
	cat, err := open(ctx, c, path, mapped)
	if err == nil {
		return cat, nil
	}
	var bad unusable
	if !errors.As(err, &bad) {
		return nil, fmt.Errorf("open catalog %s: %w", path, err)
	}
	// Unusable: delete and start over. The catalog holds nothing that is
	// not also in the tree.
	if rmErr := removeCatalog(path); rmErr != nil {
		return nil, fmt.Errorf("open catalog %s: %v; remove it: %w", path, err, rmErr)
	}
	cat, err2 := open(ctx, c, path, mapped)
	if err2 != nil {
		return nil, fmt.Errorf("open catalog %s: %w", path, err2)
	}
	return cat, nil
}

func removeCatalog(path string) error {
	for _, p := range []string{path, path + "-wal", path + "-shm", path + "-journal"} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

// busyPragma sets busyTimeout on each connection.
var busyPragma = "busy_timeout(" + strconv.FormatInt(busyTimeout.Milliseconds(), 10) + ")"

// pageSize is the page size of a catalog folio creates, four times
// SQLite's default. A catalog is written in bulk (a reindex into an empty
// one) and read in long runs (list, the export's stream, a walk's stored
// stamps), and 16 KiB pages make a quarter of the WAL frames to write and
// checkpoint and B-trees a level shallower: at 100k snapshots a reindex
// into an empty catalog took 0.89x the time (CPU 0.93x), with capture
// text 0.86x, and list --jsonl 0.87x, while a search and a reindex after
// one change took the same. (64 KiB pages were faster still in bulk but
// write a whole 64 KiB page for every row a watcher changes.) SQLite
// cannot change the page size of a file in WAL mode, so a catalog made
// before keeps 4 KiB pages until it is rebuilt.
const pageSize = 16384

// create makes the catalog file path, empty, with pageSize pages and in
// WAL mode. The driver runs a DSN's pragmas in lexical order, so with
// dsn's journal_mode would write the file's header, at the default page
// size, before page_size ran. A process creating the file at the same
// time does the same; whichever comes second finds the header written and
// changes nothing.
func create(ctx context.Context, path string) error {
	v := url.Values{}
	v.Add("_pragma", busyPragma)
	v.Add("_pragma", "page_size("+strconv.Itoa(pageSize)+")")
	db, err := sql.Open("sqlite", fileDSN(path, v))
	if err != nil {
		return fmt.Errorf("create: %w", err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, `PRAGMA journal_mode = WAL`); err != nil {
		return fmt.Errorf("create: %w", err)
	}
	return db.Close()
}

func dsn(path string, mapped bool) string {
	v := url.Values{}
	v.Add("_pragma", busyPragma)
	v.Add("_pragma", "journal_mode(WAL)")
	v.Add("_pragma", "synchronous(NORMAL)")
	v.Add("_pragma", "cache_size(-16384)")
	if mapped {
		v.Add("_pragma", "mmap_size(1073741824)")
	}
	// A walk reads the catalog while a reindex writes it, so the WAL
	// cannot be checkpointed until the walk ends and grows with what the
	// reindex wrote; once checkpointed it is cut back to this size rather
	// than kept at its largest while a watcher holds the catalog open.
	v.Add("_pragma", "journal_size_limit(67108864)")
	v.Add("_txlock", "immediate")
	return fileDSN(path, v)
}

// fileDSN is the driver's name for the file path opened with params.
func fileDSN(path string, params url.Values) string {
	return "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + params.Encode()
}

// unusable marks a catalog file that must be deleted and rebuilt: another
// schema version, or a file that fails PRAGMA quick_check.
type unusable struct{ err error }

func (u unusable) Error() string { return u.err.Error() }
func (u unusable) Unwrap() error { return u.err }

// open opens the catalog file path, creating it (Rebuilt) when there is
// none.
func open(ctx context.Context, c *archive.Collection, path string, mapped bool) (*Catalog, error) {
	_, err := os.Lstat(path)
	created := errors.Is(err, fs.ErrNotExist)
	if created {
		if err := create(ctx, path); err != nil {
			return nil, err
		}
	}
	db, err := sql.Open("sqlite", dsn(path, mapped))
	if err != nil {
		return nil, err
	}
	cat := &Catalog{coll: c, db: db, path: path, Rebuilt: created}
	if err := cat.prepare(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return cat, nil
}

// prepare checks the schema version and creates the schema in an empty
// file. Any error means the file is unusable.
func (c *Catalog) prepare(ctx context.Context) error {
	var v int
	if err := c.db.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v); err != nil {
		return c.checkErr(ctx, err)
	}
	if v == schemaVersion {
		return nil
	}
	var tables int
	if err := c.db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema`).Scan(&tables); err != nil {
		return c.checkErr(ctx, err)
	}
	if v != 0 || tables != 0 {
		return unusable{fmt.Errorf("catalog has schema version %d, want %d", v, schemaVersion)}
	}
	tx, err := c.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	// Another process may have created the schema meanwhile.
	if err := tx.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v); err != nil {
		return err
	}
	if v == schemaVersion {
		return nil
	}
	for _, stmt := range schema {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("create catalog schema: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, `PRAGMA user_version = `+strconv.Itoa(schemaVersion)); err != nil {
		return err
	}
	return tx.Commit()
}

// checkErr runs PRAGMA quick_check after a failure to tell a damaged file
// (unusable) from a passing problem such as a cancelled context.
func (c *Catalog) checkErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return err
	}
	var res string
	if qerr := c.db.QueryRowContext(ctx, `PRAGMA quick_check`).Scan(&res); qerr != nil {
		return unusable{fmt.Errorf("%w (quick_check: %v)", err, qerr)}
	}
	if res != "ok" {
		return unusable{fmt.Errorf("%w (quick_check: %s)", err, res)}
	}
	return err
}

// Check runs PRAGMA quick_check on the catalog.
func (c *Catalog) Check(ctx context.Context) error {
	rows, err := c.db.QueryContext(ctx, `PRAGMA quick_check`)
	if err != nil {
		return fmt.Errorf("check catalog %s: %w", c.path, err)
	}
	defer rows.Close()
	var problems []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return fmt.Errorf("check catalog %s: %w", c.path, err)
		}
		if s != "ok" {
			problems = append(problems, s)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("check catalog %s: %w", c.path, err)
	}
	if len(problems) > 0 {
		return fmt.Errorf("check catalog %s: %s", c.path, problems[0])
	}
	return nil
}

// Path returns the catalog file's path.
func (c *Catalog) Path() string { return c.path }

// LimitConns lets at most n connections to the catalog be open at once
// from now on; those above it close as they are released, and with them
// their page caches (up to 16 MiB each). A reindex needs three at once
// (its writer and the walk's two cursors); a command that then only
// reads, as an export does, keeps its memory down with two.
func (c *Catalog) LimitConns(n int) { c.db.SetMaxOpenConns(n) }

// Close closes the catalog.
func (c *Catalog) Close() error {
	if err := c.db.Close(); err != nil {
		return fmt.Errorf("close catalog %s: %w", c.path, err)
	}
	return nil
}

// Meta keys.
const (
	metaBuilt   = "built_at"
	metaUpdated = "updated_at"
	metaGen     = "generation"
)

func (c *Catalog) metaString(ctx context.Context, key string) (string, error) {
	var s string
	err := c.db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = ?`, key).Scan(&s)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read catalog %s: %w", c.path, err)
	}
	return s, nil
}

func (c *Catalog) meta(ctx context.Context, key string) (time.Time, error) {
	s, err := c.metaString(ctx, key)
	if err != nil || s == "" {
		return time.Time{}, err
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, nil
	}
	return t, nil
}

// micros stores a time as microseconds since the epoch, NULL for zero.
func micros(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixMicro()
}

func fromMicros(v sql.NullInt64) time.Time {
	if !v.Valid {
		return time.Time{}
	}
	return time.UnixMicro(v.Int64).UTC()
}
