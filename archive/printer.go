package archive

import (
	"fmt"
	"unicode/utf8"
)

// Printer is how long-running work reports to the user. Core packages never
// print; the CLI implements Printer (a progress line on a terminal, plain
// lines otherwise, nothing on stdout when output is machine-readable).
type Printer interface {
	// Infof reports a step or a result line.
	Infof(format string, args ...any)
	// Warnf reports a problem with one item that did not stop the work.
	Warnf(format string, args ...any)
	// Progress reports done of total items of the named phase (total 0
	// when unknown). It is called often; implementations throttle.
	Progress(phase string, done, total int64)
}

// Discard is a Printer that reports nothing.
var Discard Printer = discard{}

type discard struct{}

func (discard) Infof(string, ...any)          {}
func (discard) Warnf(string, ...any)          {}
func (discard) Progress(string, int64, int64) {}

// HumanBytes writes a byte count for people: "512 B", "1.5 KiB", "2.0 GiB".
func HumanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// Shorten cuts s to at most n characters for people, ending it with "…"
// when it was cut.
func Shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}
