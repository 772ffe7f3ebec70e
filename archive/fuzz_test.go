package archive

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// The fuzz targets below hold the byte scanner and the decoders built on
// it to encoding/json and to the decoder of ref_test.go.

var lineSeeds = []string{
	`{"type": "Snapshot", "id": "0190f3c2-a1b2-7c3d-8e4f-5a6b7c8d9e0f", "url": "https://example.com", "title": "T\u00eftle \ud83c\udf89 \ud83c", "tags": "b,a", "bookmarked_at": "2024-07-20T10:00:00.123456+00:00", "timestamp": "1721469600.123456", "depth": 0, "status": "sealed", "archive_size": 20480}`,
	`{"type": "ArchiveResult", "plugin": "dom", "status": "succeeded", "output_files": {"a": {"size": 1}}, "cmd": ["x", 1.5e3, true, null]}`,
	`{"type": "ArchiveResult", "id": "r", "snapshot_id": "0190f3c2-a1b2-7c3d-8e4f-5a6b7c8d9e0f", "plugin": "wget", "status": "succeeded", "output_str": "wget/x.html", "start_ts": "2024-01-01T00:00:00+00:00", "end_ts": 1704067201.5, "output_files": {"\u00fcn.html": {"size": 12, "mimetype": "text/html", "extension": "html"}, "b": {"Size": 3}, "c": {"size": 1.5}, "d": null, "e": [1], "f": {"size": 1, "size": 2.5}}, "output_size": 12, "cmd": ["a", null], "output_json": {"k": [1, 2]}, "pwd": "/data"}`,
	`{"type": "ArchiveResult", "extractor": "title", "output": "T", "cmd": "curl", "output_files": ["a", {"path": "b", "size": 2}]}`,
	`{"type": "ArchiveResult", "cmd": [], "output_files": {}, "output_size": "12", "status": "s\u0075cceeded"}`,
	`{"url": "https://no-type.example/"}`,
	`{"url": "x", "type": null}`,
	`{"typ\u0065": "Snapshot", "url": "x"}`,
	`{"type": "Snapshot", "tags": ["z", " a ", "z"], "timestamp": 1508259732.0, "depth": "3", "archive_size": 1e3, "output_size": 1e400}`,
	`{"type": "Snapshot", "tags": null, "depth": "1e2", "archive_size": "x", "created_at": 1700000000}`,
	"{\"type\": \"Snapshot\", \"title\": \"bad \xff utf8\", \"id\": \"ABCDEF01-0000-0000-0000-000000000000\"}",
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
	"0190F3C2-A1B2-7C3D-8E4F-5A6B7C8D9E0F",
	"\x00\x01binary",
	"# comment",
	" \t{\"type\": \"Snapshot\"}\r",
}

// FuzzScanner checks that scanMembers and scanElements accept exactly
// what json.Valid accepts and split objects as the old decoder did.
func FuzzScanner(f *testing.F) {
	for _, s := range lineSeeds {
		f.Add([]byte(s))
	}
	f.Add([]byte(` [1, "a", {"b": [null]}] `))
	f.Fuzz(func(t *testing.T, data []byte) {
		var got Object
		ok := scanMembers(data, func(key, val []byte) { got = append(got, Member{keyString(key), val}) })
		start := skipWS(data, 0)
		valid := json.Valid(data)
		if want := valid && data[start] == '{'; ok != want {
			t.Fatalf("scanMembers %v, json.Valid %v: %q", ok, valid, data)
		}
		if ok {
			want, err := refParseObject(data)
			if err != nil || len(got) != len(want) && !(len(got) == 0 && len(want) == 0) {
				t.Fatalf("members %q, old decoder %q (%v)", got, want, err)
			}
			for i := range got {
				if got[i].Key != want[i].Key || !bytes.Equal(got[i].Value, want[i].Value) {
					t.Fatalf("member %d: %q, old decoder %q", i, got[i], want[i])
				}
			}
		}
		if ok := scanElements(data, func([]byte) {}); ok != (valid && data[start] == '[') {
			t.Fatalf("scanElements %v, json.Valid %v: %q", ok, valid, data)
		}
		if _, err := ParseObject(data); (err == nil) != (valid && data[start] == '{') {
			t.Fatalf("ParseObject: %v", err)
		} else if err != nil {
			if _, rerr := refParseObject(data); rerr == nil || rerr.Error() != err.Error() {
				t.Fatalf("error %q, old decoder %q", err, rerr)
			}
		}
	})
}

// FuzzUnquote checks unquote against json.Unmarshal.
func FuzzUnquote(f *testing.F) {
	for _, s := range []string{`"plain"`, `"caf\u00e9 \ud83c\udf89"`, `"\ud800\u0041 \udc00 \ud83c\ud83c\udf89"`, "\"\xff\xfe \xed\xa0\x80\"", `"\" \\ \/ \b \f \n \r \t"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' || !json.Valid(raw) {
			return
		}
		var want string
		if err := json.Unmarshal(raw, &want); err != nil {
			t.Fatal(err)
		}
		if got, err := unquote(raw); err != nil || got != want {
			t.Fatalf("unquote %q = %q, %v; encoding/json %q", raw, got, err, want)
		}
	})
}

// FuzzDecodeLine checks ClassifyLine, DecodeSnapshotLine and
// DecodeResultOutputs against the old decoder, line by line.
func FuzzDecodeLine(f *testing.F) {
	for _, s := range lineSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		if bytes.IndexByte(line, '\n') >= 0 {
			return
		}
		trimmed := bytes.TrimSpace(line)
		obj, kind := refClassify(trimmed)
		info := ClassifyLine(line)
		want := LineInfo{Kind: kind}
		if kind == "" {
			want.Problem = refLineProblem(trimmed)
		} else if trimmed[0] == '{' {
			want.Status = refStr(obj, "status")
			if kind == TypeArchiveResult {
				if want.Plugin = refStr(obj, "plugin"); want.Plugin == "" {
					want.Plugin = refStr(obj, "extractor")
				}
				want.Hook = refStr(obj, "hook_name")
			}
		}
		if info != want {
			t.Fatalf("ClassifyLine %+v, old decoder %+v", info, want)
		}
		s, ok := DecodeSnapshotLine(line)
		if ok != (kind == TypeSnapshot) {
			t.Fatalf("DecodeSnapshotLine ok=%v for a %q line", ok, kind)
		}
		if ok {
			if want := refDecodeSnapshot(obj); !reflect.DeepEqual(s, want) {
				t.Fatalf("snapshot\n got %#v\nwant %#v", s, want)
			}
		}
		r, ok := DecodeResultOutputs(line)
		if ok != (kind == TypeArchiveResult) {
			t.Fatalf("DecodeResultOutputs ok=%v for a %q line", ok, kind)
		}
		if ok {
			all := refDecodeResult(obj)
			want := Result{Plugin: all.Plugin, HookName: all.HookName, Status: all.Status,
				OutputStr: all.OutputStr, OutputFiles: all.OutputFiles}
			if !reflect.DeepEqual(r, want) {
				t.Fatalf("result\n got %#v\nwant %#v", r, want)
			}
		}
	})
}

// FuzzParseIndexLines checks ParseIndex's problems and records against
// the old decoder's, and that the file round-trips.
func FuzzParseIndexLines(f *testing.F) {
	var all []byte
	for _, s := range lineSeeds {
		f.Add([]byte(s + "\n"))
		all = append(append(all, s...), '\n')
	}
	f.Add(all)
	f.Add(all[:len(all)-1])
	f.Fuzz(func(t *testing.T, data []byte) {
		ix, problems := ParseIndex(data)
		if !bytes.Equal(ix.Bytes(), data) {
			t.Fatalf("round trip changed %q into %q", data, ix.Bytes())
		}
		var (
			wantProblems []LineError
			wantSnap     *Snapshot
			wantResults  []Result
			records      int
		)
		if len(data) > 0 {
			body := bytes.TrimSuffix(data, []byte("\n"))
			for n, raw := range bytes.Split(body, []byte("\n")) {
				obj, kind := refClassify(bytes.TrimSpace(raw))
				switch kind {
				case "":
					if reason := refLineProblem(bytes.TrimSpace(raw)); reason != "" {
						wantProblems = append(wantProblems, LineError{n + 1, reason})
					}
					continue
				case TypeSnapshot:
					if wantSnap == nil {
						s := refDecodeSnapshot(obj)
						wantSnap = &s
					}
				case TypeArchiveResult:
					wantResults = append(wantResults, refDecodeResult(obj))
				}
				records++
			}
		}
		if !reflect.DeepEqual(problems, wantProblems) {
			t.Fatalf("problems %v, old decoder %v", problems, wantProblems)
		}
		if ix.Records() != records {
			t.Fatalf("%d records, old decoder %d", ix.Records(), records)
		}
		snap, ok := ix.Snapshot()
		if ok != (wantSnap != nil) || ok && !reflect.DeepEqual(snap, *wantSnap) {
			t.Fatalf("snapshot %v %#v, old decoder %#v", ok, snap, wantSnap)
		}
		if got := ix.Results(); !reflect.DeepEqual(got, wantResults) {
			t.Fatalf("results\n got %#v\nwant %#v", got, wantResults)
		}
	})
}

// FuzzLegacyIndexDecode checks ParseLegacyIndex against the old decoder.
func FuzzLegacyIndexDecode(f *testing.F) {
	f.Add([]byte(`{"schema": "Link", "url": "https://e.com", "tags": "b,a", "timestamp": "1609459200.1", "history": {"title": [{"cmd": ["curl", "x"], "output": "T", "status": "succeded", "start_ts": "2021-01-01T00:00:01+00:00"}], "pdf": [{"cmd": "chromium", "output": {"type": "TimeoutError"}, "status": "weird"}], "x": null, "y": {}}}`))
	f.Add([]byte(`{"archive_results": [{"plugin": "dom", "status": "succeeded", "output": "dom/output.html"}, 1, null], "tags": null, "fs_version": "0.9.0"}`))
	f.Add([]byte(`{"TYPE": "core.models.Snapshot", "id": "0190f3c2-a1b2-7c3d-8e4f-5a6b7c8d9e0f", "tags": ["b", "a"], "title": null}`))
	f.Add([]byte(`{"a":1} trailing`))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := ParseLegacyIndex(data)
		want, werr := refParseLegacyIndex(data)
		if (err == nil) != (werr == nil) || err != nil && err.Error() != werr.Error() {
			t.Fatalf("error %v, old decoder %v", err, werr)
		}
		if err != nil {
			return
		}
		if !reflect.DeepEqual(got.Snapshot, want.Snapshot) || got.FSVersion != want.FSVersion || !reflect.DeepEqual(got.Results, want.Results) {
			t.Fatalf("got  %#v\nwant %#v", got, want)
		}
		if len(got.Object) != len(want.Object) {
			t.Fatalf("object %q, old decoder %q", got.Object, want.Object)
		}
		for i := range got.Object {
			if got.Object[i].Key != want.Object[i].Key || !bytes.Equal(got.Object[i].Value, want.Object[i].Value) {
				t.Fatalf("member %d: %q, old decoder %q", i, got.Object[i], want.Object[i])
			}
		}
	})
}

// FuzzNormalizeTags checks the sort-and-compact NormalizeTags against the
// old one.
func FuzzNormalizeTags(f *testing.F) {
	f.Add("b, a,,a ,c")
	f.Add(" \u00a0 ")
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := SplitTags(s), refSplitTags(s); !reflect.DeepEqual(got, want) {
			t.Fatalf("SplitTags(%q) = %q, old %q", s, got, want)
		}
	})
}

// FuzzParseISOTime checks the fast datetime reader against ParseTime.
func FuzzParseISOTime(f *testing.F) {
	for _, s := range []string{"2024-07-20T10:00:00.123456+00:00", "2024-02-29 23:59:59Z", "2023-02-29T00:00:00", "2024-07-20T10:00:00.1234567891+00:00", "2024-07-20T10:00:00,5Z", "0000-01-01T00:00:00", "2024-12-31T24:00:00+00:00", "2024-07-20T10:00:00-00:00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := parseISOTime([]byte(s))
		if !ok {
			return
		}
		if want, wok := ParseTime(s); !wok || !reflect.DeepEqual(got, want) {
			t.Fatalf("parseISOTime(%q) = %v; ParseTime %v %v", s, got, want, wok)
		}
	})
}
