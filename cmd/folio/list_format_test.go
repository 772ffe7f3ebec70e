package main_test

import (
	"encoding/json"
	neturl "net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/folio-archive/folio/archive"
)

// writeSnap writes a queued snapshot into the collection at dir.
func writeSnap(t *testing.T, dir, id, url, title string, at time.Time, tags ...string) string {
	t.Helper()
	return writeSnapshot(t, dir, archive.Snapshot{ID: id, URL: url, Title: title, BookmarkedAt: at, CreatedAt: at, Tags: tags,
		Timestamp: jsonNumber(at.Unix()) + ".0", Status: "queued"})
}

// writeSnapshot writes s as the index.jsonl of its current-layout folder
// (its day, its URL's host) and returns the folder.
func writeSnapshot(t *testing.T, dir string, s archive.Snapshot) string {
	t.Helper()
	u, err := neturl.Parse(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	rel := "archive/users/system/snapshots/" + s.BookmarkedAt.Format("20060102") + "/" + u.Host + "/" + s.ID
	if err := os.MkdirAll(filepath.Join(dir, rel), 0o755); err != nil {
		t.Fatal(err)
	}
	ix, _ := archive.ParseIndex(nil)
	ix.SetSnapshot(s)
	if err := archive.WriteIndex(filepath.Join(dir, rel), ix); err != nil {
		t.Fatal(err)
	}
	return rel
}

func jsonNumber(n int64) string { b, _ := json.Marshal(n); return string(b) }

// oddTitles is a collection whose titles hold what breaks naive CSV and
// tables: commas, quotes, line breaks, non-ASCII.
func oddTitles(t *testing.T) (string, []string) {
	dir := newCollection(t)
	titles := []string{"Commas, and more, commas", `Say "hi" and ""bye""`, "Two\nlines\r\nthree", "Ünïcödé 文字 🎉 — long enough to be cut at fifty characters in the table"}
	for i, title := range titles {
		at := time.Date(2024, 3, 1+i, 9, 0, 0, 0, time.UTC)
		writeSnap(t, dir, "0190f3c2a1b27c3d8e4f5a6b7c8d000"+string(rune('1'+i)), "https://example.org/p/"+string(rune('a'+i)), title, at, "news")
	}
	return dir, titles
}

// TestListCSVReadsBackInPython: --csv is CSV that Python's csv module
// reads back to the very titles, URLs and tags.
func TestListCSVReadsBackInPython(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	dir, titles := oddTitles(t)
	out, stderr, code := runFolio(t, "-D", dir, "list", "--csv", "url,title,tags,timestamp", "--sort", "url")
	if code != 0 {
		t.Fatalf("list --csv: exit %d\n%s", code, stderr)
	}
	if strings.Contains(out, `\u`) {
		t.Errorf("--csv holds \\u escapes:\n%s", out)
	}
	py := exec.Command("python3", "-c", `import csv, json, sys
rows = list(csv.reader(open(sys.argv[1], newline="", encoding="utf-8")))
json.dump(rows, sys.stdout)`, filepath.Join(t.TempDir(), "out.csv"))
	if err := os.WriteFile(py.Args[len(py.Args)-1], []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := py.Output()
	if err != nil {
		t.Fatalf("python3 csv: %v", err)
	}
	var rows [][]string
	if err := json.Unmarshal(got, &rows); err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"url", "title", "tags", "timestamp"}}
	for i, title := range titles {
		at := time.Date(2024, 3, 1+i, 9, 0, 0, 0, time.UTC)
		want = append(want, []string{"https://example.org/p/" + string(rune('a'+i)), title, "news", jsonNumber(at.Unix()) + ".0"})
	}
	if g, w := jsonString(rows), jsonString(want); g != w {
		t.Errorf("python3 read back\n%s\nwant\n%s\nfrom\n%q", g, w, out)
	}
}

func jsonString(v any) string { b, _ := json.Marshal(v); return string(b) }

// TestListOnATerminal: on a terminal list prints a table and a count;
// piped it prints JSONL. The terminal is script(1)'s pty.
func TestListOnATerminal(t *testing.T) {
	if _, err := exec.LookPath("script"); err != nil {
		t.Skip("no script(1)")
	}
	dir, _ := oddTitles(t)
	runFolio(t, "-D", dir, "reindex")
	cmd := exec.Command("script", "-qec", folioBin(t)+" -D "+dir+" list", "/dev/null")
	cmd.Env = append(os.Environ(), "FOLIO_DATA_DIR=")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("list on a pty: %v\n%s", err, out)
	}
	// 文字 and 🎉 take two columns each on screen: the title is cut at 50
	// columns and the URLs stand in one column.
	want := "STATUS  DATE        TITLE                                              URL\r\n" +
		"queued  2024-03-04  Ünïcödé 文字 🎉 — long enough to be cut at fifty…  https://example.org/p/d\r\n" +
		"queued  2024-03-03  Two lines three                                    https://example.org/p/c\r\n" +
		"queued  2024-03-02  Say \"hi\" and \"\"bye\"\"                               https://example.org/p/b\r\n" +
		"queued  2024-03-01  Commas, and more, commas                           https://example.org/p/a\r\n" +
		"4 snapshots\r\n"
	if string(out) != want {
		t.Errorf("list on a terminal:\n%s\nwant\n%s", out, want)
	}
	piped, _, _ := runFolio(t, "-D", dir, "list")
	if lines := catLines(piped); len(lines) != 4 || !strings.HasPrefix(lines[0], `{"type": "Snapshot"`) {
		t.Errorf("list piped: %q", piped)
	}
}
