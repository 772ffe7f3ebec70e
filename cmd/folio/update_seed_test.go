package main_test

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/folio-archive/folio/gen"
	"github.com/folio-archive/folio/layout"
)

// These tests seed collections the way ArchiveBox's own migration tests
// do (its migrations test helpers): the 0.4, 0.7 and 0.8 schemas, five
// rows whose timestamps are 2024010N120000.000000 — not epoch seconds —
// added on 2024-01-0N, tags, results, an admin user, crawls for some 0.8
// rows and none for others. Each row has its archive/<timestamp> folder.

// seedSchema is the part of each version's schema that folio reads.
var seedSchema = map[string]string{
	"0.4": `
CREATE TABLE django_migrations (id INTEGER PRIMARY KEY AUTOINCREMENT, app VARCHAR(255) NOT NULL, name VARCHAR(255) NOT NULL, applied DATETIME NOT NULL);
CREATE TABLE core_snapshot (id CHAR(32) PRIMARY KEY, url VARCHAR(2000) NOT NULL UNIQUE, timestamp VARCHAR(32) NOT NULL UNIQUE,
	title VARCHAR(128), tags VARCHAR(256), added DATETIME NOT NULL, updated DATETIME);`,
	"0.7": seedAuth + `
CREATE TABLE core_tag (id INTEGER PRIMARY KEY AUTOINCREMENT, name VARCHAR(100) NOT NULL UNIQUE, slug VARCHAR(100) NOT NULL UNIQUE);
CREATE TABLE core_snapshot (id CHAR(32) PRIMARY KEY, url VARCHAR(2000) NOT NULL UNIQUE, timestamp VARCHAR(32) NOT NULL UNIQUE,
	title VARCHAR(512), added DATETIME NOT NULL, updated DATETIME);
CREATE TABLE core_snapshot_tags (id INTEGER PRIMARY KEY AUTOINCREMENT, snapshot_id CHAR(32) NOT NULL, tag_id INTEGER NOT NULL, UNIQUE(snapshot_id, tag_id));
CREATE TABLE core_archiveresult (id INTEGER PRIMARY KEY AUTOINCREMENT, snapshot_id CHAR(32) NOT NULL, extractor VARCHAR(32) NOT NULL,
	cmd TEXT, pwd VARCHAR(256), cmd_version VARCHAR(128), output VARCHAR(1024), start_ts DATETIME, end_ts DATETIME, status VARCHAR(16) NOT NULL);`,
	"0.8": seedAuth + `
CREATE TABLE core_tag (id INTEGER PRIMARY KEY AUTOINCREMENT, name VARCHAR(100) NOT NULL UNIQUE, slug VARCHAR(100) NOT NULL UNIQUE,
	created_at DATETIME, modified_at DATETIME, created_by_id INTEGER);
CREATE TABLE crawls_crawl (id CHAR(36) PRIMARY KEY, created_at DATETIME NOT NULL, created_by_id INTEGER NOT NULL, modified_at DATETIME,
	urls TEXT NOT NULL, config TEXT DEFAULT '{}', max_depth SMALLINT UNSIGNED NOT NULL DEFAULT 0, tags_str VARCHAR(1024) NOT NULL DEFAULT '',
	persona_id CHAR(36), label VARCHAR(64) NOT NULL DEFAULT '', notes TEXT NOT NULL DEFAULT '', schedule_id CHAR(36),
	output_dir VARCHAR(256) NOT NULL DEFAULT '', status VARCHAR(16) NOT NULL DEFAULT 'queued', retry_at DATETIME);
CREATE TABLE core_snapshot (id CHAR(36) PRIMARY KEY, created_by_id INTEGER NOT NULL, created_at DATETIME NOT NULL, modified_at DATETIME,
	url VARCHAR(2000) NOT NULL, timestamp VARCHAR(32) NOT NULL UNIQUE, bookmarked_at DATETIME NOT NULL, crawl_id CHAR(36),
	title VARCHAR(512), downloaded_at DATETIME, depth SMALLINT UNSIGNED NOT NULL DEFAULT 0, retry_at DATETIME,
	status VARCHAR(16) NOT NULL DEFAULT 'queued', config TEXT DEFAULT '{}', notes TEXT NOT NULL DEFAULT '', output_dir VARCHAR(256));
CREATE TABLE core_snapshot_tags (id INTEGER PRIMARY KEY AUTOINCREMENT, snapshot_id CHAR(36) NOT NULL, tag_id INTEGER NOT NULL, UNIQUE(snapshot_id, tag_id));
CREATE TABLE core_archiveresult (id INTEGER PRIMARY KEY AUTOINCREMENT, uuid CHAR(36) UNIQUE, created_by_id INTEGER NOT NULL,
	created_at DATETIME NOT NULL, modified_at DATETIME, snapshot_id CHAR(36) NOT NULL, extractor VARCHAR(32) NOT NULL, pwd VARCHAR(256),
	cmd TEXT, cmd_version VARCHAR(128), output VARCHAR(1024), start_ts DATETIME, end_ts DATETIME, status VARCHAR(16) NOT NULL DEFAULT 'queued',
	retry_at DATETIME, notes TEXT NOT NULL DEFAULT '', output_dir VARCHAR(256), iface_id INTEGER);`,
}

const seedAuth = `
CREATE TABLE django_migrations (id INTEGER PRIMARY KEY AUTOINCREMENT, app VARCHAR(255) NOT NULL, name VARCHAR(255) NOT NULL, applied DATETIME NOT NULL);
CREATE TABLE auth_user (id INTEGER PRIMARY KEY AUTOINCREMENT, password VARCHAR(128) NOT NULL, last_login DATETIME, is_superuser BOOL NOT NULL,
	username VARCHAR(150) NOT NULL UNIQUE, first_name VARCHAR(150) NOT NULL, last_name VARCHAR(150) NOT NULL, email VARCHAR(254) NOT NULL,
	is_staff BOOL NOT NULL, is_active BOOL NOT NULL, date_joined DATETIME NOT NULL);`

// seedRow is one seeded snapshot and where it must end up.
type seedRow struct {
	id, url, ts, title string
	user, date         string // owner and date bucket of the migrated folder
}

func (r seedRow) dest() string {
	return filepath.Join("archive/users", r.user, "snapshots", r.date, layout.Domain(r.url), r.id)
}

type seedOptions struct {
	version string // "0.4", "0.7" or "0.8"
	crawls  bool   // 0.8: rows 1-3 in crawls (one made by a second user), rows 4-5 in none
}

// seedCollection writes a collection seeded as ArchiveBox's migration
// tests seed one, with a legacy folder per row holding the kinds of entry
// a real one has.
func seedCollection(t testing.TB, dir string, o seedOptions) []seedRow {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "archive"), 0o755); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", filepath.Join(dir, "index.sqlite3"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.Exec(q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec(seedSchema[o.version])
	exec(`INSERT INTO django_migrations (app, name, applied) VALUES ('core', '0001_initial', '2024-01-10 00:00:00')`)
	if o.version != "0.4" {
		for _, u := range []struct {
			name  string
			super int
		}{{"admin", 1}, {"bob", 0}} {
			exec(`INSERT INTO auth_user (password, is_superuser, username, first_name, last_name, email, is_staff, is_active, date_joined)
				VALUES ('pbkdf2_sha256$test', ?, ?, '', '', '', 1, 1, '2024-01-10 00:00:00')`, u.super, u.name)
		}
		for _, tag := range []string{"news", "tech", "blog", "reference", "code"} {
			exec(`INSERT INTO core_tag (name, slug) VALUES (?, ?)`, tag, tag)
		}
	}
	crawlOf := map[int]string{}
	crawlUser := map[int]string{}
	if o.version == "0.8" && o.crawls {
		for i, c := range []struct{ id, urls, user string }{
			{"0190f3c1000070008000000000000001", "https://example.com\nhttps://example.org", "1"},
			{"0190f3c1000070008000000000000002", "https://github.com/ArchiveBox", "2"},
		} {
			exec(`INSERT INTO crawls_crawl (id, created_at, created_by_id, modified_at, urls, label, status, retry_at)
				VALUES (?, '2024-01-10 00:00:00', ?, '2024-01-10 00:00:00', ?, ?, 'queued', '2024-01-10 00:00:00')`, c.id, c.user, c.urls, fmt.Sprintf("crawl %d", i))
		}
		crawlOf[0], crawlOf[1], crawlOf[2] = "0190f3c1000070008000000000000001", "0190f3c1000070008000000000000001", "0190f3c1000070008000000000000002"
		crawlUser[2] = "bob"
	}
	urls := []struct{ url, title, tags string }{
		{"https://example.com/page1", "Example Page 1", "news,tech"},
		{"https://example.org/article", "Article Title", "blog,reading"},
		{"https://github.com/user/repo", "GitHub Repository", "code,github"},
		{"https://news.ycombinator.com/item?id=12345", "HN Discussion", "news,discussion"},
		{"https://en.wikipedia.org/wiki/Test", "Wikipedia Test", "reference,wiki"},
	}
	var rows []seedRow
	for i, u := range urls {
		r := seedRow{id: fmt.Sprintf("0190f3c2a1b27c3d8e4f5a6b7c8d9e%02x", i), url: u.url, title: u.title,
			ts: fmt.Sprintf("2024010%d120000.000000", i+1), date: fmt.Sprintf("2024010%d", i+1), user: "admin"}
		added := fmt.Sprintf("2024-01-0%d 12:00:00", i+1)
		switch o.version {
		case "0.4":
			r.user = "system" // no auth_user: the automatic crawl's owner
			exec(`INSERT INTO core_snapshot (id, url, timestamp, title, tags, added, updated) VALUES (?, ?, ?, ?, ?, ?, ?)`,
				r.id, r.url, r.ts, r.title, u.tags, added, added)
		case "0.7":
			exec(`INSERT INTO core_snapshot (id, url, timestamp, title, added, updated) VALUES (?, ?, ?, ?, ?, ?)`,
				r.id, r.url, r.ts, r.title, added, added)
		case "0.8":
			var crawl any
			if c, ok := crawlOf[i]; ok {
				crawl = c
			}
			if cu := crawlUser[i]; cu != "" {
				r.user = cu
			}
			exec(`INSERT INTO core_snapshot (id, created_by_id, created_at, modified_at, url, timestamp, bookmarked_at, crawl_id, title, depth, status, config, notes)
				VALUES (?, 1, ?, ?, ?, ?, ?, ?, ?, 0, 'queued', '{}', '')`, r.id, added, added, r.url, r.ts, added, crawl, r.title)
		}
		if o.version != "0.4" {
			for _, tag := range []int{i%5 + 1, (i+1)%5 + 1} {
				exec(`INSERT INTO core_snapshot_tags (snapshot_id, tag_id) VALUES (?, ?)`, r.id, tag)
			}
			for j, ex := range []string{"title", "favicon", "screenshot", "singlefile", "wget"} {
				status := []string{"succeeded", "succeeded", "failed", "succeeded", "skipped"}[j]
				output := ""
				if status == "succeeded" {
					output = ex + "/index.html"
				}
				start, end := fmt.Sprintf("2024-01-0%d 12:00:0%d", i+1, j), fmt.Sprintf("2024-01-0%d 12:00:1%d", i+1, j)
				if o.version == "0.7" {
					exec(`INSERT INTO core_archiveresult (snapshot_id, extractor, cmd, pwd, cmd_version, output, start_ts, end_ts, status)
						VALUES (?, ?, ?, ?, '1.0.0', ?, ?, ?, ?)`, r.id, ex, `["`+ex+`", "--version"]`, "/data/archive/"+r.ts, output, start, end, status)
				} else {
					exec(`INSERT INTO core_archiveresult (uuid, created_by_id, created_at, modified_at, snapshot_id, extractor, pwd, cmd, cmd_version, output, start_ts, end_ts, status, retry_at, notes, output_dir)
						VALUES (?, 1, ?, ?, ?, ?, ?, ?, '1.0.0', ?, ?, ?, ?, '2024-01-10 00:00:00', '', ?)`,
						fmt.Sprintf("0190f3c3000070008000%012x", i*10+j), start, end, r.id, ex, "/data/archive/"+r.ts, `["`+ex+`", "--version"]`, output, start, end, status, ex)
				}
			}
		}
		seedFolder(t, dir, r)
		rows = append(rows, r)
	}
	return rows
}

// seedFolder writes archive/<timestamp>/ of a row: its index.json, the
// outputs its results name, binary payloads, a wget tree, an empty folder
// and a relative symlink.
func seedFolder(t testing.TB, dir string, r seedRow) {
	t.Helper()
	legacy := filepath.Join(dir, "archive", r.ts)
	files := map[string]string{
		"index.json":                fmt.Sprintf(`{"schema": "Link", "url": %q, "timestamp": %q, "title": %q, "history": {}, "custom_legacy_metadata": {"must": "survive"}}`, r.url, r.ts, r.title),
		"screenshot.png":            "\x89PNG\r\n\x1a\n\x00\xff" + strings.Repeat("\x00\xfe", 500),
		"singlefile.html":           "<html>" + r.title + "</html>",
		"favicon/index.html":        "<link rel=icon>",
		"title/index.html":          r.title,
		"singlefile/index.html":     "<p>singlefile</p>",
		layout.Netloc(r.url) + "/x": "wget mirror",
		"media/stderr.log":          "",
	}
	for rel, data := range files {
		p := filepath.Join(legacy, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(legacy, "git/objects/empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("screenshot.png", filepath.Join(legacy, "payload-link")); err != nil {
		t.Fatal(err)
	}
}

// checkSeedMigrated asserts that every entry of each row's legacy folder
// (before, as updTree recorded it) is at the row's new folder with the same
// bytes, that the legacy folder is gone and that the new folder has an
// index.jsonl naming the row.
func checkSeedMigrated(t *testing.T, dir string, before map[string]string, rows []seedRow) {
	t.Helper()
	after := updTree(t, dir)
	for _, r := range rows {
		old := "archive/" + r.ts
		if _, ok := after[old]; ok {
			t.Errorf("%s is still there", old)
		}
		dest := filepath.ToSlash(r.dest())
		n := 0
		for rel, v := range before {
			sub, ok := strings.CutPrefix(rel, old+"/")
			if !ok {
				continue
			}
			n++
			if got := after[dest+"/"+sub]; seedContent(got) != seedContent(v) {
				t.Errorf("%s/%s: %q, want %q (from %s)", dest, sub, got, v, rel)
			}
		}
		if n < 10 {
			t.Errorf("%s: only %d entries recorded", old, n)
		}
		rec := updFirstRecord(t, filepath.Join(dir, dest, "index.jsonl"))
		if rec["id"] != r.id || rec["timestamp"] != r.ts || rec["url"] != r.url || rec["title"] != r.title || rec["fs_version"] != "0.9.4" {
			t.Errorf("%s/index.jsonl: %v", dest, rec)
		}
	}
}

// seedContent is an updTree value without the file's mtime (a rename keeps
// it; a copy sets it too, but that is checked elsewhere).
func seedContent(v string) string {
	if f := strings.Fields(v); len(f) == 4 && f[0] == "file" {
		return strings.Join(f[:3], " ")
	}
	return v
}

func TestUpdateSeededCollections(t *testing.T) {
	for _, o := range []seedOptions{{version: "0.4"}, {version: "0.7"}, {version: "0.8"}, {version: "0.8", crawls: true}} {
		name := o.version
		if o.crawls {
			name += "-crawls"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			rows := seedCollection(t, dir, o)
			before := updTree(t, dir)
			r := updRun(t, dir, nil, "update", "--migrate-only")
			if r.code != 0 || !strings.Contains(r.stdout, "Migration complete") || !strings.Contains(r.stdout, "Migrated:          5") {
				t.Fatalf("update: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			checkSeedMigrated(t, dir, before, rows)
			migrated := updTree(t, dir)
			again := updRun(t, dir, nil, "update", "--migrate-only")
			if again.code != 0 || !strings.Contains(again.stdout, "Migrated:          0") || !strings.Contains(again.stdout, "Already current:   5") {
				t.Errorf("second run: exit %d\n%s\n%s", again.code, again.stdout, again.stderr)
			}
			if d := updDiff(migrated, updTree(t, dir)); d != "" {
				t.Errorf("second run changed the tree:\n%s", d)
			}
			list := updRun(t, dir, nil, "list")
			for _, row := range rows {
				if !strings.Contains(list.stdout, row.url) {
					t.Errorf("folio list lacks %s:\n%s", row.url, list.stdout)
				}
			}
		})
	}
}

// An earlier ArchiveBox run began to migrate a snapshot: a 0.9 folder
// named by the dashed id holds part of archive/<timestamp>'s files, the
// index.json and index.jsonl a 0.9 save wrote, and an output of its own.
// One run merges both folders into the compact-id folder, keeping every
// byte (the 0.9 index.json beside the legacy one); the second run finds
// nothing to do.
// seedHalfMigrated is seedCollection (0.8, crawls) where the first row's
// 0.9 folder, named by its dashed id, holds part of its files, the
// index.json and index.jsonl a 0.9 save wrote, and an output of its own.
func seedHalfMigrated(t testing.TB, dir string) (rows []seedRow, dashed, dashedJSON string) {
	t.Helper()
	rows = seedCollection(t, dir, seedOptions{version: "0.8", crawls: true})
	r := rows[0]
	dashed = filepath.Join(filepath.Dir(r.dest()), layout.Dashed(r.id))
	legacy := filepath.Join(dir, "archive", r.ts)
	write := func(rel, data string) {
		p := filepath.Join(dir, dashed, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, rel := range []string{"screenshot.png", "singlefile.html", "favicon/index.html"} {
		data, err := os.ReadFile(filepath.Join(legacy, rel))
		if err != nil {
			t.Fatal(err)
		}
		write(rel, string(data))
	}
	dashedJSON = fmt.Sprintf(`{"TYPE": "core.models.Snapshot", "id": %q, "url": %q, "timestamp": %q, "fs_version": "0.9.0"}`, layout.Dashed(r.id), r.url, r.ts)
	write("index.json", dashedJSON)
	write("index.jsonl", fmt.Sprintf(`{"type": "Snapshot", "id": %q, "url": %q, "timestamp": %q, "fs_version": "0.9.0", "status": "started"}`+"\n"+
		`{"type": "Process", "id": "incomplete"}`+"\n", layout.Dashed(r.id), r.url, r.ts))
	write("screenshot/screenshot.png", "\x89PNG 0.9 capture")
	return rows, dashed, dashedJSON
}

func TestUpdateHalfMigratedDashedFolder(t *testing.T) {
	dir := t.TempDir()
	rows, dashed, dashedJSON := seedHalfMigrated(t, dir)
	r := rows[0]
	before := updTree(t, dir)

	first := updRun(t, dir, nil, "update", "--migrate-only")
	if first.code != 0 || !strings.Contains(first.stdout, "Merged folders:    1") {
		t.Fatalf("update: exit %d\n%s\n%s", first.code, first.stdout, first.stderr)
	}
	checkSeedMigrated(t, dir, before, rows)
	after := updTree(t, dir)
	dest := filepath.ToSlash(r.dest())
	if _, ok := after[filepath.ToSlash(dashed)]; ok {
		t.Errorf("%s is still there", dashed)
	}
	for rel, v := range before {
		if sub, ok := strings.CutPrefix(rel, filepath.ToSlash(dashed)+"/"); ok && sub != "index.jsonl" && sub != "index.json" {
			if got := after[dest+"/"+sub]; seedContent(got) != seedContent(v) {
				t.Errorf("%s/%s: %q, want %q (from the dashed folder)", dest, sub, got, v)
			}
		}
	}
	side := filepath.Join(dir, dest, "index."+layout.Dashed(r.id)+".json")
	if data, err := os.ReadFile(side); err != nil || string(data) != dashedJSON {
		t.Errorf("%s: %q, %v; want the dashed folder's index.json", side, data, err)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, dest, "index.jsonl")); !strings.Contains(string(data), `{"type": "Process", "id": "incomplete"}`) {
		t.Errorf("index.jsonl lost the dashed folder's foreign line:\n%s", data)
	}

	again := updRun(t, dir, nil, "update", "--migrate-only")
	if again.code != 0 || !strings.Contains(again.stdout, "Migrated:          0") {
		t.Errorf("second run: exit %d\n%s\n%s", again.code, again.stdout, again.stderr)
	}
	if d := updDiff(after, updTree(t, dir)); d != "" {
		t.Errorf("second run changed the tree:\n%s", d)
	}
}

// The guard: when the plan drops a row's folder (FOLIO_FAULT=forget:N
// makes it do so, as the defect of skipping folders named by seed
// timestamps did), the run must not end "complete": exit 3, naming the
// folder and its row, and the folder as it was. A run without the fault
// then migrates it.
func TestUpdateReportsAFolderLeftBehind(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	if _, err := gen.Legacy(dir, gen.LegacyOptions{Version: gen.Legacy07, N: 8, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	r := updRun(t, dir, []string{"FOLIO_FAULT=forget:3"}, "update", "--migrate-only")
	m := regexp.MustCompile(`FOLIO_FAULT forget:3 drops (archive/\S+) from the plan`).FindStringSubmatch(r.stderr)
	if m == nil {
		t.Fatalf("no step was dropped: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	left := m[1]
	want := left + ": left behind: still there after the migration: the folder of database row "
	if r.code != 3 || !strings.Contains(r.stderr, want) || !strings.Contains(r.stdout, "[X] Migration finished with 1 failed entries") {
		t.Fatalf("exit %d, want 3 and %q\n%s\n%s", r.code, want, r.stdout, r.stderr)
	}
	if fi, err := os.Stat(filepath.Join(dir, left, "index.json")); err != nil || fi.Size() == 0 {
		t.Errorf("%s/index.json: %v", left, err)
	}
	again := updRun(t, dir, nil, "update", "--migrate-only")
	if again.code != 0 || !strings.Contains(again.stdout, "Migrated:          1") {
		t.Errorf("run without the fault: exit %d\n%s\n%s", again.code, again.stdout, again.stderr)
	}
	if _, err := os.Lstat(filepath.Join(dir, left)); err == nil {
		t.Errorf("%s is still there", left)
	}
}

// A folder under archive/ that holds a snapshot record but can be taken
// by nothing — its name is not a timestamp and no row has it — is named in
// the dry run and fails every run until it is renamed; then it migrates.
func TestUpdateNamesAStrandedSnapshot(t *testing.T) {
	dir := t.TempDir()
	rows := seedCollection(t, dir, seedOptions{version: "0.4"})
	stray := seedRow{url: "https://stray.example.com/", ts: "20240109120000.000000", title: "Stray"}
	seedFolder(t, dir, stray)
	dry := updRun(t, dir, nil, "update", "--migrate-only", "--dry-run")
	wantLine := "leave    archive/20240109120000.000000 (holds a snapshot of https://stray.example.com/ (index.json), but its name is not a timestamp and no database row has it; rename it to archive/<unix timestamp> to migrate it)"
	if dry.code != 0 || !strings.Contains(dry.stdout, wantLine) || !strings.Contains(dry.stdout, "5 to move, 0 to merge") {
		t.Fatalf("dry run: exit %d, want %q\n%s\n%s", dry.code, wantLine, dry.stdout, dry.stderr)
	}
	before := updTree(t, dir)
	for run := 1; run <= 2; run++ {
		r := updRun(t, dir, nil, "update", "--migrate-only")
		if r.code != 3 || !strings.Contains(r.stderr, "archive/20240109120000.000000: left behind: it holds a snapshot of https://stray.example.com/") {
			t.Fatalf("run %d: exit %d\n%s\n%s", run, r.code, r.stdout, r.stderr)
		}
		if run == 1 {
			checkSeedMigrated(t, dir, before, rows)
		}
	}
	if err := os.Rename(filepath.Join(dir, "archive", stray.ts), filepath.Join(dir, "archive/1704801600")); err != nil {
		t.Fatal(err)
	}
	if r := updRun(t, dir, nil, "update", "--migrate-only"); r.code != 0 || !strings.Contains(r.stdout, "Migrated:          1") {
		t.Errorf("after the rename: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}
