package watch

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/folio-archive/folio/archive"
)

// Options controls a Watcher.
type Options struct {
	// Dir is the data directory.
	Dir string
	// Quiet is how long the tree must be still before a batch is
	// applied; 0 means 300 ms. A batch waits at most MaxDelay (0: 1 s)
	// however busy the tree is.
	Quiet, MaxDelay time.Duration
	// Poll, when set, looks at the tree every Poll instead of using
	// inotify: for network file systems, whose changes made on other
	// machines inotify never sees. The watcher also polls, every 2 s,
	// when inotify is unavailable, and polls the folders it could not
	// watch when inotify's watch limit is reached.
	Poll time.Duration
	// Retry is how long to wait before applying again a batch that could
	// not be applied (the collection is locked by another folio
	// process); 0 means 1 s.
	Retry time.Duration
	// MaxWatches caps the inotify watches the watcher takes (0: as many
	// as inotify gives), leaving the rest of the per-user limit to other
	// programs. Folders beyond it are polled, as when inotify's limit is
	// reached.
	MaxWatches int
}

// defaultPoll is the polling interval when inotify cannot be used.
const defaultPoll = 2 * time.Second

// unwatchedPoll is how often the folders inotify had no watch for are
// looked at: a scoped reindex of them, cheap next to a whole look.
const unwatchedPoll = time.Second

// pollOverdue is how long the look at the unwatched folders waits for a
// moment with no events pending before it joins them.
const pollOverdue = 10 * time.Second

// maxEvents is the most events a batch keeps; beyond it the batch is a
// rescan.
const maxEvents = 10000

// Apply applies one batch. Returning an error wrapping archive.ErrLocked
// keeps the batch for a later try; any other error ends Run.
type Apply func(ctx context.Context, b Batch) error

// Watcher watches a collection's archive/ folder.
type Watcher struct {
	opts Options
	root string // absolute data dir
	p    archive.Printer

	fs      *fsnotify.Watcher // nil while polling
	watched map[string]bool   // slash paths relative to root
	// unwatched are the folders inotify had no watch left for: they and
	// everything below them are polled every defaultPoll.
	unwatched map[string]bool
	// Ready is called once the watches are in place, before the first
	// batch (a rescan that brings the catalog up to date) is applied.
	Ready func(watches int, polling bool)
}

// New prepares a Watcher of the collection in opts.Dir.
func New(opts Options, p archive.Printer) (*Watcher, error) {
	if opts.Quiet <= 0 {
		opts.Quiet = 300 * time.Millisecond
	}
	if opts.MaxDelay <= 0 {
		opts.MaxDelay = time.Second
	}
	if opts.Retry <= 0 {
		opts.Retry = time.Second
	}
	if p == nil {
		p = archive.Discard
	}
	root, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, err
	}
	return &Watcher{opts: opts, root: root, p: p, watched: map[string]bool{}, unwatched: map[string]bool{}}, nil
}

// Run watches until ctx ends, applying a first batch at once (Rescan)
// and then one per quiet moment after changes. It returns ctx's error
// when stopped, or the first error of apply that is not ErrLocked.
func (w *Watcher) Run(ctx context.Context, apply Apply) error {
	polling := w.opts.Poll > 0
	if !polling {
		if err := w.start(); err != nil {
			w.p.Warnf("%v; polling every %s instead", err, defaultPoll)
			w.stop()
			polling = true
			w.opts.Poll = defaultPoll
		}
	}
	defer w.stop()
	switch {
	case len(w.unwatched) > 0 && w.opts.MaxWatches > 0 && len(w.watched) >= w.opts.MaxWatches:
		w.p.Warnf("%d folders are watched (the most asked for); %d more (and what they hold) are looked at every %s or so",
			len(w.watched), len(w.unwatched), unwatchedPoll)
	case len(w.unwatched) > 0:
		w.p.Warnf("inotify's watch limit%s is reached: %d folders are watched, %d more (and what they hold) are looked at every %s or so; raise the limit with 'sysctl fs.inotify.max_user_watches=N'",
			watchLimit(), len(w.watched), len(w.unwatched), unwatchedPoll)
	}
	if w.Ready != nil {
		w.Ready(len(w.watched), polling)
	}
	pending := Batch{Rescan: true}
	if polling {
		return w.poll(ctx, apply, pending)
	}
	return w.notify(ctx, apply, pending)
}

// start creates the inotify watcher and watches the tree.
func (w *Watcher) start() error {
	fs, err := fsnotify.NewBufferedWatcher(4096)
	if err != nil {
		return fmt.Errorf("inotify is unavailable (%v)", err)
	}
	w.fs = fs
	return w.addTree(archive.ArchiveDir)
}

func (w *Watcher) stop() {
	if w.fs != nil {
		w.fs.Close()
		w.fs = nil
	}
}

// addTree watches rel and the folders below it down to the snapshot
// folders (whose index files the catalog follows); folders inside a
// snapshot are not watched. Symlinks are not followed: the catalog treats
// them as projections of other folders. It goes level by level, so that
// when watches run out the folders left to polling are the deepest ones
// (snapshot folders), and new folders still show up at once in the
// watched folders above them.
func (w *Watcher) addTree(rel string) error {
	for level := []string{rel}; len(level) > 0; {
		var next []string
		for _, rel := range level {
			below, err := w.add(rel)
			if err != nil {
				return err
			}
			next = append(next, below...)
		}
		level = next
	}
	return nil
}

// Unwatched returns the folders inotify ran out of watches for, in path
// order, each standing for all it holds: their changes show only as a
// batch's Roots, a look every second or so. all reports that no folder is
// watched (the watcher polls the whole tree). Call it from Apply, which
// runs on the watcher's goroutine.
func (w *Watcher) Unwatched() (folders []string, all bool) {
	if w.fs == nil {
		return nil, true
	}
	return slices.Sorted(maps.Keys(w.unwatched)), false
}

// add watches one folder and returns the folders below it to watch next.
// An output folder made while watched (see Output) is watched too, not
// what is below it, so the files written into it later are seen; output
// folders that were there before are not (that would cost a watch per
// plugin and snapshot), nor one the watches ran out for: its page shows
// what it holds at the next export.
func (w *Watcher) add(rel string) ([]string, error) {
	kind, _ := Classify(rel)
	if kind == Payload && !Output(rel) || archive.IsTemp(filepath.Base(rel)) {
		return nil, nil
	}
	abs := filepath.Join(w.root, filepath.FromSlash(rel))
	if st, err := os.Lstat(abs); err != nil || !st.IsDir() {
		return nil, nil // gone already, or not a folder: the reindex sees it
	}
	if !w.watched[rel] {
		poll := func() { // polled instead, with all it holds
			if kind != Payload {
				w.unwatched[rel] = true
			}
		}
		if w.opts.MaxWatches > 0 && len(w.watched) >= w.opts.MaxWatches {
			poll()
			return nil, nil
		}
		if err := w.fs.Add(abs); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				poll()
				return nil, nil
			}
			if errors.Is(err, os.ErrNotExist) || kind == Payload {
				return nil, nil
			}
			return nil, fmt.Errorf("watch %s: %w", abs, err)
		}
		w.watched[rel] = true
		delete(w.unwatched, rel)
	}
	if kind != Other {
		return nil, nil // a snapshot's index files are in the folder itself
	}
	entries, err := os.ReadDir(abs)
	if err != nil {
		return nil, nil // unlistable: the reindex reports it
	}
	var below []string
	for _, e := range entries {
		if e.IsDir() { // a DirEntry of a symlink is not a dir
			below = append(below, rel+"/"+e.Name())
		}
	}
	return below, nil
}

// forget drops the watches of rel and everything below it (a folder
// removed or renamed away; inotify drops the watch of a removed folder
// itself, but a renamed one would go on reporting under its old name).
func (w *Watcher) forget(rel string) {
	for dir := range w.watched {
		if dir == rel || strings.HasPrefix(dir, rel+"/") {
			delete(w.watched, dir)
			_ = w.fs.Remove(filepath.Join(w.root, filepath.FromSlash(dir)))
		}
	}
	// Nor is a folder gone from there polled (the event names it for the
	// next export).
	for dir := range w.unwatched {
		if dir == rel || strings.HasPrefix(dir, rel+"/") {
			delete(w.unwatched, dir)
		}
	}
}

// notify is the inotify loop: events are gathered into a pending batch,
// applied once the tree has been quiet for Quiet (or MaxDelay after the
// first event). Folders left unwatched are looked at every defaultPoll.
func (w *Watcher) notify(ctx context.Context, apply Apply, pending Batch) error {
	var first time.Time // of the pending batch; zero when there is none
	quiet := time.NewTimer(0)
	defer quiet.Stop()
	var due <-chan time.Time = quiet.C // the initial rescan goes at once
	tick := time.NewTicker(unwatchedPoll)
	defer tick.Stop()
	var (
		lastPoll time.Time     // when the unwatched folders were last looked at
		pollCost time.Duration // and how long it took
	)
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
			// The look at the unwatched folders takes at most a third of
			// the time: on a big tree it comes less often than each second.
			if len(w.unwatched) == 0 || pending.Rescan || time.Since(lastPoll) < 3*pollCost {
				continue
			}
			// Nor does it join events waiting for stillness, whose changes
			// would wait for it (unless events keep it waiting too long).
			if !first.IsZero() && time.Since(lastPoll) < pollOverdue {
				continue
			}
			pending.Roots = slices.Sorted(maps.Keys(w.unwatched))
			if first.IsZero() {
				quiet.Reset(0)
				due = quiet.C
			}
		case ev, ok := <-w.fs.Events:
			if !ok {
				return errors.New("watch: the inotify watcher closed")
			}
			rel, ok := w.rel(ev.Name)
			if !ok {
				continue
			}
			removed := ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename)
			if removed {
				w.forget(rel)
			} else if ev.Has(fsnotify.Create) {
				if err := w.addTree(rel); err != nil {
					return err
				}
			}
			if len(pending.Events) < maxEvents {
				pending.Events = append(pending.Events, Event{Path: rel, Removed: removed})
			} else {
				pending.Rescan = true // a big copy: the reindex looks at everything anyway
			}
			if first.IsZero() {
				first = time.Now()
			}
			wait := min(w.opts.Quiet, time.Until(first.Add(w.opts.MaxDelay)))
			quiet.Reset(max(wait, 0))
			due = quiet.C
		case err, ok := <-w.fs.Errors:
			if !ok {
				return errors.New("watch: the inotify watcher closed")
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				w.p.Warnf("too many changes at once for inotify's queue; looking at the whole tree")
				pending.Rescan = true
				if err := w.addTree(archive.ArchiveDir); err != nil {
					return err
				}
				quiet.Reset(0)
				due = quiet.C
				continue
			}
			return fmt.Errorf("watch %s: %w", w.root, err)
		case <-due:
			due = nil
			if !pending.relevant() && !pending.outputs() {
				pending, first = Batch{}, time.Time{}
				continue
			}
			start := time.Now()
			err := apply(ctx, pending)
			if len(pending.Roots) > 0 {
				lastPoll, pollCost = time.Now(), time.Since(start)
			}
			if errors.Is(err, archive.ErrLocked) {
				quiet.Reset(w.opts.Retry)
				due = quiet.C
				continue
			}
			if err != nil {
				return err
			}
			pending, first = Batch{}, time.Time{}
		}
	}
}

// poll applies a rescan batch every Poll: the incremental reindex finds
// what changed from the folders' stamps.
func (w *Watcher) poll(ctx context.Context, apply Apply, pending Batch) error {
	tick := time.NewTimer(0)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
		err := apply(ctx, pending)
		switch {
		case errors.Is(err, archive.ErrLocked):
			tick.Reset(w.opts.Retry)
			continue
		case err != nil:
			return err
		}
		pending = Batch{Rescan: true}
		tick.Reset(w.opts.Poll)
	}
}

// watchLimit is " (N)" with inotify's per-user watch limit, or "".
func watchLimit() string {
	b, err := os.ReadFile("/proc/sys/fs/inotify/max_user_watches")
	if err != nil {
		return ""
	}
	return " (" + strings.TrimSpace(string(b)) + ")"
}

// rel turns an absolute event path into a slash path relative to the
// data dir.
func (w *Watcher) rel(name string) (string, bool) {
	r, err := filepath.Rel(w.root, name)
	if err != nil || r == ".." || strings.HasPrefix(r, "../") {
		return "", false
	}
	return filepath.ToSlash(r), true
}
