package migrate

import (
	"fmt"
	"io"

	"github.com/folio-archive/folio/archive"
)

// quoteArgs quotes (archive.Printable) the strings and error texts among args.
func quoteArgs(args []any) []any {
	out := make([]any, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case string:
			out[i] = archive.Printable(v)
		case error:
			out[i] = archive.Printable(v.Error())
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
// string and error arguments quoted (archive.Printable).
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
