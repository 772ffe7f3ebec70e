// Command folio-gen writes a synthetic folio collection for tests and
// benchmarks:
//
//	go run ./cmd/folio-gen -n 100000 -seed 1 DIR
//
// The same flags always give the same tree.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/folio-archive/folio/gen"
)

func main() {
	if os.Getenv("GOGC") == "" {
		// Generating a collection allocates a lot of short-lived memory; a
		// larger heap target saves about a third of the CPU time.
		debug.SetGCPercent(400)
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("folio-gen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		o       gen.Options
		users   string
		base    string
		years   float64
		durable bool
	)
	fs.IntVar(&o.N, "n", 1000, "number of snapshots")
	fs.Uint64Var(&o.Seed, "seed", 1, "seed; the same seed and flags give the same tree")
	fs.StringVar(&users, "users", strings.Join(gen.DefaultUsers, ","), "comma-separated owners; the first owns about half the snapshots")
	fs.StringVar(&base, "base", gen.DefaultBase.Format(time.RFC3339), "newest bookmarked_at (RFC 3339)")
	fs.Float64Var(&years, "years", gen.DefaultSpan.Hours()/24/365, "years of bookmarked_at before -base")
	fs.IntVar(&o.Workers, "workers", 0, "parallel writers (default 4 per CPU)")
	fs.BoolVar(&o.Minimal, "minimal", false, "write index.jsonl only, no output files")
	fs.BoolVar(&durable, "durable", false, "fsync every file (atomic writes through archive.WriteFile) instead of one sync at the end")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: folio-gen [flags] DIR\n\nfolio-gen writes a synthetic collection in the current layout into DIR\n(created as a collection if it is not one).\n\nflags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "folio-gen: want exactly one DIR argument")
		fs.Usage()
		return 2
	}
	t, err := time.Parse(time.RFC3339, base)
	if err != nil {
		fmt.Fprintf(stderr, "folio-gen: -base %q: %v\n", base, err)
		return 2
	}
	if years <= 0 {
		fmt.Fprintf(stderr, "folio-gen: -years must be positive, got %v\n", years)
		return 2
	}
	o.Base = t.UTC()
	o.Span = time.Duration(years * 365 * 24 * float64(time.Hour))
	o.Users = strings.Split(users, ",")
	o.NoSync = !durable
	if f, ok := stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		o.Printer = &progress{w: stderr}
	}

	start := time.Now()
	m, err := gen.Current(fs.Arg(0), o)
	if err != nil {
		fmt.Fprintf(stderr, "folio-gen: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "wrote %d snapshots (%d output files, %.1f MB) into %s in %s\n",
		len(m.Snapshots), m.Files, float64(m.Bytes)/1e6, m.Dir, time.Since(start).Round(time.Millisecond))
	return 0
}

// progress shows "generated done/total" on a terminal, at most ten times a
// second.
type progress struct {
	w    io.Writer
	mu   sync.Mutex
	last time.Time
}

func (p *progress) Infof(format string, args ...any) { fmt.Fprintf(p.w, format+"\n", args...) }
func (p *progress) Warnf(format string, args ...any) {
	fmt.Fprintf(p.w, "warning: "+format+"\n", args...)
}

func (p *progress) Progress(_ string, done, total int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if done < total && time.Since(p.last) < 100*time.Millisecond {
		return
	}
	p.last = time.Now()
	fmt.Fprintf(p.w, "\rgenerated %d/%d", done, total)
	if done == total {
		fmt.Fprintln(p.w)
	}
}
