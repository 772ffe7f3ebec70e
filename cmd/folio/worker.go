package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/capture"
	"github.com/folio-archive/folio/queue"
)

func init() { commands = append(commands, newWorkerCmd) }

func newWorkerCmd(e *env) *cobra.Command {
	var (
		url         string
		only        string
		timeout     int
		concurrency int
		lease       time.Duration
		drain       bool
	)
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "Capture the snapshots of the job queue (any number of workers, on any machine)",
		Long: `Capture queued snapshots from the collection's job queue until stopped (Ctrl-C,
SIGTERM) or, with --drain, until no job is left. 'folio add --enqueue-only'
creates the snapshot folders and fills the queue; workers claim one job per
snapshot, run the plugins with their own Chromium, and write only inside the
claimed snapshot's folder (its index.jsonl and plugin folders): no catalog, no
export, no touch log. The one machine that owns the catalog follows their
writes with 'folio watch --poll' or 'folio reindex'.

The queue is River (riverqueue.com). Without --queue it is the SQLite database
.folio/queue.sqlite3 beside the catalog: workers on this machine only, no
server. With --queue postgres://… (or QUEUE_URL in the environment or in
ArchiveBox.conf) it is a PostgreSQL database shared by workers on every machine
that mounts the data directory (NFS or the like; one database per collection).

The queue is derived state: a snapshot's index.jsonl status (queued) is the
truth. At start a worker reads every snapshot's index.jsonl and enqueues the
queued and started ones that have no job (one job per snapshot id), so a lost
queue (a deleted .folio/, a new database) loses nothing. A snapshot sealed
already is not captured again. A worker killed mid-capture keeps its claim for
--lease; then another worker takes the job, removes the temp files the dead
one left in the folder and runs the plugins again, each result and output
replaced by an atomic write. A capture that stops short (browser failure) is
retried, with a growing pause, up to 5 times; then the job is given up and the
snapshot stays queued ('folio add --resume --enqueue-only' enqueues it again).
'folio status' shows the queue.

Commands that move snapshot folders (update --migrate-only, remove --delete)
wait for the captures under way and hold the workers off until they are done.
A 'folio add' that captures by itself (without --enqueue-only) and the workers
never capture the same snapshot: a worker waits for such an add to finish
before it starts, and an add run while workers run enqueues its snapshots for
them instead of capturing.

Plugins and settings are add's: --plugins, --timeout, ArchiveBox.conf and the
environment.`,
		Example: `  folio add --enqueue-only --from bookmarks.html
  folio worker -j 4
  QUEUE_URL=postgres://folio@db/folio folio worker   # on each machine`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if concurrency < 1 {
				return usagef("--parallel must be at least 1")
			}
			if lease < time.Second {
				return usagef("--lease %s: want at least 1s", lease)
			}
			ctx := cmd.Context()
			fault, err := envFault()
			if err != nil {
				return err
			}
			coll, err := e.open()
			if err != nil {
				return err
			}
			cfg, err := captureConfig(coll, timeout)
			if err != nil {
				return err
			}
			p := e.printer()
			defer p.done()
			opts := capture.Options{Config: cfg, Printer: p, Fault: fault}
			if only != "" {
				opts.Plugins = splitList(only)
			}
			w, err := capture.NewCapturer(coll, opts)
			if err != nil {
				return err
			}
			defer w.Close()
			qopts := queue.Options{URL: queueURL(url, cfg.Get("QUEUE_URL")), Concurrency: concurrency, Lease: lease,
				Logger: slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelError})),
				FoldersMoved: func(s capture.Pending) {
					p.Infof("%s waits for a command that moves snapshot folders to finish", s.Dir)
				}}
			qopts.Capture = func(ctx context.Context, s capture.Pending) error {
				err := w.Capture(ctx, s)
				switch {
				case err == nil:
					p.Infof("captured %s", s.Dir)
				case errors.Is(err, capture.ErrNotCaptured) || ctx.Err() != nil:
				default:
					p.Warnf("%v: job given up", err)
					err = queue.Cancel(err)
				}
				return err
			}
			q, err := queue.Open(ctx, coll, qopts)
			if err != nil {
				return err
			}
			defer q.Close()
			release, err := queue.Attend(ctx, coll, qopts.URL, func() {
				p.Infof("waiting for a 'folio add' that captures outside the queue to finish")
			})
			if err != nil {
				return err
			}
			defer release()
			if err := enqueueTree(ctx, coll, q, p); err != nil {
				return err
			}
			run := ctx
			if drain {
				var stop context.CancelFunc
				run, stop = context.WithCancel(ctx)
				defer stop()
				go stopWhenDrained(run, q, stop)
			}
			err = q.Run(run)
			if drain && ctx.Err() == nil && errors.Is(err, context.Canceled) {
				return nil
			}
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&url, "queue", "", "the shared queue, postgres://… (default $QUEUE_URL, else QUEUE_URL of ArchiveBox.conf, else .folio/queue.sqlite3)")
	f.IntVarP(&concurrency, "parallel", "j", 2, "snapshots captured at once (one browser tab each)")
	f.StringVarP(&only, "plugins", "p", "", "run only these plugins (comma-separated names)")
	f.IntVar(&timeout, "timeout", 0, "TIMEOUT in seconds for plugins without their own <PLUGIN>_TIMEOUT")
	f.DurationVar(&lease, "lease", 30*time.Minute, "longest capture of one snapshot; a dead worker's job goes to another worker after it")
	f.BoolVar(&drain, "drain", false, "exit when no job is left to run (waiting or under way)")
	return cmd
}

// queueURL is the queue the user chose: --queue, else $QUEUE_URL, else
// the collection's config; "" is the embedded queue.
func queueURL(flag, config string) string {
	if flag != "" {
		return flag
	}
	if env := os.Getenv("QUEUE_URL"); env != "" {
		return env
	}
	return config
}

// enqueueTree enqueues every snapshot of the tree left queued or started.
func enqueueTree(ctx context.Context, coll *archive.Collection, q *queue.Queue, p *printer) error {
	pending, err := capture.ListUnfinished(coll, func(err error) { p.Warnf("%v", err) })
	if err != nil {
		return err
	}
	n, err := q.Enqueue(ctx, pending)
	if err != nil {
		return err
	}
	if n > 0 {
		p.Infof("enqueued %s the queue did not hold", plural(n, "queued snapshot"))
	}
	return nil
}

// captureHere keeps a plain add (one that captures, not --enqueue-only)
// and the queue's workers apart, so no snapshot is captured by both: with
// no worker running it holds the workers lock, and workers that start
// wait for release; with workers running, the add only creates its
// snapshots and enqueues them (and, with --resume, those left queued),
// as --enqueue-only does, and enqueue is true. --update and --depth 1
// must capture here, so they fail as locked beside running workers.
func captureHere(ctx context.Context, coll *archive.Collection, url string, opts *capture.Options, p *printer) (enqueue bool, release func(), err error) {
	release, ok, err := queue.CaptureHere(ctx, coll, url)
	switch {
	case err != nil:
		return false, nil, err
	case ok:
		return false, release, nil
	case opts.Update || opts.Depth == 1:
		return false, nil, workersRunning("--update and --depth 1 capture")
	}
	p.Infof("folio workers are running on the job queue: the snapshots go to them, as with --enqueue-only")
	opts.IndexOnly = true
	return true, func() {}, nil
}

// workersRunning is the error of a command that must capture here while
// workers run on the queue; what says what captures.
func workersRunning(what string) error {
	return fmt.Errorf("%w: folio workers are running on its job queue, and %s here: stop the workers first", archive.ErrLocked, what)
}

// captureOnlyHere takes the workers lock for 'folio update', which
// captures the snapshots workers claim (queued and started ones
// included): it fails as locked while workers run, and workers that
// start meanwhile wait for release.
func captureOnlyHere(ctx context.Context, coll *archive.Collection, url string) (release func(), err error) {
	release, ok, err := queue.CaptureHere(ctx, coll, url)
	if err == nil && !ok {
		err = workersRunning("'folio update' captures")
	}
	return release, err
}

// enqueueAdded puts the snapshots add left queued in the job queue.
func enqueueAdded(ctx context.Context, coll *archive.Collection, url string, pending []capture.Pending, p *printer) error {
	q, err := queue.Open(ctx, coll, queue.Options{URL: url})
	if err != nil {
		return err
	}
	defer q.Close()
	n, err := q.Enqueue(ctx, pending)
	if err != nil {
		return err
	}
	p.Infof("enqueued %s for 'folio worker' (%d had a job already)", plural(n, "snapshot"), len(pending)-n)
	return nil
}

// stopWhenDrained calls stop once the queue has no job waiting or under way.
func stopWhenDrained(ctx context.Context, q *queue.Queue, stop func()) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
		st, err := q.Status(ctx, time.Now())
		if err != nil {
			continue
		}
		if st.Live() == 0 {
			stop()
			return
		}
	}
}

// lockFolders takes the collection's folder lock for a command that
// moves snapshot folders, so no worker writes into a folder being moved.
func lockFolders(ctx context.Context, coll *archive.Collection, p *printer) (func(), error) {
	cfg, err := captureConfig(coll, 0)
	if err != nil {
		return nil, err
	}
	url := queueURL("", cfg.Get("QUEUE_URL"))
	return queue.LockFolders(ctx, coll, url, func() {
		p.Infof("waiting for the workers' captures under way to finish")
	})
}
