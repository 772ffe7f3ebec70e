package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type catStatus struct {
	Snapshots        int            `json:"snapshots"`
	ByStatus         map[string]int `json:"by_status"`
	ByLayout         map[string]int `json:"by_layout"`
	LegacyToMigrate  int            `json:"legacy_to_migrate"`
	LegacyNoIndex    int            `json:"legacy_without_index"`
	OnDiskNotIndexed int            `json:"on_disk_not_in_catalog"`
	ChangedOnDisk    int            `json:"changed_on_disk"`
	CatalogOrphans   int            `json:"catalog_rows_without_folder"`
	Unreadable       int            `json:"unreadable"`
	Invalid          int            `json:"invalid"`
	Staging          int            `json:"staging_folders"`
	CatalogBuilt     *string        `json:"catalog_built_at"`
	CatalogUpdated   *string        `json:"catalog_updated_at"`
	Stale            bool           `json:"stale"`
	DiskUse          int64          `json:"disk_use_bytes"`
	Next             string         `json:"next"`
}

func catStatusJSON(t *testing.T, dir string) catStatus {
	t.Helper()
	r := catRun(t, dir, "status", "--json").want(t, 0)
	var s catStatus
	if err := json.Unmarshal([]byte(r.stdout), &s); err != nil {
		t.Fatalf("status --json: %v\n%s", err, r.stdout)
	}
	return s
}

func TestStatusCommand(t *testing.T) {
	dir, m := catCollection(t, 30)
	n := len(m.Snapshots) + 1
	if err := os.MkdirAll(filepath.Join(dir, "archive", "1609459300"), 0o755); err != nil { // legacy, no index
		t.Fatal(err)
	}
	for _, p := range []string{"invalid/20240101/hello", "invalid/20240101/hello_1"} {
		if err := os.MkdirAll(filepath.Join(dir, p), 0o755); err != nil {
			t.Fatal(err)
		}
	}

	// Before any reindex the legacy folders are counted from a listing of
	// archive/, and status says what comes next.
	s := catStatusJSON(t, dir)
	if s.Snapshots != 0 || !s.Stale || s.OnDiskNotIndexed != n+1 || s.CatalogUpdated != nil || s.Invalid != 2 ||
		s.LegacyToMigrate != 2 || s.Next != "folio update --migrate-only (add --dry-run to see the plan first)" {
		t.Errorf("before reindex: %+v", s)
	}
	text := catRun(t, dir, "status").want(t, 0).stdout
	for _, line := range []string{
		"snapshots          0 (current layout 0, legacy 0)\n",
		"legacy to migrate  2 archive/<timestamp> folders (0 of those in the catalog without an index file): 'folio update --migrate-only' moves them\n",
		"next               folio update --migrate-only (add --dry-run to see the plan first)\n",
	} {
		if !strings.Contains(text, line) {
			t.Errorf("status before reindex lacks %q:\n%s", line, text)
		}
	}
	catRun(t, dir, "reindex").want(t, 0)
	s = catStatusJSON(t, dir)
	sealed := 0
	for _, e := range m.Snapshots {
		if e.Status == "sealed" {
			sealed++
		}
	}
	if s.Snapshots != n+1 || s.Stale || s.OnDiskNotIndexed != 0 || s.ByLayout["legacy"] != 2 || s.ByLayout["current"] != n-1 ||
		s.LegacyToMigrate != 2 || s.LegacyNoIndex != 1 || s.ByStatus["sealed"] != sealed || s.CatalogBuilt == nil || s.CatalogUpdated == nil || s.DiskUse <= 0 {
		t.Errorf("after reindex: %+v", s)
	}

	// Hand edits make the catalog stale; status only stats, never writes.
	if err := os.RemoveAll(filepath.Join(dir, filepath.FromSlash(m.Snapshots[0].Dir))); err != nil {
		t.Fatal(err)
	}
	idx := filepath.Join(dir, filepath.FromSlash(m.Snapshots[1].Dir), "index.jsonl")
	f, err := os.OpenFile(idx, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"type": "Process", "id": "added-by-hand"}` + "\n")
	f.Close()
	s = catStatusJSON(t, dir)
	if !s.Stale || s.CatalogOrphans != 1 || s.ChangedOnDisk != 1 || s.Snapshots != n+1 {
		t.Errorf("after hand edits: %+v", s)
	}
	text = catRun(t, dir, "status").want(t, 0).stdout
	for _, want := range []string{"snapshots          ", "legacy to migrate  2 archive/<timestamp> folders (1 of those in the catalog without an index file)", "1 catalog rows without a folder", "invalid            2", "stale", "disk use"} {
		if !strings.Contains(text, want) {
			t.Errorf("status text lacks %q:\n%s", want, text)
		}
	}
	catRun(t, dir, "reindex").want(t, 0)
	if s = catStatusJSON(t, dir); s.Stale || s.Snapshots != n {
		t.Errorf("after second reindex: %+v", s)
	}
	if r := catRun(t, dir, "status", "extra"); r.code != 2 {
		t.Errorf("status extra: exit %d", r.code)
	}
	if r := catRun(t, dir, "status", "--help").want(t, 0); !strings.Contains(r.stdout, "--json") {
		t.Errorf("status --help: %q", r.stdout)
	}
}

// TestStatusSaysWhyAFolderIsUnreadable: a snapshot folder an ArchiveBox
// run left without an index is named with what it is and what to run.
func TestStatusSaysWhyAFolderIsUnreadable(t *testing.T) {
	dir, _ := catCollection(t, 3)
	half := filepath.Join(dir, "archive/users/admin/snapshots/20240101/example.com/0190f3c2a1b27c3d8e4f5a6b7c8d9999")
	if err := os.MkdirAll(filepath.Join(half, "screenshot"), 0o755); err != nil {
		t.Fatal(err)
	}
	catRun(t, dir, "reindex").want(t, 3)
	r := catRun(t, dir, "status").want(t, 0)
	want := "warning: archive/users/admin/snapshots/20240101/example.com/0190f3c2a1b27c3d8e4f5a6b7c8d9999/index.jsonl: no index.jsonl or index.json: a snapshot folder ArchiveBox has not sealed (or left half-filled); when index.sqlite3 holds its row, 'folio update --migrate-only' writes its index\n"
	if !strings.Contains(r.stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
	}
	if !strings.Contains(r.stdout, "unreadable         1 (snapshot folders without a readable index; the warnings above say why for each)\n") {
		t.Errorf("stdout:\n%s", r.stdout)
	}
}
