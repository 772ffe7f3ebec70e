package migrate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sort"
	"time"

	"github.com/folio-archive/folio/archive"
)

// Options configure Run.
type Options struct {
	// DryRun builds and writes the plan to PlanOut and changes nothing.
	DryRun  bool
	PlanOut io.Writer
	// Resume skips legacy folders (and database rows) whose name
	// (timestamp) sorts after it, as ArchiveBox's --resume.
	Resume string
	// BatchSize is how many journal records may wait for one fsync and how
	// often a progress line is printed for large runs. Default 500.
	BatchSize int
	// Workers is how many snapshots move at once. Default 8.
	Workers int
	// ItemLines is the largest number of entries of a phase for which one
	// line per entry is printed; larger phases print a line per batch and
	// progress. Default 100.
	ItemLines int
	// ForceCopy copies (and verifies, then deletes) even where a rename
	// would do. A testing and benchmarking knob: it exercises the path a
	// migration across filesystems takes.
	ForceCopy bool
	// Fault, when set, is called at every step of every snapshot ("planned",
	// "copied", "verified", "indexed", "deleting", "deleted", "done"), in the
	// middle of every copied file ("write") and before every entry a
	// deletion removes ("remove"); a non-nil error fails that snapshot
	// there. Tests use it to inject write errors and crashes. At
	// FaultForget, asked once for every move of the plan, an error drops
	// that move, as a faulty plan would: the check after the run must then
	// report the folder as left behind.
	Fault func(step, source string) error

	IDs     archive.IDSource
	Now     func() time.Time
	Printer archive.Printer
}

// Run migrates the collection to the current layout: it finishes what an
// interrupted earlier run left, scans the collection, plans every move,
// and executes the plan (unless DryRun). The caller holds the collection
// lock. Some failed entries make the error wrap archive.ErrPartial; a
// cancelled ctx stops after the snapshots in flight are consistent and the
// error wraps context.Canceled and names the --resume value.
func Run(ctx context.Context, c *archive.Collection, opts Options) (*Stats, error) {
	if opts.BatchSize <= 0 {
		opts.BatchSize = 500
	}
	if opts.Workers <= 0 {
		opts.Workers = 8
	}
	if opts.ItemLines <= 0 {
		opts.ItemLines = 100
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Printer == nil {
		opts.Printer = archive.Discard
	}
	opts.Printer = QuotePrinter(opts.Printer)
	if opts.PlanOut == nil {
		opts.PlanOut = io.Discard
	}
	x := &executor{c: c, opts: opts, p: opts.Printer, st: &Stats{}, unreadable: map[string]bool{}}
	jpath := c.Path(JournalFile)
	var pend []jrecord
	if opts.DryRun {
		data, err := os.ReadFile(jpath)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("read journal %s: %w", jpath, err)
		}
		recs, _ := parseJournal(data)
		pend = pendingRecords(recs)
		if len(pend) > 0 {
			x.p.Infof("[*] %d entries of an interrupted migration will be finished first", len(pend))
		}
	} else {
		j, recs, err := openJournal(jpath, opts.BatchSize)
		if err != nil {
			return nil, err
		}
		defer j.close()
		x.j = j
		if pend = pendingRecords(recs); len(pend) > 0 {
			x.p.Infof("[*] Finishing %d entries of an interrupted migration...", len(pend))
			x.recover(pend)
		}
	}
	if !opts.DryRun {
		// Only a run that holds the collection's lock tidies up.
		n, err := removeStaleCopies()
		if n > 0 {
			x.p.Infof("[*] Removed %d copies of a legacy database that interrupted runs left in %s", n, os.TempDir())
		}
		if err != nil {
			x.p.Warnf("%v", err)
		}
	}
	inv, err := Scan(ctx, c, ScanOptions{
		IDs: opts.IDs, Now: opts.Now, Resume: opts.Resume, Printer: opts.Printer, Workers: opts.Workers,
		OnError: func(source string, err error) {
			// The folder stays as it is, listed as skipped; it failed to
			// migrate all the same.
			x.p.Warnf("%s: %v", source, err)
			if !opts.DryRun {
				x.fail(source, err)
				x.mu.Lock()
				x.unreadable[source] = true
				x.mu.Unlock()
			}
		},
	})
	if err != nil {
		return nil, err
	}
	plan, err := NewPlan(c, inv, opts.Now())
	if err != nil {
		return nil, err
	}
	x.protect(plan)
	x.forget(plan)
	if opts.DryRun {
		if n := len(inv.Staging); n > 0 {
			x.p.Infof("[*] Staging folders of interrupted copies: %d, each removed once its every file is found in its source or destination", n)
		}
		if err := plan.CheckRisks(ctx, c, opts.Workers); err != nil {
			return nil, err
		}
		if err := plan.Format(opts.PlanOut); err != nil {
			return nil, err
		}
		x.st.Current = int64(plan.Current)
		x.st.Skipped = int64(plan.Count(ActionSkip))
		return x.st, nil
	}
	x.st.Current = int64(plan.Current)
	x.settleStaging(inv.Staging, plan)
	err = x.execute(ctx, plan)
	x.dirs.tidy()
	if full := x.full.Load(); err == nil && full != nil {
		err = full
	}
	if err == nil && ctx.Err() == nil {
		err = x.checkDrained(inv)
	}
	if err == nil {
		// Index files were written without an fsync each; make them
		// durable before the journal that can redo them is cleared.
		err = x.syncAll()
	}
	if err == nil && x.unfinished.Load() == 0 {
		err = x.j.clear()
	}
	st := x.st
	sort.Slice(st.Failures, func(i, k int) bool { return st.Failures[i].Source < st.Failures[k].Source })
	switch {
	case err != nil:
		return st, err
	case ctx.Err() != nil:
		hint := "folio update --migrate-only"
		if st.Resume != "" {
			hint += " --resume " + st.Resume
		}
		return st, fmt.Errorf("migration interrupted; everything done so far is consistent; continue with '%s': %w", hint, ctx.Err())
	case st.Failed > 0:
		return st, fmt.Errorf("%d entries failed to migrate (their folders are intact): %w", st.Failed, archive.ErrPartial)
	}
	return st, nil
}
