package archive

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"time"
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

// parseObject decodes one JSON object keeping key order and raw values.
// The values are sub-slices of data. It validates once with json.Valid and
// then splits members with a byte scanner: reindexing a large collection
// parses every index.jsonl, so this is on the hot path.
func parseObject(data []byte) (Object, error) {
	if !json.Valid(data) {
		var v any
		err := json.Unmarshal(data, &v)
		if err == nil {
			err = fmt.Errorf("invalid JSON")
		}
		return nil, err
	}
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return nil, fmt.Errorf("not a JSON object")
	}
	obj := make(Object, 0, 16)
	i = skipSpace(data, i+1)
	if data[i] == '}' {
		return obj, nil
	}
	for {
		end := stringEnd(data, i)
		key, err := unquote(data[i:end])
		if err != nil {
			return nil, err
		}
		i = skipSpace(data, end)
		i = skipSpace(data, i+1) // the ':'
		vend := valueEnd(data, i)
		obj = append(obj, Member{key, data[i:vend:vend]})
		i = skipSpace(data, vend)
		if data[i] == '}' {
			return obj, nil
		}
		i = skipSpace(data, i+1) // the ','
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// stringEnd returns the index after the closing quote of the string that
// starts at b[i] (valid JSON assumed).
func stringEnd(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(b)
}

// valueEnd returns the index after the JSON value that starts at b[i]
// (valid JSON assumed).
func valueEnd(b []byte, i int) int {
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				i = stringEnd(b, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return len(b)
	}
	for ; i < len(b); i++ {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
	}
	return i
}

// unquote decodes a JSON string literal, without reflection for the common
// case of a plain string.
func unquote(raw []byte) (string, error) {
	if len(raw) >= 2 && raw[0] == '"' && raw[len(raw)-1] == '"' {
		inner := raw[1 : len(raw)-1]
		if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
			return string(inner), nil
		}
	}
	var s string
	err := json.Unmarshal(raw, &s)
	return s, err
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
