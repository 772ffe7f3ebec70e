package main

import (
	"context"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/archive/catalog"
)

func init() { commands = append(commands, newListCmd) }

func newListCmd(e *env) *cobra.Command {
	var (
		q             catalog.Query
		sel           *selection
		jsonl, asJSON bool
		csvFields     string
		search        string
	)
	cmd := &cobra.Command{
		Use:   "list [PATTERN...]",
		Short: "Stream snapshots from the catalog",
		Long: `Stream snapshots from the catalog, newest first. PATTERNs select by URL as
--filter-type says (any pattern may match): exact, substring (default), regex
(Go syntax, case-insensitive), domain, tag or timestamp. --search keeps the
snapshots that 'folio search' finds, in the list's own order.

On a terminal, list prints a table: each snapshot's status, the day it was
bookmarked, its title (cut at 50 characters) and URL, then a count. Piped or
redirected, and with --jsonl, it prints one Snapshot record per line; --json
prints a JSON array, and --csv FIELDS RFC 4180 CSV with those fields (UTF-8, a
header row, cells holding a comma, quote or line break in double quotes, quotes
doubled, lines ending in CRLF), as spreadsheets and Python's csv module read it. When the catalog is
empty but the tree holds snapshots, list runs 'folio reindex' first.`,
		Example: `  folio list
  folio list -f domain example.com --json
  folio list --tag news --after 2024-01-01 --sort url --limit 10
  folio list --csv timestamp,url,title`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("search") {
				if q.Search = catalog.MatchWords(search); q.Search == "" {
					return usagef("--search %q: no words to search for (words are made of letters and digits)", search)
				}
			}
			if err := sel.resolve(args); err != nil {
				return err
			}
			format, fields := catalog.FormatJSONL, []string(nil)
			var err error
			n := 0
			for _, set := range []bool{jsonl, asJSON, cmd.Flags().Changed("csv")} {
				if set {
					n++
				}
			}
			switch {
			case n > 1:
				return usagef("choose one of --jsonl, --json and --csv")
			case asJSON:
				format = catalog.FormatJSON
			case cmd.Flags().Changed("csv"):
				format = catalog.FormatCSV
				for _, f := range strings.Split(csvFields, ",") {
					if f = strings.TrimSpace(f); f != "" {
						fields = append(fields, f)
					}
				}
			}
			var out rowWriter
			if n == 0 && isTerminalOut(e.stdout) {
				out = newListTable(e.stdout)
			} else if out, err = catalog.NewWriter(e.stdout, format, fields); err != nil {
				return usagef("%v", err)
			}
			coll, err := e.open()
			if err != nil {
				return err
			}
			cat, err := openFilled(cmd, e, coll)
			if err != nil {
				return err
			}
			defer cat.Close()
			q.RecordOnly = true
			err = cat.Each(cmd.Context(), q, out.Write)
			if cerr := out.Close(); err == nil {
				err = cerr
			}
			return queryUsage(err)
		},
	}
	f := cmd.Flags()
	sel = addSelectionFlags(f, &q)
	f.StringVar(&search, "search", "", "only snapshots whose title, URL, tags, notes or captured text hold these words (as 'folio search' reads them)")
	f.StringVarP(&q.Sort, "sort", "o", "", "sort by "+strings.Join(catalog.SortFields(), "|")+"; prefix - for descending (default -bookmarked_at)")
	f.IntVarP(&q.Limit, "limit", "n", 0, "print at most this many snapshots (0: all)")
	f.BoolVar(&jsonl, "jsonl", false, "one Snapshot record per line (the default when stdout is not a terminal)")
	f.BoolVar(&asJSON, "json", false, "a JSON array")
	f.StringVar(&csvFields, "csv", "", "RFC 4180 CSV with these comma-separated fields: "+strings.Join(catalog.CSVFields(), ","))
	return cmd
}

// parseWhen reads a --before/--after value: unix seconds or an ISO 8601
// date or date/time (UTC when it has no offset).
func parseWhen(flag, s string) (t time.Time, err error) {
	if s == "" {
		return t, nil
	}
	v, ok := archive.ParseTime(strings.TrimSpace(s))
	if !ok {
		return t, usagef("%s %q: want unix seconds or an ISO date/time such as 2024-01-31 or 2024-01-31T12:00:00Z", flag, s)
	}
	return v, nil
}

// openFilled opens the catalog for reading. When it is empty but the tree
// holds snapshot folders, it first runs an incremental reindex under the
// collection lock and says so on stderr.
func openFilled(cmd *cobra.Command, e *env, coll *archive.Collection) (*catalog.Catalog, error) {
	return fillCatalog(cmd, e, coll, false, catalog.Open)
}

// fillCatalog is openFilled for a caller that holds the collection lock
// already (locked) or not, opening the catalog with open.
func fillCatalog(cmd *cobra.Command, e *env, coll *archive.Collection, locked bool,
	open func(context.Context, *archive.Collection) (*catalog.Catalog, error)) (*catalog.Catalog, error) {
	ctx := cmd.Context()
	cat, err := open(ctx, coll)
	if err != nil {
		return nil, err
	}
	empty, err := cat.Empty(ctx)
	if err != nil || !empty {
		return cat, err
	}
	d, err := cat.Drift(ctx, 0)
	if err != nil || d.Scanned == 0 {
		return cat, err
	}
	cat.Close()
	p := e.printer()
	defer p.done()
	p.Infof("the catalog is empty but the tree holds %d snapshot folders; running 'folio reindex' first", d.Scanned)
	if !locked {
		lock, err := coll.Lock(cmd.Name())
		if err != nil {
			return nil, err
		}
		defer lock.Unlock()
	}
	st, err := reindex(cmd, coll, catalog.ReindexOptions{Printer: p})
	if err != nil {
		return nil, err
	}
	p.Infof("reindex: scanned %d, added %d, problems %d", st.Scanned, st.Added, st.Problems)
	return open(ctx, coll)
}
