package migrate_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/gen"
	"github.com/folio-archive/folio/layout"
	"github.com/folio-archive/folio/migrate"
)

func generate(t *testing.T, o gen.LegacyOptions) (*gen.LegacyManifest, *migrate.Inventory) {
	t.Helper()
	dir := t.TempDir()
	if o.Seed == 0 {
		o.Seed = 11
	}
	m, err := gen.Legacy(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	return m, scan(t, dir, migrate.ScanOptions{})
}

func findItem(t *testing.T, inv *migrate.Inventory, url, ts string) migrate.Item {
	t.Helper()
	for _, it := range inv.Items {
		if it.Snapshot.URL == url && it.Snapshot.Timestamp == ts {
			return it
		}
	}
	t.Fatalf("no item for %s @ %q", url, ts)
	return migrate.Item{}
}

func expected(m *gen.LegacyManifest, e gen.Edge) []gen.ExpectedSnapshot {
	var out []gen.ExpectedSnapshot
	for _, s := range m.Snapshots {
		if s.Edge == e {
			out = append(out, s)
		}
	}
	return out
}

// writeFolder creates archive/<name> with the given files.
func writeFolder(t *testing.T, dir, name string, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		p := filepath.Join(dir, "archive", name, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Formats spec §7, edge cases concerning identity, one subtest each.
func TestEdgeCases(t *testing.T) {
	t.Run("7.1_dashed_ids_become_compact", func(t *testing.T) {
		_, inv := generate(t, gen.LegacyOptions{Version: gen.Legacy09Dash, N: 8})
		dashed := 0
		for _, it := range inv.Items {
			name := it.Source[strings.LastIndex(it.Source, "/")+1:]
			if !layout.IsDashedID(name) {
				continue
			}
			dashed++
			if id, _ := layout.ParseID(name); it.Snapshot.ID != id {
				t.Errorf("%s: id %s", it.Source, it.Snapshot.ID)
			}
			if !strings.HasPrefix(it.Source, "archive/users/"+it.User+"/snapshots/") {
				t.Errorf("%s: user %s", it.Source, it.User)
			}
			if it.Crawl == nil || !layout.IsDashedID(it.Crawl.Dir[strings.LastIndex(it.Crawl.Dir, "/")+1:]) {
				t.Errorf("%s: crawl %+v has no dashed dir", it.Source, it.Crawl)
			}
		}
		if dashed != 6 {
			t.Errorf("%d dashed items, want 6", dashed)
		}
	})
	t.Run("7.2_user_from_crawl_creator_superuser_or_user_one", func(t *testing.T) {
		m, inv := generate(t, gen.LegacyOptions{Version: gen.Legacy08, N: 6, Edges: []gen.Edge{gen.EdgeOrphan}})
		users := map[string]int{}
		for _, it := range inv.Items {
			users[it.User]++
		}
		// rows 0 and 3 in bob's crawl; 1, 4 in admin's; 2, 5 without a
		// crawl (user id 1 = admin); the orphan: the only superuser, admin.
		if users["bob"] != 2 || users["admin"] != 5 {
			t.Errorf("users %v", users)
		}
		_ = m
		_, inv07 := generate(t, gen.LegacyOptions{Version: gen.Legacy07, N: 2, Edges: []gen.Edge{gen.EdgeOrphan}})
		if it := findItem(t, inv07, "https://orphan.example.com/", "1710000000"); it.User != "system" {
			t.Errorf("0.7 orphan with two superusers: user %s, want system", it.User)
		}
		_, invNo := generate(t, gen.LegacyOptions{Version: gen.Legacy04, N: 2, NoDB: true})
		for _, it := range invNo.Items {
			if it.User != "system" {
				t.Errorf("folder without database: user %s", it.User)
			}
		}
	})
	t.Run("7.3_bucket_from_legacy_timestamp_not_import_time", func(t *testing.T) {
		dir := t.TempDir()
		writeFolder(t, dir, "1609459200.123456", map[string]string{
			"index.json": `{"schema": "Link", "url": "https://example.com/page1", "timestamp": "1609459200.123456", "title": "Example Page 1", "history": {}}`,
		})
		inv := scan(t, dir, migrate.ScanOptions{})
		it := findItem(t, inv, "https://example.com/page1", "1609459200.123456")
		if bucket(it.Snapshot) != "20210101" || !it.Snapshot.CreatedAt.Equal(testNow) {
			t.Errorf("bucket %s created %s", bucket(it.Snapshot), it.Snapshot.CreatedAt)
		}
	})
	t.Run("7.5_only_in_range_timestamps_are_legacy_dirs", func(t *testing.T) {
		dir := t.TempDir()
		idx := `{"url": "https://x.example.com/%s"}`
		for _, name := range []string{"1.5e9", "1_508_259_732", "users", "snapshots", "crawls", ".hidden1508259732", "123_abc", "1508259732_1", "788918399", "2082758401", "nan"} {
			writeFolder(t, dir, name, map[string]string{"index.json": strings.Replace(idx, "%s", name, 1)})
		}
		inv := scan(t, dir, migrate.ScanOptions{})
		var got []string
		for _, it := range inv.Items {
			got = append(got, it.Source)
		}
		slices.Sort(got)
		if want := []string{"archive/1.5e9", "archive/1_508_259_732"}; !slices.Equal(got, want) {
			t.Errorf("legacy dirs %q, want %q", got, want)
		}
		for _, it := range inv.Items {
			if want := map[string]string{"1.5e9": "20170714", "1_508_259_732": "20171017"}[it.Snapshot.Timestamp]; bucket(it.Snapshot) != want {
				t.Errorf("%s: bucket %s, want %s (Python float of the name)", it.Snapshot.Timestamp, bucket(it.Snapshot), want)
			}
		}
	})
	t.Run("7.6_folder_name_beats_index_float", func(t *testing.T) {
		for _, noDB := range []bool{false, true} {
			m, inv := generate(t, gen.LegacyOptions{Version: gen.Legacy07, Edges: []gen.Edge{gen.EdgeIndexFloat}, NoDB: noDB})
			checkInventory(t, m, inv)
			findItem(t, inv, "https://float-index.example.com/", "1508259800")
		}
	})
	t.Run("7.7_integer_and_float_siblings_stay_two", func(t *testing.T) {
		for _, v := range gen.LegacyVersions {
			m, inv := generate(t, gen.LegacyOptions{Version: v, Edges: []gen.Edge{gen.EdgeFloatSiblings}})
			a := findItem(t, inv, "https://siblings.example.com/", "1508259732")
			b := findItem(t, inv, "https://siblings.example.com/", "1508259732.0")
			if a.Snapshot.ID == b.Snapshot.ID || a.Source == b.Source {
				t.Errorf("%s: siblings share %s / %s", v, a.Snapshot.ID, a.Source)
			}
			if want := expected(m, gen.EdgeFloatSiblings)[0].ID; a.Snapshot.ID != want {
				t.Errorf("%s: integer folder got id %s, want the row's %s", v, a.Snapshot.ID, want)
			}
		}
	})
	t.Run("7.8_truncated_timestamp_matched_only_when_folder_differs", func(t *testing.T) {
		m, inv := generate(t, gen.LegacyOptions{Version: gen.Legacy07, Edges: []gen.Edge{gen.EdgeTruncated, gen.EdgeTruncatedSpace}})
		checkInventory(t, m, inv)
		folder := findItem(t, inv, "https://truncated.example.com/", "1767000340")
		row := findItem(t, inv, "https://truncated.example.com/", "1767000340.624737")
		if folder.Source != "archive/1767000340" || row.Source != "" || folder.Snapshot.ID == row.Snapshot.ID {
			t.Errorf("folder %q row %q", folder.Source, row.Source)
		}
		sp := findItem(t, inv, "https://truncated-space.example.com/", "1767000341.5")
		if sp.Source != "archive/1767000341 " || sp.From != "db" {
			t.Errorf("prefix match: source %q from %s", sp.Source, sp.From)
		}
	})
	t.Run("7.9_timestamp_collision_gets_microsecond_suffix", func(t *testing.T) {
		m, inv := generate(t, gen.LegacyOptions{Version: gen.Legacy0424, Edges: []gen.Edge{gen.EdgeCollision}})
		checkInventory(t, m, inv)
		b := findItem(t, inv, "https://collision-b.example.com/", "1700000000.000001")
		a := findItem(t, inv, "https://collision-a.example.com/", "1700000000")
		if b.Source != "archive/1700000000" || a.Source != "" {
			t.Errorf("b from %q, a from %q", b.Source, a.Source)
		}
		// Two folders whose names strip to the same timestamp.
		dir := t.TempDir()
		writeFolder(t, dir, "1500000000", map[string]string{"index.json": `{"url": "https://one.example.com/"}`})
		writeFolder(t, dir, "1500000000\t", map[string]string{"index.json": `{"url": "https://two.example.com/"}`})
		inv = scan(t, dir, migrate.ScanOptions{})
		var ts []string
		for _, it := range inv.Items {
			ts = append(ts, it.Snapshot.Timestamp)
		}
		slices.Sort(ts)
		if !slices.Equal(ts, []string{"1500000000", "1500000000.000001"}) {
			t.Errorf("timestamps %q", ts)
		}
	})
	t.Run("7.10_resume_by_string_and_mtime_order", func(t *testing.T) {
		dir := t.TempDir()
		names := []string{"1500000001", "1500000002", "1600000000", "1499999999.5"}
		for i, n := range names {
			writeFolder(t, dir, n, map[string]string{"index.json": `{"url": "https://r.example.com/` + n + `"}`})
			mt := time.Date(2020, 1, 1, 0, 0, i, 0, time.UTC)
			if err := os.Chtimes(filepath.Join(dir, "archive", n), mt, mt); err != nil {
				t.Fatal(err)
			}
		}
		inv := scan(t, dir, migrate.ScanOptions{})
		var order []string
		for _, it := range inv.Items {
			order = append(order, it.Snapshot.Timestamp)
		}
		if want := []string{"1499999999.5", "1600000000", "1500000002", "1500000001"}; !slices.Equal(order, want) {
			t.Errorf("order %q, want newest mtime first %q", order, want)
		}
		inv = scan(t, dir, migrate.ScanOptions{Resume: "1500000002"})
		order = nil
		for _, it := range inv.Items {
			order = append(order, it.Snapshot.Timestamp)
		}
		// "1600000000" > "1500000002" as strings; "1499999999.5" is not.
		if want := []string{"1499999999.5", "1500000002", "1500000001"}; !slices.Equal(order, want) {
			t.Errorf("resumed order %q, want %q", order, want)
		}
	})
	t.Run("7.10a_out_of_range_timestamp_kept_verbatim_row_takes_its_folder", func(t *testing.T) {
		m, inv := generate(t, gen.LegacyOptions{Version: gen.Legacy04, Edges: []gen.Edge{gen.EdgeOutOfRange}})
		checkInventory(t, m, inv)
		it := findItem(t, inv, "https://out-of-range.example.com/", "20240101120000.000000")
		if it.Source != "archive/20240101120000.000000" || bucket(it.Snapshot) != "20240101" {
			t.Errorf("source %q bucket %s", it.Source, bucket(it.Snapshot))
		}
		if len(inv.Invalid) != 0 || len(inv.Stranded) != 0 {
			t.Errorf("invalid %v stranded %v", inv.Invalid, inv.Stranded)
		}
	})
	t.Run("7.10a_out_of_range_folder_without_row_or_record_untouched", func(t *testing.T) {
		m, inv := generate(t, gen.LegacyOptions{Version: gen.Legacy04, NoDB: true, Edges: []gen.Edge{gen.EdgeOutOfRange}})
		checkInventory(t, m, inv)
		if len(inv.Items) != 0 || len(inv.Invalid) != 0 || len(inv.Stranded) != 0 {
			t.Errorf("items %d invalid %v stranded %v", len(inv.Items), inv.Invalid, inv.Stranded)
		}
	})
	t.Run("7.11_jsonl_without_snapshot_falls_back_to_index_json", func(t *testing.T) {
		_, inv := generate(t, gen.LegacyOptions{Version: gen.Legacy08, Edges: []gen.Edge{gen.EdgeForeignJSONL}})
		it := findItem(t, inv, "https://foreign.example.com/", "1720000000")
		if it.From != "index.json" || len(it.Foreign) != 1 || string(it.Foreign[0]) != `{"type":"Process","id":"incomplete"}` {
			t.Errorf("from %s foreign %q", it.From, it.Foreign)
		}
	})
	t.Run("7.12_wayback_url_recovered_from_archive_org_txt", func(t *testing.T) {
		_, inv := generate(t, gen.LegacyOptions{Version: gen.Legacy07, Edges: []gen.Edge{gen.EdgeWayback}})
		it := findItem(t, inv, "http://www.wired.com/2017/05/the-wayback-machine/", "1339747993")
		if it.From != "archive.org.txt" || it.Snapshot.Title != "" || len(inv.Invalid) != 0 {
			t.Errorf("from %s title %q invalid %v", it.From, it.Snapshot.Title, inv.Invalid)
		}
	})
	t.Run("7.13_folder_without_index_with_row_migrates", func(t *testing.T) {
		m, inv := generate(t, gen.LegacyOptions{Version: gen.Legacy07, Edges: []gen.Edge{gen.EdgeNoIndex}})
		it := findItem(t, inv, "https://no-index.example.com/", "1400000000")
		if it.Source != "archive/1400000000" || it.Snapshot.ID != expected(m, gen.EdgeNoIndex)[0].ID || len(inv.Invalid) != 0 {
			t.Errorf("source %q id %s invalid %v", it.Source, it.Snapshot.ID, inv.Invalid)
		}
	})
	t.Run("7.14_unrecoverable_folders_are_invalid", func(t *testing.T) {
		for _, noDB := range []bool{false, true} {
			_, inv := generate(t, gen.LegacyOptions{Version: gen.Legacy07, Edges: []gen.Edge{gen.EdgeGarbage}, NoDB: noDB})
			if len(inv.Invalid) != 2 || len(inv.Items) != 0 {
				t.Errorf("invalid %v items %d", inv.Invalid, len(inv.Items))
			}
		}
	})
	t.Run("7.15_titles", func(t *testing.T) {
		m, inv := generate(t, gen.LegacyOptions{Version: gen.Legacy07, Edges: []gen.Edge{gen.EdgeTitles}})
		checkInventory(t, m, inv)
		dir := t.TempDir()
		for name, title := range map[string]string{"1500000001": `"https://t.example.com/"`, "1500000002": `"No Title Found"`,
			"1500000003": `"output/title.txt"`, "1500000004": `"  Two\n lines  "`, "1500000005": `"Tom &amp; Jerry"`} {
			writeFolder(t, dir, name, map[string]string{"index.json": `{"url": "https://t.example.com/", "title": ` + title + `}`})
		}
		inv = scan(t, dir, migrate.ScanOptions{})
		got := map[string]string{}
		for _, it := range inv.Items {
			got[it.Source] = it.Snapshot.Title
		}
		want := map[string]string{"archive/1500000001": "", "archive/1500000002": "", "archive/1500000003": "",
			"archive/1500000004": "Two lines", "archive/1500000005": "Tom & Jerry"}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s: title %q, want %q", k, got[k], v)
			}
		}
	})
	t.Run("7.16_7.17_7.18_results_converted", func(t *testing.T) {
		dir := t.TempDir()
		writeFolder(t, dir, "1609459200", map[string]string{"index.json": `{"schema": "Link", "url": "https://r.example.com/", "timestamp": "1609459200",
 "history": {"screenshot": [{"schema": "ArchiveResult", "cmd": ["chromium"], "pwd": "/data/archive/1609459200", "output": "screenshot.png", "status": "succeded", "start_ts": "2021-01-01T00:00:01+00:00", "end_ts": "2021-01-01T00:00:02+00:00"}],
  "dom": [{"output": "TimeoutError: x", "status": "failed", "start_ts": "2021-01-01T00:00:03+00:00"}, {"output": "output.html", "status": "success", "start_ts": "2021-01-01T00:00:09+00:00"}],
  "wget": [{"output": "r.example.com/index.html", "status": "weird", "cmd": "wget"}],
  "title": [{"output": "Recovered Title", "status": "succeeded"}]}}`})
		inv := scan(t, dir, migrate.ScanOptions{})
		it := findItem(t, inv, "https://r.example.com/", "1609459200")
		byPlugin := map[string]archive.Result{}
		for _, r := range it.Results {
			if _, dup := byPlugin[r.Plugin]; dup {
				t.Errorf("two %s results", r.Plugin)
			}
			byPlugin[r.Plugin] = r
			if r.HookName != "" || len(r.OutputFiles) != 0 {
				t.Errorf("%s: hook %q output_files %v", r.Plugin, r.HookName, r.OutputFiles)
			}
		}
		if r := byPlugin["screenshot"]; r.Status != "succeeded" || r.Pwd != "/data/archive/1609459200" {
			t.Errorf("screenshot %+v", r)
		}
		if r := byPlugin["dom"]; r.Status != "succeeded" || r.OutputStr != "output.html" {
			t.Errorf("retried dom %+v, want the later succeeded try", r)
		}
		if r := byPlugin["wget"]; r.Status != "failed" || !slices.Equal(r.Cmd, []string{"wget"}) {
			t.Errorf("wget %+v", r)
		}
		if it.Snapshot.Title != "Recovered Title" {
			t.Errorf("title %q, want it from the title result", it.Snapshot.Title)
		}
	})
	t.Run("7.25_compat_symlinks_into_users_are_removed_others_kept", func(t *testing.T) {
		m, inv := generate(t, gen.LegacyOptions{Version: gen.Legacy09Dash, N: 10, Edges: []gen.Edge{gen.EdgeCompatSymlinks}})
		checkInventory(t, m, inv)
		if len(inv.Symlinks) < 2 {
			t.Errorf("symlinks %v", inv.Symlinks)
		}
	})
	t.Run("7.26_loose_files_and_non_timestamp_dirs_untouched", func(t *testing.T) {
		_, inv := generate(t, gen.LegacyOptions{Version: gen.Legacy04, Edges: []gen.Edge{gen.EdgeHello, gen.EdgeDSStore}})
		if len(inv.Items) != 0 || len(inv.Invalid) != 0 || len(inv.Skipped) != 1 || inv.Skipped[0].Source != "archive/hello" {
			t.Errorf("items %d invalid %v skipped %v", len(inv.Items), inv.Invalid, inv.Skipped)
		}
	})
	t.Run("7.32_0.4_tag_strings_split_stripped_deduped", func(t *testing.T) {
		m, inv := generate(t, gen.LegacyOptions{Version: gen.Legacy04, N: 4})
		checkInventory(t, m, inv)
	})
	t.Run("7.33_added_is_created_at_timestamp_is_bookmark", func(t *testing.T) {
		_, inv := generate(t, gen.LegacyOptions{Version: gen.Legacy07, N: 3})
		for _, it := range inv.Items {
			sec, _ := layout.LegacyTimestamp(it.Snapshot.Timestamp)
			if it.Snapshot.BookmarkedAt.Unix() != sec || it.Snapshot.CreatedAt.Unix() != sec+30 {
				t.Errorf("%s: bookmarked %s created %s", it.Snapshot.Timestamp, it.Snapshot.BookmarkedAt, it.Snapshot.CreatedAt)
			}
		}
	})
	t.Run("7.34_7.35_7.36_0.8_dashed_crawls_uuid_tags_null_crawl", func(t *testing.T) {
		m, inv := generate(t, gen.LegacyOptions{Version: gen.Legacy08, N: 9})
		checkInventory(t, m, inv)
		var auto *migrate.Crawl
		for _, it := range inv.Items {
			if it.Crawl.New {
				if auto != nil && auto != it.Crawl {
					t.Errorf("rows without crawl got two crawls")
				}
				auto = it.Crawl
			}
		}
		if auto == nil || auto.User != "admin" || len(strings.Split(auto.URLs, "\n")) != 3 || !strings.HasPrefix(auto.Label, "Migrated from") {
			t.Errorf("auto crawl %+v", auto)
		}
	})
}

// Scan writes nothing: every file, symlink and folder is as before.
func TestScanWritesNothing(t *testing.T) {
	for _, v := range gen.LegacyVersions {
		t.Run(v, func(t *testing.T) {
			dir := t.TempDir()
			if _, err := gen.Legacy(dir, gen.LegacyOptions{Version: v, N: 6, Seed: 5, Edges: gen.AllEdges, WAL: true}); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Join(dir, ".folio"), 0o755); err != nil {
				t.Fatal(err)
			}
			before, err := gen.ReadTree(dir)
			if err != nil {
				t.Fatal(err)
			}
			scan(t, dir, migrate.ScanOptions{})
			after, err := gen.ReadTree(dir)
			if err != nil {
				t.Fatal(err)
			}
			if d := before.Diff(after); d != nil {
				t.Errorf("scan changed the collection: %v", d)
			}
			if d := after.Diff(before); d != nil {
				t.Errorf("scan added to the collection: %v", d)
			}
		})
	}
}

// A folder whose index cannot be read is left alone: listed as skipped,
// reported to OnError, never judged invalid; the other folders go on.
func TestScanUnreadableFolder(t *testing.T) {
	dir := t.TempDir()
	writeFolder(t, dir, "1500000000", map[string]string{"index.json": `{"url": "https://ok.example.com/"}`})
	writeFolder(t, dir, "1500000001", map[string]string{"index.jsonl/x": "a directory where a file should be"})
	writeFolder(t, dir, "1500000002", map[string]string{"index.json/x": "", "archive.org.txt": "https://web.archive.org/web/1/https://x.example.com/"})
	var reported []string
	inv := scan(t, dir, migrate.ScanOptions{OnError: func(src string, err error) {
		reported = append(reported, src)
		if !strings.Contains(err.Error(), src[len("archive/"):]) {
			t.Errorf("error %q does not name the folder", err)
		}
	}})
	slices.Sort(reported)
	if want := []string{"archive/1500000001", "archive/1500000002"}; !slices.Equal(reported, want) {
		t.Errorf("reported %q, want %q", reported, want)
	}
	if len(inv.Items) != 1 || len(inv.Invalid) != 0 || len(inv.Skipped) != 2 {
		t.Errorf("items %d invalid %v skipped %v", len(inv.Items), inv.Invalid, inv.Skipped)
	}
}

func TestEdgeCasesMore(t *testing.T) {
	t.Run("7.10b_same_url_in_two_crawls_stays_two_snapshots", func(t *testing.T) {
		dir := t.TempDir()
		m, err := gen.Legacy(dir, gen.LegacyOptions{Version: gen.Legacy09Dash, N: 2, Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		first := m.Snapshots[0] // row 0: a legacy folder in bob's crawl
		db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "index.sqlite3"))
		if err != nil {
			t.Fatal(err)
		}
		_, err = db.Exec(`INSERT INTO core_snapshot (id, created_at, modified_at, url, timestamp, bookmarked_at, crawl_id, title, depth, fs_version, status)
			SELECT 'abcdefabcdefabcdefabcdefabcdefab', created_at, modified_at, url, '1234567890', '2009-02-13 23:31:30', (SELECT id FROM crawls_crawl WHERE created_by_id = 1), 'Second capture', 0, '0.9.0', 'queued'
			FROM core_snapshot WHERE timestamp = ?`, first.Timestamp)
		db.Close()
		if err != nil {
			t.Fatal(err)
		}
		inv := scan(t, dir, migrate.ScanOptions{})
		a := findItem(t, inv, first.URL, first.Timestamp)
		b := findItem(t, inv, first.URL, "1234567890")
		if a.Snapshot.ID != first.ID || a.Source != first.Source || b.Snapshot.ID != "abcdefabcdefabcdefabcdefabcdefab" || b.Source != "" {
			t.Errorf("first %s from %q, second %s from %q", a.Snapshot.ID, a.Source, b.Snapshot.ID, b.Source)
		}
		if a.User != "bob" || b.User != "admin" || a.Snapshot.CrawlID == b.Snapshot.CrawlID || b.Snapshot.Status != "queued" {
			t.Errorf("users %s/%s crawls %s/%s status %s", a.User, b.User, a.Snapshot.CrawlID, b.Snapshot.CrawlID, b.Snapshot.Status)
		}
		// Migrated, each has its own folder with an index.jsonl.
		c, err := archive.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := migrate.Run(context.Background(), c, migrate.Options{IDs: counterIDs(), Now: func() time.Time { return testNow }}); err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{a.Snapshot.ID, b.Snapshot.ID} {
			if m, _ := filepath.Glob(filepath.Join(dir, "archive/users/*/snapshots/*/*", id, "index.jsonl")); len(m) != 1 {
				t.Errorf("snapshot %s: index files %v, want one", id, m)
			}
		}
	})
	t.Run("7.19_unknown_index_keys_stay_in_the_untouched_index_json", func(t *testing.T) {
		dir := t.TempDir()
		m, err := gen.Legacy(dir, gen.LegacyOptions{Version: gen.Legacy07, N: 1, Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, filepath.FromSlash(m.Snapshots[0].Source), "index.json")
		before, _ := os.ReadFile(p)
		if !strings.Contains(string(before), `"custom_legacy_metadata"`) {
			t.Fatal("fixture lacks custom_legacy_metadata")
		}
		scan(t, dir, migrate.ScanOptions{})
		if after, _ := os.ReadFile(p); string(after) != string(before) {
			t.Error("index.json changed")
		}
	})
	t.Run("7.20_bare_url_and_id_lines_in_index_jsonl", func(t *testing.T) {
		dir := t.TempDir()
		writeFolder(t, dir, "1500000000", map[string]string{"index.jsonl": "# a comment\nnot json {\nhttps://bare.example.com/page\n"})
		writeFolder(t, dir, "1500000001", map[string]string{"index.jsonl": "0190f3c1-0000-7000-8000-0000000000aa\n",
			"index.json": `{"url": "https://from-json.example.com/"}`})
		inv := scan(t, dir, migrate.ScanOptions{})
		bare := findItem(t, inv, "https://bare.example.com/page", "1500000000")
		if bare.From != "index.jsonl" || len(bare.Foreign) != 2 {
			t.Errorf("from %s foreign %q", bare.From, bare.Foreign)
		}
		byID := findItem(t, inv, "https://from-json.example.com/", "1500000001")
		if byID.From != "index.json" {
			t.Errorf("id-only jsonl: from %s", byID.From)
		}
	})
	t.Run("7.29_4.6_08_rows_sealed", func(t *testing.T) {
		// The database has 2 queued rows; ArchiveBox's migration of a 0.8
		// database seals every row (formats spec §4.6, §7.29).
		m, inv := generate(t, gen.LegacyOptions{Version: gen.Legacy08, N: 10, Edges: []gen.Edge{gen.EdgeOrphan}})
		checkInventory(t, m, inv)
		for _, it := range inv.Items {
			if it.Snapshot.Status != "sealed" {
				t.Errorf("%s: status %s, want sealed", it.Snapshot.URL, it.Snapshot.Status)
			}
		}
		if it := findItem(t, inv, "https://orphan.example.com/", "1710000000"); it.Snapshot.Status != "sealed" {
			t.Errorf("orphan status %s, want sealed", it.Snapshot.Status)
		}
	})
}
