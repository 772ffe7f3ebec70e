package archive

import "strings"

// Snapshot states are what a person is shown for a snapshot: its
// lifecycle status (the Snapshot record's queued, started, paused or
// sealed, as ArchiveBox writes it) read together with its ArchiveResult
// records. An open snapshot (queued, started, paused, backoff) is in the
// state of its status; a finished one is archived, partial or failed.
// ArchiveBox's pages say "archived" for every sealed snapshot; folio does
// not call a snapshot archived when nothing of the page was kept.
const (
	// StateArchived: at least one content output succeeded and no
	// plugin's latest result failed.
	StateArchived = "archived"
	// StatePartial: at least one content output succeeded, and some
	// plugin's latest result failed.
	StatePartial = "partial"
	// StateFailed: finished with results, none of them content: every
	// capture method that ran failed (or found nothing), and only
	// bookkeeping such as hashes succeeded.
	StateFailed = "failed"
)

// States lists the derived states a finished snapshot can be in.
func States() []string { return []string{StateArchived, StatePartial, StateFailed} }

// bookkeeping are the plugins whose results say nothing about whether
// the page was kept: hashes lists the other outputs, chrome and its
// helpers drive the browser session, search backends index the others.
var bookkeeping = map[string]bool{
	"hashes": true, "chrome": true, "chrome_screencast": true, "modalcloser": true,
	"infiniscroll": true, "ublock": true, "istilldontcareaboutcookies": true, "twocaptcha": true,
}

// Bookkeeping reports whether a plugin's success is bookkeeping rather
// than content: it does not make a snapshot archived.
func Bookkeeping(plugin string) bool {
	return bookkeeping[plugin] || strings.HasPrefix(plugin, "search_backend_")
}

// Tally reads a snapshot's results in record order as ArchiveBox's
// importer does: the last record of each (plugin, hook_name) stands, so
// a retry that succeeded replaces the failure it retried; a record with
// a hook name also replaces an earlier one of its plugin without any (a
// migrated legacy record, which a retry supersedes). The zero Tally is
// empty and ready.
type Tally struct {
	latest map[[2]string]string // (plugin, hook_name) -> normalized status
}

// Add counts one result.
func (t *Tally) Add(plugin, hook, status string) {
	if t.latest == nil {
		t.latest = make(map[[2]string]string, 16)
	}
	if hook != "" {
		delete(t.latest, [2]string{plugin, ""})
	}
	t.latest[[2]string{plugin, hook}] = NormalizeStatus(status)
}

// Outputs is the number of standing results that succeeded (ArchiveBox's
// num_outputs), bookkeeping ones included.
func (t *Tally) Outputs() int { return t.count(StatusSucceeded) }

// Failures is the number of standing results that failed.
func (t *Tally) Failures() int { return t.count(StatusFailed) }

func (t *Tally) count(status string) int {
	n := 0
	for _, s := range t.latest {
		if s == status {
			n++
		}
	}
	return n
}

// State is the state of a snapshot with this lifecycle status and the
// tallied results. A sealed snapshot without any result of a capture
// method (a migrated folder whose index never listed one, or a run of
// bookkeeping plugins alone) is archived, as ArchiveBox says: there is no
// failure to show; a record without a status and without results has no
// state ("").
func (t *Tally) State(status string) string {
	switch status {
	case "queued", "started", "paused", "backoff":
		return status
	}
	content, captured, failed := false, false, false
	for k, s := range t.latest {
		captured = captured || !Bookkeeping(k[0])
		content = content || s == StatusSucceeded && !Bookkeeping(k[0])
		failed = failed || s == StatusFailed
	}
	switch {
	case content && failed:
		return StatePartial
	case content:
		return StateArchived
	case (captured || failed) && (status == "sealed" || status == ""):
		return StateFailed
	case status == "sealed":
		return StateArchived
	}
	return status
}

// StateOf is the state of a snapshot from its record and results.
func StateOf(s Snapshot, results []Result) string {
	var t Tally
	for _, r := range results {
		t.Add(r.Plugin, r.HookName, r.Status)
	}
	return t.State(s.Status)
}

// Standing returns the results that stand, in record order, as Tally
// counts them: the last record of each (plugin, hook_name), and a record
// without a hook name only when no record of its plugin with one comes
// after it.
func Standing(results []Result) []Result {
	if len(results) > standingScan {
		return standingByMap(results)
	}
	out := make([]Result, 0, len(results))
	for i := range results {
		if !superseded(results, i) {
			out = append(out, results[i])
		}
	}
	return out
}

// standingScan is the most results Standing compares pairwise; a
// snapshot has a result or two per plugin, and two maps cost more than
// the comparisons up to about this many.
const standingScan = 32

// superseded reports whether a later record replaces results[i]: one of
// the same plugin and hook name, or, for a record without a hook name,
// any later one of its plugin.
func superseded(results []Result, i int) bool {
	r := &results[i]
	for j := i + 1; j < len(results); j++ {
		if o := &results[j]; o.Plugin == r.Plugin && (r.HookName == "" || o.HookName == r.HookName) {
			return true
		}
	}
	return false
}

// standingByMap is Standing for many results.
func standingByMap(results []Result) []Result {
	last := make(map[[2]string]int, len(results))
	hooked := make(map[string]int, len(results)) // plugin -> its last record with a hook name
	for i := range results {
		r := &results[i]
		last[[2]string{r.Plugin, r.HookName}] = i
		if r.HookName != "" {
			hooked[r.Plugin] = i
		}
	}
	out := make([]Result, 0, len(last))
	for i := range results {
		r := &results[i]
		if last[[2]string{r.Plugin, r.HookName}] != i {
			continue
		}
		if h, ok := hooked[r.Plugin]; r.HookName == "" && ok && h > i {
			continue
		}
		out = append(out, *r)
	}
	return out
}
