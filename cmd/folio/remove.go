package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/archive/catalog"
)

func init() { commands = append(commands, newRemoveCmd) }

// removeFlags are the choices of one 'folio remove'.
type removeFlags struct {
	all, del, yes, dryRun, jsonl, purge, unhide bool

	fault func(step, what string) error // FOLIO_FAULT
}

func newRemoveCmd(e *env) *cobra.Command {
	var (
		q   catalog.Query
		sel *selection
		f   removeFlags
	)
	cmd := &cobra.Command{
		Use:   "remove PATTERN...",
		Short: "Take snapshots out of the catalog (and with --delete, move their folders to the trash)",
		Long: `Take snapshots out of the catalog. PATTERNs and the filter flags select
snapshots as in 'folio list', except that a PATTERN is a whole URL unless
--filter-type says otherwise (exact is the default, as in ArchiveBox's remove);
--all selects every snapshot. remove prints what it will remove, one line per
snapshot (timestamp, URL, folder), and a count, then removes them: the next
'folio list', 'folio search' and 'folio export' leave them out. Before it
removes more than one snapshot it asks on the terminal; --yes answers for you,
and without a terminal to ask on (a script, a pipe) --yes is needed, so that a
pattern that matches more than meant changes nothing unasked.

Without --delete the folders stay where they are, untouched, and are listed in
removed/hidden.jsonl (one JSON line per folder: its path, id, URL and when it
was hidden), which every reindex, full or not, and 'folio watch' honour, so a
removed snapshot does not come back. To bring snapshots back, run
  folio remove --unhide ...
with the folders or URLs remove printed, or the same patterns and filters
(--tag, --status, --before, --after, -f) that removed them, or --all: it
selects among the removed snapshots as remove selects among the others. A
selection that matches no removed snapshot is an error. (Deleting lines from
removed/hidden.jsonl and running 'folio reindex' does the same.)

With --delete the folders are moved, by rename, to
removed/trash/<YYYYMMDD-HHMMSS>/<folder path>; nothing is copied or deleted.
Folders left empty above them are removed. A folder on another filesystem than
removed/trash is left where it is, still in the catalog, and remove exits 3. To
bring a deleted snapshot back, move its folder from the trash to its path and
run 'folio reindex'. The plan is written to
removed/trash/<YYYYMMDD-HHMMSS>/remove.journal before the first folder moves
and removed at the end: a remove that is killed half way is finished by the
next remove (any but --dry-run), which moves the rest and takes what is in the
trash out of the catalog. --delete asks before it moves anything; --yes
answers for you, and without a terminal to ask on, --yes is needed.

removed/ is part of the tree, not of the catalog: deleting .folio/ and running
'folio reindex' keeps removed snapshots removed and the trash whole. It is
never served or exported, and ArchiveBox does not look there. An earlier folio
kept the list and the trash in .folio/; the first command that takes the
collection lock moves them to removed/.

--purge-trash deletes everything in removed/trash for good, after saying how
many folders and bytes it frees (and asking, as --delete does).

--dry-run prints the plan and changes nothing. --jsonl prints one JSON record
per removed snapshot on stdout (the plan then goes to stderr).

A collection exported in place has its export brought up to date once the
snapshots are removed (or brought back), and remove ends with the file:// URL
of its root page (on stderr with --jsonl).`,
		Example: `  folio remove https://example.com/page
  folio remove -f domain ads.example.com --yes
  folio remove --unhide -f domain ads.example.com
  folio remove --tag junk --delete --yes
  folio remove --dry-run --before 2015-01-01
  folio remove --unhide archive/users/system/snapshots/20240720/example.com/0190f3c2a1b27c3d8e4f5a6b7c8d0001
  folio remove --purge-trash`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := sel.resolve(args); err != nil {
				return err
			}
			if err := f.check(e, sel); err != nil {
				return err
			}
			var err error
			if f.fault, err = envFault(); err != nil {
				return err
			}
			if f.fault == nil {
				f.fault = func(string, string) error { return nil }
			}
			coll, unlock, err := e.openFor("remove", !f.dryRun)
			if err != nil {
				return err
			}
			defer unlock()
			if f.del && !f.dryRun {
				release, err := lockFolders(cmd.Context(), coll, e.printer())
				if err != nil {
					return err
				}
				defer release()
			}
			var kept int
			var pending error
			if !f.dryRun {
				p := e.printer()
				kept, pending, err = finishRemovals(cmd, coll, p, f.fault)
				p.done()
				if err != nil {
					return err
				}
			}
			if err := runRemove(cmd, e, coll, sel, f); err != nil {
				return err
			}
			if !f.dryRun && !f.purge {
				unlock() // the export takes the lock
				f.refresh(cmd.Context(), e, coll)
			}
			if kept > 0 {
				return fmt.Errorf("%s of a removal cut short could not be moved to the trash: %w", plural(kept, "folder"), archive.ErrPartial)
			}
			return pending
		},
	}
	fl := cmd.Flags()
	sel = addSelectionFlags(fl, &q)
	q.FilterType = catalog.FilterExact // as ArchiveBox's remove: a pattern is one URL
	fl.Lookup("filter-type").DefValue = catalog.FilterExact
	fl.BoolVar(&f.all, "all", false, "select every snapshot")
	fl.BoolVar(&f.del, "delete", false, "also move the snapshot folders to removed/trash/<YYYYMMDD-HHMMSS>/")
	fl.BoolVarP(&f.yes, "yes", "y", false, "do not ask before removing more than one snapshot, moving folders to the trash or purging it")
	fl.BoolVar(&f.dryRun, "dry-run", false, "print the plan and change nothing")
	fl.BoolVar(&f.jsonl, "jsonl", false, "print one JSON record per removed snapshot on stdout")
	fl.BoolVar(&f.purge, "purge-trash", false, "delete everything in removed/trash for good")
	fl.BoolVar(&f.unhide, "unhide", false, "bring back the removed snapshots the patterns and filters select (or the folders remove printed) from removed/hidden.jsonl")
	return cmd
}

// runRemove does what the flags ask.
func runRemove(cmd *cobra.Command, e *env, coll *archive.Collection, sel *selection, f removeFlags) error {
	switch {
	case f.purge:
		return purgeTrash(e, coll, f)
	case f.unhide:
		return unhideSelected(cmd, e, coll, sel)
	}
	return remove(cmd, e, coll, *sel.q, f)
}

// check refuses flags that do not go together, before anything is opened.
func (f removeFlags) check(e *env, sel *selection) error {
	switch {
	case f.purge && (f.unhide || f.del || f.all || sel.narrowed()):
		return usagef("--purge-trash empties the trash: it takes no patterns, filters, --all, --delete or --unhide")
	case f.unhide && (f.del || f.dryRun):
		return usagef("--unhide brings removed snapshots back: it cannot go with --delete or --dry-run")
	case f.unhide && f.all && sel.narrowed():
		return usagef("--all selects every removed snapshot: leave out the patterns and filters, or --all")
	case f.unhide && !f.all && !sel.narrowed():
		return usagef("--unhide needs a selection: the folders or URLs remove printed, a PATTERN, a filter (--tag, --status, --after, --before) or --all")
	case f.unhide:
	case f.all && sel.narrowed():
		return usagef("--all selects every snapshot: leave out the patterns and filters, or --all")
	case !f.purge && !f.all && !sel.narrowed():
		return usagef("no snapshots chosen: give a PATTERN, a filter (--tag, --status, --after, --before) or --all")
	}
	if (f.del || f.purge) && !f.yes && !f.dryRun && !isTerminal(e.stdin) {
		return usagef("stdin is not a terminal to ask on: pass --yes to confirm (nothing was changed)")
	}
	return nil
}

func isTerminal(r io.Reader) bool {
	file, ok := r.(*os.File)
	return ok && term.IsTerminal(int(file.Fd()))
}

// confirm asks question on stderr and reads the answer from stdin.
func confirm(e *env, question string) error {
	fmt.Fprintf(e.stderr, "%s [y/N] ", question)
	answer, _ := bufio.NewReader(e.stdin).ReadString('\n')
	switch strings.ToLower(strings.TrimSpace(answer)) {
	case "y", "yes":
		return nil
	}
	return fmt.Errorf("not confirmed: nothing was changed")
}

// removal is one snapshot of the plan.
type removal struct {
	Dir       string `json:"dir"`
	ID        string `json:"id"`
	URL       string `json:"url"`
	Timestamp string `json:"timestamp"`
	Trash     string `json:"trash,omitempty"` // where --delete moved the folder
}

func remove(cmd *cobra.Command, e *env, coll *archive.Collection, q catalog.Query, f removeFlags) error {
	ctx := cmd.Context()
	cat, err := fillCatalog(cmd, e, coll, true, catalog.Open) // the lock is held
	if err != nil {
		return err
	}
	defer cat.Close()
	var plan []removal
	err = cat.Each(ctx, q, func(en catalog.Entry) error {
		s := en.Snapshot
		plan = append(plan, removal{Dir: en.Dir, ID: s.ID, URL: s.URL, Timestamp: s.Timestamp})
		return nil
	})
	if err != nil {
		return queryUsage(err)
	}
	p := e.printer()
	defer p.done()
	if len(plan) == 0 {
		p.Warnf("the selection matches no snapshot in the catalog: nothing removed")
		return nil
	}
	out := e.stdout
	if f.jsonl {
		out = e.stderr
	}
	for _, r := range plan {
		fmt.Fprintf(out, "%s\t%s\t%s\n", r.Timestamp, r.URL, r.Dir)
	}
	now := time.Now().UTC().Truncate(time.Second)
	stamp := now.Format("20060102-150405")
	switch {
	case f.dryRun:
		fmt.Fprintf(out, "%s would be removed (dry run: nothing changed)\n", plural(len(plan), "snapshot"))
		return nil
	case f.del:
		fmt.Fprintf(out, "%s to remove, the folders to move to %s/%s/\n", plural(len(plan), "snapshot"), archive.TrashDir, stamp)
		if !f.yes {
			if err := confirm(e, fmt.Sprintf("remove %s and move their folders to %s/%s/?", plural(len(plan), "snapshot"), archive.TrashDir, stamp)); err != nil {
				return err
			}
		}
	default:
		fmt.Fprintf(out, "%s to remove\n", plural(len(plan), "snapshot"))
		if len(plan) > 1 && !f.yes {
			if !isTerminal(e.stdin) {
				return usagef("%d snapshots match: pass --yes to remove them all (stdin is not a terminal to ask on; nothing was changed)", len(plan))
			}
			if err := confirm(e, fmt.Sprintf("remove %s from the catalog (their folders are kept)?", plural(len(plan), "snapshot"))); err != nil {
				return err
			}
		}
	}

	var done []removal
	var partial error // folders the next remove tries again
	if f.del {
		done, partial = trashPlan(ctx, coll, cat, p, plan, stamp, f.fault)
		if partial != nil && !errors.Is(partial, archive.ErrPartial) {
			return partial
		}
	} else {
		hide := make([]archive.Hidden, len(plan))
		for i, r := range plan {
			hide[i] = archive.Hidden{Dir: r.Dir, ID: r.ID, URL: r.URL, Time: now}
		}
		if err := coll.Hide(hide); err != nil {
			return err
		}
		dirs := make([]string, len(plan))
		for i, r := range plan {
			dirs[i] = r.Dir
		}
		// The catalog is written whatever happens next (Ctrl-C included).
		if _, err := cat.Drop(context.WithoutCancel(ctx), dirs); err != nil {
			return err
		}
		done = plan
	}
	if f.jsonl {
		enc := json.NewEncoder(e.stdout)
		for _, r := range done {
			if err := enc.Encode(r); err != nil {
				return err
			}
		}
	}
	if f.del {
		p.Infof("removed %s from the catalog; the folders are in %s/%s/", plural(len(done), "snapshot"), archive.TrashDir, stamp)
	} else {
		p.Infof("removed %s from the catalog; the folders are kept and listed in %s", plural(len(done), "snapshot"), archive.HiddenFile)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if partial != nil {
		return partial
	}
	if failed := len(plan) - len(done); failed > 0 {
		return fmt.Errorf("%d of %s could not be moved to the trash: %w", failed, plural(len(plan), "folder"), archive.ErrPartial)
	}
	return nil
}

// trashPlan moves the plan's folders to the trash batch stamp, journaled
// (archive.BeginTrash) so that a kill at any point is finished by the
// next remove, and drops their rows. It returns the removals done.
func trashPlan(ctx context.Context, coll *archive.Collection, cat *catalog.Catalog, p *printer, plan []removal, stamp string, fault func(step, what string) error) ([]removal, error) {
	b := archive.TrashBatch{Stamp: stamp, Items: make([]archive.TrashItem, len(plan))}
	for i, r := range plan {
		b.Items[i] = archive.TrashItem{Dir: r.Dir, ID: r.ID, URL: r.URL, Timestamp: r.Timestamp}
	}
	if err := coll.BeginTrash(b); err != nil {
		return nil, err
	}
	if err := fault("journaled", stamp); err != nil {
		return nil, err
	}
	gone, _, err := coll.FinishTrash(b, trashRun(ctx, cat, p, fault))
	out := map[string]bool{}
	for _, d := range gone {
		out[d] = true
	}
	var done []removal
	for _, r := range plan {
		if out[r.Dir] {
			r.Trash = path.Join(archive.TrashDir, stamp, r.Dir)
			done = append(done, r)
		}
	}
	return done, err
}

// trashRun is how a removal to the trash reaches the catalog and the user.
func trashRun(ctx context.Context, cat *catalog.Catalog, p *printer, fault func(step, what string) error) archive.TrashRun {
	return archive.TrashRun{
		Drop: func(dirs []string) error {
			_, err := cat.Drop(context.WithoutCancel(ctx), dirs)
			return err
		},
		Warn: func(err error, kept bool) {
			if kept {
				p.Warnf("%v; the folder is kept, still in the catalog", err)
			} else {
				p.Warnf("%v", err)
			}
		},
		Stop:  func() bool { return ctx.Err() != nil },
		Fault: fault,
	}
}

// finishRemovals finishes the removals to the trash a kill cut short,
// before this remove does anything else: the folders of their plans still
// in the tree move to the trash, and the catalog drops every folder out
// of the tree. kept counts the folders that stayed (reported already).
func finishRemovals(cmd *cobra.Command, coll *archive.Collection, p *printer, fault func(step, what string) error) (kept int, pending, err error) {
	batches, err := coll.UnfinishedTrash()
	if err != nil || len(batches) == 0 {
		return 0, nil, err
	}
	ctx := cmd.Context()
	cat, err := catalog.Open(ctx, coll)
	if err != nil {
		return 0, nil, err
	}
	defer cat.Close()
	for _, b := range batches {
		p.Infof("finishing the removal to %s/%s/ that was cut short (%s)", archive.TrashDir, b.Stamp, plural(len(b.Items), "snapshot"))
		gone, k, err := coll.FinishTrash(b, trashRun(ctx, cat, p, fault))
		kept += k
		if errors.Is(err, archive.ErrPartial) {
			// A folder that cannot move yet (its journal is kept for the
			// next remove) must not stop the removal asked for now; the
			// command ends partial.
			p.Warnf("%v", err)
			pending = err
			continue
		}
		if err != nil {
			return kept, pending, err
		}
		p.Infof("removed %s from the catalog; the folders are in %s/%s/", plural(len(gone), "snapshot"), archive.TrashDir, b.Stamp)
	}
	return kept, pending, ctx.Err()
}

// unhide takes folders out of the hidden list and reindexes them.
func unhide(cmd *cobra.Command, e *env, coll *archive.Collection, dirs []string) error {
	found, err := coll.Unhide(dirs)
	if err != nil || len(found) == 0 {
		return err
	}
	p := e.printer()
	defer p.done()
	st, err := reindex(cmd, coll, catalog.ReindexOptions{Scope: found, Printer: p})
	if err != nil {
		return err
	}
	p.Infof("brought back %s", plural(st.Added, "snapshot"))
	return nil
}

// purgeTrash deletes what removed/trash holds.
func purgeTrash(e *env, coll *archive.Collection, f removeFlags) error {
	u, err := coll.Trashed()
	if err != nil {
		return err
	}
	p := e.printer()
	defer p.done()
	if u.Files == 0 && u.Folders == 0 {
		p.Infof("%s is empty", archive.TrashDir)
		return nil
	}
	what := fmt.Sprintf("%s, %s (%s, %d bytes)", plural(u.Folders, "snapshot folder"), plural(u.Files, "file"), archive.HumanBytes(u.Bytes), u.Bytes)
	if f.dryRun {
		fmt.Fprintf(e.stdout, "purging %s would free %s (dry run: nothing changed)\n", archive.TrashDir, what)
		return nil
	}
	if !f.yes {
		if err := confirm(e, fmt.Sprintf("delete %s from %s for good?", what, archive.TrashDir)); err != nil {
			return err
		}
	}
	if err := coll.PurgeTrash(); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "freed %s\n", what)
	return nil
}
