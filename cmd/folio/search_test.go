package main_test

import (
	"encoding/json"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/folio-archive/folio/archive"
)

// addTitled writes a snapshot titled title into the collection at dir
// and returns its folder.
func addTitled(t *testing.T, dir, title string) string {
	t.Helper()
	at := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	return writeSnapshot(t, dir, archive.Snapshot{ID: "0190f3c2a1b27c3d8e4f5a6b7c8dffff", URL: "https://guides.example.org/quokkas",
		Title: title, BookmarkedAt: at, CreatedAt: at, Timestamp: "1714564800.0", Status: "sealed"})
}

func writeText(t *testing.T, dir, rel, text string) {
	t.Helper()
	p := filepath.Join(dir, rel, "htmltotext", "htmltotext.txt")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Duration(len(text)) * time.Second)
	os.Chtimes(p, later, later)
}

// firstLine is stderr's first line.
func firstLine(s string) string { line, _, _ := strings.Cut(s, "\n"); return line }

func TestSearchCommand(t *testing.T) {
	dir, m := catCollection(t, 40)
	texted := m.Snapshots[7].Dir
	writeText(t, dir, texted, "Notes from the island: a quokka colony. Straße nach München; 東京 タワー.")
	titled := addTitled(t, dir, "Quokka field guide")
	ids := map[string]string{m.Snapshots[7].ID: texted, path.Base(titled): titled}

	// The catalog is built on the first search; the title hit comes first.
	r := catRun(t, dir, "search", "quokka").want(t, 0)
	if !strings.Contains(r.stderr, "running 'folio reindex' first") || !strings.Contains(r.stderr, "2 matching snapshots") {
		t.Errorf("stderr %q", r.stderr)
	}
	if i, j := strings.Index(r.stdout, titled), strings.Index(r.stdout, texted); i < 0 || j < 0 || i > j {
		t.Errorf("want the title hit before the text hit:\n%s", r.stdout)
	}
	for _, want := range []string{"1. Quokka field guide\n", "**Quokka** field guide", "a **quokka** colony"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("no %q in\n%s", want, r.stdout)
		}
	}
	// A limit that hides some: the count of all of them; one that hides
	// none: what was shown.
	r = catRun(t, dir, "search", "--limit", "1", "quokka").want(t, 0)
	if !strings.Contains(r.stderr, "2 matching snapshots, the best 1 shown") || !strings.HasPrefix(r.stdout, "1. ") || strings.Contains(r.stdout, "\n2. ") {
		t.Errorf("limit 1: stderr %q, stdout\n%s", r.stderr, r.stdout)
	}
	r = catRun(t, dir, "search", "--limit", "2", "quokka").want(t, 0)
	if !strings.Contains(r.stderr, "2 matching snapshots") || strings.Contains(r.stderr, "shown") {
		t.Errorf("limit 2: stderr %q", r.stderr)
	}
	catRun(t, dir, "search", "--limit", "1", "nosuchwordanywhere").want(t, 0)

	for words, want := range map[string]string{
		"munchen":         texted,
		"MÜNCHEN strasse": "", // ß does not fold to ss
		"straße":          texted,
		"東京":              texted,
		`"colony quokka"`: "",
		`"quokka colony"`: texted,
		"quok*":           titled + " " + texted,
		"island --":       texted,
	} {
		r := catRun(t, dir, "search", "--jsonl", words).want(t, 0)
		var got []string
		for _, line := range catLines(r.stdout) {
			var rec struct {
				Snippet string   `json:"snippet"`
				Rank    *float64 `json:"rank"`
				ID      string   `json:"id"`
			}
			if err := json.Unmarshal([]byte(line), &rec); err != nil || rec.Rank == nil || !strings.Contains(rec.Snippet, "**") {
				t.Errorf("%q: record %s: %v", words, line, err)
			}
			got = append(got, ids[rec.ID])
		}
		if strings.Join(got, " ") != want {
			t.Errorf("search %q: found %q, want %q", words, got, want)
		}
	}

	// The list filter selects the same snapshots, in the list's order.
	r = catRun(t, dir, "list", "--search", "quokka", "--csv", "url", "--sort", "url").want(t, 0)
	if got := catLines(r.stdout); len(got) != 3 || got[1] > got[2] {
		t.Errorf("list --search: %q", got)
	}

	// Queries that cannot run are one clear line and exit 2.
	for _, tc := range []struct {
		args []string
		line string
	}{
		{[]string{"search", "--fts", `"unbalanced`}, `folio: invalid query "\"unbalanced": unterminated string`},
		{[]string{"search", "--fts", "fog AND"}, `folio: invalid query "fog AND": syntax error near ""`},
		{[]string{"search", "--fts", "AND"}, `folio: invalid query "AND": syntax error near "AND"`},
		{[]string{"search", "--fts", "colour:red"}, `folio: invalid query "colour:red": no such column: colour`},
		{[]string{"search", "😀"}, `folio: invalid query "😀": no words to search for (words are made of letters and digits)`},
		{[]string{"list", "--search", "++"}, `folio: --search "++": no words to search for (words are made of letters and digits)`},
		{[]string{"search"}, `folio: requires at least 1 arg(s), only received 0`},
	} {
		r := catRun(t, dir, tc.args...).want(t, 2)
		if firstLine(r.stderr) != tc.line || r.stdout != "" {
			t.Errorf("%q: stderr %q, want the line %q", tc.args, r.stderr, tc.line)
		}
	}

	// A text changed with its index (as a capture changes it) is read
	// again by a plain reindex; a removed snapshot leaves the index.
	writeText(t, dir, texted, "now about wombats")
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(filepath.Join(dir, texted, "index.jsonl"), later, later); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(dir, titled)); err != nil {
		t.Fatal(err)
	}
	r = catRun(t, dir, "reindex").want(t, 0)
	if !strings.Contains(r.stderr, "updated 1, removed 1, unchanged 40, problems 0; captured text read for 1") {
		t.Errorf("reindex: %q", r.stderr)
	}
	if r := catRun(t, dir, "search", "wombats").want(t, 0); !strings.Contains(r.stdout, texted) {
		t.Errorf("changed text not found: %q", r.stdout)
	}
	if r := catRun(t, dir, "search", "quokka").want(t, 0); r.stdout != "" || !strings.Contains(r.stderr, "no snapshot matches") {
		t.Errorf("quokka after its snapshots changed: %q %q", r.stdout, r.stderr)
	}
}
