package input

import (
	"bytes"
	"regexp"
	"strings"
	"unicode"
)

// textURL finds the http(s) URLs in free text, as ArchiveBox's generic
// text parser does: a scheme, then anything up to white space, a quote,
// a backtick, angle or square brackets.
var textURL = regexp.MustCompile("(?i)https?://[^\\s<>\"'`\\[\\]{}|\\\\^]+")

// text reads every http(s) URL found in free text (notes, e-mails,
// Markdown), line by line: a URL ends at white space or a quote, loses
// the punctuation that ends a sentence, an unbalanced closing parenthesis
// (Markdown links) and HTML entity noise; URLs joined by commas are split;
// a URL nested in another (a Wayback Machine link) is read too. The rest
// of the text is not an item and is not reported.
func (p *parser) text(data []byte) {
	lines(data, func(n int, line []byte) {
		for _, m := range textURL.FindAllString(string(line), -1) {
			for _, u := range splitJoined(m) {
				for _, nested := range nestedURLs(u) {
					p.add(Item{URL: nested, Line: n})
				}
			}
		}
	})
}

// splitJoined splits "http://a/,http://b/" into its URLs.
func splitJoined(s string) []string {
	var out []string
	for {
		i := indexScheme(s, ",")
		if i < 0 {
			return append(out, s)
		}
		out = append(out, s[:i])
		s = s[i+1:]
	}
}

// nestedURLs returns u cleaned and, after it, every URL that starts inside
// it (https://web.archive.org/web/2020/https://example.com/ holds
// https://example.com/).
func nestedURLs(u string) []string {
	out := []string{cleanTextURL(u)}
	for rest := u[1:]; ; {
		i := indexScheme(rest, "")
		if i < 0 {
			return out
		}
		out = append(out, cleanTextURL(rest[i:]))
		rest = rest[i+1:]
	}
}

// indexScheme returns the index of sep followed by http:// or https:// in
// s (case-insensitive), or -1.
func indexScheme(s, sep string) int {
	lower := strings.ToLower(s)
	for from := 0; from < len(lower); {
		i := strings.Index(lower[from:], sep+"http")
		if i < 0 {
			return -1
		}
		at := from + i + len(sep)
		if strings.HasPrefix(lower[at:], "http://") || strings.HasPrefix(lower[at:], "https://") {
			return from + i
		}
		from = at + 1
	}
	return -1
}

// cleanTextURL trims what text puts around a URL: HTML entities that end
// it (&quot; &gt; &lt; &#39;), &amp; for &, and trailing sentence
// punctuation or a closing parenthesis the URL did not open.
func cleanTextURL(u string) string {
	lower := strings.ToLower(u)
	for _, end := range []string{"&quot;", "&gt;", "&lt;", "&#39;", "&#x27;", "&#34;"} {
		if i := strings.Index(lower, end); i >= 0 {
			u, lower = u[:i], lower[:i]
		}
	}
	u = strings.ReplaceAll(u, "&amp;", "&")
	for {
		trimmed := strings.TrimRight(u, ".,;:!?*~")
		if strings.HasSuffix(trimmed, ")") && strings.Count(trimmed, ")") > strings.Count(trimmed, "(") {
			trimmed = trimmed[:len(trimmed)-1]
		}
		if trimmed == u {
			return u
		}
		u = trimmed
	}
}

// isURLList reports whether every content line of data is one word: a
// list of URLs, whose lines that are not URLs are worth reporting. Text
// with spaces in its lines is read as free text.
func isURLList(data []byte) bool {
	list := true
	lines(data, func(_ int, line []byte) {
		line = bytes.TrimSpace(line)
		list = list && (isComment(line) || bytes.IndexFunc(line, unicode.IsSpace) < 0)
	})
	return list
}
