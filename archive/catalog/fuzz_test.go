package catalog

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"folio/archive"
)

var fuzzSeeds = []string{
	`{"type": "Snapshot", "id": "0190f3c2-a1b2-7c3d-8e4f-5a6b7c8d9e0f", "url": "https://example.com", "title": "T\u00eftle", "tags": "b,a", "bookmarked_at": "2024-07-20T10:00:00.123456+00:00", "timestamp": "1721469600.123456", "depth": 0, "status": "sealed", "archive_size": 20480}`,
	`{"type": "ArchiveResult", "plugin": "dom", "status": "succeeded", "output_files": {"a": {"size": 1}}, "cmd": ["x", 1.5e3, true, null]}`,
	`{"url": "https://no-type.example/"}`,
	`{"url": "x", "type": null}`,
	`{"typ\u0065": "Snapshot", "url": "x"}`,
	`{"type": "Snapshot", "tags": ["z", " a ", "z"], "timestamp": 1508259732.0, "depth": "3", "archive_size": 1e3}`,
	`{"type": "Snapshot", "title": "bad \xff utf8", "id": "ABCDEF01-0000-0000-0000-000000000000"}`,
	`{"a": [1, 2, {"b": -0.5e-3}], "type": "Process"}`,
	`{"type": "ArchiveResult"`,
	`{"type": "x"} trailing`,
	`{"a": 01}`,
	`{"a": "\u12"}`,
	`{"a": tru}`,
	`{}`,
	`[]`,
	"https://example.com/bare",
	"0190f3c2a1b27c3d8e4f5a6b7c8d9e0f",
	"\x00\x01binary",
	"# comment",
	" \t{\"type\": \"Snapshot\"}\r",
}

// FuzzScanObject checks that the catalog's line scanner classifies every
// line exactly as archive.ParseIndex does, and that lines it accepts are
// valid JSON objects.
func FuzzScanObject(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		if bytes.IndexByte(line, '\n') >= 0 {
			return
		}
		t.Log(string(line))
		r := entryRow{keep: true}
		snap, have, errs := r.parseIndex(line)

		ix, wantErrs := archive.ParseIndex(line)
		wantSnap, wantHave := ix.Snapshot()
		if have != wantHave || !reflect.DeepEqual(snap, wantSnap) {
			t.Fatalf("snapshot %v %+v, archive %v %+v", have, snap, wantHave, wantSnap)
		}
		if len(errs) != len(wantErrs) {
			t.Fatalf("line errors %v, archive %v", errs, wantErrs)
		}
		wantResults := ix.Results()
		if r.nresults != len(wantResults) {
			t.Fatalf("%d results, archive %d", r.nresults, len(wantResults))
		}
		if r.nresults > 0 {
			got, _ := archive.ParseIndex(r.results)
			if !reflect.DeepEqual(got.Results(), wantResults) {
				t.Fatalf("stored result decodes differently")
			}
		}
		var k lineKeys
		t2 := bytes.TrimSpace(line)
		if len(t2) > 0 && t2[0] == '{' && scanObject(t2, &k) {
			if one, errs := archive.ParseIndex(t2); len(errs) > 0 && errs[0].Reason != "record has no type" || one.Records() == 0 && k.kind() != "" {
				t.Fatalf("scanObject accepted a line archive rejects: %v", errs)
			}
		}
	})
}

// FuzzDecodeSnapshot checks the fast Snapshot decoder against archive's.
func FuzzDecodeSnapshot(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		if bytes.IndexByte(line, '\n') >= 0 {
			return
		}
		s, ok := fastSnapshot(line)
		if !ok {
			return
		}
		ix, _ := archive.ParseIndex(line)
		want, wok := ix.Snapshot()
		if !wok {
			// fastSnapshot decodes any object; ParseIndex only Snapshot
			// records. Compare with the line typed as a Snapshot.
			var m lineKeys
			if !scanObject(bytes.TrimSpace(line), &m) || m.kind() == archive.TypeSnapshot {
				t.Fatalf("fast decoder accepted what archive does not: %q", line)
			}
			return
		}
		if !reflect.DeepEqual(s, want) {
			t.Fatalf("fast %+v\narchive %+v", s, want)
		}
		ix2, _ := archive.ParseIndex(nil)
		ix2.SetSnapshot(s)
		if got, want := encodeSnapshot(s), strings.TrimSuffix(string(ix2.Bytes()), "\n"); got != want {
			t.Fatalf("encodeSnapshot\n got %s\nwant %s", got, want)
		}
	})
}

// FuzzDecodeResult checks the fast ArchiveResult decoder against archive's.
func FuzzDecodeResult(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Add([]byte(`{"type": "ArchiveResult", "id": "r", "snapshot_id": "0190f3c2-a1b2-7c3d-8e4f-5a6b7c8d9e0f", "plugin": "wget", "status": "succeeded", "output_str": "wget/x.html", "start_ts": "2024-01-01T00:00:00+00:00", "end_ts": 1704067201.5, "output_files": {"\u00fcn.html": {"size": 12, "mimetype": "text/html", "extension": "html"}, "b": {"Size": 3}, "c": {"size": 1.5}, "d": null, "e": [1]}, "output_size": 12, "cmd": ["a", null], "output_json": {"k": [1, 2]}, "pwd": "/data"}`))
	f.Add([]byte(`{"type": "ArchiveResult", "extractor": "title", "output": "T", "cmd": "curl", "output_files": ["a", {"path": "b", "size": 2}]}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		if bytes.IndexByte(line, '\n') >= 0 {
			return
		}
		r, ok := fastResult(line)
		if !ok {
			return
		}
		var k lineKeys
		if !scanObject(bytes.TrimSpace(line), &k) || k.kind() != archive.TypeArchiveResult {
			return // archive decodes only ArchiveResult records
		}
		ix, _ := archive.ParseIndex(line)
		want := ix.Results()
		if len(want) != 1 {
			t.Fatalf("archive found %d results", len(want))
		}
		if !reflect.DeepEqual(r, want[0]) {
			t.Fatalf("fast %+v\narchive %+v", r, want[0])
		}
	})
}
