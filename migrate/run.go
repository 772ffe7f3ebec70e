package migrate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sync/errgroup"

	"folio/archive"
	"folio/layout"
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

// Stats is what a migration did.
type Stats struct {
	Processed int64 // entries handled (snapshots, invalid folders, symlinks, crawl folders)
	Migrated  int64 // snapshots whose folders moved
	Indexed   int64 // snapshots already at their path whose index.jsonl was rewritten in place
	Created   int64 // snapshots that had no folder (a database row never captured): a new one holds their index.jsonl
	Current   int64 // snapshots already at the current layout
	Symlinks  int64 // archive/<timestamp> symlinks removed
	Invalid   int64 // folders moved to invalid/
	Skipped   int64 // entries left alone (see the plan for why)
	Failed    int64 // entries that failed; their sources are intact
	Crawls    int64 // crawl folders renamed to compact ids
	Merged    int64 // second folders of snapshots merged into the first's destination
	Recovered int64 // interrupted entries of an earlier run finished or rolled back
	Files     int64 // files moved
	Bytes     int64 // bytes moved
	// BytesBy splits Bytes by what moved them: "migrated" snapshots,
	// "merged" second folders, "invalid" folders.
	BytesBy map[string]int64
	// Copied is the part of Bytes that was copied and verified (across
	// filesystems, or merged into a folder); the rest moved by rename.
	Copied int64
	// Failures lists each failed entry with its error.
	Failures []Failure
	// Resume is the --resume value that continues an interrupted run.
	Resume string
}

// Failure is one entry that could not be migrated.
type Failure struct {
	Source string
	Err    error
}

// Work reports whether the run changed anything.
func (s *Stats) Work() int64 {
	return s.Migrated + s.Indexed + s.Created + s.Symlinks + s.Invalid + s.Crawls + s.Merged + s.Recovered
}

// WriteTable writes the final summary table of a run that ended with err
// (what Run returned): its first line says how the run ended.
func (s *Stats) WriteTable(w io.Writer, err error) error {
	rows := []struct {
		k string
		v int64
	}{
		{"Processed", s.Processed}, {"Migrated", s.Migrated}, {"Indexed", s.Indexed}, {"Created", s.Created}, {"Already current", s.Current},
		{"Removed symlinks", s.Symlinks}, {"Invalid", s.Invalid}, {"Skipped", s.Skipped},
		{"Failed", s.Failed},
	}
	var b strings.Builder
	switch {
	case err == nil:
		b.WriteString("[√] Migration complete\n")
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		b.WriteString("[!] Migration interrupted: what is done is consistent\n")
	case errors.Is(err, archive.ErrPartial):
		fmt.Fprintf(&b, "[X] Migration finished with %d failed entries (their folders are intact)\n", s.Failed)
	default:
		b.WriteString("[X] Migration stopped by an error\n")
	}
	for _, r := range rows {
		fmt.Fprintf(&b, "    %-18s %d\n", r.k+":", r.v)
	}
	if s.Crawls > 0 {
		fmt.Fprintf(&b, "    %-18s %d\n", "Renamed crawls:", s.Crawls)
	}
	if s.Merged > 0 {
		fmt.Fprintf(&b, "    %-18s %d\n", "Merged folders:", s.Merged)
	}
	if s.Recovered > 0 {
		fmt.Fprintf(&b, "    %-18s %d\n", "Recovered:", s.Recovered)
	}
	fmt.Fprintf(&b, "    %-18s %s (%d files)\n", "Bytes moved:", archive.HumanBytes(s.Bytes), s.Files)
	if s.Bytes > 0 {
		var parts []string
		for _, k := range []string{"migrated", "merged", "invalid"} {
			if n := s.BytesBy[k]; n > 0 {
				parts = append(parts, k+" "+archive.HumanBytes(n))
			}
		}
		fmt.Fprintf(&b, "    %-18s %s; %s copied and verified, the rest renamed\n", "", strings.Join(parts, ", "), archive.HumanBytes(s.Copied))
	}
	_, werr := io.WriteString(w, b.String())
	return werr
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
	err = x.execute(ctx, plan)
	x.dirs.tidy()
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
		if ctx.Err() != nil {
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
	if len(merges) > 0 && ctx.Err() == nil {
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
		if ctx.Err() != nil {
			break
		}
		g.Go(func() error {
			if ctx.Err() != nil {
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

// relocate moves the folder of step s to its destination: rename when
// possible, else copy, verify, index, sync, re-verify and delete. With an
// item, the destination's index.jsonl is written and the crawl symlink
// made.
func (x *executor) relocate(s *Step, copyMode string, it *Item) (err error) {
	label := s.Source
	src, dst := x.c.Path(s.Source), x.c.Path(s.Dest)
	tree, err := walkTree(src)
	if err != nil {
		return fmt.Errorf("read %s: %w", src, err)
	}
	files, size := treeBytes(tree)
	dstExists, err := lexists(dst)
	if err != nil {
		return err
	}
	link, linkTo := x.crawlLink(it, s.Dest)
	cp := &copier{fault: x.opts.Fault, label: label, dirs: &x.dirs}
	if !dstExists && !x.opts.ForceCopy {
		var ix []byte
		hadIndex := false
		if it != nil {
			existing, err := readOptional(filepath.Join(src, archive.IndexFile))
			if err != nil {
				return err
			}
			hadIndex = existing != nil
			if ix, err = buildIndex(existing, it, tree); err != nil {
				return err
			}
		}
		if err := x.mark(jrecord{Step: stepPlanned, Src: s.Source, Dst: s.Dest, Mode: modeRename, Index: ix, Link: link, LinkTo: linkTo}, mustSurvivePowerLoss(it)); err != nil {
			return x.abandon(s, err)
		}
		renamed, _, err := cp.moveTree(src, dst, tree, false)
		if err != nil {
			return x.abandon(s, err)
		}
		if renamed {
			x.moved(s, files, size, false)
			// From here on the journal owns the entry: an error leaves it
			// pending and the next run writes the index it recorded.
			if err := x.renamed(s, dst, it, ix, hadIndex, link, linkTo); err != nil {
				x.unfinished.Add(1)
				return err
			}
			if copyMode == modeCrawl {
				return tidyCrawlLinks(dst)
			}
			return nil
		}
		// Another filesystem: moveTree copied into place instead. Record
		// the copy mode and continue with verification.
		if err := x.j.append(jrecord{Step: stepPlanned, Src: s.Source, Dst: s.Dest, Mode: copyMode, Fresh: true, Link: link, LinkTo: linkTo}, true); err != nil {
			cp.undo(dst)
			return x.abandon(s, err)
		}
	} else {
		if err := x.mark(jrecord{Step: stepPlanned, Src: s.Source, Dst: s.Dest, Mode: copyMode, Fresh: !dstExists, Link: link, LinkTo: linkTo}, mustSurvivePowerLoss(it)); err != nil {
			return x.abandon(s, err)
		}
		if _, _, err := cp.moveTree(src, dst, tree, true); err != nil {
			return x.abandon(s, err)
		}
	}
	// Until the deletion starts, a failure undoes the copy: the source is
	// intact and the destination gets back what it held.
	undo := func(err error) error {
		if uerr := cp.undo(dst); uerr != nil {
			err = fmt.Errorf("%w (and undoing the copy into %s failed: %v)", err, dst, uerr)
			x.unfinished.Add(1)
			return err
		}
		return x.abandon(s, err)
	}
	if err := x.mark(jrecord{Step: stepCopied, Src: s.Source}, false); err != nil {
		return undo(err)
	}
	if err := verifyCopy(src, dst, tree, projections(copyMode)); err != nil {
		return undo(err)
	}
	verified := tree
	if err := x.mark(jrecord{Step: stepVerified, Src: s.Source}, false); err != nil {
		return undo(err)
	}
	if it != nil {
		existing, err := readOptional(filepath.Join(dst, archive.IndexFile))
		if err != nil {
			return undo(err)
		}
		ix, err := buildIndex(existing, it, tree)
		if err != nil {
			return undo(err)
		}
		if !bytes.Equal(ix, existing) {
			if err := writeIndex(dst, ix, existing != nil); err != nil {
				return undo(err)
			}
		}
		if err := x.mark(jrecord{Step: stepIndexed, Src: s.Source}, false); err != nil {
			return undo(err)
		}
	}
	if copyMode == modeCrawl {
		if err := tidyCrawlLinks(dst); err != nil {
			return undo(err)
		}
	}
	return &deletion{s: s, src: src, dst: dst, mode: copyMode, verified: verified, files: files, size: size, link: link, linkTo: linkTo, undo: undo}
}

// deletion is a copied and verified snapshot whose source waits for the
// next batch to be deleted. It is returned as an error by relocate so the
// step is completed when the batch is done.
type deletion struct {
	s            *Step
	src, dst     string
	mode         string
	verified     []treeEntry
	files, size  int64
	link, linkTo string
	undo         func(error) error // before "deleting": undo the copy, record the failure
	complete     func(error)
}

// devOf returns the device of the filesystem holding p (0 if unknown).
func devOf(p string) uint64 {
	if fi, err := os.Stat(p); err == nil {
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			return uint64(st.Dev)
		}
	}
	return 0
}

func (d *deletion) Error() string { return "deletion of " + d.src + " pending" }

// finishDeletion deletes the source of one batched deletion and finishes
// its snapshot.
func (x *executor) finishDeletion(d *deletion) error {
	if err := x.fault(stepDeleting, d.s.Source); err != nil {
		x.unfinished.Add(1)
		return err
	}
	// From here on the journal owns the source: an error leaves it at
	// "deleting" and the next run finishes the deletion after verifying
	// again what is left.
	if err := x.finishDelete(d.s.Source, d.s.Dest, d.mode, d.verified); err != nil {
		x.unfinished.Add(1)
		return err
	}
	x.moved(d.s, d.files, d.size, true)
	if err := x.makeLink(d.link, d.linkTo); err != nil {
		x.unfinished.Add(1)
		return err
	}
	if err := x.mark(jrecord{Step: stepDone, Src: d.s.Source}, false); err != nil {
		x.unfinished.Add(1)
		return err
	}
	return nil
}

// renamed finishes a snapshot whose folder was renamed into place.
func (x *executor) renamed(s *Step, dst string, it *Item, ix []byte, replacing bool, link, linkTo string) error {
	if err := x.mark(jrecord{Step: stepCopied, Src: s.Source}, false); err != nil {
		return err
	}
	if it != nil {
		if err := writeIndex(dst, ix, replacing); err != nil {
			return err
		}
		if err := x.mark(jrecord{Step: stepIndexed, Src: s.Source}, false); err != nil {
			return err
		}
	}
	if err := x.makeLink(link, linkTo); err != nil {
		return err
	}
	return x.mark(jrecord{Step: stepDone, Src: s.Source}, false)
}

// mustSurvivePowerLoss reports whether the planned record of a move must
// be on disk before the move starts. A snapshot with a database row is
// found again by its id after a power loss (a renamed or half-copied
// folder at its destination is picked up from there), so an unsynced
// record suffices; other snapshots (orphans, dashed 0.9 folders, invalid
// and crawl folders) are known after the move only through the journal.
func mustSurvivePowerLoss(it *Item) bool {
	return it == nil || it.From != "db"
}

// abandon records that a step failed with its source intact and returns
// err. A failed journal write leaves the entry pending, which the next run
// rolls back the same way.
func (x *executor) abandon(s *Step, err error) error {
	if jerr := x.j.append(jrecord{Step: stepFailed, Src: s.Source, Err: err.Error()}, false); jerr != nil {
		x.unfinished.Add(1)
	}
	return err
}

// projections returns what verification may excuse for a mode: crawl
// links replaced by their compact-named successors, in crawl folders.
func projections(mode string) func(dst, rel string) bool {
	if mode == modeCrawl {
		return replacedCrawlLink
	}
	return nil
}

// finishDelete verifies what is left of src against dst and deletes it.
// With the tree this run just verified byte for byte, the check is a
// recheck of the entries' metadata; without (finishing an earlier run's
// deletion) every remaining byte is compared again.
func (x *executor) finishDelete(srcRel, dstRel, mode string, verified []treeEntry) error {
	src, dst := x.c.Path(srcRel), x.c.Path(dstRel)
	if ok, err := lexists(src); err != nil || !ok {
		return err
	}
	var tree []treeEntry
	var err error
	if verified != nil {
		tree, err = recheck(src, dst, verified, projections(mode))
	} else {
		tree, err = verifyTreeWith(src, dst, projections(mode))
	}
	if err != nil {
		return fmt.Errorf("verify %s again before deleting it: %w", src, err)
	}
	if err := removeTree(src, tree, x.opts.Fault, srcRel); err != nil {
		return err
	}
	// The unlinks become durable with the next journal fsync (which
	// commits the filesystem's earlier metadata) or the final syncfs; until
	// then the journal's durable "deleting" lets a run after a power loss
	// finish what is left.
	return x.mark(jrecord{Step: stepDeleted, Src: srcRel}, false)
}

// indexOnly writes the index.jsonl of a snapshot whose folder is (or is to
// be created) at its destination. It reports whether anything changed.
func (x *executor) indexOnly(s *Step) (bool, error) {
	it := s.Item
	dst := x.c.Path(s.Dest)
	existing, err := readOptional(filepath.Join(dst, archive.IndexFile))
	if err != nil {
		return false, err
	}
	var tree []treeEntry
	if s.Action == ActionIndex {
		if tree, err = walkTree(dst); err != nil {
			return false, fmt.Errorf("read %s: %w", dst, err)
		}
	}
	ix, err := buildIndex(existing, it, tree)
	if err != nil {
		return false, err
	}
	link, linkTo := x.crawlLink(it, s.Dest)
	linkOK := link == "" || x.linkPresent(link, linkTo)
	if existing != nil && bytes.Equal(ix, existing) && linkOK {
		return false, nil
	}
	label := s.Dest
	mode := modeIndex
	if s.Action == ActionCreate {
		mode = modeCreate
	}
	if err := x.mark(jrecord{Step: stepPlanned, Src: label, Dst: s.Dest, Mode: mode, Link: link, LinkTo: linkTo}, false); err != nil {
		return false, x.abandon(&Step{Source: label}, err)
	}
	if err := x.dirs.mkdirAll(dst); err != nil {
		return false, x.abandon(&Step{Source: label}, fmt.Errorf("create %s: %w", dst, err))
	}
	if !bytes.Equal(ix, existing) {
		if err := writeIndex(dst, ix, existing != nil); err != nil {
			return false, x.abandon(&Step{Source: label}, err)
		}
	}
	if err := x.mark(jrecord{Step: stepIndexed, Src: label}, false); err != nil {
		return false, x.abandon(&Step{Source: label}, err)
	}
	if err := x.makeLink(link, linkTo); err != nil {
		return false, x.abandon(&Step{Source: label}, err)
	}
	return true, x.mark(jrecord{Step: stepDone, Src: label}, false)
}

// syncAll makes everything this run wrote durable: one syncfs per
// filesystem (the data dir's, and those the copies went to).
func (x *executor) syncAll() error {
	dirs := []string{x.c.Dir, x.c.Path(archive.UsersDir), x.c.Path(archive.InvalidDir)}
	seen := map[uint64]bool{}
	for _, d := range dirs {
		fi, err := os.Stat(d)
		if err != nil {
			continue
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			if seen[uint64(st.Dev)] {
				continue
			}
			seen[uint64(st.Dev)] = true
		}
		if err := syncFS(d); err != nil {
			return err
		}
	}
	return nil
}

// writeIndex writes dir/index.jsonl. Replacing an existing file (the only
// copy of its foreign lines and unknown keys) goes through
// archive.WriteFile and its fsyncs; a new file, which the journal or the
// source folder can give again, through writeIndexFast.
func writeIndex(dir string, data []byte, replacing bool) error {
	if replacing {
		return archive.WriteFile(filepath.Join(dir, archive.IndexFile), data, 0o644)
	}
	return writeIndexFast(dir, data)
}

// writeIndexFast writes dir/index.jsonl atomically through an
// archive.Batch — a temp file renamed over it — without archive.WriteFile's
// two fsyncs, which would make a migration of 10k snapshots spend most of
// its time waiting for the disk. Durability comes in batches instead: the
// journal holds what a crash could lose (a rename's index bytes; for copies
// the source is deleted only after a syncfs), and the journal is cleared
// only after the run's final syncfs (syncAll).
func writeIndexFast(dir string, data []byte) error {
	return archive.NewBatch(dir).WriteFile(filepath.Join(dir, archive.IndexFile), data, 0o644)
}

// hasIndex reports whether the folder dir holds an index.jsonl.
func hasIndex(dir string) bool {
	_, err := os.Lstat(filepath.Join(dir, archive.IndexFile))
	return err == nil
}

// readOptional reads a file that may be absent (nil, nil).
func readOptional(p string) ([]byte, error) {
	data, err := archive.ReadRegular(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", p, err)
	}
	return data, nil
}

// buildIndex returns the index.jsonl of a migrated snapshot: the existing
// file (if any) with the Snapshot record merged (unknown keys survive),
// the item's foreign lines kept verbatim, and its results added (a result
// already present, by id or by plugin, hook and start time, is not
// repeated). size is the bytes of the snapshot's files, used as
// archive_size when the item has none.
func buildIndex(existing []byte, it *Item, tree []treeEntry) ([]byte, error) {
	ix, _ := archive.ParseIndex(existing)
	size := payloadBytes(tree)
	snap := it.Snapshot
	snap.FSVersion = layout.Current
	if snap.Status == "" {
		snap.Status = "sealed"
	}
	if snap.ArchiveSize == 0 && size > 0 {
		if old, ok := ix.Snapshot(); ok && old.ArchiveSize != 0 {
			snap.ArchiveSize = old.ArchiveSize
		} else {
			snap.ArchiveSize = size
		}
	}
	ix.SetSnapshot(snap)
	have := map[string]bool{}
	for _, l := range ix.Foreign() {
		have[string(l)] = true
	}
	for _, l := range it.Foreign {
		if len(bytes.TrimSpace(l)) == 0 || have[string(l)] {
			continue
		}
		have[string(l)] = true
		ix.Append(l)
	}
	old := ix.Results()
	for _, r := range hydrateOutputs(it.Results, tree) {
		if r.SnapshotID == "" {
			r.SnapshotID = snap.ID
		}
		if dupResult(old, r) {
			continue
		}
		ix.AddResult(r)
	}
	return ix.Bytes(), nil
}

// dupResult reports whether r is already among rs under another id (or
// none): same plugin, hook, start time and output.
func dupResult(rs []archive.Result, r archive.Result) bool {
	for i := range rs {
		o := &rs[i]
		if r.ID != "" && o.ID == r.ID {
			return false // AddResult merges it in place
		}
	}
	for i := range rs {
		o := &rs[i]
		if o.Plugin == r.Plugin && o.HookName == r.HookName && o.StartTS.Equal(r.StartTS) && o.OutputStr == r.OutputStr {
			return true
		}
	}
	return false
}

// crawlLink returns the crawl symlink of a snapshot at dest (both slash
// paths relative to the data dir): the link's path and its relative
// target, or "" when the snapshot has no known crawl.
func (x *executor) crawlLink(it *Item, dest string) (link, target string) {
	if it == nil || it.Crawl == nil || !layout.IsCompactID(it.Crawl.ID) {
		return "", ""
	}
	dir := x.crawlDir(it.Crawl)
	if dir == "" {
		return "", ""
	}
	parent := path.Join(dir, "snapshots", layout.Domain(it.Snapshot.URL))
	rel, err := filepath.Rel(x.c.Path(parent), x.c.Path(dest))
	if err != nil {
		return "", ""
	}
	return path.Join(parent, it.Snapshot.ID), filepath.ToSlash(rel)
}

// crawlDir returns the compact-id folder of a crawl ("" when it has no
// valid one), computed once per crawl: an automatic crawl's urls list
// every snapshot of the collection.
func (x *executor) crawlDir(cr *Crawl) string {
	x.mu.Lock()
	defer x.mu.Unlock()
	if d, ok := x.crawlDirs[cr]; ok {
		return d
	}
	var dir string
	if cr.Dir != "" {
		dir = path.Join(path.Dir(cr.Dir), cr.ID)
	} else if d, err := layout.CrawlDir(cr.User, cr.CreatedAt, cr.URLs, cr.ID); err == nil {
		dir = d
	}
	if x.crawlDirs == nil {
		x.crawlDirs = map[*Crawl]string{}
	}
	x.crawlDirs[cr] = dir
	return dir
}

func (x *executor) linkPresent(link, target string) bool {
	t, err := os.Readlink(x.c.Path(link))
	return err == nil && t == target
}

// makeLink creates (or corrects) a crawl symlink. A real file or folder
// at the link's place is left alone; a stale link under the snapshot's
// dashed id is removed.
func (x *executor) makeLink(link, target string) error {
	if link == "" {
		return nil
	}
	p := x.c.Path(link)
	if dashed := layout.Dashed(path.Base(link)); dashed != "" {
		old := filepath.Join(filepath.Dir(p), dashed)
		if fi, err := os.Lstat(old); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			if err := os.Remove(old); err != nil {
				return fmt.Errorf("remove stale crawl link %s: %w", old, err)
			}
		}
	}
	fi, err := os.Lstat(p)
	switch {
	case err == nil && fi.Mode()&fs.ModeSymlink == 0:
		return nil
	case err == nil:
		if t, _ := os.Readlink(p); t == target {
			return nil
		}
		if err := os.Remove(p); err != nil {
			return fmt.Errorf("replace crawl link %s: %w", p, err)
		}
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	if err := x.dirs.mkdirAll(filepath.Dir(p)); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(p), err)
	}
	if err := os.Symlink(target, p); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("create crawl link %s: %w", p, err)
	}
	return nil
}

// tidyCrawlLinks removes, in a crawl folder, the symlinks named by a
// snapshot's dashed id that a link named by its compact id has replaced
// (a merge of a dashed crawl folder into an existing compact one brings
// them along).
func tidyCrawlLinks(crawl string) error {
	domains, err := readNames(filepath.Join(crawl, "snapshots"))
	if err != nil {
		return err
	}
	for _, d := range domains {
		dir := filepath.Join(crawl, "snapshots", d)
		names, err := readNames(dir)
		if err != nil {
			continue
		}
		for _, n := range names {
			compact, ok := layout.ParseID(n)
			if !ok || !layout.IsDashedID(n) {
				continue
			}
			old := filepath.Join(dir, n)
			fi, err := os.Lstat(old)
			if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
				continue
			}
			if nfi, err := os.Lstat(filepath.Join(dir, compact)); err == nil && nfi.Mode()&fs.ModeSymlink != 0 {
				if err := os.Remove(old); err != nil {
					return fmt.Errorf("remove stale crawl link %s: %w", old, err)
				}
			}
		}
	}
	return nil
}

// recover finishes or rolls back the entries an interrupted run left
// pending. Sources it cannot settle are blocked for this run.
func (x *executor) recover(pend []jrecord) {
	x.blocked = map[string]bool{}
	for _, r := range pend {
		if err := x.recoverOne(r); err != nil {
			x.blocked[r.Src] = true
			x.unfinished.Add(1)
			x.p.Warnf("%s: %v (left as it is; run again once fixed)", r.Src, err)
			x.fail(r.Src, fmt.Errorf("finish interrupted migration: %w", err))
			continue
		}
		x.add(func(st *Stats) { st.Recovered++ })
	}
}

func (x *executor) recoverOne(r jrecord) error {
	src, dst := x.c.Path(r.Src), x.c.Path(r.Dst)
	srcOK, err := lexists(src)
	if err != nil {
		return err
	}
	dstOK, err := lexists(dst)
	if err != nil {
		return err
	}
	if dstOK {
		// An index write the crash cut short leaves its temp file.
		if err := removeIndexTemps(dst); err != nil {
			return err
		}
	}
	switch {
	case r.Mode == modeRename && !srcOK && dstOK:
		// Renamed; the index (and link) may be missing.
		if r.Index != nil {
			cur, err := readOptional(filepath.Join(dst, archive.IndexFile))
			if err != nil {
				return err
			}
			if !bytes.Equal(cur, r.Index) {
				if err := archive.WriteFile(filepath.Join(dst, archive.IndexFile), r.Index, 0o644); err != nil {
					return err
				}
			}
		}
		if err := x.makeLink(r.Link, r.LinkTo); err != nil {
			return err
		}
		x.p.Infof("    Finished interrupted migration: %s", r.Src)
		return x.j.append(jrecord{Step: stepDone, Src: r.Src}, false)
	case (r.Mode == modeIndex || r.Mode == modeCreate) && dstOK && hasIndex(dst):
		// Indexed (whether or not the journal says so); the crawl link
		// may be missing, and the next scan takes the folder for current
		// and would not make it.
		if err := x.makeLink(r.Link, r.LinkTo); err != nil {
			return err
		}
		x.p.Infof("    Finished interrupted migration: %s", r.Src)
		return x.j.append(jrecord{Step: stepDone, Src: r.Src}, false)
	case r.Step == stepDeleting || r.Step == stepDeleted:
		if !dstOK {
			return fmt.Errorf("destination %s is missing", dst)
		}
		if err := x.finishDelete(r.Src, r.Dst, r.Mode, nil); err != nil {
			return err
		}
		if err := x.makeLink(r.Link, r.LinkTo); err != nil {
			return err
		}
		x.p.Infof("    Finished interrupted migration: %s", r.Src)
		return x.j.append(jrecord{Step: stepDone, Src: r.Src}, false)
	}
	// The source is intact (nothing is deleted before "deleting"): remove
	// what the interrupted copy left half-written and let this run redo it.
	if r.Dst != "" && r.Mode != modeIndex && r.Mode != modeCreate {
		if err := removeStaging(dst); err != nil {
			return err
		}
		if r.Mode != modeRename && r.Fresh && dstOK {
			if !srcOK {
				return fmt.Errorf("source %s of an unfinished copy is missing; keeping %s", src, dst)
			}
			// The copy created dst and had not finished: undo it.
			if err := os.RemoveAll(dst); err != nil {
				return fmt.Errorf("undo unfinished copy %s: %w", dst, err)
			}
		}
	}
	return x.j.append(jrecord{Step: stepFailed, Src: r.Src, Err: "interrupted; redone by the next run"}, false)
}

// removeStaging deletes the staging folders beside dst and the temp files
// inside it that an interrupted copy left.
func removeStaging(dst string) error {
	parent, base := filepath.Dir(dst), filepath.Base(dst)
	names, err := readNames(parent)
	if err != nil {
		return err
	}
	prefix := "." + base + archive.TempMarker
	for _, n := range names {
		if strings.HasPrefix(n, prefix) {
			if err := os.RemoveAll(filepath.Join(parent, n)); err != nil {
				return fmt.Errorf("remove staging folder %s: %w", filepath.Join(parent, n), err)
			}
		}
	}
	if fi, err := os.Lstat(dst); err != nil || !fi.IsDir() {
		return nil
	}
	return filepath.WalkDir(dst, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != dst && archive.IsTemp(d.Name()) && strings.Contains(d.Name(), archive.TempMarker) {
			if err := os.RemoveAll(p); err != nil {
				return fmt.Errorf("remove temp file %s: %w", p, err)
			}
			if d.IsDir() {
				return filepath.SkipDir
			}
		}
		return nil
	})
}

// removeIndexTemps deletes the temp files of index.jsonl writes in dir.
func removeIndexTemps(dir string) error {
	names, err := readNames(dir)
	if err != nil {
		return err
	}
	for _, n := range names {
		if strings.HasPrefix(n, "."+archive.IndexFile+archive.TempMarker) {
			if err := os.Remove(filepath.Join(dir, n)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("remove temp file %s: %w", filepath.Join(dir, n), err)
			}
		}
	}
	return nil
}

func readNames(dir string) ([]string, error) {
	d, err := os.Open(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.Readdirnames(-1)
}
