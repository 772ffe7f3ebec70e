package catalog

import (
	"reflect"
	"strings"
	"testing"

	"github.com/folio-archive/folio/archive"
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

// FuzzParseIndex checks that the catalog reads every index.jsonl line
// exactly as archive.ParseIndex does: the same Snapshot, the same bad
// lines, and result lines stored so that they decode to the same results.
func FuzzParseIndex(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Add([]byte(strings.Join(fuzzSeeds, "\n") + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := entryRow{keep: true}
		snap, have, errs := r.parseIndex(data)

		ix, wantErrs := archive.ParseIndex(data)
		wantSnap, wantHave := ix.Snapshot()
		if have != wantHave || !reflect.DeepEqual(snap, wantSnap) {
			t.Fatalf("snapshot %v %+v, archive %v %+v", have, snap, wantHave, wantSnap)
		}
		if len(errs) != len(wantErrs) && !(len(errs) == 0 && len(wantErrs) == 0) || len(errs) > 0 && !reflect.DeepEqual(errs, wantErrs) {
			t.Fatalf("line errors %v, archive %v", errs, wantErrs)
		}
		wantResults := ix.Results()
		if r.nresults != len(wantResults) {
			t.Fatalf("%d results, archive %d", r.nresults, len(wantResults))
		}
		var want archive.Tally
		for _, res := range wantResults {
			want.Add(res.Plugin, res.HookName, res.Status)
		}
		if r.tally.Outputs() != want.Outputs() || r.tally.Failures() != want.Failures() || r.tally.State(snap.Status) != archive.StateOf(wantSnap, wantResults) {
			t.Fatalf("%d outputs, %d failures, state %q; archive %d, %d, %q", r.tally.Outputs(), r.tally.Failures(), r.tally.State(snap.Status),
				want.Outputs(), want.Failures(), archive.StateOf(wantSnap, wantResults))
		}
		if r.nresults > 0 {
			got, _ := archive.ParseIndex(r.results)
			if !reflect.DeepEqual(got.Results(), wantResults) {
				t.Fatalf("stored result decodes differently")
			}
		}
	})
}

// FuzzEncodeSnapshot checks that the catalog's canonical record is the
// one archive writes for the same Snapshot.
func FuzzEncodeSnapshot(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		s, ok := archive.DecodeSnapshotLine(line)
		if !ok {
			return
		}
		ix, _ := archive.ParseIndex(nil)
		ix.SetSnapshot(s)
		if got, want := encodeSnapshot(s), strings.TrimSuffix(string(ix.Bytes()), "\n"); got != want {
			t.Fatalf("encodeSnapshot\n got %s\nwant %s", got, want)
		}
	})
}
