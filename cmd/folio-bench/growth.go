package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/gen"
)

func init() {
	suites = append(suites, Suite{
		Name: "growth",
		Doc:  "export --full, reindex, verify and list at each of -sizes, to see time grow linearly and memory stay flat",
		Run:  runGrowth,
	})
}

// parseSizes reads -sizes: collection sizes separated by commas, "10k"
// and "1m" allowed.
func parseSizes(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.ToLower(strings.TrimSpace(f))
		mul := 1
		switch {
		case strings.HasSuffix(f, "k"):
			f, mul = strings.TrimSuffix(f, "k"), 1000
		case strings.HasSuffix(f, "m"):
			f, mul = strings.TrimSuffix(f, "m"), 1000000
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("-sizes: %q is not a collection size", f)
		}
		out = append(out, n*mul)
	}
	return out, nil
}

// growthWork is one command of the growth table.
type growthWork struct {
	name  string
	setup func(c *Collection) error // before each repetition; may be nil
	args  []string
}

// runGrowth measures each work at every size of -sizes (default -n
// alone), one row per work and size with its time per snapshot and peak
// RSS, then one row per work comparing the largest size with the
// smallest: the time should grow as the count does, the memory not at
// all.
func runGrowth(b *B) error {
	sizes := b.Sizes
	if len(sizes) == 0 {
		sizes = []int{b.N}
	}
	works := []growthWork{
		{name: "reindex, empty catalog", setup: emptyCatalog, args: []string{"reindex"}},
		{name: "export --full", args: []string{"export", "--full"}},
		{name: "verify", args: []string{"verify", "-q"}},
		{name: "list --jsonl", args: []string{"list", "--jsonl"}},
	}
	type point struct {
		n int
		m Measure
	}
	got := make([][]point, len(works))
	for _, n := range sizes {
		c, err := b.Current("growth-"+count(n), gen.Options{N: n, Seed: b.Seed, Minimal: !b.Files})
		if err != nil {
			return err
		}
		// hashes.json for verify, and a catalog for the others.
		if _, err := b.Run(b.FolioCmd(c.Dir, "verify", "--write-hashes", "-q")); err != nil {
			b.Fail("growth: verify --write-hashes "+count(n), err)
		}
		if _, err := b.Run(b.FolioCmd(c.Dir, "reindex")); err != nil {
			return err
		}
		for i, w := range works {
			var setup func() error
			if w.setup != nil {
				setup = func() error { return w.setup(c) }
			}
			m, err := b.Repeat(setup, func() *exec.Cmd { return b.FolioCmd(c.Dir, w.args...) })
			row := Row{Work: fmt.Sprintf("growth: %s, %s", w.name, count(n)), Value: m.Wall.Seconds(), Err: err,
				Note: fmt.Sprintf("%.0f µs/snapshot, cpu %s, RSS %s", m.Wall.Seconds()*1e6/float64(n),
					format(Seconds, m.CPU.Seconds()), format(Bytes, float64(m.MaxRSS)))}
			b.Add(row)
			if err == nil {
				got[i] = append(got[i], point{n, m})
			}
		}
	}
	for i, w := range works {
		if len(got[i]) < 2 {
			continue
		}
		lo, hi := got[i][0], got[i][len(got[i])-1]
		grow := float64(hi.n) / float64(lo.n)
		time := hi.m.Wall.Seconds() / lo.m.Wall.Seconds()
		b.Add(Row{Work: fmt.Sprintf("growth: %s, %s → %s", w.name, count(lo.n), count(hi.n)), Value: time / grow, Unit: Ratio,
			Note: fmt.Sprintf("time ×%.2f, cpu ×%.2f, RSS ×%.2f (%s → %s) for ×%.0f snapshots", time,
				hi.m.CPU.Seconds()/lo.m.CPU.Seconds(), float64(hi.m.MaxRSS)/float64(lo.m.MaxRSS),
				format(Bytes, float64(lo.m.MaxRSS)), format(Bytes, float64(hi.m.MaxRSS)), grow)})
	}
	return nil
}

// emptyCatalog removes the catalog of c and its WAL files.
func emptyCatalog(c *Collection) error {
	for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
		p := c.Dir + "/" + archive.CatalogFile + suffix
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("empty the catalog: %w", err)
		}
	}
	return nil
}
