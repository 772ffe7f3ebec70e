package migrate

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/errgroup"

	"github.com/folio-archive/folio/archive"
)

// executor runs a Plan.
type executor struct {
	c    *archive.Collection
	opts Options
	p    archive.Printer
	j    *journal

	mu         sync.Mutex
	st         *Stats
	blocked    map[string]bool   // sources an unfinished recovery still owns
	unreadable map[string]bool   // folders the scan could not read (failed, and skipped)
	crawlDirs  map[*Crawl]string // crawl folder of each crawl
	unfinished atomic.Int64      // journal entries left pending
	dirs       madeDirs          // folders created above destinations
	// full is the first "no space left on device": no step starts after it.
	full atomic.Pointer[NoSpaceError]
}

// outOfSpace reports whether err is a full file system and, for the first
// one, records it. Such a failure is not the folder's: the run stops, and
// one line names the file system.
func (x *executor) outOfSpace(err error, dest string) bool {
	e := noSpace(err, dest)
	if e == nil {
		return false
	}
	x.full.CompareAndSwap(nil, e)
	return true
}

// stopped reports whether no further step may start: interrupted, or out
// of space.
func (x *executor) stopped(ctx context.Context) bool {
	return ctx.Err() != nil || x.full.Load() != nil
}

// fault runs the fault hook for one step.
func (x *executor) fault(step, label string) error {
	if x.opts.Fault == nil {
		return nil
	}
	return x.opts.Fault(step, label)
}

// mark appends a journal record and then runs the fault hook.
func (x *executor) mark(r jrecord, durable bool) error {
	if err := x.j.append(r, durable); err != nil {
		return err
	}
	return x.fault(r.Step, r.Src)
}

func (x *executor) add(f func(s *Stats)) {
	x.mu.Lock()
	f(x.st)
	x.mu.Unlock()
}

func (x *executor) fail(src string, err error) {
	x.add(func(s *Stats) {
		s.Failed++
		s.Failures = append(s.Failures, Failure{Source: src, Err: err})
	})
}

// protect drops the plan steps whose source an unfinished recovery still
// owns, so a half-deleted folder is never taken for a legacy one. Their
// entries are counted once, as failed (recover).
func (x *executor) protect(p *Plan) {
	if len(x.blocked) == 0 {
		return
	}
	steps := p.Steps[:0]
	for _, s := range p.Steps {
		if s.Source == "" || !x.blocked[s.Source] {
			steps = append(steps, s)
		}
	}
	p.Steps = steps
}

// FaultForget is the Options.Fault step that drops a move from the plan.
const FaultForget = "forget"

// forget drops the moves Options.Fault refuses at FaultForget.
func (x *executor) forget(p *Plan) {
	if x.opts.Fault == nil {
		return
	}
	steps := p.Steps[:0]
	for _, s := range p.Steps {
		if (s.Action == ActionMove || s.Action == ActionMerge) && x.opts.Fault(FaultForget, s.Source) != nil {
			continue
		}
		steps = append(steps, s)
	}
	p.Steps = steps
}

// execute runs the plan's phases.
func (x *executor) execute(ctx context.Context, plan *Plan) error {
	var unlink, crawls, phase1, phase2, merges, skips, leaves []*Step
	for i := range plan.Steps {
		s := &plan.Steps[i]
		switch {
		case s.Action == ActionSkip:
			skips = append(skips, s)
		case s.Action == ActionLeave:
			leaves = append(leaves, s)
		case s.Action == ActionMerge:
			merges = append(merges, s)
		case s.Action == ActionUnlink:
			unlink = append(unlink, s)
		case s.Action == ActionCrawl:
			crawls = append(crawls, s)
		case s.Phase == 1:
			phase1 = append(phase1, s)
		default:
			phase2 = append(phase2, s)
		}
	}
	x.p.Infof("[*] Phase 1: Draining old archive/ directories (0.8.x → 0.9.x migration)...")
	for _, s := range skips {
		if !x.unreadable[s.Source] {
			x.st.Skipped++ // an unreadable folder counts as failed
		}
		x.p.Infof("    Skipped (%s): %s", s.Reason, s.Source)
	}
	for _, s := range leaves {
		err := fmt.Errorf("%s: %w: it %s", s.Source, ErrLeftBehind, s.Reason)
		x.p.Warnf("    Left behind: %v", err)
		x.fail(s.Source, err)
	}
	for _, s := range unlink {
		if x.stopped(ctx) {
			break
		}
		x.unlink(s)
	}
	if n := x.st.Symlinks; n > 0 {
		x.p.Infof("    Removed %d compatibility symlinks", n)
	}
	// Crawl folders get their compact names before any snapshot links
	// into them.
	x.runSteps(ctx, "crawls", crawls, false)
	x.p.Infof("[*] Found %d old directories to drain", len(phase1))
	x.runSteps(ctx, "phase 1", phase1, true)
	x.p.Infof("[*] Phase 2: Selecting database snapshots with stale filesystem versions...")
	x.p.Infof("    Found %d stale filesystem snapshots", len(phase2))
	x.runSteps(ctx, "phase 2", phase2, true)
	if len(merges) > 0 && !x.stopped(ctx) {
		x.p.Infof("    Merging %d second folders of snapshots moved above", len(merges))
		x.runSteps(ctx, "merge", merges, true)
	}
	if ctx.Err() != nil {
		x.st.Resume = resumePoint(append(append(phase1, phase2...), merges...), x)
	}
	return nil
}

// resumePoint is the largest legacy name (or timestamp) among steps that
// did not start, which --resume needs to reach all of them again.
func resumePoint(steps []*Step, x *executor) string {
	best := ""
	for _, s := range steps {
		if s.started {
			continue
		}
		name := ""
		if s.Phase == 1 {
			name = path.Base(s.Source)
		} else if s.Item != nil {
			name = s.Item.Snapshot.Timestamp
		}
		if name > best {
			best = name
		}
	}
	return best
}

// runSteps executes steps with Workers in parallel and reports each.
// Per-entry lines come out in plan order whatever order the workers finish
// in, numbered as the plan numbers them.
func (x *executor) runSteps(ctx context.Context, phase string, steps []*Step, numbered bool) {
	total := int64(len(steps))
	if total == 0 {
		return
	}
	var done atomic.Int64
	lines := newOrderedLines(len(steps))
	if len(steps) > x.opts.ItemLines {
		lines = nil
	}
	complete := func(i int, s *Step, verb string, err error) {
		n := done.Add(1)
		if x.outOfSpace(err, x.c.Path(s.Dest)) {
			x.p.Progress(phase, n, total)
			return // undone, or left to the journal: the next run does it
		}
		x.add(func(st *Stats) {
			st.Processed++
			if err != nil {
				return
			}
			switch s.Action {
			case ActionMove:
				st.Migrated++
			case ActionInvalid:
				st.Invalid++
			case ActionCrawl:
				st.Crawls++
			case ActionMerge:
				st.Merged++
			}
		})
		num := ""
		if numbered {
			num = fmt.Sprintf("[%d] ", i+1)
		}
		text := fmt.Sprintf("    %s%s: %s", num, verb, s.Name())
		if s.Action == ActionInvalid {
			text += fmt.Sprintf(" -> %s (%s)", s.Dest, s.Reason)
		}
		switch {
		case err != nil:
			x.fail(s.Source, err)
			line := func() { x.p.Warnf("    %sSkipped (error: %v): %s", num, err, s.Name()) }
			if lines == nil {
				line()
			} else {
				lines.put(i, line)
			}
		case lines != nil:
			lines.put(i, func() { x.p.Infof("%s", text) })
		case s.Action == ActionInvalid:
			// Named even in a long run: the user will want to look.
			x.p.Infof("%s", text)
		case n%int64(x.opts.BatchSize) == 0:
			x.p.Infof("    %s: %d/%d so far...", phase, n, total)
		}
		x.p.Progress(phase, n, total)
	}
	del := x.startDeleter()
	g := new(errgroup.Group)
	g.SetLimit(x.opts.Workers)
	for i, s := range steps {
		if x.stopped(ctx) {
			break
		}
		g.Go(func() error {
			if x.stopped(ctx) {
				return nil
			}
			x.mu.Lock()
			s.started = true
			x.mu.Unlock()
			verb, err := x.step(s)
			var later *deletion
			if errors.As(err, &later) {
				// Copied and verified; the source is deleted with the
				// next batch, after one sync for all of them.
				later.complete = func(err error) { complete(i, s, verb, err) }
				del.add(later)
				return nil
			}
			complete(i, s, verb, err)
			return nil
		})
	}
	_ = g.Wait()
	del.close()
	if lines != nil {
		lines.flush()
	}
}

// orderedLines prints lines in index order as they are put in any order:
// a line waits until every line before it is printed. flush prints what
// is left after gaps (entries an interruption never started).
type orderedLines struct {
	mu    sync.Mutex
	lines []func()
	next  int
}

func newOrderedLines(n int) *orderedLines { return &orderedLines{lines: make([]func(), n)} }

func (o *orderedLines) put(i int, line func()) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.lines[i] = line
	for o.next < len(o.lines) && o.lines[o.next] != nil {
		o.lines[o.next]()
		o.next++
	}
}

func (o *orderedLines) flush() {
	o.mu.Lock()
	defer o.mu.Unlock()
	for ; o.next < len(o.lines); o.next++ {
		if line := o.lines[o.next]; line != nil {
			line()
		}
	}
}

// step executes one step and returns the verb for its output line.
func (x *executor) step(s *Step) (string, error) {
	switch s.Action {
	case ActionMove:
		return "Migrated", x.relocate(s, modeCopy, s.Item)
	case ActionMerge:
		return "Merged", x.relocate(s, modeCopy, s.Item)
	case ActionCreate, ActionIndex:
		changed, err := x.indexOnly(s)
		if err != nil {
			return "", err
		}
		if !changed {
			x.add(func(st *Stats) { st.Current++ })
			return "Already current", nil
		}
		if s.Action == ActionCreate {
			x.add(func(st *Stats) { st.Created++ })
			return "Created", nil
		}
		x.add(func(st *Stats) { st.Indexed++ })
		return "Indexed", nil
	case ActionInvalid:
		return "Invalid", x.relocate(s, modeCopy, nil)
	case ActionCrawl:
		return "Renamed crawl", x.relocate(s, modeCrawl, nil)
	}
	return "", fmt.Errorf("unknown action %q", s.Action)
}

func (x *executor) unlink(s *Step) {
	p := x.c.Path(s.Source)
	fi, err := os.Lstat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return
	case err != nil:
		x.fail(s.Source, err)
		return
	case fi.Mode()&fs.ModeSymlink == 0:
		x.fail(s.Source, fmt.Errorf("remove symlink %s: no longer a symlink", p))
		return
	}
	if err := os.Remove(p); err != nil {
		x.fail(s.Source, fmt.Errorf("remove symlink %s: %w", p, err))
		return
	}
	x.add(func(st *Stats) { st.Symlinks++; st.Processed++ })
}

// moved counts the files and bytes step s moved, by rename or by a
// verified copy.
func (x *executor) moved(s *Step, files, bytes int64, copied bool) {
	kind := "migrated"
	switch s.Action {
	case ActionMerge:
		kind = "merged"
	case ActionInvalid:
		kind = "invalid"
	}
	x.add(func(st *Stats) {
		st.Files += files
		st.Bytes += bytes
		if st.BytesBy == nil {
			st.BytesBy = map[string]int64{}
		}
		st.BytesBy[kind] += bytes
		if copied {
			st.Copied += bytes
		}
	})
}
