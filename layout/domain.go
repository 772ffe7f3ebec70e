package layout

import (
	"errors"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Domain returns the <domain> folder name ArchiveBox derives from a URL
// (extract_domain_from_url on top of Python's urllib.parse.urlparse):
//
//   - http/https: the hostname, lowercased with Python's str.lower, userinfo
//     and IPv6 brackets removed, IDN not punycoded, trailing dot kept. When the
//     port is truthy the result is hostname+"_"+port with every ':' turned
//     into '_' (so "[::1]:8080" gives "__1_8080" but "[::1]" gives "::1").
//     Port 0 counts as no port. A port that is not ASCII digits or exceeds
//     65535 gives "unknown", as does a missing hostname without a port.
//     Python quirk kept on purpose: a port without a hostname ("http://:8080/")
//     gives "None_8080", the folder ArchiveBox really creates.
//   - file: "localhost"; any other scheme: the lowercased scheme ("ftp",
//     "data", "mailto"); no scheme: "unknown".
//   - anything urlparse rejects (unbalanced or invalid brackets, netloc
//     characters that NFKC-normalise to URL delimiters): "unknown".
//
// The result is always one safe path component (see Component); a name
// ArchiveBox would produce that is not (".", "..", NUL bytes, over 255 bytes)
// becomes "unknown".
func Domain(rawURL string) string {
	d := domain(rawURL)
	if !Component(d) {
		return "unknown"
	}
	return d
}

func domain(rawURL string) string {
	u, err := urlsplit(rawURL)
	if err != nil {
		return "unknown"
	}
	switch u.scheme {
	case "http", "https":
		host, port, hasHost, err := u.hostPort()
		if err != nil {
			return "unknown"
		}
		if port > 0 {
			if !hasHost {
				host = "None" // Python formats the missing hostname as None
			}
			return strings.ReplaceAll(host+"_"+strconv.Itoa(port), ":", "_")
		}
		if !hasHost {
			return "unknown"
		}
		return host
	case "file":
		return "localhost"
	case "":
		return "unknown"
	}
	return u.scheme
}

// Netloc returns urlparse(rawURL).netloc: the authority exactly as written
// (userinfo, port and case kept). It is the "domain" field of exported
// records, which differs from the Domain folder name. It returns "" when
// Python's urlparse would raise.
func Netloc(rawURL string) string {
	u, err := urlsplit(rawURL)
	if err != nil {
		return ""
	}
	return u.netloc
}

type splitURL struct {
	scheme string
	netloc string
}

var errInvalidURL = errors.New("invalid URL")

// urlsplit reproduces the parts of Python's urllib.parse.urlsplit that decide
// the scheme and netloc, including every ValueError it can raise for them.
func urlsplit(url string) (splitURL, error) {
	// Leading C0 controls and spaces are stripped; tab, CR and LF are removed
	// everywhere.
	url = strings.TrimLeft(url, "\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f"+
		"\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f ")
	if strings.ContainsAny(url, "\t\r\n") {
		url = strings.NewReplacer("\t", "", "\r", "", "\n", "").Replace(url)
	}
	var u splitURL
	if i := strings.IndexByte(url, ':'); i > 0 && isASCIILetter(url[0]) {
		ok := true
		for j := 0; j < i; j++ {
			if !isSchemeChar(url[j]) {
				ok = false
				break
			}
		}
		if ok {
			u.scheme = strings.ToLower(url[:i])
			url = url[i+1:]
		}
	}
	if strings.HasPrefix(url, "//") {
		rest := url[2:]
		if i := strings.IndexAny(rest, "/?#"); i >= 0 {
			rest = rest[:i]
		}
		u.netloc = rest
		open, closed := strings.Contains(rest, "["), strings.Contains(rest, "]")
		if open != closed {
			return u, errInvalidURL
		}
		if open {
			if err := checkBracketedNetloc(rest); err != nil {
				return u, err
			}
		}
		if err := checkNetloc(rest); err != nil {
			return u, err
		}
	}
	return u, nil
}

// hostPort mirrors SplitResult.hostname and SplitResult.port.
func (u splitURL) hostPort() (host string, port int, hasHost bool, err error) {
	hostname, portStr := hostinfo(u.netloc)
	if portStr != "" {
		// Python 3.11.4+ requires ASCII digits (no sign, space or '_').
		for i := 0; i < len(portStr); i++ {
			if portStr[i] < '0' || portStr[i] > '9' {
				return "", 0, false, errInvalidURL
			}
		}
		digits := strings.TrimLeft(portStr, "0")
		if len(digits) > 5 {
			return "", 0, false, errInvalidURL
		}
		if digits != "" {
			port, _ = strconv.Atoi(digits)
		}
		if port > 65535 {
			return "", 0, false, errInvalidURL
		}
	}
	if hostname == "" {
		return "", port, false, nil
	}
	// A scoped IPv6 zone keeps its case.
	name, zone, hasZone := strings.Cut(hostname, "%")
	host = pyLower(name)
	if hasZone {
		host += "%" + zone
	}
	return host, port, true, nil
}

// hostinfo mirrors NetlocResultMixin._hostinfo.
func hostinfo(netloc string) (hostname, port string) {
	info := netloc
	if i := strings.LastIndexByte(info, '@'); i >= 0 {
		info = info[i+1:]
	}
	if _, bracketed, ok := strings.Cut(info, "["); ok {
		hostname, after, _ := strings.Cut(bracketed, "]")
		_, port, _ = strings.Cut(after, ":")
		return hostname, port
	}
	hostname, port, _ = strings.Cut(info, ":")
	return hostname, port
}

// checkBracketedNetloc mirrors urllib.parse._check_bracketed_netloc
// (CPython 3.11.11+, 3.12.8+, 3.13.1+; earlier releases only checked the
// first bracketed text of the whole netloc).
func checkBracketedNetloc(netloc string) error {
	info := netloc
	if i := strings.LastIndexByte(info, '@'); i >= 0 {
		info = info[i+1:]
	}
	var hostname string
	if before, bracketed, ok := strings.Cut(info, "["); ok {
		if before != "" {
			return errInvalidURL
		}
		h, port, _ := strings.Cut(bracketed, "]")
		if port != "" && port[0] != ':' {
			return errInvalidURL
		}
		hostname = h
	} else {
		hostname, _, _ = strings.Cut(info, ":")
	}
	return checkBracketedHost(hostname)
}

// checkBracketedHost mirrors urllib.parse._check_bracketed_host: an IPvFuture
// literal matching \Av[a-fA-F0-9]+\..+\Z, or an IPv6 address that Python's
// ipaddress module accepts (IPv4 in brackets is rejected).
func checkBracketedHost(h string) error {
	if strings.HasPrefix(h, "v") {
		i := 1
		for i < len(h) && isHex(h[i]) {
			i++
		}
		// Newlines cannot occur here: urlsplit removed them.
		if i == 1 || i >= len(h) || h[i] != '.' || i+1 >= len(h) {
			return errInvalidURL
		}
		return nil
	}
	if validIPv4(h) || !validIPv6(h) {
		return errInvalidURL
	}
	return nil
}

// nfkcDelims are the non-ASCII characters whose NFKC normalisation contains
// one of / ? # @ : (computed from Python 3.11's unicodedata, Unicode 14).
// urlsplit rejects a netloc containing any of them (_checknetloc).
var nfkcDelims = map[rune]bool{
	0x2047: true, 0x2048: true, 0x2049: true, 0x2100: true, 0x2101: true,
	0x2105: true, 0x2106: true, 0x2A74: true, 0xFE13: true, 0xFE16: true,
	0xFE55: true, 0xFE56: true, 0xFE5F: true, 0xFE6B: true, 0xFF03: true,
	0xFF0F: true, 0xFF1A: true, 0xFF1F: true, 0xFF20: true,
}

func checkNetloc(netloc string) error {
	for _, r := range netloc {
		if nfkcDelims[r] {
			return errInvalidURL
		}
	}
	return nil
}

// validIPv4 mirrors ipaddress.IPv4Address: four decimal octets, no leading
// zeros, each at most 255.
func validIPv4(s string) bool {
	parts := strings.Split(s, ".")
	if len(parts) != 4 {
		return false
	}
	for _, p := range parts {
		if p == "" || len(p) > 3 || (len(p) > 1 && p[0] == '0') {
			return false
		}
		n := 0
		for i := 0; i < len(p); i++ {
			if p[i] < '0' || p[i] > '9' {
				return false
			}
			n = n*10 + int(p[i]-'0')
		}
		if n > 255 {
			return false
		}
	}
	return true
}

// validIPv6 mirrors ipaddress.IPv6Address, including its "%scope" suffix
// (non-empty, no second '%') and an embedded IPv4 tail.
func validIPv6(s string) bool {
	if strings.Contains(s, "/") {
		return false
	}
	addr, scope, hasScope := strings.Cut(s, "%")
	if hasScope && (scope == "" || strings.Contains(scope, "%")) {
		return false
	}
	if addr == "" {
		return false
	}
	parts := strings.Split(addr, ":")
	if len(parts) < 3 {
		return false
	}
	if last := parts[len(parts)-1]; strings.Contains(last, ".") {
		if !validIPv4(last) {
			return false
		}
		parts = append(parts[:len(parts)-1], "0", "0")
	}
	if len(parts) > 9 {
		return false
	}
	skip := -1
	for i := 1; i < len(parts)-1; i++ {
		if parts[i] == "" {
			if skip >= 0 {
				return false
			}
			skip = i
		}
	}
	lo, hi := 0, len(parts)
	if skip >= 0 {
		partsHi, partsLo := skip, len(parts)-skip-1
		if parts[0] == "" {
			partsHi--
			if partsHi != 0 {
				return false
			}
			lo = 1
		}
		if parts[len(parts)-1] == "" {
			partsLo--
			if partsLo != 0 {
				return false
			}
			hi = len(parts) - 1
		}
		if 8-(partsHi+partsLo) < 1 {
			return false
		}
	} else {
		if len(parts) != 8 || parts[0] == "" || parts[len(parts)-1] == "" {
			return false
		}
	}
	for i := lo; i < hi; i++ {
		if i == skip {
			continue
		}
		p := parts[i]
		if p == "" || len(p) > 4 {
			return false
		}
		for j := 0; j < len(p); j++ {
			if !isHex(p[j]) {
				return false
			}
		}
	}
	return true
}

// pyLower is Python's str.lower: Unicode full lowercase mapping, which differs
// from unicode.ToLower for U+0130 (-> "i\u0307") and for the Final_Sigma rule
// (capital sigma at the end of a word -> U+03C2). Character tables are Go's
// (Unicode 15) while Python 3.11 uses Unicode 14, so characters new in 15
// can differ: U+1E06A is case-ignorable to folio and unassigned to Python,
// which changes the sigma in "xͼ\U0001E06AΣ".
func pyLower(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return strings.ToLower(s)
	}
	rs := []rune(s)
	var b strings.Builder
	b.Grow(len(s))
	for i, r := range rs {
		switch r {
		case 0x130:
			b.WriteString("i\u0307")
		case 0x3A3:
			if finalSigma(rs, i) {
				b.WriteRune(0x3C2)
			} else {
				b.WriteRune(0x3C3)
			}
		default:
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// finalSigma reports whether rs[i] is in the Final_Sigma context:
// a cased letter, then case-ignorables, then sigma, not followed by
// case-ignorables and a cased letter.
func finalSigma(rs []rune, i int) bool {
	j := i - 1
	for j >= 0 && caseIgnorable(rs[j]) {
		j--
	}
	if j < 0 || !cased(rs[j]) {
		return false
	}
	j = i + 1
	for j < len(rs) && caseIgnorable(rs[j]) {
		j++
	}
	return j == len(rs) || !cased(rs[j])
}

func cased(r rune) bool {
	return unicode.IsUpper(r) || unicode.IsLower(r) || unicode.IsTitle(r) ||
		unicode.Is(unicode.Other_Lowercase, r) || unicode.Is(unicode.Other_Uppercase, r)
}

// caseIgnorable is Unicode's Case_Ignorable: Mn, Me, Cf, Lm, Sk, or
// Word_Break MidLetter, MidNumLet or Single_Quote.
func caseIgnorable(r rune) bool {
	switch r {
	case '\'', '.', ':', 0xB7, 0x387, 0x55F, 0x5F4, 0x2018, 0x2019, 0x2024,
		0x2027, 0xFE13, 0xFE52, 0xFE55, 0xFF07, 0xFF0E, 0xFF1A:
		return true
	}
	return unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf, unicode.Lm, unicode.Sk)
}

func isASCIILetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

func isSchemeChar(c byte) bool {
	return isASCIILetter(c) || '0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}
