package main

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/folio-archive/folio/archive"
)

// printer writes messages to stderr. On a terminal, progress is one line
// redrawn at most ten times a second with counts, rate and ETA; elsewhere
// progress is silent and only messages are written.
type printer struct {
	mu    sync.Mutex
	w     io.Writer
	tty   bool
	quiet bool
	last  time.Time
	start map[string]time.Time
	drawn bool
	now   func() time.Time
}

var _ archive.Printer = (*printer)(nil)

func newPrinter(w io.Writer, tty, quiet bool) *printer {
	return &printer{w: w, tty: tty, quiet: quiet, start: map[string]time.Time{}, now: time.Now}
}

func (p *printer) Infof(format string, args ...any) {
	if p.quiet {
		return
	}
	p.line(fmt.Sprintf(format, args...))
}

func (p *printer) Warnf(format string, args ...any) {
	p.line("warning: " + fmt.Sprintf(format, args...))
}

func (p *printer) line(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clear()
	fmt.Fprintln(p.w, strings.TrimRight(s, "\n"))
}

func (p *printer) clear() {
	if p.drawn {
		fmt.Fprint(p.w, "\r\033[K")
		p.drawn = false
	}
}

func (p *printer) Progress(phase string, done, total int64) {
	if !p.tty || p.quiet {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	if _, ok := p.start[phase]; !ok {
		p.start[phase] = now
	}
	finished := total > 0 && done >= total
	if !finished && now.Sub(p.last) < 100*time.Millisecond {
		return
	}
	p.last = now
	elapsed := now.Sub(p.start[phase]).Seconds()
	rate := 0.0
	if elapsed > 0 {
		rate = float64(done) / elapsed
	}
	s := fmt.Sprintf("%s: %d", phase, done)
	if total > 0 {
		s += fmt.Sprintf("/%d (%d%%)", total, done*100/total)
	}
	if rate < 10 {
		s += fmt.Sprintf(" %.1f/s", rate)
	} else {
		s += fmt.Sprintf(" %.0f/s", rate)
	}
	if total > 0 && rate > 0 && !finished {
		s += fmt.Sprintf(" ETA %s", time.Duration(float64(total-done)/rate*float64(time.Second)).Round(time.Second))
	}
	p.clear()
	fmt.Fprint(p.w, s)
	p.drawn = true
	if finished {
		fmt.Fprintln(p.w)
		p.drawn = false
	}
}

// done ends a progress line that is still drawn.
func (p *printer) done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clear()
}

// plural says "1 root page" or "3 root pages".
func plural[N int | int64](n N, what string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", what)
	}
	return fmt.Sprintf("%d %ss", n, what)
}
