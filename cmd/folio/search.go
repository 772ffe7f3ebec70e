package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/archive/catalog"
)

func init() { commands = append(commands, newSearchCmd) }

func newSearchCmd(e *env) *cobra.Command {
	var (
		q     catalog.Query
		sel   *selection
		fts   bool
		jsonl bool
	)
	cmd := &cobra.Command{
		Use:   "search QUERY...",
		Short: "Find snapshots by the words of their titles, URLs, tags, notes and captured text",
		Long: `Find snapshots by words: in the title, the URL, the tags, the notes and the
captured text. As in ArchiveBox, one text per snapshot is searched, the first
that exists of readability/content.txt (the article), htmltotext/htmltotext.txt
(the whole page; htmltotext.txt in legacy folders) and readability/content.html
without its tags; its first MiB. 'folio reindex' keeps the index, reading the
text again when the snapshot's index.jsonl changed (as it does whenever a
capture writes text), 'folio watch' also when the text file alone changed.

Every word must appear, in any order and any case; accents do not matter
("munchen" finds "München"). "Quoted words" must appear together, and a word
ending in * matches as a prefix (archiv*). Everything else is taken as it is
typed, so "c++" or "don't" need no escaping. With --fts the query is SQLite
FTS5 syntax instead (AND, OR, NOT, NEAR(...), title:word, ^first), for
searches plain words cannot say.

Results come best first: a word in the title counts more than in the URL or
tags, those more than in the notes, and all more than in the captured text.
Each shows the title, the URL, the folder and a snippet with the matched words
in **bold**.`,
		Example: `  folio search lighthouse
  folio search '"fog signal"' --tag coast
  folio search --fts 'title:lighthouse OR title:beacon' --jsonl
  folio list --search lighthouse --sort url`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			text := strings.Join(args, " ")
			q.Search = text
			if !fts {
				if q.Search = catalog.MatchWords(text); q.Search == "" {
					return usagef("invalid query %q: no words to search for (words are made of letters and digits)", text)
				}
			}
			if err := sel.resolve(nil); err != nil {
				return err
			}
			q.Sort, q.Snippets = catalog.SortRank, true
			coll, err := e.open()
			if err != nil {
				return err
			}
			cat, err := fillCatalog(cmd, e, coll, false, catalog.OpenMapped)
			if err != nil {
				return err
			}
			defer cat.Close()
			n := 0
			err = cat.Each(cmd.Context(), q, func(en catalog.Entry) error {
				n++
				if jsonl {
					_, err := e.stdout.Write(searchRecord(en))
					return err
				}
				_, err := fmt.Fprint(e.stdout, searchText(n, en))
				return err
			})
			var serr *catalog.SearchError
			if errors.As(err, &serr) {
				return usagef("invalid query %q: %s", text, serr.Reason)
			}
			if err != nil {
				return queryUsage(err)
			}
			return searchSummary(cmd, e, cat, q, n)
		},
	}
	f := cmd.Flags()
	sel = addFilterFlags(f, &q)
	f.IntVarP(&q.Limit, "limit", "n", 20, "show at most this many results (0: all)")
	f.BoolVar(&fts, "fts", false, "read QUERY as SQLite FTS5 query syntax")
	f.BoolVar(&jsonl, "jsonl", false, `one Snapshot record per line, as 'folio list' prints it, with "snippet" and "rank" (bm25, lower is better) added`)
	return cmd
}

// searchSummary says on stderr how many matched, and how many more there
// are than were shown.
func searchSummary(cmd *cobra.Command, e *env, cat *catalog.Catalog, q catalog.Query, shown int) error {
	p := e.printer()
	defer p.done()
	total := shown
	if q.Limit > 0 && shown == q.Limit {
		all := q
		all.Limit, all.Snippets, all.Sort = 0, false, ""
		var err error
		if total, err = cat.Count(cmd.Context(), all); err != nil {
			return err
		}
	}
	switch {
	case total == 0:
		p.Infof("no snapshot matches")
	case total > shown:
		p.Infof("%s, the best %d shown (--limit 0 shows all)", plural(total, "matching snapshot"), shown)
	default:
		p.Infof("%s", plural(total, "matching snapshot"))
	}
	return nil
}

// searchText is one result for people: title, URL, folder, snippet.
func searchText(n int, en catalog.Entry) string {
	title := en.Snapshot.Title
	if title == "" {
		title = en.Snapshot.URL
	}
	if title == "" {
		title = en.Dir
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d. %s\n", n, archive.Shorten(oneLine(title), maxTitle))
	if en.Snapshot.URL != "" && en.Snapshot.URL != title {
		fmt.Fprintf(&b, "   %s\n", en.Snapshot.URL)
	}
	fmt.Fprintf(&b, "   %s\n", en.Dir)
	if s := markSnippet(en.Snippet, "**", "**"); s != "" {
		fmt.Fprintf(&b, "   %s\n", s)
	}
	b.WriteByte('\n')
	return b.String()
}

// markSnippet puts open and close around the snippet's matched words and
// keeps it on one line.
func markSnippet(s, open, close string) string {
	s = strings.NewReplacer(catalog.SnippetOpen, open, catalog.SnippetClose, close).Replace(s)
	return oneLine(s)
}

// oneLine folds runs of white space, newlines included, into one space.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// maxTitle is how much of a title a result shows: a line or two.
const maxTitle = 160

// searchRecord is the entry's Snapshot record with "snippet" and "rank"
// added, in the record's own style, and a newline.
func searchRecord(en catalog.Entry) []byte {
	rec := en.Record
	b := make([]byte, 0, len(rec)+len(en.Snippet)+48)
	b = append(b, rec[:len(rec)-1]...) // without its closing brace
	b = append(b, `, "snippet": `...)
	b = archive.AppendPyString(b, markSnippet(en.Snippet, "**", "**"))
	b = append(b, `, "rank": `...)
	b = fmt.Appendf(b, "%.4f}\n", en.Rank)
	return b
}
