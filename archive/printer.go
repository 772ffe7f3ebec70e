package archive

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
