package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode"

	"golang.org/x/term"
	"golang.org/x/text/width"

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
// count. Columns are as wide as their widest cell on screen (a CJK
// character or an emoji takes two columns).
type listTable struct {
	out  io.Writer
	rows [][4]string
}

// titleWidth is where a title is cut (with "…") in the table, in columns.
const titleWidth = 50

func newListTable(out io.Writer) *listTable {
	return &listTable{out: out, rows: [][4]string{{"STATUS", "DATE", "TITLE", "URL"}}}
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
	t.rows = append(t.rows, [4]string{cell(status), date, cut(cell(s.Title), titleWidth), cell(e.Snapshot.URL)})
	return nil
}

func (t *listTable) Close() error {
	var widths [4]int
	for _, r := range t.rows {
		for i, c := range r {
			widths[i] = max(widths[i], columns(c))
		}
	}
	w := bufio.NewWriter(t.out)
	for _, r := range t.rows {
		for i, c := range r[:3] {
			w.WriteString(c)
			w.WriteString(strings.Repeat(" ", widths[i]-columns(c)+2))
		}
		w.WriteString(r[3])
		w.WriteByte('\n')
	}
	fmt.Fprintln(w, plural(len(t.rows)-1, "snapshot"))
	return w.Flush()
}

// columns is how many terminal columns s takes.
func columns(s string) int {
	n := 0
	for _, r := range s {
		n += runeColumns(r)
	}
	return n
}

func runeColumns(r rune) int {
	switch width.LookupRune(r).Kind() {
	case width.EastAsianWide, width.EastAsianFullwidth:
		return 2
	}
	return 1
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

// cut shortens s to at most n columns, the last one "…".
func cut(s string, n int) string {
	if columns(s) <= n {
		return s
	}
	used := 1 // the "…"
	var b strings.Builder
	for _, r := range s {
		if used+runeColumns(r) > n {
			break
		}
		used += runeColumns(r)
		b.WriteRune(r)
	}
	return strings.TrimRight(b.String(), " ") + "…"
}

// isTerminalOut reports whether w is a terminal a person reads.
func isTerminalOut(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
