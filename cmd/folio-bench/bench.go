package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/gob"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/folio-archive/folio/gen"
)

// Suite is one group of measurements. Each suite lives in its own file and
// registers itself with
//
//	func init() { suites = append(suites, Suite{Name: "migrate", Run: runMigrate}) }
//
// Run adds rows with B.Add; an error it returns is recorded as a failed row
// and the other suites still run.
type Suite struct {
	Name string
	Doc  string // one line for -help
	Run  func(b *B) error
}

// suites is the registry, in registration order.
var suites []Suite

// B is what a suite works with: the folio binary under test, a scratch
// directory, generated collections and the measuring helpers.
type B struct {
	Ctx   context.Context
	N     int    // collection size (-n)
	Seed  uint64 // generator seed (-seed)
	Runs  int    // repetitions of each measurement; the median is reported (-runs)
	Files bool   // generate output files too, not just index.jsonl (-files)
	Sizes []int  // collection sizes of the growth suite (-sizes)
	Reuse bool   // Work is kept between runs; reuse collections generated with the same options (-work)
	Folio string // path of the folio binary under test
	Work  string // scratch directory of this run

	log   io.Writer
	suite string
	rows  []Row
	colls map[string]*Collection
}

// Collection is a generated data directory.
type Collection struct {
	Dir      string
	Manifest *gen.Manifest
}

// IndexPaths returns the absolute path of every index.jsonl of c.
func (c *Collection) IndexPaths() []string {
	out := make([]string, len(c.Manifest.Snapshots))
	for i := range out {
		out[i] = c.Manifest.IndexPath(i)
	}
	return out
}

// Logf prints a progress line on stderr.
func (b *B) Logf(format string, args ...any) {
	fmt.Fprintf(b.log, "  "+format+"\n", args...)
}

// Current returns the current-layout collection called name, generating it
// under Work the first time a suite asks for it. Options.NoSync is always
// set: the tree is scratch data. With -work the collection is also reused
// by later runs given the same options, so suites must not change the
// files of a collection they get here (copy it first when the work being
// measured changes the tree).
func (b *B) Current(name string, o gen.Options) (*Collection, error) {
	if c, ok := b.colls[name]; ok {
		return c, nil
	}
	dir := filepath.Join(b.Work, name)
	o.NoSync = true
	o.Printer = &stepPrinter{b: b}
	key := fmt.Sprintf("current n=%d seed=%d minimal=%v text=%v words=%d users=%q base=%s span=%s", o.N, o.Seed, o.Minimal, o.Text, o.TextWords, o.Users, o.Base, o.Span)
	marker := dir + ".manifest.gob"
	if b.Reuse {
		fp, err := b.fingerprint(o)
		if err != nil {
			return nil, err
		}
		key += " generator=" + fp
		if m, ok := loadManifest(marker, key); ok {
			b.Logf("reusing %s from %s", name, dir)
			c := &Collection{Dir: dir, Manifest: m}
			b.colls[name] = c
			return c, nil
		}
		if _, err := os.Stat(dir); err == nil {
			if _, err := os.Stat(marker); err != nil {
				return nil, fmt.Errorf("generate %s: %s exists but folio-bench did not generate it; remove it or pick another -work", name, dir)
			}
			b.Logf("removing %s: generated with other options", dir)
			if err := os.Remove(marker); err != nil {
				return nil, err
			}
			if err := os.RemoveAll(dir); err != nil {
				return nil, err
			}
		}
	}
	b.Logf("generating %s: %d snapshots (seed %d, output files %v)", name, o.N, o.Seed, !o.Minimal)
	start := time.Now()
	m, err := gen.Current(dir, o)
	if err != nil {
		return nil, fmt.Errorf("generate %s: %w", name, err)
	}
	b.Logf("generated %s in %s: %.0f MB, %d output files", name, time.Since(start).Round(100*time.Millisecond), float64(m.Bytes)/1e6, m.Files)
	if b.Reuse {
		if err := saveManifest(marker, key, m); err != nil {
			return nil, err
		}
	}
	c := &Collection{Dir: dir, Manifest: m}
	b.colls[name] = c
	return c, nil
}

// fingerprint hashes a small collection generated with o's settings, so a
// collection kept by -work is not reused once the generator has changed.
func (b *B) fingerprint(o gen.Options) (string, error) {
	dir, err := os.MkdirTemp(b.Work, ".fingerprint-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	o.N, o.Printer = min(o.N, 50), nil
	m, err := gen.Current(dir, o)
	if err != nil {
		return "", fmt.Errorf("generate a sample: %w", err)
	}
	h := sha256.New()
	for i := range m.Snapshots {
		data, err := os.ReadFile(m.IndexPath(i))
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %d %d %d\n", m.Snapshots[i].Dir, m.Snapshots[i].Files, m.Snapshots[i].Missing, len(data))
		h.Write(data)
	}
	return hex.EncodeToString(h.Sum(nil)[:8]), nil
}

// savedManifest is what -work keeps beside a generated collection; it is
// written only once generation has finished.
type savedManifest struct {
	Key      string
	Manifest *gen.Manifest
}

func loadManifest(path, key string) (*gen.Manifest, bool) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	var s savedManifest
	if gob.NewDecoder(bufio.NewReader(f)).Decode(&s) != nil || s.Key != key || s.Manifest == nil {
		return nil, false
	}
	if _, err := os.Stat(s.Manifest.Dir); err != nil {
		return nil, false
	}
	return s.Manifest, true
}

func saveManifest(path, key string, m *gen.Manifest) error {
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(savedManifest{Key: key, Manifest: m}); err != nil {
		return fmt.Errorf("save %s: %w", path, err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("save %s: %w", path, err)
	}
	return nil
}

// Measure is what one run of a command cost.
type Measure struct {
	Wall      time.Duration // start to exit
	FirstLine time.Duration // start to the first complete stdout line; 0 when there was none
	CPU       time.Duration // user + system time of the process and its children
	MaxRSS    int64         // peak resident set size in bytes (the command's ru_maxrss, see measureArg)
	Lines     int64         // stdout lines
	Bytes     int64         // stdout bytes
}

// FolioCmd returns the command `folio --data-dir dir args...`.
func (b *B) FolioCmd(dir string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(b.Ctx, b.Folio, append([]string{"--data-dir", dir}, args...)...)
	cmd.Env = append(os.Environ(), "FOLIO_DATA_DIR="+dir)
	return cmd
}

// CatCmd returns a command that writes every file of paths to stdout, the
// baseline of anything that reads the tree: xargs -0 cat, fed the list on
// stdin (a list of 100k paths is too long for one command line).
func (b *B) CatCmd(paths []string) *exec.Cmd {
	var list bytes.Buffer
	for _, p := range paths {
		list.WriteString(p)
		list.WriteByte(0)
	}
	cmd := exec.CommandContext(b.Ctx, "xargs", "-0", "cat")
	cmd.Stdin = &list
	return cmd
}

// Run runs cmd once, reading its stdout to the end (counted, then
// discarded), and measures it. A command that fails is an error naming it
// with the last line it wrote on stderr, e.g.
// `folio reindex: unknown command "reindex" for "folio" (exit 2)`.
//
// The command is started by a fresh folio-bench process in measure mode
// (see measureArg), so that its peak RSS is its own, not folio-bench's; its
// times are taken there too, without that process's start-up.
func (b *B) Run(cmd *exec.Cmd) (Measure, error) {
	var m Measure
	name := commandName(cmd)
	if cmd.Err != nil {
		return m, fmt.Errorf("%s: %w", name, cmd.Err)
	}
	self, err := os.Executable()
	if err != nil {
		return m, fmt.Errorf("%s: find folio-bench to measure with: %w", name, err)
	}
	h := exec.CommandContext(b.Ctx, self, append([]string{measureArg, cmd.Path}, cmd.Args[1:]...)...)
	h.Env, h.Dir, h.Stdin = cmd.Env, cmd.Dir, cmd.Stdin
	reportR, reportW, err := os.Pipe()
	if err != nil {
		return m, fmt.Errorf("%s: %w", name, err)
	}
	defer reportR.Close()
	h.ExtraFiles = []*os.File{reportW} // measureFD in the helper
	stderr := &tail{max: 4096}
	h.Stderr = stderr
	out, err := h.StdoutPipe()
	if err != nil {
		reportW.Close()
		return m, fmt.Errorf("%s: %w", name, err)
	}
	err = h.Start()
	reportW.Close()
	if err != nil {
		return m, fmt.Errorf("%s: %w", name, err)
	}
	var firstLine int64
	r := bufio.NewReaderSize(out, 1<<16)
	for {
		chunk, err := r.ReadSlice('\n')
		m.Bytes += int64(len(chunk))
		if len(chunk) > 0 && chunk[len(chunk)-1] == '\n' {
			if m.Lines == 0 {
				firstLine = monotonic()
			}
			m.Lines++
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil {
			break
		}
	}
	werr := h.Wait()
	if b.Ctx.Err() != nil {
		return m, fmt.Errorf("%s: %w", name, b.Ctx.Err())
	}
	var rep childReport
	if err := json.NewDecoder(reportR).Decode(&rep); err != nil {
		if werr == nil {
			werr = err
		}
		return m, fmt.Errorf("%s: no measurement from folio-bench %s: %v", name, measureArg, werr)
	}
	if rep.Err != "" {
		return m, fmt.Errorf("%s: %s", name, rep.Err)
	}
	m.Wall = time.Duration(rep.End - rep.Start)
	if firstLine > 0 {
		m.FirstLine = time.Duration(firstLine - rep.Start)
	}
	m.CPU = time.Duration(rep.UserNS + rep.SysNS)
	m.MaxRSS = rep.MaxRSSKB * 1024 // kilobytes on Linux
	if rep.Exit != 0 {
		msg := stderr.lastLine()
		if msg == "" {
			msg = fmt.Sprintf("exit status %d", rep.Exit)
		} else {
			msg = fmt.Sprintf("%s (exit %d)", msg, rep.Exit)
		}
		return m, fmt.Errorf("%s: %s", name, msg)
	}
	return m, nil
}

// Repeat measures a command Runs times and returns the median of each
// figure. setup, when not nil, runs before every repetition (outside the
// measurement); cmd makes a fresh command each time.
func (b *B) Repeat(setup func() error, cmd func() *exec.Cmd) (Measure, error) {
	var all []Measure
	for range max(b.Runs, 1) {
		if setup != nil {
			if err := setup(); err != nil {
				return Measure{}, err
			}
		}
		m, err := b.Run(cmd())
		if err != nil {
			return m, err
		}
		all = append(all, m)
	}
	return median(all), nil
}

// Add records a row of the current suite.
func (b *B) Add(r Row) {
	r.Suite = b.suite
	b.rows = append(b.rows, r)
	fmt.Fprintf(b.log, "  %-44s %s\n", r.Work, r.valueText())
}

// Fail records a row for work that could not be measured.
func (b *B) Fail(work string, err error) {
	b.Add(Row{Work: work, Err: err})
}

// commandName is how a command is named in errors: "folio reindex", "xargs".
func commandName(cmd *exec.Cmd) string {
	words := []string{filepath.Base(cmd.Path)}
	args := cmd.Args[1:]
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--data-dir" || a == "-D":
			i++
		case strings.HasPrefix(a, "-") && len(words) > 1:
			words = append(words, a)
		case !strings.HasPrefix(a, "-") && len(words) < 3:
			words = append(words, a)
		}
	}
	return strings.Join(words, " ")
}

// tail keeps the last max bytes written to it.
type tail struct {
	max int
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.max:]...)
	}
	return len(p), nil
}

// lastLine returns the error line folio prints ("folio: ..."), else the
// last non-empty line.
func (t *tail) lastLine() string {
	lines := strings.Split(strings.TrimSpace(string(t.buf)), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); strings.HasPrefix(l, "folio: ") {
			return strings.TrimPrefix(l, "folio: ")
		}
	}
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" {
			return l
		}
	}
	return ""
}

// stepPrinter logs generation progress at every tenth of the work.
type stepPrinter struct {
	b    *B
	mu   sync.Mutex
	next int64
}

func (p *stepPrinter) Infof(format string, args ...any) { p.b.Logf(format, args...) }
func (p *stepPrinter) Warnf(format string, args ...any) { p.b.Logf("warning: "+format, args...) }

func (p *stepPrinter) Progress(phase string, done, total int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if total == 0 || done < p.next || done == total {
		return
	}
	p.b.Logf("%s %d/%d", phase, done, total)
	p.next = done + total/10
}
