package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"time"

	"github.com/spf13/cobra"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/archive/catalog"
	"github.com/folio-archive/folio/verify"
)

func init() { commands = append(commands, newVerifyCmd) }

func newVerifyCmd(e *env) *cobra.Command {
	var (
		q     catalog.Query
		sel   *selection
		opts  verify.Options
		jsonl bool
	)
	cmd := &cobra.Command{
		Use:   "verify [PATTERN...]",
		Short: "Re-hash files against hashes.json and check the catalog against the tree",
		Long: `Prove that the snapshot folders still hold the files that were captured.
For every snapshot of the catalog (or those PATTERNs and the filter flags
select, as in 'folio list'):

  - each file is compared with the folder's hashes/hashes.json, size first,
    then sha256: files missing, changed, or present but not listed are
    reported (the root index.jsonl, index.json and index.html are rewritten
    after the hashes are taken, so they are checked as indexes instead);
  - the index file must parse, hold a Snapshot record, and be the one the
    catalog read (else run 'folio reindex');
  - a catalog row whose folder is gone, and (when nothing is selected)
    snapshot folders the catalog does not know, are reported, and so is,
    every time until it is fixed, a folder the catalog could not read:
    its index.jsonl missing, unreadable or not parsing ('folio reindex'
    does not make it go away; it keeps the reason, which verify repeats);
  - every WARC file of the snapshot (warc/, and ArchiveBox's wget/warc/) is
    read record by record: one cut short or corrupt, or a record whose
    WARC-Block-Digest or WARC-Payload-Digest does not match, is reported
    by name with the record;
  - temp files of writes that never finished (in the snapshot folders and
    beside them, and, when nothing is selected, at the root and in site/),
    staging folders of an interrupted copy, and legacy archive/<timestamp> folders whose snapshot
    was already migrated are reported.

Problems are printed one per line on stdout as they are found (--jsonl: one
JSON object each) and a summary goes to stderr. Nothing is changed, except
that --write-hashes writes hashes/hashes.json, in ArchiveBox's shape, for the
snapshots that have none. Exit status 3 means problems were found.`,
		Example: `  folio verify
  folio verify -f domain example.com
  folio verify --write-hashes
  folio verify --jsonl | jq -r .path`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := sel.resolve(args); err != nil {
				return err
			}
			coll, unlock, err := e.openFor("verify", opts.WriteHashes)
			if err != nil {
				return err
			}
			defer unlock()
			p := e.printer()
			defer p.done()
			return runVerify(cmd, e, coll, p, q, sel.narrowed(), opts, jsonl)
		},
	}
	sel = addSelectionFlags(cmd.Flags(), &q)
	cmd.Flags().BoolVar(&opts.WriteHashes, "write-hashes", false, "write hashes/hashes.json for snapshots that have none")
	cmd.Flags().BoolVar(&jsonl, "jsonl", false, "print problems as JSON lines: kind, path, snapshot, detail")
	parallelFlag(cmd.Flags(), &opts.Workers, 0, fmt.Sprintf("folders checked in parallel (0: one per CPU, here %d)", runtime.GOMAXPROCS(0)))
	return cmd
}

func runVerify(cmd *cobra.Command, e *env, coll *archive.Collection, p *printer, q catalog.Query, narrowed bool, opts verify.Options, jsonl bool) error {
	ctx := cmd.Context()
	cat, err := fillCatalog(cmd, e, coll, true, catalog.Open)
	if err != nil {
		return err
	}
	defer cat.Close()
	// The entries are streamed to the check, never held: what verify
	// holds does not grow with the collection.
	total, err := cat.Count(ctx, q)
	if err != nil {
		return queryUsage(err)
	}
	// A selected legacy folder is told from one a migration left behind
	// by the current layout's snapshots, selected or not. Whether there
	// is one is asked of the catalog in SQL (a scan of one column, which
	// sqlite3 makes in 0.06 s at 100k), not by streaming every selected
	// row to Go (0.5-0.65 s).
	lq := q
	lq.Layout = catalog.LayoutLegacy
	legacy, err := cat.Count(ctx, lq)
	if err != nil {
		return err
	}
	if legacy > 0 {
		if opts.Migrated, err = migrated(ctx, cat); err != nil {
			return err
		}
	}
	if opts.Workers == 0 {
		opts.Workers = runtime.GOMAXPROCS(0)
	}
	// Checking a folder allocates little that lives, but often.
	defer lazyCollector(verifyMemory)()
	enc := json.NewEncoder(e.stdout)
	opts.Found = func(pr verify.Problem) {
		p.done() // a progress line drawn on the same terminal
		if jsonl {
			enc.Encode(pr)
			return
		}
		fmt.Fprintf(e.stdout, "%-10s %s: %s\n", pr.Kind, pr.Path, pr.Detail)
	}
	opts.Progress = func(done, total int64) { p.Progress("verify", done, total) }

	// Folders the catalog has no row for are found by a walk of the
	// tree, every time: new ones, and those it could not catalog.
	var outside []verify.Problem
	opts.Site = !narrowed
	if !narrowed {
		d, err := cat.Drift(ctx, opts.Workers)
		if err != nil {
			return err
		}
		if d.New > 0 {
			outside = append(outside, verify.Problem{Kind: verify.Stale, Path: archive.ArchiveDir,
				Detail: notInCatalog(d.New)})
		}
		outside = append(outside, verify.Uncataloged(d)...)
		for _, pr := range outside {
			opts.Found(pr)
		}
	}
	if total == 0 && narrowed {
		p.Warnf("no snapshot matches the selection; nothing to verify")
	}
	rep, err := verify.RunEach(ctx, coll, total, func(fn func(catalog.Entry) error) error {
		return cat.Each(ctx, q, fn)
	}, opts)
	rep.Problems = append(rep.Problems, outside...)
	p.done()
	if !e.quiet {
		writeVerifySummary(e.stderr, &rep)
	}
	if err != nil {
		return err
	}
	if n := len(rep.Problems); n > 0 {
		return fmt.Errorf("verify found %s: %w", plural(n, "problem"), archive.ErrPartial)
	}
	return nil
}

// notInCatalog says how many snapshot folders the catalog does not know.
func notInCatalog(n int) string {
	if n == 1 {
		return "1 snapshot folder on disk is not in the catalog (run 'folio reindex')"
	}
	return fmt.Sprintf("%d snapshot folders on disk are not in the catalog (run 'folio reindex')", n)
}

// verifyMemory is verify's soft heap limit (PRODUCT.md: RSS ≤ 150 MB at
// any size). What verify holds live is about 15 MB whatever the size of
// the collection (the walk for uncataloged folders reads the catalog as
// it goes); the rest is garbage the lazy collector (GOGC 400) leaves
// until the heap nears this.
const verifyMemory = 64 << 20

// migrated maps the current layout's snapshots by URL and timestamp, so
// that a legacy folder already migrated is told from one still to move.
func migrated(ctx context.Context, cat *catalog.Catalog) (map[string]string, error) {
	m := map[string]string{}
	err := cat.Each(ctx, catalog.Query{}, func(en catalog.Entry) error {
		if en.Layout == catalog.LayoutCurrent && en.Snapshot.Timestamp != "" {
			m[en.Snapshot.URL+"\x00"+en.Snapshot.Timestamp] = en.Dir
		}
		return nil
	})
	return m, err
}

// writeVerifySummary prints the table that ends a verify.
func writeVerifySummary(w io.Writer, r *verify.Report) {
	rate := ""
	if s := r.Elapsed.Seconds(); s > 0 && r.Bytes > 0 {
		rate = fmt.Sprintf(" at %s/s", archive.HumanBytes(int64(float64(r.Bytes)/s)))
	}
	fmt.Fprintf(w, "verified %d snapshot folders in %s\n", r.Snapshots, r.Elapsed.Round(10*time.Millisecond))
	fmt.Fprintf(w, "  with hashes.json     %d\n", r.WithHashes)
	without := r.Snapshots - r.WithHashes - r.HashesWritten
	if without > 0 {
		fmt.Fprintf(w, "  without hashes.json  %d (--write-hashes writes them)\n", without)
	}
	if r.HashesWritten > 0 {
		fmt.Fprintf(w, "  hashes.json written  %d\n", r.HashesWritten)
	}
	if r.Legacy > 0 {
		fmt.Fprintf(w, "  legacy to migrate    %d ('folio update' moves them)\n", r.Legacy)
	}
	fmt.Fprintf(w, "  files hashed         %d, %s%s\n", r.Files, archive.HumanBytes(r.Bytes), rate)
	if len(r.Problems) == 0 {
		fmt.Fprintln(w, "no problems found")
		return
	}
	fmt.Fprintf(w, "problems               %d\n", len(r.Problems))
	for _, k := range verify.Kinds() {
		if n := r.Count(k); n > 0 {
			fmt.Fprintf(w, "  %-20s %d\n", k, n)
		}
	}
}
