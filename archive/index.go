package archive

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
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
	obj  Object // the decoded record; nil for lines that are not records
	kind string // record type after ArchiveBox's normalisation
}

// LineError describes one line of index.jsonl that is not a record.
type LineError struct {
	Line   int
	Reason string
}

func (e LineError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Reason) }

var (
	dashedIDLine  = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
	compactIDLine = regexp.MustCompile(`^[0-9a-fA-F]{32}$`)
)

// ParseIndex reads index.jsonl content with ArchiveBox's line rules:
// blank lines and "#" comments are skipped, JSON objects are records (one
// with a url and no type is a Snapshot), bare http(s)/file URLs and bare ids
// are Snapshot records, and everything else is dropped. Dropped lines that
// look like broken records are returned as problems; all lines are kept
// for rewriting.
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
	for n, raw := range bytes.Split(body, []byte("\n")) {
		l := line{raw: raw}
		l.obj, l.kind = classify(bytes.TrimSpace(raw))
		if l.kind == "" {
			if reason := lineProblem(bytes.TrimSpace(raw)); reason != "" {
				problems = append(problems, LineError{Line: n + 1, Reason: reason})
			}
		}
		ix.lines = append(ix.lines, l)
	}
	return ix, problems
}

func classify(t []byte) (Object, string) {
	switch {
	case len(t) == 0 || t[0] == '#':
		return nil, ""
	case t[0] == '{':
		obj, err := parseObject(t)
		if err != nil {
			return nil, ""
		}
		kind := obj.String("type")
		if _, hasURL := obj.Get("url"); kind == "" && hasURL {
			if _, hasType := obj.Get("type"); !hasType {
				kind = TypeSnapshot
			}
		}
		return obj, kind
	case bytes.HasPrefix(t, []byte("http://")), bytes.HasPrefix(t, []byte("https://")), bytes.HasPrefix(t, []byte("file://")):
		return Object{{"type", py(TypeSnapshot)}, {"url", py(string(t))}}, TypeSnapshot
	case dashedIDLine.Match(t), compactIDLine.Match(t):
		return Object{{"type", py(TypeSnapshot)}, {"id", py(string(t))}}, TypeSnapshot
	}
	return nil, ""
}

func lineProblem(t []byte) string {
	switch {
	case len(t) == 0 || t[0] == '#':
		return ""
	case t[0] == '{':
		if _, err := parseObject(t); err != nil {
			return "invalid JSON: " + err.Error()
		}
		return "record has no type"
	case !isText(t):
		return "binary data"
	}
	return "not a JSON record, URL or id"
}

func isText(b []byte) bool {
	for _, c := range b {
		if c < 0x20 && c != '\t' && c != '\r' {
			return false
		}
	}
	return true
}

// Snapshot returns the first Snapshot record, which is the snapshot's
// identity in ArchiveBox's loaders.
func (ix *Index) Snapshot() (Snapshot, bool) {
	if i := ix.snapshotLine(); i >= 0 {
		return decodeSnapshot(ix.lines[i].obj), true
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
	var out []Result
	for _, l := range ix.lines {
		if l.kind == TypeArchiveResult {
			out = append(out, decodeResult(l.obj))
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
	if merged, changed := merge(l.obj, s.fields(), sameSnapshotValue); changed {
		l = line{obj: merged, kind: TypeSnapshot}
	}
	copy(ix.lines[1:i+1], ix.lines[:i])
	ix.lines[0] = l
}

// AddResult appends r, or replaces the ArchiveResult record with the same
// id when r has one.
func (ix *Index) AddResult(r Result) {
	for i, l := range ix.lines {
		if r.ID != "" && l.kind == TypeArchiveResult && l.obj.String("id") == r.ID {
			if merged, changed := merge(l.obj, r.fields(), sameRaw); changed {
				ix.lines[i] = line{obj: merged, kind: TypeArchiveResult}
			}
			return
		}
	}
	ix.lines = append(ix.lines, line{obj: r.fields(), kind: TypeArchiveResult})
}

// Append adds a line that folio keeps verbatim (a record of another type or
// a line carried over from another file).
func (ix *Index) Append(raw []byte) {
	obj, kind := classify(bytes.TrimSpace(raw))
	ix.lines = append(ix.lines, line{raw: append([]byte(nil), raw...), obj: obj, kind: kind})
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
	x, y := Object{{key, a}}, Object{{key, b}}
	switch key {
	case "title", "status", "fs_version", "url", "notes", "schema_version":
		return x.String(key) == y.String(key)
	case "timestamp":
		return scalarString(x, key) == scalarString(y, key)
	case "bookmarked_at", "created_at":
		return decodeTime(x, key).Equal(decodeTime(y, key))
	case "tags":
		return TagString(decodeTags(x)) == TagString(decodeTags(y))
	case "depth", "archive_size", "output_size":
		return decodeInt(x, key) == decodeInt(y, key)
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
	data, err := os.ReadFile(filepath.Join(dir, IndexFile))
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
