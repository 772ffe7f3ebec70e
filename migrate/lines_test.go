package migrate_test

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/gen"
	"github.com/folio-archive/folio/migrate"
)

// linePrinter keeps every line a run prints.
type linePrinter struct {
	mu    sync.Mutex
	lines []string
}

func (p *linePrinter) Infof(f string, a ...any)      { p.add(fmt.Sprintf(f, a...)) }
func (p *linePrinter) Warnf(f string, a ...any)      { p.add(fmt.Sprintf(f, a...)) }
func (p *linePrinter) Progress(string, int64, int64) {}
func (p *linePrinter) add(s string) {
	p.mu.Lock()
	p.lines = append(p.lines, s)
	p.mu.Unlock()
}

// With many workers finishing in any order, and sources deleted in
// batches beside them, the per-entry lines still come out numbered 1, 2,
// 3, ... in plan order, each entry once.
func TestRunLinesInPlanOrder(t *testing.T) {
	for _, copyPath := range []bool{false, true} {
		t.Run(fmt.Sprintf("copy=%v", copyPath), func(t *testing.T) {
			dir := t.TempDir()
			m, err := gen.Legacy(dir, gen.LegacyOptions{Version: gen.Legacy07, N: 60, Seed: 3})
			if err != nil {
				t.Fatal(err)
			}
			c, err := archive.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			// The plan's order of the legacy folders, from a dry run.
			var plan strings.Builder
			dry := migrate.Options{DryRun: true, PlanOut: &plan, IDs: otherIDs()}
			if _, err := migrate.Run(context.Background(), c, dry); err != nil {
				t.Fatal(err)
			}
			var order []string
			for _, l := range strings.Split(plan.String(), "\n") {
				f := strings.Fields(l)
				if len(f) >= 2 && (f[0] == "move" || f[0] == "invalid") && strings.Count(f[1], "/") == 1 {
					order = append(order, strings.TrimPrefix(f[1], "archive/"))
				}
			}
			p := &linePrinter{}
			o := migrate.Options{Workers: 16, ForceCopy: copyPath, Printer: p, IDs: otherIDs(),
				Now: func() time.Time { return time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC) }}
			if _, err := migrate.Run(context.Background(), c, o); err != nil {
				t.Fatal(err)
			}
			item := regexp.MustCompile(`^    \[(\d+)\] (\w[\w ]*): (\S+)$`)
			var got []string
			for _, l := range p.lines {
				if strings.Contains(l, "Phase 2") {
					break
				}
				sm := item.FindStringSubmatch(l)
				if sm == nil {
					continue
				}
				if n, _ := strconv.Atoi(sm[1]); n != len(got)+1 {
					t.Fatalf("line %q: want number %d\n%s", l, len(got)+1, strings.Join(p.lines, "\n"))
				}
				got = append(got, sm[3])
			}
			if len(order) < len(m.Snapshots) || strings.Join(got, " ") != strings.Join(order, " ") {
				t.Fatalf("phase 1 lines name\n%v\nwant the plan's order\n%v", got, order)
			}
		})
	}
}
