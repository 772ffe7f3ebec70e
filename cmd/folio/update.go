package main

import (
	"errors"
	"os"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/archive/catalog"
	"github.com/folio-archive/folio/layout"
	"github.com/folio-archive/folio/migrate"
)

func init() { commands = append(commands, newUpdateCmd) }

func newUpdateCmd(e *env) *cobra.Command {
	var (
		migrateOnly bool
		opts        migrate.Options
		retry       retryFlags
		q           catalog.Query
		sel         *selection
	)
	cmd := &cobra.Command{
		Use:   "update [PATTERN...] | update --migrate-only",
		Short: "Run failed and missing plugins again on snapshots, or migrate legacy folders",
		Long: `Without --migrate-only: run capture plugins again, in place, on the existing
snapshots PATTERNs and the filter flags select (all when none is given;
--filter-type defaults to exact, as ArchiveBox's update). A plugin runs when
its newest result failed (or was cut short) or it has none (it is enabled
but never ran); --plugins narrows the plugins, --overwrite runs the ones
that succeeded too. hashes runs last again whenever a plugin ran. Each
snapshot goes to started, gets the new ArchiveResult records in its
index.jsonl and is sealed again; the catalog is updated at the end. A
plugin's earlier folder is moved aside while it runs and removed only once
the new result is recorded: when the new run does not succeed, the earlier
folder is put back, and an earlier result that did not fail keeps its
record. Snapshots not sealed (queued, or left started by a killed run) are
always taken and sealed; paused snapshots and legacy folders are left
alone. --dry-run prints which plugins would run on which snapshots. Exit 3
when some plugin failed again, 130 when interrupted (what finished is
recorded; the next update does the rest, and puts back a folder a kill
left moved aside). 'folio add --update URL' does the same for a URL the
collection has. As with add, each snapshot is named as it starts and ends,
and a collection exported in place has its export brought up to date (after
--migrate-only too), the run ending with the file:// URL of its root page.

With --migrate-only: bring every snapshot of the collection to the current layout (fs_version 0.9.4):
legacy archive/<timestamp>/ folders of ArchiveBox 0.4-0.8 (also those named by a
database row's timestamp that is not epoch seconds, such as 20240101120000.000000),
0.9 folders named by dashed ids, and rows of a legacy index.sqlite3 (read, never
written) that have no folder yet. Each folder is renamed, or copied and verified
byte for byte before its source is deleted; differing files are never
overwritten. A snapshot with two folders (an earlier ArchiveBox run began to
copy it) gets both merged into one; a differing index.json of the second is kept
beside the first as index.<folder name>.json. Folders that cannot be identified
go to invalid/<YYYYMMDD>/. A journal in .folio/ lets a run killed at any point be
finished by the next one. The catalog is brought up to date at the end. A second
run finds nothing to do.

--dry-run prints the plan and changes nothing. Exit 3 when some entries failed
(their folders stay intact), 130 when interrupted (run again, or with the
printed --resume value). A run never ends "complete" while a snapshot's folder
stays behind: one still under archive/ at the end, or one that holds a snapshot
but has no timestamp name and no database row, is named and makes it exit 3.

Symlinks are not followed out of place: a folder below archive/users/ (user,
snapshots/, date, domain) that is a symlink is neither read nor written
through, so a snapshot headed below one fails and stays where it is (exit 3);
a legacy index.json or index.jsonl that is a symlink fails its folder the same
way. index.sqlite3 (and its -wal) must be a regular file, not a symlink, fifo
or device, or the run stops before anything moves (exit 1); it is read from a
copy in $TMPDIR (folio-legacydb-<pid>-*), and copies a killed run left there
are removed by the next run. A full disk stops the run at once with one line
naming the file system (exit 1): free some space and run again to finish.
Folder names holding control characters are printed quoted ("a\nb").

While 'folio worker' processes run on the collection's job queue, update (which
captures here) fails as locked (exit 11): stop the workers first. Workers
started during an update wait for it to end.`,
		Example: `  folio update --dry-run
  folio update https://example.com/
  folio update -f domain example.com --plugins screenshot,pdf --overwrite
  folio update --migrate-only`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !migrateOnly {
				return runRetry(cmd, e, args, sel, retry, opts.DryRun)
			}
			if err := retry.onlyCapture(cmd); err != nil {
				return err
			}
			var err error
			if opts.BatchSize < 1 {
				return usagef("--batch-size must be at least 1")
			}
			if opts.Workers, err = retry.parallelOr(cmd, 8); err != nil {
				return err
			}
			if opts.Resume != "" && !resumable(opts.Resume) {
				return usagef("--resume %q: want a legacy timestamp such as 1609459200.123456 (as an interrupted run prints it)", opts.Resume)
			}
			if opts.Fault, err = envFault(); err != nil {
				return err
			}
			opts.ForceCopy = os.Getenv("FOLIO_MIGRATE_COPY") == "1"
			coll, unlock, err := e.openFor("update --migrate-only", !opts.DryRun)
			if err != nil {
				return err
			}
			defer unlock()
			if !opts.DryRun {
				release, err := lockFolders(cmd.Context(), coll, e.printer())
				if err != nil {
					return err
				}
				defer release()
			}
			p := e.printer()
			defer p.done()
			opts.Printer = p
			opts.PlanOut = e.stdout
			ctx := cmd.Context()
			st, runErr := migrate.Run(ctx, coll, opts)
			if st == nil || opts.DryRun {
				return runErr
			}
			migrateErr := runErr
			// On a full disk the catalog could not be written either.
			if ctx.Err() == nil && !errors.Is(runErr, syscall.ENOSPC) {
				p.Infof("[*] Phase 3: Running filesystem maintenance until idle...")
				if err := updateCatalog(cmd, coll, migrate.QuotePrinter(p)); err != nil && runErr == nil {
					runErr = err
				}
			}
			if err := st.WriteTable(e.stdout, migrateErr); err != nil && runErr == nil {
				runErr = err
			}
			for _, f := range st.Failures {
				p.Warnf("%s: %s", archive.Printable(f.Source), archive.Printable(f.Err.Error()))
			}
			unlock() // the export takes the lock
			siteRefresh{coll: coll, p: p, out: e.stdout}.run(ctx, nil)
			return runErr
		},
	}
	f := cmd.Flags()
	f.BoolVar(&migrateOnly, "migrate-only", false, "only migrate legacy folders and databases to the current layout")
	f.BoolVar(&opts.DryRun, "dry-run", false, "print the plan (which plugins run where; with --migrate-only what moves where, what goes to invalid/, what is skipped and why) and change nothing")
	f.StringVar(&opts.Resume, "resume", "", "skip legacy folders and rows whose timestamp sorts after `TS`")
	f.IntVar(&opts.BatchSize, "batch-size", 500, "journal records per fsync batch and entries per progress line")
	retry.register(f)
	sel = addSelectionFlags(f, &q)
	q.FilterType = catalog.FilterExact
	f.Lookup("filter-type").DefValue = catalog.FilterExact
	return cmd
}

// updateCatalog brings the catalog in line with the migrated tree.
func updateCatalog(cmd *cobra.Command, coll *archive.Collection, p archive.Printer) error {
	cat, err := catalog.Open(cmd.Context(), coll)
	if err != nil {
		return err
	}
	_, err = cat.Reindex(cmd.Context(), catalog.ReindexOptions{Printer: p})
	if cerr := cat.Close(); err == nil {
		err = cerr
	}
	return err
}

// resumable reports whether ts can be a --resume value: a legacy folder
// name or a snapshot timestamp, the two an interrupted run prints.
func resumable(ts string) bool {
	_, folder := layout.LegacyTimestamp(ts)
	_, number := layout.PyFloat(ts)
	return folder || number
}
