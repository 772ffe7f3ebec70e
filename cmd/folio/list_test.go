package main_test

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

func catLines(s string) []string {
	s = strings.TrimSuffix(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func TestListCommand(t *testing.T) {
	dir, m := catCollection(t, 60)
	n := len(m.Snapshots) + 1

	// The catalog is empty: list reindexes first and says so on stderr.
	r := catRun(t, dir, "list").want(t, 0)
	if !strings.Contains(r.stderr, "running 'folio reindex' first") {
		t.Errorf("stderr %q", r.stderr)
	}
	lines := catLines(r.stdout)
	if len(lines) != n {
		t.Fatalf("%d lines, want %d", len(lines), n)
	}
	var prev string
	for i, l := range lines {
		var rec map[string]any
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatalf("line %d: %v: %s", i+1, err, l)
		}
		if !strings.HasPrefix(l, `{"type": "Snapshot", "schema_version": `) || strings.ContainsAny(l, "\u00e9\u6587") {
			t.Errorf("line %d not in the per-snapshot record shape: %s", i+1, l)
		}
		if b, _ := rec["bookmarked_at"].(string); b != "" && prev != "" && b > prev {
			t.Errorf("line %d: not newest first (%s after %s)", i+1, b, prev)
		} else if b != "" {
			prev = b
		}
	}
	r2 := catRun(t, dir, "list", "--jsonl").want(t, 0)
	if r2.stdout != r.stdout || strings.Contains(r2.stderr, "reindex") {
		t.Errorf("second list differs or reindexed again: %q", r2.stderr)
	}

	// Deleting .folio and listing again gives the same output.
	if err := os.RemoveAll(filepath.Join(dir, ".folio")); err != nil {
		t.Fatal(err)
	}
	if r3 := catRun(t, dir, "list").want(t, 0); r3.stdout != r.stdout {
		t.Errorf("list after deleting .folio differs")
	}

	// --json: an array of the same records, indent 4, sorted keys.
	js := catRun(t, dir, "list", "--json").want(t, 0).stdout
	var arr []map[string]any
	if err := json.Unmarshal([]byte(js), &arr); err != nil || len(arr) != n {
		t.Fatalf("--json: %v, %d items", err, len(arr))
	}
	if !strings.HasPrefix(js, "[\n    {\n        \"archive_size\": ") {
		t.Errorf("--json layout: %.80q", js)
	}
	keys := []string{}
	for k := range arr[0] {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if strings.Join(keys, ",") != "archive_size,bookmarked_at,crawl_id,created_at,depth,fs_version,id,output_size,schema_version,status,tags,timestamp,title,type,url" &&
		!strings.Contains(strings.Join(keys, ","), "notes") {
		t.Errorf("--json keys %v", keys)
	}

	// --csv: header, then the cells as text (csv_test.go reads them back).
	out := catRun(t, dir, "list", "--csv", "timestamp,url,title", "--sort", "url", "-n", "3").want(t, 0).stdout
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || len(rows) != 4 || strings.Join(rows[0], ",") != "timestamp,url,title" {
		t.Errorf("--csv: %v %q", err, out)
	} else {
		for _, r := range rows[1:] {
			if len(r) != 3 || !strings.Contains(r[1], "://") {
				t.Errorf("--csv row %q: want a timestamp, a URL and a title", r)
			}
		}
	}

	// Filters.
	legacy := catLines(catRun(t, dir, "list", "-f", "domain", "legacy.example.com").want(t, 0).stdout)
	if len(legacy) != 1 || !strings.Contains(legacy[0], `"title": "Legacy page"`) || !strings.Contains(legacy[0], `"timestamp": "1609459200.123456"`) {
		t.Errorf("domain filter: %q", legacy)
	}
	if got := catLines(catRun(t, dir, "list", "--tag", "old", "--tag", "news").want(t, 0).stdout); len(got) != 1 {
		t.Errorf("--tag: %q", got)
	}
	if got := catLines(catRun(t, dir, "list", "-f", "tag", "old").want(t, 0).stdout); len(got) != 1 {
		t.Errorf("-f tag: %q", got)
	}
	if got := catLines(catRun(t, dir, "list", "-f", "timestamp", "1609459200.123456").want(t, 0).stdout); len(got) != 1 {
		t.Errorf("-f timestamp: %q", got)
	}
	if got := catLines(catRun(t, dir, "list", "-f", "regex", `^https://LEGACY\.`).want(t, 0).stdout); len(got) != 1 {
		t.Errorf("-f regex: %q", got)
	}
	if got := catLines(catRun(t, dir, "list", "-f", "exact", "https://legacy.example.com/page1").want(t, 0).stdout); len(got) != 1 {
		t.Errorf("-f exact: %q", got)
	}
	if got := catLines(catRun(t, dir, "list", "legacy.example").want(t, 0).stdout); len(got) != 1 {
		t.Errorf("substring: %q", got)
	}
	w := m.Snapshots[7]
	if got := catLines(catRun(t, dir, "list", "-f", "exact", w.URL, "--status", w.Status).want(t, 0).stdout); len(got) < 1 || !strings.Contains(got[0], w.ID) {
		t.Errorf("exact + status: %q", got)
	}
	// A known status no snapshot has selects nothing; an unknown one is
	// a mistake (TestListUsage).
	if got := catLines(catRun(t, dir, "list", "--status", "backoff").want(t, 0).stdout); len(got) != 0 {
		t.Errorf("--status: %q", got)
	}
	// --before/--after compare bookmarked_at; the legacy folder sorts by its timestamp.
	before := catLines(catRun(t, dir, "list", "--before", "2021-01-02").want(t, 0).stdout)
	after := catLines(catRun(t, dir, "list", "--after", "1609545600").want(t, 0).stdout)
	if len(before)+len(after) != n {
		t.Errorf("--before %d + --after %d != %d", len(before), len(after), n)
	}
	if got := catLines(catRun(t, dir, "list", "--after", "2021-01-01T00:00:00Z", "--before", "2021-01-01T00:00:01Z").want(t, 0).stdout); len(got) != 1 {
		t.Errorf("legacy in a one-second window: %q", got)
	}
	// A value that is not there is an empty cell, never null.
	notes := catLines(catRun(t, dir, "list", "--csv", "url,notes", "--limit", "1").want(t, 0).stdout)
	if len(notes) != 2 || !strings.HasSuffix(notes[1], `,`) || strings.Contains(notes[1], "null") {
		t.Errorf("--csv url,notes: %q", notes)
	}
	urls := catLines(catRun(t, dir, "list", "--csv", "url", "-o", "-url", "--limit", "5").want(t, 0).stdout)
	if len(urls) != 6 || !sort.SliceIsSorted(urls[1:], func(i, j int) bool { return urls[1+i] > urls[1+j] }) {
		t.Errorf("-o -url -n 5: %q", urls)
	}
	if got := catLines(catRun(t, dir, "list", "-n", "0").want(t, 0).stdout); len(got) != n {
		t.Errorf("-n 0: %d lines", len(got))
	}
}

func TestListUsage(t *testing.T) {
	dir, _ := catCollection(t, 3)
	if r := catRun(t, dir, "list", "--help").want(t, 0); !strings.Contains(r.stdout, "--filter-type") || !strings.Contains(r.stdout, "--csv") {
		t.Errorf("help: %q", r.stdout)
	}
	catRun(t, dir, "reindex").want(t, 0)
	// Invalid values are errors, never an empty result: exit 2, the one
	// line a user sees, and where to read more.
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"list", "-f", "regex", "("}, "folio: regex \"(\": error parsing regexp: missing closing ): `(`"},
		{[]string{"list", "-f", "fuzzy", "x"}, `folio: --filter-type "fuzzy": unknown (want one of exact, substring, regex, domain, tag, timestamp)`},
		{[]string{"list", "-f", "timestamp", "notanumber"}, `folio: -f timestamp "notanumber": want a timestamp such as 1609459200.123456`},
		{[]string{"list", "--status", "done"}, `folio: --status "done": unknown (want one of queued, started, paused, backoff, sealed, archived, partial, failed)`},
		{[]string{"list", "--after", "2024-02-01", "--before", "2024-01-01"}, `folio: --after 2024-02-01 is not before --before 2024-01-01: no snapshot can match`},
		{[]string{"list", "--sort", "colour"}, `folio: --sort "colour": unknown field (want one of bookmarked_at, created_at, timestamp, url, title, status, id, dir, archive_size, - before one for descending)`},
		{[]string{"list", "--json", "--csv", "url"}, "folio: choose one of --jsonl, --json and --csv"},
		{[]string{"list", "--csv", "url,colour"}, "unknown CSV field"},
		{[]string{"list", "--csv", ""}, "at least one field"},
		{[]string{"list", "--before", "yesterday"}, `folio: --before "yesterday": want unix seconds or an ISO date/time such as 2024-01-31 or 2024-01-31T12:00:00Z`},
		{[]string{"list", "--limit", "-3"}, "folio: --limit -3: must not be negative"},
		{[]string{"list", "--bogus"}, "folio: unknown flag: --bogus"},
		{[]string{"export", "--page-size", "0"}, "folio: --page-size 0: at least 1"},
		{[]string{"export", "--workers", "-1"}, "folio: --workers -1: must not be negative"},
		{[]string{"export", "--templates", "/missing"}, "folio: --templates /missing: not a folder (it names a folder of templates that override the embedded ones)"},
		{[]string{"update", "--migrate-only", "--resume", "notatimestamp"}, `folio: --resume "notatimestamp": want a legacy timestamp such as 1609459200.123456 (as an interrupted run prints it)`},
	} {
		r := catRun(t, dir, tc.args...).want(t, 2)
		lines := strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n")
		if len(lines) != 2 || !strings.Contains(lines[0], tc.msg) || lines[1] != "run 'folio "+tc.args[0]+" --help' for usage" || r.stdout != "" {
			t.Errorf("%v: stderr %q stdout %q, want the line %q", tc.args, r.stderr, r.stdout, tc.msg)
		}
	}
}
