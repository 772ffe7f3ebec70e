package main_test

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// Issue 24, item 3: ArchiveBox's migration of a 0.8 database seals its
// rows (formats spec §4.6, test_migration_preserves_08_timestamp_meanings),
// so `add --resume` right after a migration captures nothing. Item 4:
// every migrated snapshot carries its Crawl record. Each migrated folder
// passes the importer's rules (checkImporterRules).
func TestMigrated08SnapshotsAreSealed(t *testing.T) {
	for _, crawls := range []bool{false, true} {
		name := "auto-crawl"
		if crawls {
			name = "own-crawls"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			rows := seedCollection(t, dir, seedOptions{version: "0.8", crawls: crawls})
			if r := updRun(t, dir, nil, "update", "--migrate-only"); r.code != 0 {
				t.Fatalf("update: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			crawlOf := map[string]map[string]any{}
			for _, row := range rows {
				snap, crawl := checkImporterRules(t, filepath.Join(dir, row.dest()))
				if crawl == nil {
					continue
				}
				// Every snapshot of a crawl carries the same record.
				id := snap["crawl_id"].(string)
				if prev, ok := crawlOf[id]; ok && !sameRecord(prev, crawl) {
					t.Errorf("crawl %s: records differ between its snapshots:\n%v\n%v", id, prev, crawl)
				}
				crawlOf[id] = crawl
				if !crawls || row.ts >= "20240104" {
					// Rows without a crawl: ArchiveBox's automatic crawl
					// (formats spec §4.6).
					if crawl["label"] != "Migrated from v0.8" || crawl["status"] != "sealed" {
						t.Errorf("%s: automatic crawl %v", row.url, crawl)
					}
				}
			}
			if crawls {
				if c := crawlOf["0190f3c1000070008000000000000001"]; c == nil || c["label"] != "crawl 0" ||
					c["urls"] != "https://example.com\nhttps://example.org" || c["created_by"] != "admin" {
					t.Errorf("database crawl 1: %v", c)
				}
			}
			before := updTree(t, dir)
			r := updRun(t, dir, nil, "add", "--resume", "--index-only")
			if r.code != 0 || !strings.Contains(r.stdout+r.stderr, "Nothing to add") || strings.Contains(r.stdout, "Resumed") {
				t.Errorf("add --resume after the migration: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			if d := updDiff(before, updTree(t, dir)); d != "" {
				t.Errorf("add --resume changed the tree:\n%s", d)
			}
		})
	}
}

// A collection migrated by an earlier folio holds 0.8 rows whose
// index.jsonl still says queued, without a Crawl record. The legacy
// database tells them from snapshots a folio add left queued: `add
// --resume` leaves them (and says so), and `update --migrate-only` seals
// them and writes their Crawl records, once.
func TestEarlierMigrationIsSealedOnRerun(t *testing.T) {
	dir := t.TempDir()
	rows := seedCollection(t, dir, seedOptions{version: "0.8", crawls: true})
	if r := updRun(t, dir, nil, "update", "--migrate-only"); r.code != 0 {
		t.Fatalf("update: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	// What a folio before this one wrote: status kept from the database,
	// no Crawl record.
	crawlLine := regexp.MustCompile(`(?m)^\{"type": "Crawl".*\n`)
	for _, row := range rows {
		p := filepath.Join(dir, row.dest(), "index.jsonl")
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		old := strings.Replace(crawlLine.ReplaceAllString(string(data), ""), `"status": "sealed"`, `"status": "queued"`, 1)
		if err := os.WriteFile(p, []byte(old), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if r := updRun(t, dir, nil, "reindex"); r.code != 0 {
		t.Fatalf("reindex: %s", r.stderr)
	}
	before := updTree(t, dir)
	r := updRun(t, dir, nil, "add", "--resume", "--index-only")
	if r.code != 0 || strings.Contains(r.stdout, "Resumed") || !strings.Contains(r.stderr, "5 snapshots of index.sqlite3") {
		t.Errorf("add --resume: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if d := updDiff(before, updTree(t, dir)); d != "" {
		t.Errorf("add --resume changed the tree:\n%s", d)
	}
	r = updRun(t, dir, nil, "update", "--migrate-only")
	if r.code != 0 {
		t.Fatalf("update again: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for _, row := range rows {
		checkImporterRules(t, filepath.Join(dir, row.dest()))
	}
	sealed := updTree(t, dir)
	if r := updRun(t, dir, nil, "update", "--migrate-only"); r.code != 0 || !strings.Contains(r.stdout, "Already current:   5") {
		t.Errorf("third run: exit %d\n%s", r.code, r.stdout)
	}
	if d := updDiff(sealed, updTree(t, dir)); d != "" {
		t.Errorf("third run changed the tree:\n%s", d)
	}
}

// A fresh capture through real Chromium (a loopback fixture server) and
// depth 1 (snapshots the run adds while it captures): every snapshot passes
// the importer's rules and carries the run's one Crawl record.
func TestCaptureWritesImportableRecords(t *testing.T) {
	srv := fixtureServer(t)
	dir := newCollection(t)
	out, stderr, code := runFolio(t, "add", "-D", dir, "--depth", "1", "--tag", "b,a", "--plugins", "title,hashes", srv.URL+"/about.html")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	var crawl map[string]any
	n := 0
	for _, s := range snapshots(t, dir) {
		n++
		snap, c := checkImporterRules(t, s.dir)
		if c == nil {
			continue
		}
		if crawl == nil {
			crawl = c
		}
		if c["id"] != crawl["id"] || c["urls"] != srv.URL+"/about.html" || c["tags_str"] != "a,b" || c["created_by"] != "system" {
			t.Errorf("%v: crawl %v, want the run's (first %v)", snap["url"], c, crawl)
		}
		if d, _ := c["max_depth"].(interface{ String() string }); d == nil || d.String() != "1" {
			t.Errorf("max_depth %v", c["max_depth"])
		}
		if l, _ := c["label"].(string); !regexp.MustCompile(`^.*@.* \$ folio.* add .*about\.html \[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\]$`).MatchString(l) {
			t.Errorf("label %q is not user@host $ cmd [ts]", l)
		}
	}
	if n < 2 {
		t.Errorf("%d snapshots, want the page and the pages it links to", n)
	}
	// The Crawl record is not a result: list and export count only the
	// ArchiveResults.
	list, _, code := runFolio(t, "list", "-D", dir, "--csv", "url,num_outputs,num_failures")
	if code != 0 || strings.Contains(list, "Crawl") {
		t.Errorf("list: %s", list)
	}
}

func sameRecord(a, b map[string]any) bool {
	return reflect.DeepEqual(a, b)
}
