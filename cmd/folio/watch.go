package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/export"
	"github.com/folio-archive/folio/watch"
)

func init() { commands = append(commands, newWatchCmd) }

// watchFlags are the flags watch and serve --watch share.
type watchFlags struct {
	opts     watch.Options
	export   bool
	pageSize int
	title    string
}

func (w *watchFlags) register(cmd *cobra.Command, exportFlag bool) {
	f := cmd.Flags()
	if exportFlag {
		f.BoolVar(&w.export, "export", false, "also keep the in-place export current (the incremental export after each change)")
	}
	f.DurationVar(&w.opts.Poll, "poll", 0, "look at the tree at this interval instead of using inotify (for network file systems), e.g. 5s")
	f.DurationVar(&w.opts.Quiet, "settle", 300*time.Millisecond, "how long the tree must be still before changes are applied")
	f.IntVar(&w.opts.MaxWatches, "max-watches", 0, "take at most this many inotify watches (0: as many as the system gives) and poll the folders beyond them")
	f.IntVar(&w.pageSize, "page-size", 250, "snapshots per root page of the export (as 'folio export --page-size')")
	f.StringVar(&w.title, "title", "", `site title of the export (default "folio archive")`)
}

// validate checks the values a user typed.
func (w *watchFlags) validate() error {
	switch {
	case w.opts.Poll < 0:
		return usagef("--poll %s: want a positive duration such as 5s", w.opts.Poll)
	case w.opts.Poll > 0 && w.opts.Poll < 100*time.Millisecond:
		return usagef("--poll %s: at least 100ms", w.opts.Poll)
	case w.opts.MaxWatches < 0:
		return usagef("--max-watches %d: at least 1 (or 0 for no cap)", w.opts.MaxWatches)
	case w.pageSize < 1:
		return usagef("--page-size %d: at least 1", w.pageSize)
	}
	return nil
}

// run watches the collection until ctx ends.
func (w *watchFlags) run(ctx context.Context, p *printer, coll *archive.Collection) error {
	w.opts.Dir = coll.Dir
	h := &watch.Handler{Coll: coll, P: p}
	var fl *flusher
	if w.export {
		crawlers, err := allowCrawlers(nil, coll) // the setting: watch has no flag for it
		if err != nil {
			return err
		}
		// The export's state is kept between batches, and with it the
		// root manifest's changed records until the tree is still.
		fl = &flusher{p: p, opts: export.Options{Collection: coll, Version: version, SkipReindex: true,
			PageSize: w.pageSize, Title: w.title, AllowCrawlers: crawlers, Cache: &export.Cache{}, Defer: true}}
		defer fl.stop(ctx)
		h.Export = func(ctx context.Context, scope watch.ExportScope) (string, error) {
			opts := fl.opts
			opts.Rewrite, opts.Watched, opts.Changed = scope.Rewrite, scope.Watched, scope.Changed
			st, err := export.Run(ctx, opts, archive.Discard)
			if err != nil {
				return "", err
			}
			fl.arm()
			return fmt.Sprintf("export: %s and %s written", plural(st.Written, "detail page"), plural(st.RootWritten, "root page")), nil
		}
		h.Look = func(ctx context.Context, dirs []string) ([]string, []string, bool, error) {
			found, ok, err := export.Look(ctx, fl.opts, dirs)
			return found.Changed, found.Rewrite, ok, err
		}
	}
	wt, err := watch.New(w.opts, p)
	if err != nil {
		return err
	}
	h.Unwatched = wt.Unwatched
	wt.Ready = func(watches int, polling bool) {
		if polling {
			p.Infof("watching %s by polling every %s (Ctrl-C stops)", coll.Path(archive.ArchiveDir), pollInterval(w.opts.Poll))
			return
		}
		p.Infof("watching %d folders under %s (Ctrl-C stops)", watches, coll.Path(archive.ArchiveDir))
	}
	locked := false
	return wt.Run(ctx, func(ctx context.Context, b watch.Batch) error {
		if fl != nil {
			// A flush and a batch take the collection's lock in turn:
			// neither waits for the other as for another command.
			fl.mu.Lock()
			defer fl.mu.Unlock()
		}
		_, err := h.Apply(ctx, b)
		if errors.Is(err, archive.ErrLocked) {
			if !locked {
				p.Infof("waiting: %v", err)
			}
			locked = true
			return err
		}
		locked = false
		return err
	})
}

// flusher writes the root manifest and state the exports under watch
// hold back (export.Options.Defer) once no export has run for
// flushIdle, at most flushMax after the first one held back, and when
// watch stops. Snapshots added or removed are written after
// listingIdle: 'folio serve' takes the folders the manifest lists for
// the export's, and serves a snapshot just added, which the first root
// page already links to, as an archived file until then.
type flusher struct {
	p     *printer
	opts  export.Options
	mu    sync.Mutex // held by a batch being applied or a flush; guards what follows
	timer *time.Timer
	first time.Time // when the first export since the last flush ran
}

const (
	flushIdle   = 2 * time.Second
	flushMax    = 30 * time.Second
	listingIdle = 250 * time.Millisecond
)

// arm sets the flush after an export (with f.mu held).
func (f *flusher) arm() {
	if !f.opts.Cache.Held() {
		return
	}
	now := time.Now()
	if f.first.IsZero() {
		f.first = now
	}
	idle := flushIdle
	if f.opts.Cache.HeldListing() {
		idle = listingIdle
	}
	wait := min(idle, max(0, f.first.Add(flushMax).Sub(now)))
	if f.timer == nil {
		f.timer = time.AfterFunc(wait, func() { f.flush(context.Background()) })
	} else {
		f.timer.Reset(wait)
	}
}

// flush writes what is held back; while another command holds the
// collection's lock it tries again later.
func (f *flusher) flush(ctx context.Context) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, err := export.Flush(ctx, f.opts, archive.Discard)
	switch {
	case errors.Is(err, archive.ErrLocked) && f.timer != nil && ctx.Err() == nil:
		f.timer.Reset(flushIdle)
		return
	case err != nil:
		f.p.Warnf("export: %v", err)
	case n > 0:
		f.p.Infof("root %s brought up to date (%s)", export.ManifestFile, plural(int64(n), "snapshot record"))
	}
	f.first = time.Time{}
}

// stop flushes what is still held back, as watch stops. (What a watch
// killed before it leaves the next export to write.)
func (f *flusher) stop(ctx context.Context) {
	f.mu.Lock()
	if f.timer != nil {
		f.timer.Stop()
		f.timer = nil
	}
	f.mu.Unlock()
	f.flush(context.WithoutCancel(ctx))
}

func pollInterval(d time.Duration) time.Duration {
	if d <= 0 {
		return 2 * time.Second
	}
	return d
}

func newWatchCmd(e *env) *cobra.Command {
	var w watchFlags
	cmd := &cobra.Command{
		Use:   "watch",
		Short: "Keep the catalog (and with --export the export) in line with the tree as it changes",
		Long: `Watch archive/ and apply changes to the catalog within about a second: snapshot
folders dropped in or synced from elsewhere, index.jsonl files edited by hand,
folders moved or deleted, legacy folders copied into archive/ (cataloged where
they are; 'folio update --migrate-only' migrates them). With --export the
incremental export runs after each change, so the pages stay current; the
root index.jsonl, one record per snapshot (145 MB for 100k), is brought up to
date once no change has come for 2s (at most 30s after the first; a quarter
second after a snapshot is added or removed, so that 'folio serve' serves its
page as folio's), and when watch stops.

Changes are gathered until the tree has been still for --settle, then applied
by a reindex of the folders they touched, under the collection's lock; while
another folio command holds the lock (an add, an export), watch waits and
applies afterwards. Captured text (readability, htmltotext) written with an
index change is indexed for 'folio search' too.

It uses inotify, one watch per folder down to the snapshot folders. Where
inotify's per-user watch limit (or --max-watches) is reached, the folders left
over are looked at every second or so (with --export, also for outputs put in
their snapshot folders by hand, which start an export once still), and it says
so; where inotify is unavailable it polls the whole tree every 2s.
--poll forces polling, for network file systems whose changes made on other
machines inotify never sees. folio's own temp files and the pages an export
writes are ignored. Ctrl-C stops it (exit 130).`,
		Example: `  folio watch
  folio watch --export
  folio watch --poll 10s     # a collection on NFS or SMB`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := w.validate(); err != nil {
				return err
			}
			coll, err := e.open()
			if err != nil {
				return err
			}
			p := e.printer()
			defer p.done()
			err = w.run(cmd.Context(), p, coll)
			if cmd.Context().Err() != nil {
				p.Infof("stopped")
				return errStopped
			}
			return err
		},
	}
	w.register(cmd, true)
	return cmd
}
