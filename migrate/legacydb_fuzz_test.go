package migrate

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/layout"
)

func fuzzIDs() archive.IDSource {
	n := 0
	return func() string {
		n++
		return strings.Repeat("0", 31) + string("0123456789abcdef"[n%16])
	}
}

var validStatus = map[string]bool{"succeeded": true, "failed": true, "skipped": true, "noresults": true,
	"queued": true, "started": true, "backoff": true}

// FuzzLegacyRow feeds arbitrary column text to the core_snapshot and
// core_archiveresult row decoders.
func FuzzLegacyRow(f *testing.F) {
	f.Add("0123456789abcdef0123456789abcdef", "https://example.com/", "1609459200.123456", "news, tech,,news",
		"2021-01-01 00:00:00", "0190f3c1-0000-7000-8000-000000000001", "sealed", `["wget", "-q"]`, "succeded",
		`{"a.png": {"size": 3}}`, "screenshot")
	f.Add("0123456789ABCDEF0123456789ABCDEF", "", "20240101120000.000000", "", "", "", "", "wget -q x", "", "[]", "")
	f.Add("bad", "x", "1_508_259_732", "x", "2021-01-01T00:00:00Z", "-", "??", `"str"`, "success", `["a", {"path": "b"}]`, strings.Repeat("é", 40))
	f.Fuzz(func(t *testing.T, id, url, ts, tags, added, crawl, status, cmd, rstatus, files, plugin string) {
		for _, v := range []string{DB04, DB07, DB08, DB09} {
			cols := make([]sql.NullString, 15)
			for i, s := range []string{id, url, ts, "", tags, added, added, added, added, crawl, "1", status, "", "0", ""} {
				cols[i] = sql.NullString{String: s, Valid: true}
			}
			r, err := decodeRow(v, cols)
			if err == nil {
				if !layout.IsCompactID(r.ID) || (r.CrawlID != "" && !layout.IsCompactID(r.CrawlID)) {
					t.Fatalf("row ids %q %q", r.ID, r.CrawlID)
				}
				bm := legacyBookmarkedAt(r.Timestamp, r.Added, time.Unix(0, 0))
				if f := sqliteReal(ts); f >= layout.MinLegacyTimestamp && f <= layout.MaxLegacyTimestamp && bm.Unix() < layout.MinLegacyTimestamp {
					t.Fatalf("bookmarked_at %s for in-range timestamp %q", bm, ts)
				}
			}
			res := make([]sql.NullString, 20)
			for i, s := range []string{id, crawl, "", id, plugin, plugin, "", "", "out", files, files, "12", "", added, added, rstatus, crawl, cmd, "/pwd", "1.0"} {
				res[i] = sql.NullString{String: s, Valid: true}
			}
			rr := decodeDBResult(v, "0123456789abcdef0123456789abcdef", res, time.Unix(0, 0))
			if !validStatus[rr.Status] || !layout.IsCompactID(rr.ID) || utf8.RuneCountInString(rr.Plugin) > 32 ||
				(utf8.ValidString(plugin) && !utf8.ValidString(rr.Plugin)) {
				t.Fatalf("result %+v", rr)
			}
		}
		if t1, ok := parseDBTime(added); ok {
			if t2, ok2 := archive.ParseTime(added); ok2 && !t1.Equal(t2) {
				t.Fatalf("parseDBTime(%q) = %s, archive.ParseTime = %s", added, t1, t2)
			}
		}
		_ = waybackURL(url)
		_, _ = cleanTitle(tags, url)
	})
}

// FuzzLegacyFolder runs Scan on a collection holding one legacy folder
// with arbitrary index.json, index.jsonl and archive.org.txt content: it
// never fails, and the folder ends as exactly one item, invalid or skipped
// entry with a sound identity.
func FuzzLegacyFolder(f *testing.F) {
	f.Add("1508259732", []byte(`{"schema": "Link", "url": "https://example.com/", "timestamp": "1508259732.0", "title": null, "tags": "a,b", "history": {"dom": [{"status": "failed"}, {"status": "succeded", "output": "output.html"}]}}`),
		[]byte(`{"type":"Process","id":"incomplete"}`), []byte("https://web.archive.org/web/2017/http://x.example.com/\n"))
	f.Add("1339747993", []byte(`{`), []byte(""), []byte("https://web.archive.org/web/20170531210128id_/http://www.wired.com/\n"))
	f.Add("1.5e9", []byte(`{"archive_results": [{"plugin": "x", "output_files": ["a"]}], "url": "ftp://h/"}`),
		[]byte("https://bare.example.com/\n0190f3c1-0000-7000-8000-000000000001\n"), []byte(nil))
	f.Add("1600000000", []byte(`{"TYPE": "core.models.Snapshot", "url": "https://t.example.com/", "tags": ["x"], "bookmarked_at": "2020-01-01T00:00:00Z", "id": "0190f3c1000070008000000000000001"}`),
		[]byte(`{"type": "Snapshot", "url": "https://j.example.com/", "timestamp": 1600000000.5, "status": "weird"}`), []byte("x"))
	f.Fuzz(func(t *testing.T, name string, indexJSON, indexJSONL, archiveOrg []byte) {
		if !layout.Component(name) || strings.ContainsAny(name, "\\") {
			return
		}
		if _, ok := layout.LegacyTimestamp(name); !ok {
			return
		}
		dir := t.TempDir()
		folder := filepath.Join(dir, "archive", name)
		if err := os.MkdirAll(folder, 0o755); err != nil {
			t.Skip(err)
		}
		for file, data := range map[string][]byte{"index.json": indexJSON, "index.jsonl": indexJSONL, "archive.org.txt": archiveOrg} {
			if len(data) > 0 {
				if err := os.WriteFile(filepath.Join(folder, file), data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
		c := &archive.Collection{Dir: dir}
		inv, err := Scan(context.Background(), c, ScanOptions{IDs: fuzzIDs(), Now: func() time.Time { return time.Unix(1700000000, 0) }, Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		if n := len(inv.Items) + len(inv.Invalid) + len(inv.Skipped); n != 1 {
			t.Fatalf("%d outcomes for one folder: %+v", n, inv)
		}
		for _, it := range inv.Items {
			s := it.Snapshot
			if !layout.IsCompactID(s.ID) || s.URL == "" || s.Timestamp == "" || !layout.Component(it.User) || it.Source != "archive/"+name {
				t.Fatalf("item %+v", it)
			}
			if _, err := layout.SnapshotDir(it.User, s.BookmarkedAt, s.URL, s.ID); err != nil {
				t.Fatal(err)
			}
			for _, r := range it.Results {
				if !validStatus[r.Status] || r.SnapshotID != s.ID || !layout.IsCompactID(r.ID) {
					t.Fatalf("result %+v", r)
				}
			}
		}
	})
}
