package archive

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/folio-archive/folio/layout"
)

// IndexFile is the per-snapshot index file name.
const IndexFile = "index.jsonl"

// LegacyIndexFile is the index.json ArchiveBox wrote before 0.9; folio reads
// it and never modifies or deletes it.
const LegacyIndexFile = "index.json"

// Index is a parsed index.jsonl. It keeps every line it read, so a rewrite
// reproduces foreign records, unknown keys, comments and unparseable lines
// byte for byte; only the lines folio changes are re-encoded.
type Index struct {
	lines    []line
	finalEOL bool
}

type line struct {
	raw  []byte // the line as read, without its "\n"; nil once changed
	obj  Object // the record as an Object; for JSON lines read, built on first use
	kind string // record type after ArchiveBox's normalisation
}

// object returns the record of a line, decoding a JSON line on first use.
func (l *line) object() Object {
	if l.obj == nil && l.kind != "" {
		l.obj, _ = ParseObject(bytes.TrimSpace(l.raw))
	}
	return l.obj
}

// record fills r with the record's values.
func (l *line) record(r *rawRecord) {
	if l.obj != nil {
		r.fromObject(l.obj)
	} else {
		r.scan(bytes.TrimSpace(l.raw))
	}
}

// LineError describes one line of index.jsonl that is not a record.
type LineError struct {
	Line   int
	Reason string
}

func (e LineError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Reason) }

// LineInfo is what ArchiveBox's loader makes of one index.jsonl line.
type LineInfo struct {
	Kind    string // the record type; "" when the line is not a record
	Status  string // the "status" string of a JSON record
	Problem string // why a line that is neither blank nor a comment is not a record
	// Plugin and Hook name an ArchiveResult's capture method: its
	// "plugin" (else the legacy "extractor") and "hook_name".
	Plugin, Hook string
}

// ClassifyLine reads one line of index.jsonl (without its "\n") by the
// rules of ParseIndex, decoding no more of it than its type, status and,
// for an ArchiveResult, plugin and hook.
func ClassifyLine(line []byte) LineInfo {
	info, _ := classify(bytes.TrimSpace(line))
	return info
}

// ParseIndex reads index.jsonl content with ArchiveBox's line rules:
// blank lines and "#" comments are skipped, JSON objects are records (one
// with a url and no type is a Snapshot), bare http(s)/file URLs and bare ids
// are Snapshot records, and everything else is dropped. Dropped lines that
// look like broken records are returned as problems; all lines are kept
// for rewriting. Records are checked here and decoded when asked for.
func ParseIndex(data []byte) (*Index, []LineError) {
	ix := &Index{finalEOL: len(data) == 0 || data[len(data)-1] == '\n'}
	var problems []LineError
	if len(data) == 0 {
		return ix, nil
	}
	body := data
	if ix.finalEOL {
		body = data[:len(data)-1]
	}
	ix.lines = make([]line, 0, bytes.Count(body, []byte{'\n'})+1)
	for n := 1; ; n++ {
		raw, rest, more := body, []byte(nil), false
		if i := bytes.IndexByte(body, '\n'); i >= 0 {
			raw, rest, more = body[:i:i], body[i+1:], true
		}
		info, bare := classify(bytes.TrimSpace(raw))
		if info.Problem != "" {
			problems = append(problems, LineError{Line: n, Reason: info.Problem})
		}
		ix.lines = append(ix.lines, line{raw: raw, obj: bare, kind: info.Kind})
		if !more {
			return ix, problems
		}
		body = rest
	}
}

// classify reads one trimmed line. bare is the record of a bare URL or id
// line; JSON lines are only checked and typed here.
func classify(t []byte) (info LineInfo, bare Object) {
	switch {
	case len(t) == 0 || t[0] == '#':
		return LineInfo{}, nil
	case t[0] == '{':
		var r rawRecord
		if !r.scan(t) {
			return LineInfo{Problem: "invalid JSON: " + invalidJSON(t, "object").Error()}, nil
		}
		if info.Kind = r.kind(); info.Kind == "" {
			return LineInfo{Problem: "record has no type"}, nil
		}
		if r.status != nil {
			info.Status = shortString(r.status)
		}
		if info.Kind == TypeArchiveResult {
			if info.Plugin = shortString(r.plugin); info.Plugin == "" {
				info.Plugin = shortString(r.extractor)
			}
			info.Hook = shortString(r.hookName)
		}
		return info, nil
	case bytes.HasPrefix(t, []byte("http://")), bytes.HasPrefix(t, []byte("https://")), bytes.HasPrefix(t, []byte("file://")):
		return LineInfo{Kind: TypeSnapshot}, Object{{"type", py(TypeSnapshot)}, {"url", py(string(t))}}
	case isBareID(t):
		return LineInfo{Kind: TypeSnapshot}, Object{{"type", py(TypeSnapshot)}, {"id", py(string(t))}}
	case !isText(t):
		return LineInfo{Problem: "binary data"}, nil
	}
	return LineInfo{Problem: "not a JSON record, URL or id"}, nil
}

// isBareID matches a snapshot id alone on a line: 32 hex digits, or a
// dashed UUID.
func isBareID(t []byte) bool {
	dashed := len(t) == 36
	if !dashed && len(t) != 32 {
		return false
	}
	for i, c := range t {
		if dashed && (i == 8 || i == 13 || i == 18 || i == 23) {
			if c != '-' {
				return false
			}
			continue
		}
		if !(isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

func isText(b []byte) bool {
	for _, c := range b {
		if c < 0x20 && c != '\t' && c != '\r' {
			return false
		}
	}
	return true
}

// DecodeSnapshotLine decodes one index.jsonl line as Index.Snapshot
// decodes it, and reports false when the line is not a Snapshot record.
func DecodeSnapshotLine(line []byte) (Snapshot, bool) {
	var r rawRecord
	t := bytes.TrimSpace(line)
	if len(t) > 0 && t[0] == '{' {
		if !r.scan(t) || r.kind() != TypeSnapshot {
			return Snapshot{}, false
		}
		return decodeSnapshot(&r), true
	}
	info, bare := classify(t)
	if info.Kind != TypeSnapshot {
		return Snapshot{}, false
	}
	r.fromObject(bare)
	return decodeSnapshot(&r), true
}

// DecodeResultOutputs decodes of one index.jsonl line what
// decodeOutputs does, as Index.Results decodes those fields, and reports
// false when the line is not an ArchiveResult record. It is for readers
// of what results made (an export renders thousands of snapshots a
// second), which the process fields and times would cost a third more.
func DecodeResultOutputs(line []byte) (Result, bool) {
	var r rawRecord
	if !r.scan(bytes.TrimSpace(line)) || r.kind() != TypeArchiveResult {
		return Result{}, false
	}
	return decodeOutputs(&r), true
}

// Snapshot returns the first Snapshot record, which is the snapshot's
// identity in ArchiveBox's loaders.
func (ix *Index) Snapshot() (Snapshot, bool) {
	if i := ix.snapshotLine(); i >= 0 {
		var r rawRecord
		ix.lines[i].record(&r)
		return decodeSnapshot(&r), true
	}
	return Snapshot{}, false
}

func (ix *Index) snapshotLine() int {
	for i, l := range ix.lines {
		if l.kind == TypeSnapshot {
			return i
		}
	}
	return -1
}

// Results returns the ArchiveResult records in file order.
func (ix *Index) Results() []Result {
	n := 0
	for _, l := range ix.lines {
		if l.kind == TypeArchiveResult {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	out := make([]Result, 0, n)
	var r rawRecord
	for i := range ix.lines {
		if ix.lines[i].kind == TypeArchiveResult {
			ix.lines[i].record(&r)
			out = append(out, decodeResult(&r))
		}
	}
	return out
}

// Records returns the number of records (lines of any known or unknown
// type) in the file.
func (ix *Index) Records() int {
	n := 0
	for _, l := range ix.lines {
		if l.kind != "" {
			n++
		}
	}
	return n
}

// SetSnapshot writes s into the first Snapshot record and moves that record
// to the first line. Keys folio does not know keep their place and bytes; a
// canonical key whose value is unchanged keeps its original bytes too, so
// setting the snapshot a file already holds changes nothing.
func (ix *Index) SetSnapshot(s Snapshot) {
	i := ix.snapshotLine()
	if i < 0 {
		ix.lines = append([]line{{obj: s.fields(), kind: TypeSnapshot}}, ix.lines...)
		return
	}
	l := ix.lines[i]
	if merged, changed := merge(l.object(), s.fields(), sameSnapshotValue); changed {
		l = line{obj: merged, kind: TypeSnapshot}
	}
	copy(ix.lines[1:i+1], ix.lines[:i])
	ix.lines[0] = l
}

// AddResult appends r, or replaces the ArchiveResult record with the same
// id when r has one.
func (ix *Index) AddResult(r Result) {
	for i := range ix.lines {
		l := &ix.lines[i]
		if r.ID != "" && l.kind == TypeArchiveResult && l.object().String("id") == r.ID {
			if merged, changed := merge(l.obj, r.fields(), sameRaw); changed {
				ix.lines[i] = line{obj: merged, kind: TypeArchiveResult}
			}
			return
		}
	}
	ix.lines = append(ix.lines, line{obj: r.fields(), kind: TypeArchiveResult})
}

// CompactResultIDs rewrites the ids of ArchiveResult records from the
// dashed form ArchiveBox's 0.9 development versions wrote (36 characters)
// to the compact 32-hex form of 0.9.4, which stores, writes and matches
// ids as strings in that form: the record's id always, its snapshot_id
// when it names snapshot (given compact). Only those two values change;
// every other key keeps its place and bytes, schema_version included (it
// says which version wrote the record). It returns how many records
// changed.
func (ix *Index) CompactResultIDs(snapshot string) int {
	n := 0
	for i := range ix.lines {
		l := &ix.lines[i]
		if l.kind != TypeArchiveResult {
			continue
		}
		obj := append(Object(nil), l.object()...)
		changed := false
		for _, key := range []string{"id", "snapshot_id"} {
			raw, ok := obj.Get(key)
			if !ok {
				continue
			}
			v := stringValue(raw)
			id, ok := layout.Undash(v)
			if !ok || key == "snapshot_id" && id != snapshot {
				continue
			}
			obj.Set(key, json.RawMessage(`"`+id+`"`))
			changed = true
		}
		if changed {
			*l = line{obj: obj, kind: TypeArchiveResult}
			n++
		}
	}
	return n
}

// Append adds a line that folio keeps verbatim (a record of another type or
// a line carried over from another file).
func (ix *Index) Append(raw []byte) {
	info, bare := classify(bytes.TrimSpace(raw))
	ix.lines = append(ix.lines, line{raw: append([]byte(nil), raw...), obj: bare, kind: info.Kind})
}

// Foreign returns the lines that are neither Snapshot nor ArchiveResult
// records (other record types, comments, unparseable lines), verbatim.
func (ix *Index) Foreign() [][]byte {
	var out [][]byte
	for _, l := range ix.lines {
		if l.kind != TypeSnapshot && l.kind != TypeArchiveResult && l.raw != nil && len(bytes.TrimSpace(l.raw)) > 0 {
			out = append(out, l.raw)
		}
	}
	return out
}

// merge sets canonical values over existing keys ({**existing, **canonical})
// and reports whether anything changed.
func merge(existing, canonical Object, same func(key string, a, b json.RawMessage) bool) (Object, bool) {
	out := append(Object(nil), existing...)
	changed := false
	for _, m := range canonical {
		if old, ok := out.Get(m.Key); ok && same(m.Key, old, m.Value) {
			continue
		}
		out.Set(m.Key, m.Value)
		changed = true
	}
	return out, changed
}

func sameRaw(_ string, a, b json.RawMessage) bool {
	return bytes.Equal(a, b) || jsonEqual(a, b)
}

// sameSnapshotValue treats values that decode to the same Snapshot field as
// equal: "" and null titles, tag lists in any order, any spelling of the
// same instant. Ids are compared byte for byte so a rewrite always leaves
// them in the compact form ArchiveBox 0.9.4 uses.
func sameSnapshotValue(key string, a, b json.RawMessage) bool {
	if sameRaw(key, a, b) {
		return true
	}
	switch key {
	case "title", "status", "fs_version", "url", "notes", "schema_version":
		return stringValue(a) == stringValue(b)
	case "timestamp":
		return scalarString(a) == scalarString(b)
	case "bookmarked_at", "created_at":
		return decodeTime(a).Equal(decodeTime(b))
	case "tags":
		return TagString(decodeTags(a)) == TagString(decodeTags(b))
	case "depth", "archive_size", "output_size":
		return decodeInt(a) == decodeInt(b)
	}
	return false
}

func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return bytes.Equal(xb, yb)
}

// Bytes returns the file content: unchanged lines as read, changed and new
// records in ArchiveBox's JSON style.
func (ix *Index) Bytes() []byte {
	var b []byte
	for i, l := range ix.lines {
		if l.raw != nil {
			b = append(b, l.raw...)
		} else {
			b = l.obj.AppendPy(b)
		}
		if i < len(ix.lines)-1 || ix.finalEOL || l.raw == nil {
			b = append(b, '\n')
		}
	}
	return b
}

// ReadIndex reads dir/index.jsonl. A missing file is reported with an error
// satisfying errors.Is(err, fs.ErrNotExist).
func ReadIndex(dir string) (*Index, []LineError, error) {
	data, err := ReadIndexFile(filepath.Join(dir, IndexFile))
	if err != nil {
		return nil, nil, err
	}
	ix, problems := ParseIndex(data)
	return ix, problems, nil
}

// WriteIndex writes ix to dir/index.jsonl atomically.
func WriteIndex(dir string, ix *Index) error {
	return WriteFile(filepath.Join(dir, IndexFile), ix.Bytes(), 0o644)
}
