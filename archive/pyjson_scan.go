package archive

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
