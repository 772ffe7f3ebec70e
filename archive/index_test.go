package archive_test

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/folio-archive/folio/archive"
)

func TestParseIndexRules(t *testing.T) {
	data := strings.Join([]string{
		`# a comment`,
		``,
		`{"type": "Process", "id": "incomplete"}`,
		`{"url": "https://example.com/first", "title": "First", "custom": {"keep":  [1, 2]}}`,
		`{"type": "Snapshot", "url": "https://example.com/second"}`,
		`https://example.com/bare`,
		`0190f3c2-a1b2-7c3d-8e4f-5a6b7c8d9e0f`,
		`{"type": "ArchiveResult", "plugin": "title", "status": "succeeded", "output_str": "First"}`,
		`{"type": "ArchiveResult", "plugin": "dom", "status":`,
		"\x00\x01\xff garbage",
		`{"no": "type"}`,
	}, "\n") + "\n"
	ix, problems := archive.ParseIndex([]byte(data))
	snap, ok := ix.Snapshot()
	if !ok || snap.URL != "https://example.com/first" || snap.Title != "First" {
		t.Fatalf("first Snapshot record must win, got %+v ok=%v", snap, ok)
	}
	if got := len(ix.Results()); got != 1 {
		t.Fatalf("results = %d, want 1", got)
	}
	if got := ix.Records(); got != 6 {
		t.Fatalf("records = %d, want 6 (Process, 2 Snapshot objects, bare URL, bare id, result)", got)
	}
	want := []int{9, 10, 11}
	if len(problems) != len(want) {
		t.Fatalf("problems = %v, want lines %v", problems, want)
	}
	for i, p := range problems {
		if p.Line != want[i] {
			t.Errorf("problem %d on line %d, want %d (%v)", i, p.Line, want[i], p)
		}
	}
	if !bytes.Equal(ix.Bytes(), []byte(data)) {
		t.Fatalf("unchanged index must round-trip byte for byte:\n%q\n%q", ix.Bytes(), data)
	}
}

func TestSetSnapshotKeepsUnknownKeysAndForeignLines(t *testing.T) {
	orig := `{"type": "Process", "id": "incomplete"}` + "\n" +
		`not json at all {` + "\n" +
		`{"type":"Snapshot","id":"0190f3c2-a1b2-7c3d-8e4f-5a6b7c8d9e0f","url":"https://example.com","title":"Old","custom_legacy_metadata":{"must":"survive"},"tags":"b,a"}` + "\n" +
		`{"type": "ArchiveResult", "id": "r1", "plugin": "dom", "status": "failed", "extra":  true}` + "\n"
	ix, _ := archive.ParseIndex([]byte(orig))
	snap, _ := ix.Snapshot()
	if snap.ID != "0190f3c2a1b27c3d8e4f5a6b7c8d9e0f" {
		t.Fatalf("dashed id must read as compact, got %q", snap.ID)
	}
	snap.Title = "New ✓"
	ix.SetSnapshot(snap)
	out := string(ix.Bytes())
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("want 4 lines, got %d:\n%s", len(lines), out)
	}
	if !strings.HasPrefix(lines[0], `{"type": "Snapshot"`) {
		t.Errorf("Snapshot line must come first: %s", lines[0])
	}
	for _, keep := range []string{`"custom_legacy_metadata": {"must":"survive"}`, `"title": "New \u2713"`, `"tags": "b,a"`, `"id": "0190f3c2a1b27c3d8e4f5a6b7c8d9e0f"`} {
		if !strings.Contains(lines[0], keep) {
			t.Errorf("snapshot line lacks %s: %s", keep, lines[0])
		}
	}
	if lines[1] != `{"type": "Process", "id": "incomplete"}` || lines[2] != `not json at all {` {
		t.Errorf("foreign lines changed: %q %q", lines[1], lines[2])
	}
	if lines[3] != `{"type": "ArchiveResult", "id": "r1", "plugin": "dom", "status": "failed", "extra":  true}` {
		t.Errorf("untouched result line changed: %s", lines[3])
	}

	// Setting the snapshot the file already holds changes nothing.
	again, _ := archive.ParseIndex([]byte(out))
	s2, _ := again.Snapshot()
	again.SetSnapshot(s2)
	if got := string(again.Bytes()); got != out {
		t.Errorf("idempotent SetSnapshot changed bytes:\n%s\n%s", out, got)
	}
}

func TestNewIndexInPythonStyle(t *testing.T) {
	ix, _ := archive.ParseIndex(nil)
	when := time.Date(2024, 7, 20, 10, 0, 0, 123456000, time.UTC)
	ix.SetSnapshot(archive.Snapshot{
		ID: "0190f3c2a1b27c3d8e4f5a6b7c8d9e0f", URL: "https://example.com", Title: "Émoji 🎉 <b>&",
		Tags: []string{"z-tag", "a-tag", " a-tag "}, BookmarkedAt: when, CreatedAt: when,
		Timestamp: "1721469600.123456", Status: "sealed", FSVersion: "0.9.4", ArchiveSize: 20480,
	})
	ix.AddResult(archive.Result{ID: "r1", SnapshotID: "0190f3c2a1b27c3d8e4f5a6b7c8d9e0f", Plugin: "screenshot",
		HookName: "on_Snapshot__50_screenshot.js", Status: "succeeded", OutputStr: "screenshot.png",
		OutputFiles: []archive.OutputFile{{Path: "screenshot.png", Size: 20480, Mimetype: "image/png", Extension: "png"}}})
	want := `{"type": "Snapshot", "schema_version": "0.9.4", "id": "0190f3c2a1b27c3d8e4f5a6b7c8d9e0f", "crawl_id": null, "url": "https://example.com", "title": "\u00c9moji \ud83c\udf89 <b>&", "tags": "a-tag,z-tag", "bookmarked_at": "2024-07-20T10:00:00.123456+00:00", "created_at": "2024-07-20T10:00:00.123456+00:00", "timestamp": "1721469600.123456", "depth": 0, "status": "sealed", "fs_version": "0.9.4", "archive_size": 20480, "output_size": 20480}
{"type": "ArchiveResult", "schema_version": "0.9.4", "id": "r1", "snapshot_id": "0190f3c2a1b27c3d8e4f5a6b7c8d9e0f", "plugin": "screenshot", "hook_name": "on_Snapshot__50_screenshot.js", "status": "succeeded", "output_str": "screenshot.png", "start_ts": null, "end_ts": null, "output_files": {"screenshot.png": {"extension": "png", "mimetype": "image/png", "size": 20480}}}
`
	if got := string(ix.Bytes()); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	back, problems := archive.ParseIndex(ix.Bytes())
	s, _ := back.Snapshot()
	if len(problems) > 0 || s.Title != "Émoji 🎉 <b>&" || !s.BookmarkedAt.Equal(when) || s.ArchiveSize != 20480 {
		t.Fatalf("round trip lost data: %+v %v", s, problems)
	}
	r := back.Results()[0]
	if len(r.OutputFiles) != 1 || r.OutputFiles[0].Size != 20480 {
		t.Fatalf("result round trip: %+v", r)
	}
}

func TestNoFinalNewlineKept(t *testing.T) {
	for _, data := range []string{"", "\n", "a\n\nb", `{"type": "X"}`, "x\r\ny\r\n"} {
		ix, _ := archive.ParseIndex([]byte(data))
		if got := string(ix.Bytes()); got != data {
			t.Errorf("round trip of %q gave %q", data, got)
		}
	}
}

func TestLegacyIndexShapes(t *testing.T) {
	link := `{"schema": "Link", "url": "https://example.com/page1", "timestamp": "1609459200.123456", "title": "Example Page 1",
 "tags": "news,tech", "custom_legacy_metadata": {"must": "survive"},
 "history": {"title": [{"cmd": ["curl", "https://example.com/page1"], "pwd": "/data/archive/1609459200.123456",
   "cmd_version": "7.68", "output": "Example Page 1", "status": "succeded",
   "start_ts": "2021-01-01T00:00:01+00:00", "end_ts": "2021-01-01T00:00:02+00:00", "schema": "ArchiveResult"}],
   "pdf": [{"cmd": "chromium", "output": {"type": "TimeoutError"}, "status": "weird"}]}}`
	li, err := archive.ParseLegacyIndex([]byte(link))
	if err != nil {
		t.Fatal(err)
	}
	if li.FSVersion != "0.7.0" || li.Snapshot.Timestamp != "1609459200.123456" || archive.TagString(li.Snapshot.Tags) != "news,tech" {
		t.Fatalf("link shape: %+v", li)
	}
	if len(li.Results) != 2 || li.Results[0].Plugin != "title" || li.Results[0].Status != "succeeded" || li.Results[1].Status != "failed" || li.Results[1].Cmd[0] != "chromium" {
		t.Fatalf("history results: %+v", li.Results)
	}
	ar := `{"url": "https://e.com", "timestamp": "1700000000", "fs_version": "0.9.0", "bookmarked_at": "2023-11-14T22:13:20+00:00",
  "archive_results": [{"plugin": "dom", "status": "succeeded", "output": "dom/output.html"}]}`
	li, err = archive.ParseLegacyIndex([]byte(ar))
	if err != nil || li.FSVersion != "0.9.0" || len(li.Results) != 1 || li.Results[0].OutputStr != "dom/output.html" || li.Snapshot.BookmarkedAt.Unix() != 1700000000 {
		t.Fatalf("archive_results shape: %+v %v", li, err)
	}
	td := `{"TYPE": "core.models.Snapshot", "id": "0190f3c2-a1b2-7c3d-8e4f-5a6b7c8d9e0f", "url": "https://e.com", "tags": ["b", "a"], "timestamp": "1700000000.0", "title": null}`
	li, err = archive.ParseLegacyIndex([]byte(td))
	if err != nil || li.Snapshot.ID != "0190f3c2a1b27c3d8e4f5a6b7c8d9e0f" || archive.TagString(li.Snapshot.Tags) != "a,b" || li.Snapshot.Title != "" {
		t.Fatalf("to_dict shape: %+v %v", li, err)
	}
	for _, bad := range []string{"", "  \n", "{", "[1,2]", "\x00\xff", `{"a":1} trailing`} {
		if _, err := archive.ParseLegacyIndex([]byte(bad)); err == nil {
			t.Errorf("ParseLegacyIndex(%q) must fail", bad)
		}
	}
}

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "index.jsonl")
	if err := archive.WriteFile(path, []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := archive.WriteFile(path, []byte("two\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	if string(got) != "two\n" {
		t.Fatalf("content %q", got)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("temp files left behind: %v", entries)
	}
	// A failing writer leaves the old content and no temp file.
	err := archive.WriteFileWith(path, 0o644, func(w io.Writer) error { w.Write([]byte("partial")); return os.ErrInvalid })
	if err == nil {
		t.Fatal("want error")
	}
	got, _ = os.ReadFile(path)
	entries, _ = os.ReadDir(dir)
	if string(got) != "two\n" || len(entries) != 1 {
		t.Fatalf("failed write changed things: %q %v", got, entries)
	}
	// A missing folder is an error naming the path.
	if err := archive.WriteFile(filepath.Join(dir, "nope", "x"), nil, 0o644); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Fatalf("want error naming the path, got %v", err)
	}
}

func FuzzParseIndex(f *testing.F) {
	f.Add([]byte(`{"type": "Snapshot", "url": "https://e.com", "tags": ["a"]}` + "\n# c\nhttps://x\n"))
	f.Add([]byte("{\"url\": 1}\n\x00\n{"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ix, _ := archive.ParseIndex(data)
		if !bytes.Equal(ix.Bytes(), data) {
			t.Fatalf("round trip changed %q into %q", data, ix.Bytes())
		}
		snap, ok := ix.Snapshot()
		if !ok {
			return
		}
		ix.SetSnapshot(snap)
		again, _ := archive.ParseIndex(ix.Bytes())
		if _, ok := again.Snapshot(); !ok {
			t.Fatalf("snapshot lost after rewrite: %q", ix.Bytes())
		}
	})
}

func FuzzParseLegacyIndex(f *testing.F) {
	f.Add([]byte(`{"schema": "Link", "url": "https://e.com", "history": {"a": [{"status": "x"}]}}`))
	f.Add([]byte(`{"archive_results": [{}], "tags": null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = archive.ParseLegacyIndex(data)
	})
}

func TestCompactResultIDs(t *testing.T) {
	const snap = "0190f3c2a1b27c3d8e4f5a6b7c8d9e0f"
	in := `{"type": "Snapshot", "id": "0190f3c2-a1b2-7c3d-8e4f-5a6b7c8d9e0f", "url": "https://example.net/"}
{"type": "ArchiveResult", "schema_version": "0.9.31rc1", "id": "0190f3c5-1111-7000-8000-00000000000a", "snapshot_id": "0190f3c2-a1b2-7c3d-8e4f-5a6b7c8d9e0f", "plugin": "screenshot", "custom": {"nested":  [1, 2.50]}, "process_id": "0190f3c6-2222-7000-8000-00000000000b"}
{"type": "ArchiveResult", "id": "0190f3c5111170008000000000000009", "snapshot_id": "0190f3c2-a1b2-7c3d-8e4f-5a6b7c8d9e0f", "plugin": "dom"}
{"type": "ArchiveResult", "id": "not-a-uuid", "snapshot_id": "0190ffff-a1b2-7c3d-8e4f-5a6b7c8d9e0f", "plugin": "pdf"}
{"type": "Process", "id": "0190f3c6-2222-7000-8000-00000000000b"}
`
	ix, err := archive.ParseIndex([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if n := ix.CompactResultIDs(snap); n != 2 {
		t.Errorf("changed %d records, want 2", n)
	}
	want := `{"type": "Snapshot", "id": "0190f3c2-a1b2-7c3d-8e4f-5a6b7c8d9e0f", "url": "https://example.net/"}
{"type": "ArchiveResult", "schema_version": "0.9.31rc1", "id": "0190f3c511117000800000000000000a", "snapshot_id": "0190f3c2a1b27c3d8e4f5a6b7c8d9e0f", "plugin": "screenshot", "custom": {"nested":  [1, 2.50]}, "process_id": "0190f3c6-2222-7000-8000-00000000000b"}
{"type": "ArchiveResult", "id": "0190f3c5111170008000000000000009", "snapshot_id": "0190f3c2a1b27c3d8e4f5a6b7c8d9e0f", "plugin": "dom"}
{"type": "ArchiveResult", "id": "not-a-uuid", "snapshot_id": "0190ffff-a1b2-7c3d-8e4f-5a6b7c8d9e0f", "plugin": "pdf"}
{"type": "Process", "id": "0190f3c6-2222-7000-8000-00000000000b"}
`
	if got := string(ix.Bytes()); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	// A second pass finds nothing left to change.
	if n := ix.CompactResultIDs(snap); n != 0 {
		t.Errorf("second pass changed %d records", n)
	}
}
