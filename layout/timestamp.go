package layout

import (
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Legacy timestamp bounds: 1995-01-01T00:00:00Z and 2036-01-01T00:00:00Z,
// both inclusive, compared after truncation toward zero.
const (
	MinLegacyTimestamp = 788918400
	MaxLegacyTimestamp = 2082758400
)

// reserved are names directly under archive/ that are never snapshots.
var reserved = map[string]bool{
	"users": true, "snapshots": true, "crawls": true, "invalid": true, ".DS_Store": true,
}

// Reserved reports whether name is a reserved entry of the archive/ folder.
func Reserved(name string) bool { return reserved[name] }

// PyFloat parses s the way Python's float(str) does, so that folio accepts
// exactly the timestamps ArchiveBox accepts:
//
//   - Every non-ASCII character Python's str.isspace accepts (U+0085,
//     U+00A0, U+1680, U+2000-U+200A, U+2028, U+2029, U+202F, U+205F, U+3000)
//     is first turned into a space, and every Unicode decimal digit (category
//     Nd, e.g. Arabic-Indic "١٥٠٨٢٥٩٧٣٢" or fullwidth digits) into its ASCII
//     digit; any other non-ASCII character is an error. ASCII is kept as is.
//   - Surrounding " \t\n\v\f\r" are then stripped; inner whitespace is an
//     error. This is NOT str.strip's set: \x1c-\x1f are whitespace to
//     str.strip but make float() fail.
//   - Underscores are allowed only between two digits: "1_508_259_732" is
//     1508259732, and so is "1508259732_1" a valid float (15082597321) —
//     it fails as a legacy folder only because it is out of range.
//     "_1", "1_", "1__2", "1_.5", "1._5", "1_e5", "123_abc" are errors.
//   - The grammar is [+-] (digits [. [digits]] | . digits) [(e|E) [+-] digits]:
//     "1.", ".5", "1.5e9", "+1E+3" are valid; "0x10", "1e", ".", "" are not.
//   - Python accepts "inf", "infinity" and "nan" (any case, signed) and turns
//     overflowing literals such as "1e400" into ±inf. folio reports ok=false
//     for all of them: no timestamp consumer accepts a non-finite value
//     (ArchiveBox's int(float(x)) raises on them).
//
// Rounding is correct (nearest, ties to even) in both Python and Go, so the
// float64 values are identical.
func PyFloat(s string) (float64, bool) {
	clean, ok := pyFloatLiteral(s)
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(clean, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, false
	}
	return f, true
}

// pyFloatLiteral validates s as a finite Python float literal and returns it
// as plain ASCII: optional sign, digits, optional '.', optional exponent.
func pyFloatLiteral(s string) (string, bool) {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			b = append(b, c) // ASCII is kept as is, \x1c-\x1f included
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch d := decimalValue(r); {
		case r == utf8.RuneError && size == 1:
			return "", false
		case pySpace(r):
			b = append(b, ' ')
		case d >= 0:
			b = append(b, byte('0'+d))
		default:
			return "", false
		}
	}
	t := strings.Trim(string(b), " \t\n\v\f\r")
	if strings.IndexByte(t, '_') >= 0 {
		var ok bool
		if t, ok = dropUnderscores(t); !ok {
			return "", false
		}
	}
	if !validDecimal(t) {
		return "", false
	}
	return t, true
}

// dropUnderscores applies CPython's _Py_string_to_number_with_underscores:
// an underscore must follow a digit and precede a digit.
func dropUnderscores(s string) (string, bool) {
	out := make([]byte, 0, len(s))
	var prev byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '_' {
			if !isDigit(prev) {
				return "", false
			}
		} else {
			if prev == '_' && !isDigit(c) {
				return "", false
			}
			out = append(out, c)
		}
		prev = c
	}
	if prev == '_' {
		return "", false
	}
	return string(out), true
}

func validDecimal(s string) bool {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	intDigits := 0
	for i < len(s) && isDigit(s[i]) {
		i++
		intDigits++
	}
	fracDigits := 0
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && isDigit(s[i]) {
			i++
			fracDigits++
		}
	}
	if intDigits+fracDigits == 0 {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		expDigits := 0
		for i < len(s) && isDigit(s[i]) {
			i++
			expDigits++
		}
		if expDigits == 0 {
			return false
		}
	}
	return i == len(s)
}

// pySpace is Python's str.isspace.
func pySpace(r rune) bool {
	switch {
	case r == ' ' || '\t' <= r && r <= '\r' || 0x1c <= r && r <= 0x1f:
		return true
	case r < 0x80:
		return false
	case r == 0x85, r == 0xA0, r == 0x1680, 0x2000 <= r && r <= 0x200A,
		r == 0x2028, r == 0x2029, r == 0x202F, r == 0x205F, r == 0x3000:
		return true
	}
	return false
}

// pyStrip is Python's str.strip() with no arguments.
func pyStrip(s string) string { return strings.TrimFunc(s, pySpace) }

// decimalValue returns the digit value of a Unicode decimal digit (Nd), or
// -1. Nd characters come in runs of ten starting at zero, which the range
// tables preserve.
func decimalValue(r rune) int {
	if !unicode.IsDigit(r) {
		return -1
	}
	for _, rg := range unicode.Nd.R16 {
		if rune(rg.Lo) <= r && r <= rune(rg.Hi) && rg.Stride == 1 {
			return int(r-rune(rg.Lo)) % 10
		}
	}
	for _, rg := range unicode.Nd.R32 {
		if rune(rg.Lo) <= r && r <= rune(rg.Hi) && rg.Stride == 1 {
			return int(r-rune(rg.Lo)) % 10
		}
	}
	return -1
}

// LegacyTimestamp reports whether name is an archive/<timestamp> folder of a
// 0.4-0.8 collection (is_legacy_archive_dir): not Reserved, not starting with
// '.', and int(float(name)), truncated toward zero, within
// [MinLegacyTimestamp, MaxLegacyTimestamp]. It returns the truncated seconds.
func LegacyTimestamp(name string) (sec int64, ok bool) {
	if Reserved(name) || strings.HasPrefix(name, ".") {
		return 0, false
	}
	return timestampSeconds(name)
}

func timestampSeconds(s string) (int64, bool) {
	f, ok := PyFloat(s)
	if !ok {
		return 0, false
	}
	t := math.Trunc(f)
	if t < MinLegacyTimestamp || t > MaxLegacyTimestamp {
		return 0, false
	}
	return int64(t), true
}

// BestTimestamp implements _select_best_timestamp(index_ts, folder): a folder
// name whose int(float()) is in range always wins and is returned stripped
// (Python's str.strip); otherwise a valid index timestamp, stripped;
// otherwise "", false. Unlike LegacyTimestamp it does not check reserved or
// dot names. indexTS must already be Python's str() of the index value
// (a JSON 1508259732.0 is "1508259732.0").
func BestTimestamp(indexTS, folder string) (string, bool) {
	if _, ok := timestampSeconds(folder); ok {
		return pyStrip(folder), true
	}
	if indexTS != "" {
		if _, ok := timestampSeconds(indexTS); ok {
			return pyStrip(indexTS), true
		}
	}
	return "", false
}

// BumpTimestamp returns the n-th candidate _ensure_unique_timestamp tries when
// ts is taken: f"{float(ts) + n/1e6:.6f}" with trailing zeros and then a
// trailing dot stripped ("1508259732", 1 -> "1508259732.000001";
// "1508259732.999999", 1 -> "1508259733").
//
// folio computes the sum in exact decimal arithmetic on the parsed literal
// instead of float64, rounding the sixth decimal half away from zero. For
// timestamps below 2^32 with at most six decimals this equals Python's
// output (the float error stays far below half a microsecond); for larger
// values, such as out-of-range 14-digit seeds, Python's float would lose
// digits and folio deliberately does not. ts is parsed like PyFloat; it
// returns "" when PyFloat rejects ts (where Python raises or yields "inf").
func BumpTimestamp(ts string, n int) string {
	clean, ok := pyFloatLiteral(ts)
	if !ok {
		return ""
	}
	f, err := strconv.ParseFloat(clean, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return ""
	}
	x := new(big.Rat)
	// A value below 1e-7 cannot change a six-decimal result; skipping it
	// also bounds the work for literals like "1e-99999999".
	if math.Abs(f) >= 1e-7 {
		x = decimalRat(clean)
	}
	x.Add(x, big.NewRat(int64(n), 1_000_000))
	out := x.FloatString(6)
	out = strings.TrimRight(out, "0")
	return strings.TrimSuffix(out, ".")
}

// decimalRat converts a literal accepted by validDecimal into an exact
// rational.
func decimalRat(s string) *big.Rat {
	neg := false
	if s[0] == '+' || s[0] == '-' {
		neg = s[0] == '-'
		s = s[1:]
	}
	mant, expStr := s, ""
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		mant, expStr = s[:i], s[i+1:]
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	exp := 0
	if expStr != "" {
		// Callers only pass finite values at least 1e-7, so the exponent
		// is bounded by the literal's length; Atoi's range is plenty.
		e, err := strconv.Atoi(expStr)
		if err != nil {
			return new(big.Rat)
		}
		exp = e
	}
	exp -= len(frac)
	digits, _ := new(big.Int).SetString("0"+intPart+frac, 10)
	r := new(big.Rat).SetInt(digits)
	if exp != 0 {
		p := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(abs(exp))), nil)
		if exp > 0 {
			r.Mul(r, new(big.Rat).SetInt(p))
		} else {
			r.Quo(r, new(big.Rat).SetInt(p))
		}
	}
	if neg {
		r.Neg(r)
	}
	return r
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// Timestamp is Python's str(dt.timestamp()) for a UTC datetime, the
// timestamp ArchiveBox gives a snapshot that has none.
func Timestamp(t time.Time) string {
	s := strconv.FormatFloat(float64(t.UnixMicro())/1e6, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}
