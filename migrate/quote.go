package migrate

import (
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"

	"github.com/folio-archive/folio/archive"
)

// Quote returns s as it is when every character of it prints, else
// quoted as Go quotes strings ("a\nb"): a folder name holding a newline
// or a terminal escape must not break or forge a line of output.
func Quote(s string) string {
	if !utf8.ValidString(s) {
		return strconv.Quote(s)
	}
	for _, r := range s {
		if !strconv.IsPrint(r) {
			return strconv.Quote(s)
		}
	}
	return s
}

// quoteArgs quotes (Quote) the strings and error texts among args.
func quoteArgs(args []any) []any {
	out := make([]any, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case string:
			out[i] = Quote(v)
		case error:
			out[i] = Quote(v.Error())
		default:
			out[i] = a
		}
	}
	return out
}

// fprintq is fmt.Fprintf with its arguments quoted (quoteArgs).
func fprintq(w io.Writer, format string, args ...any) {
	fmt.Fprintf(w, format, quoteArgs(args)...)
}

// QuotePrinter returns a Printer that passes every line on to p with its
// string and error arguments quoted (Quote).
func QuotePrinter(p archive.Printer) archive.Printer {
	if q, ok := p.(quoting); ok {
		return q
	}
	return quoting{p}
}

// quoting is a Printer that quotes the strings and errors of every line
// it passes on: every path the migration reports goes through it.
type quoting struct{ archive.Printer }

func (q quoting) Infof(format string, args ...any) { q.Printer.Infof(format, quoteArgs(args)...) }
func (q quoting) Warnf(format string, args ...any) { q.Printer.Warnf(format, quoteArgs(args)...) }
