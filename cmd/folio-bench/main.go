// Command folio-bench measures folio against the speed goals of PRODUCT.md
// and prints each figure beside a baseline measured in the same run, on the
// same tree (cat of every index.jsonl, cp -a, ...), as a ratio:
//
//	go run ./cmd/folio-bench -n 100000 -suite core
//
// It builds folio, generates collections with package gen in a scratch
// directory and runs the registered suites. `make bench` runs it.
package main

import (
	"context"
	"debug/buildinfo"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == measureArg {
		os.Exit(measureChild(os.Args[2:]))
	}
	if os.Getenv("GOGC") == "" {
		// Generating a collection allocates a lot of short-lived memory; a
		// larger heap target saves about a third of the CPU time.
		debug.SetGCPercent(400)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("folio-bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		b       = &B{Ctx: ctx, log: stderr, colls: map[string]*Collection{}}
		names   string
		sizes   string
		keep    bool
		asJSON  bool
		folio   string
		workDir string
	)
	fs.IntVar(&b.N, "n", 100000, "snapshots per generated collection (the goals are stated for 100000)")
	fs.Uint64Var(&b.Seed, "seed", 1, "generator seed")
	fs.IntVar(&b.Runs, "runs", 3, "repetitions of each measurement; the median is reported")
	fs.BoolVar(&b.Files, "files", false, "generate output files too (slower to generate; default index.jsonl only)")
	fs.StringVar(&names, "suite", "", "comma-separated suites to run (default all: "+strings.Join(suiteNames(), ",")+")")
	fs.StringVar(&sizes, "sizes", "", "collection sizes of the growth suite, comma-separated (e.g. 10k,100k,300k; default -n)")
	fs.BoolVar(&keep, "keep", false, "keep the scratch directory (its path is printed)")
	fs.BoolVar(&asJSON, "json", false, "print the rows as JSON on stdout instead of the table")
	fs.StringVar(&folio, "folio", "", "folio binary to measure (default: go build github.com/folio-archive/folio/cmd/folio)")
	fs.StringVar(&workDir, "work", "", "scratch directory to use and keep; collections generated there with the same options are reused (default a new temporary directory)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: folio-bench [flags]\n\nfolio-bench measures folio against its speed goals, each beside a baseline\nmeasured in the same run.\n\nsuites:\n")
		for _, s := range suites {
			fmt.Fprintf(stderr, "  %-10s %s\n", s.Name, s.Doc)
		}
		fmt.Fprintf(stderr, "\nflags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "folio-bench: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if b.N < 1 {
		fmt.Fprintf(stderr, "folio-bench: -n must be at least 1, got %d\n", b.N)
		return 2
	}
	if sizes != "" {
		var err error
		if b.Sizes, err = parseSizes(sizes); err != nil {
			fmt.Fprintf(stderr, "folio-bench: %v\n", err)
			return 2
		}
	}
	selected, err := selectSuites(names)
	if err != nil {
		fmt.Fprintf(stderr, "folio-bench: %v\n", err)
		return 2
	}

	if workDir != "" {
		b.Work, b.Reuse = workDir, true
		err = os.MkdirAll(workDir, 0o755)
	} else {
		b.Work, err = os.MkdirTemp("", "folio-bench-")
	}
	if err != nil {
		fmt.Fprintf(stderr, "folio-bench: %v\n", err)
		return 1
	}
	if keep || b.Reuse {
		defer fmt.Fprintf(stderr, "scratch directory kept: %s\n", b.Work)
	} else {
		defer os.RemoveAll(b.Work)
	}

	if folio == "" {
		folio = filepath.Join(b.Work, "folio-under-test")
		fmt.Fprintf(stderr, "building folio\n")
		build := exec.CommandContext(ctx, "go", "build", "-o", folio, "github.com/folio-archive/folio/cmd/folio")
		build.Env = append(os.Environ(), "CGO_ENABLED=0") // static, as make build makes it
		build.Stdout, build.Stderr = stderr, stderr
		if err := build.Run(); err != nil {
			fmt.Fprintf(stderr, "folio-bench: go build github.com/folio-archive/folio/cmd/folio: %v\n", err)
			return 1
		}
	} else if folio, err = filepath.Abs(folio); err != nil {
		fmt.Fprintf(stderr, "folio-bench: %v\n", err)
		return 1
	}
	b.Folio = folio

	header := describe(b)
	fmt.Fprintln(stderr, header)
	for _, s := range selected {
		if ctx.Err() != nil {
			break
		}
		fmt.Fprintf(stderr, "suite %s\n", s.Name)
		b.suite = s.Name
		if err := s.Run(b); err != nil {
			b.Fail(s.Name+" suite", err)
		}
	}
	if ctx.Err() != nil {
		fmt.Fprintln(stderr, "folio-bench: interrupted")
		return 130
	}

	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(jsonRows(b.rows)); err != nil {
			fmt.Fprintf(stderr, "folio-bench: %v\n", err)
			return 1
		}
	} else {
		fmt.Fprintln(stdout)
		fmt.Fprintln(stdout, header)
		printTable(stdout, b.rows)
		if l := loadAvg(); l != "" {
			fmt.Fprintf(stdout, "load at the end: %s\n", l)
		}
	}
	for _, r := range b.rows {
		if r.Err != nil {
			return 1
		}
	}
	return 0
}

func suiteNames() []string {
	var out []string
	for _, s := range suites {
		out = append(out, s.Name)
	}
	return out
}

func selectSuites(names string) ([]Suite, error) {
	if names == "" {
		return suites, nil
	}
	var out []Suite
	for _, name := range strings.Split(names, ",") {
		name = strings.TrimSpace(name)
		i := -1
		for k, s := range suites {
			if s.Name == name {
				i = k
			}
		}
		if i < 0 {
			return nil, fmt.Errorf("unknown suite %q (have %s)", name, strings.Join(suiteNames(), ", "))
		}
		out = append(out, suites[i])
	}
	return out, nil
}

// describe is the header line: what was measured, where, under what load.
func describe(b *B) string {
	rev := "unknown revision"
	if info, err := buildinfo.ReadFile(b.Folio); err == nil {
		var r, dirty string
		for _, s := range info.Settings {
			switch {
			case s.Key == "vcs.revision" && len(s.Value) >= 12:
				r = s.Value[:12]
			case s.Key == "vcs.modified" && s.Value == "true":
				dirty = " (modified)"
			}
		}
		if r == "" { // built without VCS stamping: ask git
			if out, err := exec.Command("git", "rev-parse", "--short=12", "HEAD").Output(); err == nil {
				r = strings.TrimSpace(string(out)) + " (+ working tree)"
			}
		}
		if r != "" {
			rev = r + dirty
		}
		rev += ", " + info.GoVersion
	}
	load := ""
	if l := loadAvg(); l != "" {
		load = ", load " + l
	}
	payload := "index.jsonl only"
	if b.Files {
		payload = "with output files"
	}
	return fmt.Sprintf("folio %s; n=%d (%s), seed %d, median of %d, %d CPUs%s, %s",
		rev, b.N, payload, b.Seed, max(b.Runs, 1), runtime.NumCPU(), load, time.Now().UTC().Format("2006-01-02 15:04 UTC"))
}

// loadAvg is the one-minute load average, "" where unknown. Other work on
// the machine skews every figure, so the report shows it.
func loadAvg() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	if f := strings.Fields(string(data)); len(f) > 0 {
		return f[0]
	}
	return ""
}

// Unit is what a row's value measures.
type Unit int

// Units of Row values.
const (
	Seconds Unit = iota
	Bytes
	BytesPerSecond
	Percent
	Ratio  // a plain number: time per snapshot at the largest size over the smallest
	Number // a count per unit of work, e.g. stat calls per snapshot
)

// Goal is a PRODUCT.md target for a row; zero fields are unset.
type Goal struct {
	Max, Min           float64 // bounds on the value, in the row's unit
	MaxRatio, MinRatio float64 // bounds on value/baseline
}

// Row is one measured figure.
type Row struct {
	Suite        string
	Work         string // what was measured, e.g. "reindex, empty catalog"
	Unit         Unit
	Value        float64
	Goal         Goal
	Baseline     float64 // same unit as Value; 0 when the row has none
	BaselineName string  // e.g. "cat index.jsonl"
	Note         string  // shown after the ratio, e.g. "cpu 12.3 s"
	Err          error   // the work could not be measured
}

// Ratio is value/baseline, NaN without a baseline.
func (r Row) Ratio() float64 {
	if r.Baseline <= 0 || r.Err != nil {
		return math.NaN()
	}
	return r.Value / r.Baseline
}

// Verdict is "ok", "MISSED", "error" or "" (no goal).
func (r Row) Verdict() string {
	if r.Err != nil {
		return "error"
	}
	g, ratio := r.Goal, r.Ratio()
	if g == (Goal{}) {
		return ""
	}
	if g.Max > 0 && r.Value > g.Max || g.Min > 0 && r.Value < g.Min ||
		g.MaxRatio > 0 && !(ratio <= g.MaxRatio) || g.MinRatio > 0 && !(ratio >= g.MinRatio) {
		return "MISSED"
	}
	return "ok"
}

func (r Row) valueText() string {
	if r.Err != nil {
		return "error: " + r.Err.Error()
	}
	s := format(r.Unit, r.Value)
	if r.Baseline > 0 {
		s += fmt.Sprintf("  (%s %s, %.2f×)", r.BaselineName, format(r.Unit, r.Baseline), r.Ratio())
	}
	if r.Note != "" {
		s += "  " + r.Note
	}
	return s
}

func (r Row) goalText() string {
	var parts []string
	g := r.Goal
	if g.Max > 0 {
		parts = append(parts, "≤ "+formatGoal(r.Unit, g.Max))
	}
	if g.Min > 0 {
		parts = append(parts, "≥ "+formatGoal(r.Unit, g.Min))
	}
	if g.MaxRatio > 0 {
		parts = append(parts, fmt.Sprintf("≤ %.3g× baseline", g.MaxRatio))
	}
	if g.MinRatio > 0 {
		parts = append(parts, fmt.Sprintf("≥ %.3g× baseline", g.MinRatio))
	}
	return strings.Join(parts, ", ")
}

func format(u Unit, v float64) string {
	switch u {
	case Bytes:
		return fmt.Sprintf("%.0f MB", v/1e6)
	case BytesPerSecond:
		return fmt.Sprintf("%.0f MB/s", v/1e6)
	case Percent:
		return fmt.Sprintf("%.2f %%", v)
	case Ratio:
		return fmt.Sprintf("%.2f×", v)
	case Number:
		return fmt.Sprintf("%.2f", v)
	}
	switch {
	case v < 0.01:
		return fmt.Sprintf("%.1f ms", v*1000)
	case v < 1:
		return fmt.Sprintf("%.0f ms", v*1000)
	}
	return fmt.Sprintf("%.2f s", v)
}

// formatGoal writes a goal as PRODUCT.md does: "10 s", "100 ms", "200 MB".
func formatGoal(u Unit, v float64) string {
	switch {
	case u == Bytes:
		return fmt.Sprintf("%g MB", v/1e6)
	case u == BytesPerSecond:
		return fmt.Sprintf("%g MB/s", v/1e6)
	case u == Percent:
		return fmt.Sprintf("%g %%", v)
	case u == Number:
		return fmt.Sprintf("%g", v)
	case v < 1:
		return fmt.Sprintf("%g ms", v*1000)
	}
	return fmt.Sprintf("%g s", v)
}

func printTable(w io.Writer, rows []Row) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "suite\twork\tmeasured\tgoal\tbaseline (same run)\tratio\tnote\t")
	for _, r := range rows {
		if r.Err != nil {
			fmt.Fprintf(tw, "%s\t%s\terror: %v\t%s\t\t\t\n", r.Suite, r.Work, r.Err, r.goalText())
			continue
		}
		base, ratio := "", ""
		if r.Baseline > 0 {
			base = format(r.Unit, r.Baseline) + " " + r.BaselineName
			ratio = fmt.Sprintf("%.2f×", r.Ratio())
		}
		goal := r.goalText()
		if v := r.Verdict(); v != "" {
			goal += " " + v
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", r.Suite, r.Work, format(r.Unit, r.Value), goal, base, ratio, r.Note)
	}
	tw.Flush()
}

type jsonRow struct {
	Suite        string   `json:"suite"`
	Work         string   `json:"work"`
	Unit         string   `json:"unit"`
	Value        float64  `json:"value"`
	Goal         string   `json:"goal,omitempty"`
	Baseline     float64  `json:"baseline,omitempty"`
	BaselineName string   `json:"baseline_name,omitempty"`
	Ratio        *float64 `json:"ratio,omitempty"`
	Verdict      string   `json:"verdict,omitempty"`
	Note         string   `json:"note,omitempty"`
	Error        string   `json:"error,omitempty"`
}

func jsonRows(rows []Row) []jsonRow {
	out := make([]jsonRow, 0, len(rows))
	for _, r := range rows {
		j := jsonRow{
			Suite: r.Suite, Work: r.Work, Unit: [...]string{"s", "bytes", "bytes/s", "%", "ratio"}[r.Unit], Value: r.Value,
			Goal: r.goalText(), Baseline: r.Baseline, BaselineName: r.BaselineName, Verdict: r.Verdict(), Note: r.Note,
		}
		if ratio := r.Ratio(); !math.IsNaN(ratio) {
			j.Ratio = &ratio
		}
		if r.Err != nil {
			j.Error = r.Err.Error()
		}
		out = append(out, j)
	}
	return out
}
