package archive

import (
	"encoding/json"
	"errors"
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
