package archive_test

import (
	"testing"

	"folio/archive"
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
