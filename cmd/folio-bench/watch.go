package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/archive/catalog"
	"github.com/folio-archive/folio/gen"
)

func init() {
	suites = append(suites, Suite{
		Name: "watch",
		Doc:  "folio watch: time from a change in the tree to the catalog, beside an incremental reindex of the same change",
		Run:  runWatch,
	})
}

// watchProc is a running `folio watch` whose catalog lines are timed as
// they arrive.
type watchProc struct {
	cmd   *exec.Cmd
	lines chan stamped
	mu    sync.Mutex
	tail  []string
	// polling: watch warned that inotify's limit left folders to be
	// looked at every second or so, which a change there waits for.
	polling bool
}

type stamped struct {
	at   time.Time
	text string
}

func (b *B) startWatch(dir string, flags ...string) (*watchProc, error) {
	w := &watchProc{cmd: b.FolioCmd(dir, append([]string{"watch"}, flags...)...), lines: make(chan stamped, 64)}
	stderr, err := w.cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := w.cmd.Start(); err != nil {
		return nil, fmt.Errorf("folio watch: %w", err)
	}
	go func() {
		defer close(w.lines)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := stamped{time.Now(), sc.Text()}
			w.mu.Lock()
			w.tail = append(w.tail[max(0, len(w.tail)-5):], line.text)
			w.polling = w.polling || strings.Contains(line.text, "watch limit")
			w.mu.Unlock()
			w.lines <- line
		}
	}()
	return w, nil
}

// await returns the arrival time of the first line matching re, or an
// error after timeout (naming the last lines folio printed).
func (w *watchProc) await(ctx context.Context, re *regexp.Regexp, timeout time.Duration) (time.Time, error) {
	l, err := w.awaitLine(ctx, re, timeout)
	return l.at, err
}

// awaitLine is await returning the line too.
func (w *watchProc) awaitLine(ctx context.Context, re *regexp.Regexp, timeout time.Duration) (stamped, error) {
	deadline := time.After(timeout)
	for {
		select {
		case l, ok := <-w.lines:
			if !ok {
				return stamped{}, fmt.Errorf("folio watch ended: %s", w.last())
			}
			if re.MatchString(l.text) {
				return l, nil
			}
		case <-deadline:
			return stamped{}, fmt.Errorf("no line matching %q within %s; folio watch said: %s", re, timeout, w.last())
		case <-ctx.Done():
			return stamped{}, ctx.Err()
		}
	}
}

// watchedExport measures the goal "≤ 200 ms under watch --export": one
// snapshot (target, a snapshot folder of c) retitled by hand at a time
// under folio watch --export, and the time watch reports for applying
// each change, the reindex of the folder and the export. That leaves out
// --settle, the stillness watch waits for before it applies a change.
// The changes are 3 s apart, so that watch has written the root manifest
// it holds back (2 s after the last change) before the next one.
func (b *B) watchedExport(c *Collection, target, n string, cli time.Duration) Row {
	row := Row{Work: "export " + n + ", after one change under watch --export", Goal: Goal{Max: 0.2},
		Baseline: cli.Seconds(), BaselineName: "export after one change"}
	return b.watchedChanges(row, c, regexp.MustCompile(`^catalog: 1 updated .* in (\S+); export: 1 detail page`), func(i int) error {
		return gen.RetitleIndex(target, fmt.Sprintf("Watched by folio-bench %d", i))
	})
}

// watchedAddedExport is watchedExport for the snapshot at the top of the
// list going and coming back (its folder moved out of the tree and in
// again, as addedExport does), against that export's time (cli).
func (b *B) watchedAddedExport(c *Collection, n string, cli float64) Row {
	row := Row{Work: "export " + n + ", after one snapshot added or removed under watch --export", Goal: Goal{Max: 0.2},
		Baseline: cli, BaselineName: "export after one snapshot added or removed"}
	p := b.newestParker(c)
	row = b.watchedChanges(row, c, regexp.MustCompile(`^catalog: 1 (?:added|removed) .* in (\S+); export: `), func(int) error { return p.toggle() })
	if err := p.restore(); row.Err == nil { // the collection as it was
		row.Err = err
	}
	return row
}

// watchedChanges starts folio watch --export on c, makes change i (3 s
// apart) as many times as the runs ask, three times over, and sets row to
// the median of the times watch reports on the lines applied matches
// (its first group).
func (b *B) watchedChanges(row Row, c *Collection, applied *regexp.Regexp, change func(i int) error) Row {
	w, err := b.startWatch(c.Dir, "--export")
	if err != nil {
		row.Err = err
		return row
	}
	defer w.stop()
	if _, err := w.await(b.Ctx, regexp.MustCompile(`^catalog: `), 5*time.Minute); err != nil {
		row.Err = err
		return row
	}
	var took []time.Duration
	for i := range 3 * max(b.Runs, 1) {
		time.Sleep(3 * time.Second)
		if err := change(i); err != nil {
			row.Err = err
			return row
		}
		l, err := w.awaitLine(b.Ctx, applied, 30*time.Second)
		if err != nil {
			row.Err = err
			return row
		}
		d, err := time.ParseDuration(applied.FindStringSubmatch(l.text)[1])
		if err != nil {
			row.Err = fmt.Errorf("watch line %q: %w", l.text, err)
			return row
		}
		took = append(took, d)
	}
	slices.Sort(took)
	row.Value = took[len(took)/2].Seconds()
	row.Note = fmt.Sprintf("median of %d changes, %s-%s, --settle not counted", len(took),
		format(Seconds, took[0].Seconds()), format(Seconds, took[len(took)-1].Seconds()))
	if note := w.polled(); note != "" {
		row.Note += "; " + note
	}
	return row
}

// polled is a note for a row measured while watch polled folders
// inotify could not watch, "" when it watched them all.
func (w *watchProc) polled() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.polling {
		return ""
	}
	return "inotify's limit reached, some folders polled (sysctl fs.inotify.max_user_watches)"
}

func (w *watchProc) last() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.Join(w.tail, " | ")
}

func (w *watchProc) stop() {
	w.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { w.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		w.cmd.Process.Kill()
		<-done
	}
}

// watchChange is one kind of change a user makes by hand, with the way
// back, so the shared benchmark collection ends as it began.
type watchChange struct {
	name       string
	do, undo   func() error
	want, back *regexp.Regexp // the catalog lines that show it applied
	check      func(*catalog.Catalog) error
}

// runWatch measures the goal of issue "live collection": a change reaches
// the catalog within 2 s. Three changes are timed in turn, each Runs
// times: a snapshot folder copied in, an index.jsonl rewritten, a folder
// deleted (moved out of the tree, and back afterwards). The baseline is
// `folio reindex` (incremental) with the same change in the tree, which
// is what a user without watch would run.
func runWatch(b *B) error {
	c, err := b.Current("current", gen.Options{N: b.N, Seed: b.Seed, Minimal: !b.Files})
	if err != nil {
		return err
	}
	if _, err := b.Run(b.FolioCmd(c.Dir, "reindex")); err != nil {
		return err
	}
	donor, err := b.Current("watch-donor", gen.Options{N: 1, Seed: b.Seed + 1000, Minimal: !b.Files})
	if err != nil {
		return err
	}
	in := donor.Manifest.Snapshots[0]
	edit, gone := c.Manifest.Snapshots[len(c.Manifest.Snapshots)/3], c.Manifest.Snapshots[len(c.Manifest.Snapshots)/2]
	abs := func(root, rel string) string { return filepath.Join(root, filepath.FromSlash(rel)) }
	original, err := os.ReadFile(abs(abs(c.Dir, edit.Dir), archive.IndexFile))
	if err != nil {
		return err
	}
	aside := filepath.Join(b.Work, "watch-aside")
	if err := os.RemoveAll(aside); err != nil {
		return err
	}
	holds := func(cat *catalog.Catalog, url string, want int) error {
		n, err := cat.Count(b.Ctx, catalog.Query{Patterns: []string{url}, FilterType: catalog.FilterExact})
		if err == nil && n != want {
			err = fmt.Errorf("the catalog holds %d snapshots of %s, want %d", n, url, want)
		}
		return err
	}
	const retitled = "Retitled for the watch benchmark"
	changes := []watchChange{
		{
			name: "folder copied in",
			do: func() error {
				to := abs(c.Dir, in.Dir)
				if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
					return err
				}
				return exec.Command("cp", "-a", abs(donor.Dir, in.Dir), to).Run()
			},
			undo: func() error { return os.RemoveAll(abs(c.Dir, in.Dir)) },
			want: regexp.MustCompile(`^catalog: 1 added`), back: regexp.MustCompile(`^catalog: 1 removed`),
			check: func(cat *catalog.Catalog) error { return holds(cat, in.URL, 1) },
		},
		{
			name: "index.jsonl edited",
			do:   func() error { return gen.RetitleIndex(abs(c.Dir, edit.Dir), retitled) },
			undo: func() error {
				return archive.WriteFile(abs(abs(c.Dir, edit.Dir), archive.IndexFile), original, 0o644)
			},
			want: regexp.MustCompile(`^catalog: 1 updated`), back: regexp.MustCompile(`^catalog: 1 updated`),
			check: func(cat *catalog.Catalog) error {
				var title string
				err := cat.Each(b.Ctx, catalog.Query{Patterns: []string{edit.URL}, FilterType: catalog.FilterExact}, func(e catalog.Entry) error {
					if e.Dir == edit.Dir {
						title = e.Snapshot.Title
					}
					return nil
				})
				if err == nil && title != retitled {
					err = fmt.Errorf("the catalog's title of %s is %q", edit.Dir, title)
				}
				return err
			},
		},
		{
			name: "folder deleted",
			do: func() error {
				if err := os.MkdirAll(aside, 0o755); err != nil {
					return err
				}
				return os.Rename(abs(c.Dir, gone.Dir), filepath.Join(aside, "gone"))
			},
			undo: func() error { return os.Rename(filepath.Join(aside, "gone"), abs(c.Dir, gone.Dir)) },
			want: regexp.MustCompile(`^catalog: 1 removed`), back: regexp.MustCompile(`^catalog: 1 added`),
			check: func(cat *catalog.Catalog) error {
				return cat.Each(b.Ctx, catalog.Query{Patterns: []string{gone.URL}, FilterType: catalog.FilterExact}, func(e catalog.Entry) error {
					if e.Dir == gone.Dir {
						return fmt.Errorf("%s is still cataloged", gone.Dir)
					}
					return nil
				})
			},
		},
	}

	coll, err := archive.Open(c.Dir)
	if err != nil {
		return err
	}
	n := count(b.N)
	var all []time.Duration
	perKind := map[string][]time.Duration{}
	var reindex []time.Duration
	w, err := b.startWatch(c.Dir)
	if err != nil {
		return err
	}
	defer w.stop()
	// The first line after start says the catalog is current.
	if _, err := w.await(b.Ctx, regexp.MustCompile(`^catalog: `), 2*time.Minute); err != nil {
		return err
	}
	for range max(b.Runs, 1) {
		for _, ch := range changes {
			time.Sleep(time.Second) // a still tree before the change
			start := time.Now()
			if err := ch.do(); err != nil {
				return fmt.Errorf("%s: %w", ch.name, err)
			}
			at, err := w.await(b.Ctx, ch.want, 30*time.Second)
			if err != nil {
				return fmt.Errorf("%s: %w", ch.name, err)
			}
			d := at.Sub(start)
			all = append(all, d)
			perKind[ch.name] = append(perKind[ch.name], d)
			cat, err := catalog.Open(b.Ctx, coll)
			if err != nil {
				return err
			}
			err = ch.check(cat)
			cat.Close()
			if err != nil {
				return fmt.Errorf("%s: after folio watch reported it: %w", ch.name, err)
			}
			if err := ch.undo(); err != nil {
				return fmt.Errorf("undo %s: %w", ch.name, err)
			}
			if _, err := w.await(b.Ctx, ch.back, 30*time.Second); err != nil {
				return fmt.Errorf("undo %s: %w", ch.name, err)
			}
		}
	}
	w.stop()

	// The baseline: the same changes applied by a reindex run by hand.
	for range max(b.Runs, 1) {
		for _, ch := range changes {
			if err := ch.do(); err != nil {
				return err
			}
			m, err := b.Run(b.FolioCmd(c.Dir, "reindex"))
			if err != nil {
				return err
			}
			reindex = append(reindex, m.Wall)
			if err := ch.undo(); err != nil {
				return err
			}
			if _, err := b.Run(b.FolioCmd(c.Dir, "reindex")); err != nil {
				return err
			}
		}
	}

	med := func(v []time.Duration) time.Duration { v = slices.Clone(v); slices.Sort(v); return v[len(v)/2] }
	p95 := func(v []time.Duration) time.Duration {
		v = slices.Clone(v)
		slices.Sort(v)
		return v[min(len(v)-1, (len(v)*95+99)/100-1)]
	}
	var kinds []string
	for _, ch := range changes {
		kinds = append(kinds, fmt.Sprintf("%s %s", ch.name, format(Seconds, med(perKind[ch.name]).Seconds())))
	}
	if note := w.polled(); note != "" {
		kinds = append(kinds, note)
	}
	b.Add(Row{
		Work:     fmt.Sprintf("watch %s: a change by hand to the catalog (median of %d changes)", n, len(all)),
		Value:    med(all).Seconds(),
		Goal:     Goal{Max: 2},
		Baseline: med(reindex).Seconds(), BaselineName: "folio reindex of the same change",
		Note: fmt.Sprintf("max %s, p95 %s; %s", format(Seconds, slices.Max(all).Seconds()), format(Seconds, p95(all).Seconds()),
			strings.Join(kinds, ", ")),
	})
	b.Add(Row{
		Work:  fmt.Sprintf("watch %s: slowest change to the catalog", n),
		Value: slices.Max(all).Seconds(), Goal: Goal{Max: 2},
		Baseline: slices.Max(reindex).Seconds(), BaselineName: "slowest folio reindex of the same change",
	})
	return nil
}
