package catalog

import (
	"bytes"
	"encoding/json"
)

// Reading index.jsonl is most of the work of a reindex, and most of each
// file is ArchiveResult records that the catalog stores verbatim. So the
// catalog does not decode them: scanObject validates a line as strictly as
// encoding/json does and picks out the few top-level keys the catalog
// needs. Lines it does not accept go through archive.ParseIndex, which
// decides what they are and why they are bad; FuzzScanObject checks that
// both agree on every line.

// maxDepth is encoding/json's nesting limit.
const maxDepth = 10000

// lineKeys are the raw values of the top-level keys the catalog looks at.
type lineKeys struct {
	typ     []byte // raw JSON value of "type", nil when absent
	status  []byte // raw JSON value of "status"
	hasURL  bool
	hasType bool
}

// kind returns the record type as archive.ParseIndex classifies a valid
// object: the "type" string, else Snapshot for an object with a url and
// no type key, else "".
func (k *lineKeys) kind() string {
	if k.hasType {
		return jsonString(k.typ)
	}
	if k.hasURL {
		return "Snapshot"
	}
	return ""
}

// jsonString decodes a raw JSON string value; anything else is "".
func jsonString(raw []byte) string {
	if len(raw) < 2 || raw[0] != '"' {
		return ""
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : len(raw)-1])
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// scanObject reports whether b is exactly one JSON object (RFC 8259, as
// encoding/json accepts it, surrounding JSON whitespace allowed) and
// records the keys of interest. Repeated keys: the last one wins, as in
// archive.Object.
func scanObject(b []byte, k *lineKeys) bool {
	*k = lineKeys{}
	return scanMembers(b, func(key, val []byte) {
		switch string(keyText(key)) {
		case "type":
			k.typ, k.hasType = val, true
		case "url":
			k.hasURL = true
		case "status":
			k.status = val
		}
	})
}

// scanMembers reports whether b is exactly one JSON object and calls fn
// with the raw key (quotes included) and raw value of each top-level
// member, in order.
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
		i = skipString(b, i)
		if i < 0 {
			return false
		}
		key := b[ks:i]
		i = skipWS(b, i)
		if i >= len(b) || b[i] != ':' {
			return false
		}
		i = skipWS(b, i+1)
		vs := i
		i = skipValue(b, i, 1)
		if i < 0 {
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

// keyText returns a raw key's text: the bytes between the quotes, or the
// decoded text of a key spelled with escapes.
func keyText(raw []byte) []byte {
	if bytes.IndexByte(raw, '\\') >= 0 {
		return []byte(jsonString(raw))
	}
	if len(raw) < 2 {
		return nil
	}
	return raw[1 : len(raw)-1]
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

// skipString returns the index after the string starting at b[i] == '"'.
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
				if i+6 > len(b) {
					return -1
				}
				for _, h := range b[i+2 : i+6] {
					if !isHexDigit(h) {
						return -1
					}
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

func isHexDigit(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
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
