package main

import (
	"fmt"
	"os/exec"

	"github.com/folio-archive/folio/gen"
)

func init() {
	suites = append(suites, Suite{
		Name: "core",
		Doc:  "reindex and list of a current-layout collection, beside cat of every index.jsonl (and find -newer for the no-change reindex)",
		Run:  runCore,
	})
}

// runCore measures the catalog goals of PRODUCT.md: reindex into an empty
// catalog, reindex with nothing changed, list --jsonl to the first line and
// to the end. The baseline of each is cat of every index.jsonl of the same
// tree, page cache warm for both, but for the reindex with nothing changed,
// whose floor is find -newer (see nothingChanged).
func runCore(b *B) error {
	c, err := b.Current("current", gen.Options{N: b.N, Seed: b.Seed, Minimal: !b.Files})
	if err != nil {
		return err
	}
	n := count(b.N)
	paths := c.IndexPaths()
	if _, err := b.Run(b.CatCmd(paths)); err != nil { // warm the page cache
		return err
	}
	folio := func(args ...string) func() *exec.Cmd {
		return func() *exec.Cmd { return b.FolioCmd(c.Dir, args...) }
	}
	const catName = "cat"

	// The reindex into an empty catalog, whose goal is a ratio, is
	// measured interleaved with cat (reindex, cat, reindex, cat...); cat's
	// runs are the baseline of the other rows too.
	full, catRuns, err := b.Interleave(Step{Setup: func() error { return emptyCatalog(c) }, Cmd: folio("reindex")},
		Step{Cmd: func() *exec.Cmd { return b.CatCmd(paths) }})
	if err != nil {
		b.Add(Row{Work: "reindex " + n + ", empty catalog", Err: err})
		return nil
	}
	cat := catRuns.Measure
	b.Add(Row{Work: fmt.Sprintf("baseline: cat of %s index.jsonl (%.0f MB)", n, float64(cat.Bytes)/1e6), Value: cat.Wall.Seconds(),
		Note: "cpu " + format(Seconds, cat.CPU.Seconds())})

	base := func(r Row, baseline float64, name string) Row {
		r.Baseline, r.BaselineName = baseline, name
		return r
	}
	add := func(r Row, value float64, err error) {
		r.Value, r.Err = value, err
		b.Add(r)
	}
	cpu := func(r Row, m Measure) Row {
		r.Note = "cpu " + format(Seconds, m.CPU.Seconds())
		return r
	}

	b.Add(pairRow("reindex "+n+", empty catalog", Goal{MaxRatio: 0.5}, full, catRuns, catName))
	b.Add(Row{Work: "reindex " + n + ", empty catalog: peak RSS", Unit: Bytes, Goal: Goal{Max: 200e6}, Value: float64(full.MaxRSS)})

	b.nothingChanged(c, "reindex "+n+", nothing changed", "reindex")

	m, err := b.Repeat(nil, folio("list", "--jsonl"))
	if err == nil && m.Lines != int64(b.N) {
		err = fmt.Errorf("folio list --jsonl printed %d lines, the collection has %d snapshots", m.Lines, b.N)
	}
	add(base(Row{Work: "list --jsonl " + n + ": first line", Goal: Goal{Max: 0.1}}, cat.FirstLine.Seconds(), catName+" first line"), m.FirstLine.Seconds(), err)
	add(cpu(base(Row{Work: "list --jsonl " + n + ": all", Goal: Goal{Max: 2}}, cat.Wall.Seconds(), catName), m), m.Wall.Seconds(), err)
	return nil
}

// count writes a collection size as in the goals: 100k, 10k, 2500.
func count(n int) string {
	if n >= 1000 && n%1000 == 0 {
		return fmt.Sprintf("%dk", n/1000)
	}
	return fmt.Sprint(n)
}
