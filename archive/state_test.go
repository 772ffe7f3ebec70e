package archive_test

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/folio-archive/folio/archive"
)

func TestState(t *testing.T) {
	type r = [3]string // plugin, hook_name, status
	for _, c := range []struct {
		name, status string
		results      []r
		want         string
		outputs      int
		failures     int
	}{
		{"all failed but hashes", "sealed", []r{{"screenshot", "h51", "failed"}, {"dom", "h53", "failed"}, {"hashes", "h93", "succeeded"}}, archive.StateFailed, 1, 2},
		{"bookkeeping only", "sealed", []r{{"chrome", "h00", "succeeded"}, {"search_backend_sqlite", "", "succeeded"}, {"hashes", "", "succeeded"}}, archive.StateArchived, 3, 0},
		{"bookkeeping failed alone", "sealed", []r{{"hashes", "", "failed"}}, archive.StateFailed, 0, 1},
		{"nothing found", "sealed", []r{{"favicon", "", "noresults"}, {"staticfile", "", "skipped"}}, archive.StateFailed, 0, 0},
		{"content", "sealed", []r{{"screenshot", "", "succeeded"}, {"hashes", "", "succeeded"}, {"favicon", "", "noresults"}}, archive.StateArchived, 2, 0},
		{"content and a failure", "sealed", []r{{"title", "", "succeeded"}, {"pdf", "", "failed"}}, archive.StatePartial, 1, 1},
		{"a retry replaces its failure", "sealed", []r{{"dom", "h53", "failed"}, {"dom", "h53", "succeeded"}}, archive.StateArchived, 1, 0},
		{"a later failure replaces a success", "sealed", []r{{"dom", "h53", "succeeded"}, {"dom", "h53", "failed"}}, archive.StateFailed, 0, 1},
		{"a retry supersedes a migrated failure", "sealed", []r{{"screenshot", "", "failed"}, {"screenshot", "on_Snapshot__51_screenshot.js", "succeeded"}}, archive.StateArchived, 1, 0},
		{"a migrated record after a hooked one stands", "sealed", []r{{"pdf", "h52", "succeeded"}, {"pdf", "", "failed"}}, archive.StatePartial, 1, 1},
		{"hooks of one plugin stand apart", "sealed", []r{{"chrome", "launch", "failed"}, {"chrome", "tab", "succeeded"}, {"dom", "", "succeeded"}}, archive.StatePartial, 2, 1},
		{"legacy typo", "", []r{{"wget", "", "succeded"}}, archive.StateArchived, 1, 0},
		{"legacy without status, failed", "", []r{{"wget", "", "failed"}}, archive.StateFailed, 0, 1},
		{"sealed, no results recorded", "sealed", nil, archive.StateArchived, 0, 0},
		{"no status, no results", "", nil, "", 0, 0},
		{"queued keeps its status", "queued", []r{{"screenshot", "", "succeeded"}}, "queued", 1, 0},
		{"started", "started", []r{{"screenshot", "", "failed"}}, "started", 0, 1},
		{"paused", "paused", nil, "paused", 0, 0},
	} {
		var tally archive.Tally
		var results []archive.Result
		for _, x := range c.results {
			tally.Add(x[0], x[1], x[2])
			results = append(results, archive.Result{Plugin: x[0], HookName: x[1], Status: x[2]})
		}
		got := tally.State(c.status)
		if got != c.want || tally.Outputs() != c.outputs || tally.Failures() != c.failures {
			t.Errorf("%s: state %q outputs %d failures %d, want %q %d %d", c.name, got, tally.Outputs(), tally.Failures(), c.want, c.outputs, c.failures)
		}
		if s := archive.StateOf(archive.Snapshot{Status: c.status}, results); s != got {
			t.Errorf("%s: StateOf %q, Tally %q", c.name, s, got)
		}
		keys := map[[2]string]bool{}
		for _, x := range c.results {
			if x[1] != "" {
				delete(keys, [2]string{x[0], ""}) // superseded by a hooked record
			}
			keys[[2]string{x[0], x[1]}] = true
		}
		standing := archive.Standing(results)
		if len(standing) != len(keys) {
			t.Errorf("%s: %d standing results, want %d", c.name, len(standing), len(keys))
		}
		if s := archive.StateOf(archive.Snapshot{Status: c.status}, standing); s != got {
			t.Errorf("%s: state of the standing results %q, of all %q", c.name, s, got)
		}
	}
}

// TestStandingAtAnyLength checks Standing against its definition on
// random records, below and above the length where it stops comparing
// records pairwise.
func TestStandingAtAnyLength(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	plugins, hooks := []string{"wget", "dom", "screenshot"}, []string{"", "h1", "h2"}
	for round := 0; round < 2000; round++ {
		results := make([]archive.Result, rng.IntN(70))
		for i := range results {
			results[i] = archive.Result{Plugin: plugins[rng.IntN(3)], HookName: hooks[rng.IntN(3)], OutputStr: strconv.Itoa(i)}
		}
		// A record stands unless a later one has its plugin and hook
		// name, or, when it has no hook name, its plugin and a hook name.
		var want []archive.Result
		for i, r := range results {
			stands := true
			for _, o := range results[i+1:] {
				if o.Plugin == r.Plugin && (o.HookName == r.HookName || r.HookName == "" && o.HookName != "") {
					stands = false
				}
			}
			if stands {
				want = append(want, r)
			}
		}
		if got := archive.Standing(results); !slices.EqualFunc(got, want, func(a, b archive.Result) bool { return a.OutputStr == b.OutputStr }) {
			t.Fatalf("%d records: standing %v, want %v", len(results), got, want)
		}
	}
}
