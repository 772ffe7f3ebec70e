package main_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// checkImporterRules reads the index.jsonl of the snapshot folder dir (an
// absolute path under <data>/archive/users/) and checks every record
// against what ArchiveBox 0.9.4's importer requires, as the formats spec
// (/work/shared/spec/ARCHIVEBOX-FORMATS.md) writes it. It is written from
// the spec, not from folio's writer: each rule cites its section. It
// returns the Snapshot and Crawl records for further checks.
func checkImporterRules(t *testing.T, dir string) (snap, crawl map[string]any) {
	t.Helper()
	bad := func(format string, args ...any) {
		t.Helper()
		t.Errorf("%s: "+format, append([]any{dir}, args...)...)
	}
	p := filepath.Join(dir, "index.jsonl")
	// §3.8: index.jsonl must exist and not be a symlink.
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatalf("%s: %v", dir, err)
	}
	if !fi.Mode().IsRegular() {
		bad("index.jsonl is not a regular file (%v)", fi.Mode())
	}
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	// §3.8: owner = parents[3].name, i.e. the folder is
	// archive/users/<owner>/snapshots/<date>/<domain>/<id> (§1.3).
	parts := strings.Split(filepath.ToSlash(dir), "/")
	n := len(parts)
	if n < 7 || parts[n-4] != "snapshots" || parts[n-6] != "users" || parts[n-7] != "archive" {
		t.Fatalf("%s is not archive/users/<owner>/snapshots/<date>/<domain>/<id>", dir)
	}
	owner, date, dirID := parts[n-5], parts[n-3], parts[n-1]
	if !regexp.MustCompile(`^\d{8}$`).MatchString(date) {
		bad("date folder %q is not YYYYMMDD (§1.4)", date)
	}

	var records []map[string]any
	for i, line := range bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n")) {
		t := bytes.TrimSpace(line)
		// §2.5: blank lines and # comments are skipped.
		if len(t) == 0 || t[0] == '#' {
			continue
		}
		// §2.4: json.dumps with ensure_ascii: no byte above 0x7f.
		for _, c := range line {
			if c >= 0x80 {
				bad("line %d: non-ASCII byte (ensure_ascii)", i+1)
				break
			}
		}
		dec := json.NewDecoder(bytes.NewReader(t))
		dec.UseNumber()
		var rec map[string]any
		if err := dec.Decode(&rec); err != nil {
			bad("line %d is not a JSON record: %v", i+1, err)
			continue
		}
		// §2.5: a record without type is dropped by the reader (one with a
		// url gets type Snapshot): every record folio writes names its type.
		if _, ok := rec["type"].(string); !ok {
			bad("line %d has no type", i+1)
			continue
		}
		records = append(records, rec)
	}
	if len(records) == 0 || records[0]["type"] != "Snapshot" {
		bad("the first record is not the Snapshot (§2.4 record order: Snapshot first)")
	}
	var snaps, crawls, results []map[string]any
	for _, r := range records {
		switch r["type"] {
		case "Snapshot":
			snaps = append(snaps, r)
		case "Crawl":
			crawls = append(crawls, r)
		case "ArchiveResult":
			results = append(results, r)
		}
	}
	// §3.8: exactly one Snapshot record, whose id is the folder's name.
	if len(snaps) != 1 {
		t.Fatalf("%s: %d Snapshot records, want exactly one (§3.8)", dir, len(snaps))
	}
	snap = snaps[0]
	for _, k := range []string{"type", "schema_version", "id", "crawl_id", "url", "title", "tags", "bookmarked_at",
		"created_at", "timestamp", "depth", "status", "fs_version", "archive_size", "output_size"} {
		if _, ok := snap[k]; !ok {
			bad("Snapshot record lacks %q (§2.4 Snapshot.to_json)", k)
		}
	}
	if snap["id"] != dirID {
		bad("Snapshot id %v is not the folder name %s (§3.8)", snap["id"], dirID)
	}
	checkID(t, dir, "Snapshot id", snap["id"])
	checkID(t, dir, "Snapshot crawl_id", snap["crawl_id"])
	checkSchemaVersion(t, dir, "Snapshot", snap)
	// §3.8: status must be sealed.
	if snap["status"] != "sealed" {
		bad("Snapshot status %v: the importer takes only sealed snapshots (§3.8)", snap["status"])
	}
	// §3.8 with §3.1: fs_version current or a declared migration source.
	declared := []string{"0.9.4", "0.7.0", "0.8.0", "0.8.5", "0.9.0", "0.9.1", "0.9.2", "0.9.3"}
	if fv, _ := snap["fs_version"].(string); !slices.Contains(declared, fv) {
		bad("fs_version %v is neither current nor a declared source (§3.1, §3.8)", snap["fs_version"])
	}
	checkTime(t, dir, "Snapshot bookmarked_at", snap["bookmarked_at"], false)
	checkTime(t, dir, "Snapshot created_at", snap["created_at"], false)
	// §2.4: timestamp is a string; §2.11/§3.3: digits with at most one dot.
	if ts, ok := snap["timestamp"].(string); !ok || !regexp.MustCompile(`^\d+(\.\d+)?$`).MatchString(ts) {
		bad("timestamp %#v is not a string of digits and one dot (§2.4, §3.3)", snap["timestamp"])
	}
	// §2.4: tags comma-joined, sorted by name.
	if tags, ok := snap["tags"].(string); !ok {
		bad("tags %#v is not a string (§2.4)", snap["tags"])
	} else if tags != "" {
		list := strings.Split(tags, ",")
		if !slices.IsSorted(list) {
			bad("tags %q are not sorted (§2.4)", tags)
		}
	}
	// §2.4: archive_size and output_size are the same int.
	if snap["archive_size"] != snap["output_size"] {
		bad("archive_size %v != output_size %v (§2.4)", snap["archive_size"], snap["output_size"])
	}

	// §3.8: the importer accepts a Crawl record with created_by inside the
	// snapshot's index.jsonl and creates the missing crawl from it,
	// keeping its id; without one it warns "no Crawl record" (issue 24).
	for _, c := range crawls {
		if c["id"] == snap["crawl_id"] {
			if crawl != nil {
				bad("two Crawl records with the snapshot's crawl_id")
			}
			crawl = c
		}
	}
	if crawl == nil {
		bad("no Crawl record with the Snapshot's crawl_id %v (§3.8)", snap["crawl_id"])
		return snap, nil
	}
	// §2.4 (the Crawl record of the JSONL vocabulary) plus created_by (§3.8).
	for _, k := range []string{"type", "schema_version", "id", "urls", "status", "max_depth", "max_urls", "max_size",
		"tags_str", "label", "created_at", "created_by"} {
		if _, ok := crawl[k]; !ok {
			bad("Crawl record lacks %q (§2.4, §3.8)", k)
		}
	}
	checkID(t, dir, "Crawl id", crawl["id"])
	checkSchemaVersion(t, dir, "Crawl", crawl)
	checkTime(t, dir, "Crawl created_at", crawl["created_at"], false)
	for _, k := range []string{"urls", "label", "tags_str", "created_by"} {
		if _, ok := crawl[k].(string); !ok {
			bad("Crawl %s %#v is not a string", k, crawl[k])
		}
	}
	// §3.8: the folder's owner is the crawl's creator (the username comes
	// from crawl.created_by, §1.4).
	if crawl["created_by"] != owner {
		bad("Crawl created_by %v is not the folder's owner %s (§1.4, §3.8)", crawl["created_by"], owner)
	}
	// §4.5: max_depth 0-4.
	if d, err := crawl["max_depth"].(json.Number).Int64(); err != nil || d < 0 || d > 4 {
		bad("Crawl max_depth %v is not 0-4 (§4.5)", crawl["max_depth"])
	}
	if !slices.Contains([]string{"queued", "started", "sealed", "paused"}, crawl["status"].(string)) {
		bad("Crawl status %v", crawl["status"])
	}
	resultStatus := []string{"queued", "started", "backoff", "succeeded", "failed", "skipped", "noresults"}
	for i, r := range results {
		what := fmt.Sprintf("ArchiveResult %d", i+1)
		// §2.4: id, snapshot_id, plugin, hook_name, status, output_str,
		// start_ts, end_ts.
		for _, k := range []string{"schema_version", "id", "snapshot_id", "plugin", "hook_name", "status", "output_str", "start_ts", "end_ts"} {
			if _, ok := r[k]; !ok {
				bad("%s lacks %q (§2.4)", what, k)
			}
		}
		checkID(t, dir, what+" id", r["id"])
		checkSchemaVersion(t, dir, what, r)
		if r["snapshot_id"] != snap["id"] {
			bad("%s snapshot_id %v is not the snapshot's id", what, r["snapshot_id"])
		}
		// §2.7: plugin at most 32 characters.
		if p, ok := r["plugin"].(string); !ok || p == "" || len(p) > 32 {
			bad("%s plugin %#v", what, r["plugin"])
		}
		if _, ok := r["hook_name"].(string); !ok {
			bad("%s hook_name %#v is not a string (§2.4)", what, r["hook_name"])
		}
		if s, _ := r["status"].(string); !slices.Contains(resultStatus, s) {
			bad("%s status %#v (§2.4)", what, r["status"])
		}
		checkTime(t, dir, what+" start_ts", r["start_ts"], true)
		checkTime(t, dir, what+" end_ts", r["end_ts"], true)
		// §2.4: output_files is a dict {relpath: {...}}.
		if of, ok := r["output_files"]; ok {
			if _, isMap := of.(map[string]any); !isMap {
				bad("%s output_files is not a dict (§2.4)", what)
			}
		}
	}
	return snap, crawl
}

// isoTime is the datetime form of §2.4: ISO 8601 with "+00:00", with
// microseconds only when they are not zero.
var isoTime = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?\+00:00$`)

func checkTime(t *testing.T, dir, what string, v any, nullable bool) {
	t.Helper()
	if v == nil && nullable {
		return
	}
	s, ok := v.(string)
	if !ok || !isoTime.MatchString(s) || strings.HasSuffix(s, ".000000+00:00") {
		t.Errorf("%s: %s %#v is not an ISO time with +00:00 and microseconds only when non-zero (§2.4)", dir, what, v)
	}
}

// checkID: upstream-latest writes ids as 32 lowercase hex digits (§1.4,
// §2.4 "upstream-latest compact hex").
func checkID(t *testing.T, dir, what string, v any) {
	t.Helper()
	if s, ok := v.(string); !ok || !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(s) {
		t.Errorf("%s: %s %#v is not 32 lowercase hex digits (§1.4, §2.4)", dir, what, v)
	}
}

// checkSchemaVersion: every record ArchiveBox writes carries
// schema_version, the ArchiveBox version that wrote it (§2.4).
func checkSchemaVersion(t *testing.T, dir, what string, rec map[string]any) {
	t.Helper()
	if s, ok := rec["schema_version"].(string); !ok || !regexp.MustCompile(`^\d+\.\d+\.\d+`).MatchString(s) {
		t.Errorf("%s: %s schema_version %#v is not a version (§2.4)", dir, what, rec["schema_version"])
	}
}
