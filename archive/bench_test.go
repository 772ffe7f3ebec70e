package archive_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/gen"
)

var benchLine = []byte(`{"type": "Snapshot", "schema_version": "0.9.4", "id": "0190f3c2a1b27c3d8e4f5a6b7c8d9e0f", "crawl_id": null, "url": "https://example.com/a/b?c=d", "title": "Caf\u00e9 and a fairly long title for a page", "tags": "a-tag,z-tag", "bookmarked_at": "2024-07-20T10:00:00.123456+00:00", "created_at": "2024-07-20T10:00:00.123456+00:00", "timestamp": "1721469600.123456", "depth": 0, "status": "sealed", "fs_version": "0.9.4", "archive_size": 20480, "output_size": 20480}
{"type": "ArchiveResult", "schema_version": "0.9.4", "id": "r1", "snapshot_id": "0190f3c2a1b27c3d8e4f5a6b7c8d9e0f", "plugin": "screenshot", "hook_name": "on_Snapshot__50_screenshot.js", "status": "succeeded", "output_str": "screenshot.png", "start_ts": null, "end_ts": null, "output_files": {"screenshot.png": {"extension": "png", "mimetype": "image/png", "size": 20480}}}
`)

func BenchmarkParseIndex(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		ix, _ := archive.ParseIndex(benchLine)
		if _, ok := ix.Snapshot(); !ok {
			b.Fatal("no snapshot")
		}
		_ = ix.Results()
	}
}

// generatedIndex is the index.jsonl of one generated snapshot: its
// Snapshot record and about ten ArchiveResult records.
func generatedIndex(b *testing.B) []byte {
	b.Helper()
	m, err := gen.Current(b.TempDir(), gen.Options{N: 1, Seed: 1, Minimal: true, NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	data, err := os.ReadFile(m.IndexPath(0))
	if err != nil {
		b.Fatal(err)
	}
	return data
}

// BenchmarkIndexSnapshot is what a reindex asks of every index.jsonl.
func BenchmarkIndexSnapshot(b *testing.B) {
	data := generatedIndex(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		ix, problems := archive.ParseIndex(data)
		if _, ok := ix.Snapshot(); !ok || len(problems) > 0 {
			b.Fatal("no snapshot")
		}
	}
}

// BenchmarkIndexResults decodes every record of an index.jsonl, as export
// and the catalog's WithResults do.
func BenchmarkIndexResults(b *testing.B) {
	data := generatedIndex(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		ix, _ := archive.ParseIndex(data)
		if _, ok := ix.Snapshot(); !ok || len(ix.Results()) == 0 {
			b.Fatal("no records")
		}
	}
}

// BenchmarkParseLegacyIndex reads one generated 0.7 index.json, the bulk
// of a migration scan.
func BenchmarkParseLegacyIndex(b *testing.B) {
	dir := b.TempDir()
	m, err := gen.Legacy(dir, gen.LegacyOptions{Version: gen.Legacy07, N: 1, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(m.Snapshots[0].Source), archive.LegacyIndexFile))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := archive.ParseLegacyIndex(data); err != nil {
			b.Fatal(err)
		}
	}
}
