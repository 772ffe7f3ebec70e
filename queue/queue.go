// Package queue is the capture job queue of `folio worker`: one River
// job per queued snapshot, in SQLite beside the catalog (one machine, no
// server) or in PostgreSQL (many machines that mount the data directory).
//
// The queue is derived state, like the catalog: a snapshot's index.jsonl
// status (queued) is the truth. A lost queue loses nothing: Enqueue of
// every unfinished snapshot of the tree builds it again, and a snapshot
// has at most one live job (River's unique jobs, by snapshot id).
package queue

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"
	_ "modernc.org/sqlite" // the database/sql driver "sqlite"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/capture"
)

// File is the embedded queue's SQLite database, beside the catalog.
const File = archive.StateDir + "/queue.sqlite3"

// kind names folio's capture job in the queue.
const kind = "folio_capture"

// captureArgs is a capture job: one snapshot, unique by its id.
type captureArgs struct {
	SnapshotID string `json:"snapshot_id" river:"unique"`
	Dir        string `json:"dir"`
}

func (captureArgs) Kind() string { return kind }

// InsertOpts makes the job unique by snapshot id among the jobs not yet
// given up (River's default unique states: a discarded or cancelled job
// may be enqueued again).
func (captureArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: MaxAttempts, UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

// MaxAttempts is how often a snapshot is tried before its job is given
// up (it stays queued in the tree; 'folio add --resume --enqueue-only'
// enqueues it again).
const MaxAttempts = 5

// Options controls Open.
type Options struct {
	// URL is postgres://… for a shared queue in PostgreSQL; "" is the
	// embedded SQLite queue in File.
	URL string
	// Capture, when set, makes the queue a worker: it is called with each
	// claimed snapshot. A nil error completes the job; an error wrapped by
	// Cancel gives it up at once; any other error retries it later.
	Capture func(ctx context.Context, p capture.Pending) error
	// Concurrency is how many snapshots a worker captures at once.
	Concurrency int
	// Lease is the longest one snapshot's capture may take: a capture
	// running longer is cancelled, and a job claimed longer ago (its
	// worker died) is given to another worker.
	Lease time.Duration
	// FoldersMoved, when set, is called when a claimed snapshot waits
	// for a command that moves snapshot folders to finish.
	FoldersMoved func(p capture.Pending)
	// ID names this worker in the queue ("" is host/pid).
	ID     string
	Logger *slog.Logger
	// FetchCooldown is the shortest pause between two claims of a worker
	// (River's default, 100 ms, when zero). A capture takes seconds, so
	// only a measurement of the queue itself has reason to shorten it.
	FetchCooldown time.Duration
	// ReadOnly opens the queue to read it (Status): no migration, no
	// write; Open fails with ErrNoQueue when its tables do not exist.
	ReadOnly bool
}

// ErrNoQueue means a queue opened ReadOnly has no tables: no worker and
// no add --enqueue-only has used it yet.
var ErrNoQueue = errors.New("the queue holds no tables yet")

// Queue is an open capture queue.
type Queue struct {
	c        *archive.Collection
	url      string
	db       *sql.DB       // the queue's database, either kind
	pool     *pgxpool.Pool // PostgreSQL only
	client   engine
	workers  bool
	readOnly bool
}

// Shared reports whether url names a shared (PostgreSQL) queue.
func Shared(url string) bool {
	return strings.HasPrefix(url, "postgres://") || strings.HasPrefix(url, "postgresql://")
}

// Open opens the collection's queue, creating its tables (River's
// migrations) when they are missing, unless opts.ReadOnly.
func Open(ctx context.Context, c *archive.Collection, opts Options) (*Queue, error) {
	if opts.URL != "" && !Shared(opts.URL) {
		return nil, fmt.Errorf("queue %q: want postgres://… (or nothing, for the queue in %s)", opts.URL, File)
	}
	if opts.Concurrency < 1 {
		opts.Concurrency = 1
	}
	if opts.Lease <= 0 {
		opts.Lease = 30 * time.Minute
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.ID == "" {
		host, _ := os.Hostname()
		opts.ID = fmt.Sprintf("%s/%d", host, os.Getpid())
	}
	q := &Queue{c: c, url: opts.URL, workers: opts.Capture != nil, readOnly: opts.ReadOnly}
	cfg := &river.Config{ID: opts.ID, Logger: opts.Logger, JobTimeout: opts.Lease, RescueStuckJobsAfter: opts.Lease + time.Second,
		FetchCooldown: opts.FetchCooldown}
	if q.workers {
		w := river.NewWorkers()
		river.AddWorker(w, river.WorkFunc(func(ctx context.Context, job *river.Job[captureArgs]) error {
			p := capture.Pending{ID: job.Args.SnapshotID, Dir: job.Args.Dir}
			var waiting func()
			if opts.FoldersMoved != nil {
				waiting = func() { opts.FoldersMoved(p) }
			}
			release, err := q.shareFolders(ctx, waiting)
			if err != nil {
				return err
			}
			defer release()
			return opts.Capture(ctx, p)
		}))
		cfg.Workers = w
		cfg.Queues = map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: opts.Concurrency}}
	}
	var err error
	if Shared(opts.URL) {
		err = q.openPostgres(ctx, cfg, opts.Concurrency)
	} else {
		err = q.openSQLite(ctx, cfg)
	}
	if err != nil {
		q.Close()
		return nil, err
	}
	return q, nil
}

func (q *Queue) openSQLite(ctx context.Context, cfg *river.Config) error {
	path := q.c.Path(File)
	dsn := "file:" + path + "?_pragma=busy_timeout(20000)&_pragma=journal_mode(WAL)&_txlock=immediate"
	if q.readOnly {
		dsn = "file:" + path + "?mode=ro&_pragma=busy_timeout(20000)"
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return fmt.Errorf("open the queue %s: %w", path, err)
	}
	db.SetMaxOpenConns(1) // SQLite takes one writer at a time; River's driver asks for one connection
	q.db = db
	driver := riversqlite.New(db)
	if q.readOnly {
		err = q.hasTables(ctx, "SELECT count(*) > 0 FROM sqlite_master WHERE type = 'table' AND name = 'river_job'")
	} else {
		err = withLocal(ctx, q.c.Path(migrateLock), func() error { return migrate(ctx, driver) })
	}
	if err != nil {
		return fmt.Errorf("prepare the queue %s: %w", path, err)
	}
	cl, err := river.NewClient(driver, cfg)
	if err != nil {
		return fmt.Errorf("open the queue %s: %w", path, err)
	}
	q.client = client[*sql.Tx]{cl}
	return nil
}

func (q *Queue) openPostgres(ctx context.Context, cfg *river.Config, concurrency int) error {
	pc, err := pgxpool.ParseConfig(q.url)
	if err != nil {
		return fmt.Errorf("queue URL: %w", err)
	}
	// One connection per capture for its folder lock, and River's own.
	pc.MaxConns = int32(2*concurrency + 4)
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return fmt.Errorf("connect to the queue: %w", err)
	}
	q.pool = pool
	q.db = stdlib.OpenDBFromPool(pool)
	driver := riverpgxv5.New(pool)
	if q.readOnly {
		err = q.hasTables(ctx, "SELECT to_regclass('river_job') IS NOT NULL")
	} else {
		err = withAdvisory(ctx, pool, migrateKey, func() error { return migrate(ctx, driver) })
	}
	if err != nil {
		return fmt.Errorf("prepare the queue: %w", err)
	}
	cl, err := river.NewClient(driver, cfg)
	if err != nil {
		return fmt.Errorf("open the queue: %w", err)
	}
	q.client = client[pgx.Tx]{cl}
	return nil
}

// hasTables runs query, which says whether River's job table exists, and
// returns ErrNoQueue when it does not.
func (q *Queue) hasTables(ctx context.Context, query string) error {
	var ok bool
	if err := q.db.QueryRowContext(ctx, query).Scan(&ok); err != nil {
		return err
	}
	if !ok {
		return ErrNoQueue
	}
	return nil
}

// migrate brings River's tables up to date.
func migrate[TTx any](ctx context.Context, driver riverdriver.Driver[TTx]) error {
	m, err := rivermigrate.New[TTx](driver, nil)
	if err != nil {
		return err
	}
	_, err = m.Migrate(ctx, rivermigrate.DirectionUp, nil)
	return err
}

// Close stops nothing that Run did not stop; it closes the database.
func (q *Queue) Close() error {
	var err error
	if q.db != nil {
		err = q.db.Close()
	}
	if q.pool != nil {
		q.pool.Close()
	}
	return err
}

// Enqueue adds one job per snapshot and returns how many were new (a
// snapshot with a live job already is skipped: River's unique jobs).
func (q *Queue) Enqueue(ctx context.Context, snaps []capture.Pending) (int, error) {
	added := 0
	const batch = 500
	for i := 0; i < len(snaps); i += batch {
		var params []river.InsertManyParams
		for _, s := range snaps[i:min(i+batch, len(snaps))] {
			params = append(params, river.InsertManyParams{Args: captureArgs{SnapshotID: s.ID, Dir: s.Dir}})
		}
		n, err := q.client.insert(ctx, params)
		added += n
		if err != nil {
			return added, fmt.Errorf("enqueue: %w", err)
		}
	}
	return added, nil
}

// Run works the queue until ctx is done, then cancels the captures
// under way (their snapshots stay queued and their jobs are retried).
func (q *Queue) Run(ctx context.Context) error {
	if !q.workers {
		return errors.New("run the queue: opened without Capture")
	}
	if err := q.client.start(ctx); err != nil {
		return fmt.Errorf("start the worker: %w", err)
	}
	<-ctx.Done()
	stop, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if err := q.client.stopAndCancel(stop); err != nil {
		return fmt.Errorf("stop the worker: %w", err)
	}
	return ctx.Err()
}

// Cancel marks a capture error as final: the job is given up, not retried.
func Cancel(err error) error { return river.JobCancel(err) }

// engine is the part of a River client the queue uses, whatever the
// driver's transaction type.
type engine interface {
	insert(ctx context.Context, params []river.InsertManyParams) (int, error)
	list(ctx context.Context, params *river.JobListParams) ([]*rivertype.JobRow, error)
	start(ctx context.Context) error
	stopAndCancel(ctx context.Context) error
}

type client[TTx any] struct{ c *river.Client[TTx] }

func (c client[TTx]) insert(ctx context.Context, params []river.InsertManyParams) (int, error) {
	res, err := c.c.InsertMany(ctx, params)
	n := 0
	for _, r := range res {
		if !r.UniqueSkippedAsDuplicate {
			n++
		}
	}
	return n, err
}

func (c client[TTx]) list(ctx context.Context, params *river.JobListParams) ([]*rivertype.JobRow, error) {
	res, err := c.c.JobList(ctx, params)
	if err != nil {
		return nil, err
	}
	return res.Jobs, nil
}

func (c client[TTx]) start(ctx context.Context) error         { return c.c.Start(ctx) }
func (c client[TTx]) stopAndCancel(ctx context.Context) error { return c.c.StopAndCancel(ctx) }
