package layout

// ParseID accepts a snapshot or crawl id as 32 hex digits or as a 36-char
// dashed 8-4-4-4-12 UUID, in any case, and returns the compact lowercase
// 32-hex form that names folders in the current layout.
func ParseID(s string) (compact string, ok bool) {
	switch {
	case len(s) == 32:
		b := make([]byte, 32)
		for i := 0; i < 32; i++ {
			c, ok := lowerHex(s[i])
			if !ok {
				return "", false
			}
			b[i] = c
		}
		return string(b), true
	case IsDashedID(s):
		b := make([]byte, 0, 32)
		for i := 0; i < len(s); i++ {
			if s[i] != '-' {
				c, _ := lowerHex(s[i])
				b = append(b, c)
			}
		}
		return string(b), true
	}
	return "", false
}

// Undash returns the compact form of a dashed id (see IsDashedID); ok is
// false for anything else, a compact id included.
func Undash(s string) (compact string, ok bool) {
	if !IsDashedID(s) {
		return "", false
	}
	return ParseID(s)
}

// IsCompactID reports whether s is exactly 32 lowercase hex digits.
func IsCompactID(s string) bool {
	if len(s) != 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// IsDashedID reports whether s is a 36-char 8-4-4-4-12 UUID with hex digits
// in any case.
func IsDashedID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if s[i] != '-' {
				return false
			}
			continue
		}
		if _, ok := lowerHex(s[i]); !ok {
			return false
		}
	}
	return true
}

// Dashed returns the lowercase 8-4-4-4-12 form of an id (the folder name
// collections created before fs version 0.9.4 use). It accepts anything
// ParseID accepts and returns "" otherwise.
func Dashed(compact string) string {
	c, ok := ParseID(compact)
	if !ok {
		return ""
	}
	return c[0:8] + "-" + c[8:12] + "-" + c[12:16] + "-" + c[16:20] + "-" + c[20:32]
}

func lowerHex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9', 'a' <= c && c <= 'f':
		return c, true
	case 'A' <= c && c <= 'F':
		return c + ('a' - 'A'), true
	}
	return 0, false
}
