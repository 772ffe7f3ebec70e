package archive

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"time"
	"unicode/utf16"
	"unicode/utf8"
)

// ArchiveBox writes JSON with Python's json.dumps defaults: ", " and ": "
// separators, every non-ASCII character escaped as \uXXXX (ensure_ascii) and
// no HTML escaping. folio writes the same bytes so that files it rewrites
// look like ArchiveBox wrote them and diff cleanly against ArchiveBox output.

// Member is one key of a JSON object with its value kept as raw bytes.
type Member struct {
	Key   string
	Value json.RawMessage
}

// Object is a JSON object that remembers its key order and keeps every
// value byte for byte, so unknown keys survive a rewrite unchanged.
type Object []Member

// Get returns the raw value of key (the last one if the key repeats).
func (o Object) Get(key string) (json.RawMessage, bool) {
	for i := len(o) - 1; i >= 0; i-- {
		if o[i].Key == key {
			return o[i].Value, true
		}
	}
	return nil, false
}

// String returns the value of key when it is a JSON string.
func (o Object) String(key string) string {
	raw, ok := o.Get(key)
	if !ok {
		return ""
	}
	s, err := unquote(raw)
	if err != nil {
		return ""
	}
	return s
}

// Set replaces the value of key in place, or appends the key, as Python's
// {**existing, **canonical} does.
func (o *Object) Set(key string, value json.RawMessage) {
	for i := range *o {
		if (*o)[i].Key == key {
			(*o)[i].Value = value
			return
		}
	}
	*o = append(*o, Member{key, value})
}

// ParseObject decodes one JSON object (surrounding JSON whitespace
// allowed), keeping key order and raw values; the values are sub-slices of
// data. Anything else is an error in encoding/json's words.
func ParseObject(data []byte) (Object, error) {
	obj := make(Object, 0, 16)
	if scanMembers(data, func(key, val []byte) {
		obj = append(obj, Member{keyString(key), val[:len(val):len(val)]})
	}) {
		return obj, nil
	}
	return nil, invalidJSON(data, "object")
}

// ParseArray splits one JSON array (surrounding JSON whitespace allowed)
// into its raw elements, sub-slices of data, with the scanner ParseObject
// uses.
func ParseArray(data []byte) ([]json.RawMessage, error) {
	var out []json.RawMessage
	if scanElements(data, func(val []byte) { out = append(out, val[:len(val):len(val)]) }) {
		return out, nil
	}
	return nil, invalidJSON(data, "array")
}

// invalidJSON explains why data is not one JSON value of the kind what
// ("object", "array"). It runs only for rejected input, so it can afford
// encoding/json.
func invalidJSON(data []byte, what string) error {
	if json.Valid(data) {
		return errors.New("not a JSON " + what)
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	return errors.New("invalid JSON")
}

// Reading index files is most of the work of a reindex or a migration
// scan, so JSON is read by the byte scanner below rather than by
// encoding/json: scanMembers validates an object exactly as json.Valid
// does (FuzzScanner compares them) and hands out each top-level member as
// raw bytes, without allocating.

// maxDepth is encoding/json's nesting limit.
const maxDepth = 10000

// scanMembers reports whether b is exactly one JSON object (RFC 8259 as
// encoding/json accepts it, surrounding JSON whitespace allowed) and calls
// fn with the raw key (quotes included) and raw value of each top-level
// member, in order. fn may be called before a later syntax error is found.
func scanMembers(b []byte, fn func(key, val []byte)) bool {
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == '}' {
		return skipWS(b, i+1) == len(b)
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return false
		}
		ks := i
		if i = skipString(b, i); i < 0 {
			return false
		}
		key := b[ks:i]
		i = skipWS(b, i)
		if i >= len(b) || b[i] != ':' {
			return false
		}
		i = skipWS(b, i+1)
		vs := i
		if i = skipValue(b, i, 1); i < 0 {
			return false
		}
		fn(key, b[vs:i])
		i = skipWS(b, i)
		if i >= len(b) {
			return false
		}
		switch b[i] {
		case ',':
			i = skipWS(b, i+1)
		case '}':
			return skipWS(b, i+1) == len(b)
		default:
			return false
		}
	}
}

// scanElements is scanMembers for a JSON array: it calls fn with each raw
// element.
func scanElements(b []byte, fn func(val []byte)) bool {
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '[' {
		return false
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == ']' {
		return skipWS(b, i+1) == len(b)
	}
	for {
		vs := i
		if i = skipValue(b, i, 1); i < 0 {
			return false
		}
		fn(b[vs:i])
		i = skipWS(b, i)
		if i >= len(b) {
			return false
		}
		switch b[i] {
		case ',':
			i = skipWS(b, i+1)
		case ']':
			return skipWS(b, i+1) == len(b)
		default:
			return false
		}
	}
}

func skipWS(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// skipValue returns the index after the JSON value starting at b[i], or -1.
func skipValue(b []byte, i, depth int) int {
	if i >= len(b) {
		return -1
	}
	switch c := b[i]; {
	case c == '"':
		return skipString(b, i)
	case c == '{':
		if depth >= maxDepth {
			return -1
		}
		i = skipWS(b, i+1)
		if i < len(b) && b[i] == '}' {
			return i + 1
		}
		for {
			if i >= len(b) || b[i] != '"' {
				return -1
			}
			if i = skipString(b, i); i < 0 {
				return -1
			}
			i = skipWS(b, i)
			if i >= len(b) || b[i] != ':' {
				return -1
			}
			if i = skipValue(b, skipWS(b, i+1), depth+1); i < 0 {
				return -1
			}
			i = skipWS(b, i)
			if i >= len(b) {
				return -1
			}
			switch b[i] {
			case ',':
				i = skipWS(b, i+1)
			case '}':
				return i + 1
			default:
				return -1
			}
		}
	case c == '[':
		if depth >= maxDepth {
			return -1
		}
		i = skipWS(b, i+1)
		if i < len(b) && b[i] == ']' {
			return i + 1
		}
		for {
			if i = skipValue(b, i, depth+1); i < 0 {
				return -1
			}
			i = skipWS(b, i)
			if i >= len(b) {
				return -1
			}
			switch b[i] {
			case ',':
				i = skipWS(b, i+1)
			case ']':
				return i + 1
			default:
				return -1
			}
		}
	case c == 't':
		return literal(b, i, "true")
	case c == 'f':
		return literal(b, i, "false")
	case c == 'n':
		return literal(b, i, "null")
	case c == '-' || c >= '0' && c <= '9':
		return skipNumber(b, i)
	}
	return -1
}

func literal(b []byte, i int, lit string) int {
	if len(b)-i >= len(lit) && string(b[i:i+len(lit)]) == lit {
		return i + len(lit)
	}
	return -1
}

// plain marks the bytes a JSON string may hold without a closer look:
// everything but '"', '\\' and control characters.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// skipString returns the index after the string starting at b[i] == '"',
// or -1.
func skipString(b []byte, i int) int {
	i++
	for {
		for i < len(b) && plain[b[i]] {
			i++
		}
		if i >= len(b) {
			return -1
		}
		switch b[i] {
		case '"':
			return i + 1
		case '\\':
			if i+1 >= len(b) {
				return -1
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if hex4(b, i+2) < 0 {
					return -1
				}
				i += 6
			default:
				return -1
			}
		default: // a control character
			return -1
		}
	}
}

// hex4 decodes the four hex digits at b[i:], or returns -1.
func hex4(b []byte, i int) rune {
	if i < 0 || i+4 > len(b) {
		return -1
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return -1
		}
		r = r<<4 | rune(c)
	}
	return r
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// skipNumber follows JSON's number grammar:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func skipNumber(b []byte, i int) int {
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	default:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || !isDigit(b[i]) {
			return -1
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || !isDigit(b[i]) {
			return -1
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	return i
}

// isNumber reports whether s is exactly one JSON number.
func isNumber(s string) bool {
	return s != "" && skipNumber([]byte(s), 0) == len(s)
}

// keyString is the text of a raw key. The keys ArchiveBox writes are
// shared strings, so reading a record allocates nothing for them.
func keyString(raw []byte) string {
	if k, ok := known[string(raw[1:len(raw)-1])]; ok {
		return k
	}
	s, _ := unquote(raw)
	return s
}

// shortString is stringValue for the values that repeat across records
// (record types, statuses, plugin names, mime types): they come from the
// same table of shared strings as the keys.
func shortString(raw []byte) string {
	if len(raw) >= 2 && len(raw) <= 40 && raw[0] == '"' {
		if s, ok := known[string(raw[1:len(raw)-1])]; ok {
			return s
		}
	}
	return stringValue(raw)
}

// known holds the keys and the short values ArchiveBox writes over and
// over.
var known = func() map[string]string {
	m := map[string]string{}
	for _, k := range []string{
		"type", "schema_version", "id", "crawl_id", "url", "title", "tags", "bookmarked_at",
		"created_at", "timestamp", "depth", "status", "fs_version", "archive_size", "output_size",
		"notes", "snapshot_id", "plugin", "extractor", "hook_name", "output_str", "output",
		"start_ts", "end_ts", "output_files", "output_mimetypes", "cmd", "cmd_version",
		"process_id", "pwd", "output_json", "extension", "mimetype", "size", "path",
		"schema", "history", "archive_results", "TYPE", "base_url", "domain", "updated",
		"sources", "is_archived", "num_outputs", "latest", "hash", "basename",
		"bookmarked_date", "updated_date", "oldest_archive_date", "newest_archive_date",
		"canonical", "archive_path", "link_dir", "icons", "num_failures",
		// values
		"", TypeSnapshot, TypeArchiveResult, SchemaVersion, "0.9.0", "0.8.0", "0.7.0",
		"Link", "ArchiveResult", "queued", "started", "sealed", "paused", "succeeded", "failed",
		"skipped", "backoff", "noresults", "succeded", "headers", "wget", "favicon", "singlefile",
		"screenshot", "pdf", "dom", "readability", "mercury", "htmltotext", "git", "media",
		"archive_org", "archivedotorg", "warc", "html", "txt", "json", "png", "ico", "jpg",
		"text/html", "text/plain", "application/json", "application/pdf", "image/png",
		"image/jpeg", "image/vnd.microsoft.icon", "text/html,text/plain,application/json",
	} {
		m[k] = k
	}
	return m
}()

// unquote decodes a raw JSON string literal as encoding/json does: escapes
// decoded, invalid UTF-8 and unpaired surrogates replaced by U+FFFD.
// FuzzUnquote compares the two.
func unquote(raw []byte) (string, error) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", errNotString
	}
	inner := raw[1 : len(raw)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return string(inner), nil
	}
	start := 0 // the plain ASCII prefix is copied as it is
	for start < len(inner) && inner[start] != '\\' && inner[start] < utf8.RuneSelf {
		start++
	}
	b := make([]byte, start, len(inner)+8)
	copy(b, inner)
	for i := start; i < len(inner); {
		c := inner[i]
		switch {
		case c == '\\':
			if i+1 >= len(inner) {
				return "", errNotString
			}
			switch e := inner[i+1]; e {
			case '"', '\\', '/':
				b = append(b, e)
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				r := hex4(inner, i+2)
				if r < 0 {
					return "", errNotString
				}
				i += 6
				if utf16.IsSurrogate(r) {
					if i+1 < len(inner) && inner[i] == '\\' && inner[i+1] == 'u' {
						if dec := utf16.DecodeRune(r, hex4(inner, i+2)); dec != utf8.RuneError {
							b = utf8.AppendRune(b, dec)
							i += 6
							continue
						}
					}
					r = utf8.RuneError
				}
				b = utf8.AppendRune(b, r)
				continue
			default:
				return "", errNotString
			}
			i += 2
		case c == '"' || c < 0x20:
			return "", errNotString
		case c < utf8.RuneSelf:
			b = append(b, c)
			i++
		default:
			r, size := utf8.DecodeRune(inner[i:])
			b = utf8.AppendRune(b, r)
			i += size
		}
	}
	return string(b), nil
}

var errNotString = errors.New("not a JSON string")

// stringValue is the value of raw when it is a JSON string, else "".
func stringValue(raw []byte) string {
	if len(raw) == 0 || raw[0] != '"' {
		return ""
	}
	s, err := unquote(raw)
	if err != nil {
		return ""
	}
	return s
}

// AppendPy appends the Python-style encoding of obj.
func (o Object) AppendPy(b []byte) []byte {
	b = append(b, '{')
	for i, m := range o {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = AppendPyString(b, m.Key)
		b = append(b, ": "...)
		b = append(b, m.Value...)
	}
	return append(b, '}')
}

// py encodes a Go value the way Python's json.dumps would. It supports the
// shapes folio writes: nil, bool, strings, integers, string slices, time
// (ISO 8601 or null), Object and ordered maps given as Object.
func py(v any) json.RawMessage {
	return appendPy(nil, v)
}

func appendPy(b []byte, v any) []byte {
	switch v := v.(type) {
	case nil:
		return append(b, "null"...)
	case bool:
		return strconv.AppendBool(b, v)
	case string:
		return AppendPyString(b, v)
	case int:
		return strconv.AppendInt(b, int64(v), 10)
	case int64:
		return strconv.AppendInt(b, v, 10)
	case []string:
		b = append(b, '[')
		for i, s := range v {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = AppendPyString(b, s)
		}
		return append(b, ']')
	case time.Time:
		if v.IsZero() {
			return append(b, "null"...)
		}
		return AppendPyString(b, IsoTime(v))
	case Object:
		return v.AppendPy(b)
	case json.RawMessage:
		if len(v) == 0 {
			return append(b, "null"...)
		}
		return append(b, v...)
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = AppendPyString(b, k)
			b = append(b, ": "...)
			b = appendPy(b, v[k])
		}
		return append(b, '}')
	case []any:
		b = append(b, '[')
		for i, e := range v {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = appendPy(b, e)
		}
		return append(b, ']')
	}
	panic(fmt.Sprintf("archive: no Python JSON encoding for %T", v))
}

const hexDigits = "0123456789abcdef"

// AppendPyString appends s as a JSON string the way Python's json.dumps
// writes it with ensure_ascii: everything outside printable ASCII becomes
// \uXXXX (surrogate pairs above U+FFFF); "<", ">" and "&" stay as they are.
func AppendPyString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x7f && c != '"' && c != '\\' {
			b = append(b, c)
			i++
			continue
		}
		if c < utf8.RuneSelf {
			switch c {
			case '"':
				b = append(b, `\"`...)
			case '\\':
				b = append(b, `\\`...)
			case '\n':
				b = append(b, `\n`...)
			case '\r':
				b = append(b, `\r`...)
			case '\t':
				b = append(b, `\t`...)
			case '\b':
				b = append(b, `\b`...)
			case '\f':
				b = append(b, `\f`...)
			default:
				b = appendU(b, rune(c))
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if r > 0xffff {
			r -= 0x10000
			b = appendU(b, 0xd800+(r>>10))
			b = appendU(b, 0xdc00+(r&0x3ff))
			continue
		}
		b = appendU(b, r) // invalid UTF-8 decodes to U+FFFD
	}
	return append(b, '"')
}

func appendU(b []byte, r rune) []byte {
	return append(b, '\\', 'u', hexDigits[r>>12&0xf], hexDigits[r>>8&0xf], hexDigits[r>>4&0xf], hexDigits[r&0xf])
}

// IsoTime formats t as Python's datetime.isoformat() does for an aware UTC
// datetime: microseconds only when non-zero, offset as +00:00.
func IsoTime(t time.Time) string {
	t = t.UTC()
	if t.Nanosecond()/1000 != 0 {
		return t.Format("2006-01-02T15:04:05.000000") + "+00:00"
	}
	return t.Format("2006-01-02T15:04:05") + "+00:00"
}

// ParseTime accepts what ArchiveBox ever wrote for a datetime: ISO 8601
// with "T" or a space, with or without fractions, with "Z", an offset or
// naive (read as UTC), and unix seconds as a string or number.
func ParseTime(s string) (time.Time, bool) {
	if s == "" || s == "null" || s == "None" {
		return time.Time{}, false
	}
	for _, layout := range timeLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), true
		}
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil && f > 0 && f < 1e11 {
		sec := int64(f)
		return time.Unix(sec, int64((f-float64(sec))*1e6)*1000).UTC(), true
	}
	return time.Time{}, false
}

var timeLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04Z07:00",
	"2006-01-02T15:04",
	"2006-01-02",
}
