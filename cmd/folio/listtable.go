package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"unicode"

	"golang.org/x/term"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/archive/catalog"
)

// rowWriter is where 'folio list' sends the snapshots it selects.
type rowWriter interface {
	Write(catalog.Entry) error
	Close() error
}

// listTable is the listing for a person at a terminal: one row a snapshot
// with its state, the day it was bookmarked, its title and URL, then a
// count.
type listTable struct {
	out io.Writer
	tw  *tabwriter.Writer
	n   int
}

// titleWidth is where a title is cut (with "…") in the table.
const titleWidth = 50

func newListTable(out io.Writer) *listTable {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "STATUS\tDATE\tTITLE\tURL")
	return &listTable{out: out, tw: tw}
}

func (t *listTable) Write(e catalog.Entry) error {
	s, _ := archive.DecodeSnapshotLine(e.Record)
	status := e.State
	if status == "" {
		status = s.Status
	}
	when := s.BookmarkedAt
	if when.IsZero() {
		when = s.CreatedAt
	}
	date := "-"
	if !when.IsZero() {
		date = when.UTC().Format("2006-01-02")
	}
	t.n++
	_, err := fmt.Fprintf(t.tw, "%s\t%s\t%s\t%s\n", cell(status), date, cut(cell(s.Title), titleWidth), cell(e.Snapshot.URL))
	return err
}

func (t *listTable) Close() error {
	if err := t.tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(t.out, plural(t.n, "snapshot"))
	return err
}

// cell is s on one line: line breaks, tabs and runs of spaces become one
// space.
func cell(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	if s = strings.Join(strings.Fields(s), " "); s == "" {
		return "-"
	}
	return s
}

// cut shortens s to n characters, the last one "…".
func cut(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// isTerminalOut reports whether w is a terminal a person reads.
func isTerminalOut(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
