package input

import (
	"bytes"
)

// detect guesses the format of data: JSONL when the first line that is not
// blank or a # comment starts with "{", JSON when it starts with "[", CSV
// when it is a header row naming a url column; Netscape when the text
// carries the NETSCAPE-Bookmark-file-1 marker; Feed when the root element
// is <rss>, <rdf:RDF> or <feed>; Netscape again when the text has <dt, <a
// and href (any case); HTML when it has <a and href; URLList when every
// content line is one word; else Text.
//
// The feed root is checked before the loose <dt/<a/href test so that a feed
// whose descriptions carry HTML lists is still read as a feed.
func detect(data []byte) string {
	data = bytes.TrimPrefix(data, utf8BOM)
	first := firstContentLine(data)
	_, csvURL := csvHeader(first)
	switch {
	case bytes.HasPrefix(first, []byte("{")):
		return JSONL
	case bytes.HasPrefix(first, []byte("[")):
		return JSON
	case csvURL:
		return CSV
	case bytes.Contains(data, []byte("NETSCAPE-Bookmark-file-1")):
		return Netscape
	case isFeed(data):
		return Feed
	case looksLikeBookmarks(data):
		return Netscape
	case hasAnchor(data):
		return HTML
	case isURLList(data):
		return URLList
	}
	return Text
}

// firstContentLine returns the first trimmed line that is not blank or a
// # comment, or nil.
func firstContentLine(data []byte) []byte {
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if line = bytes.TrimSpace(line); !isComment(line) {
			return line
		}
	}
	return nil
}

// hasJSONLine reports whether any content line starts with "{": the least a
// forced JSONL input must have.
func hasJSONLine(data []byte) bool {
	found := false
	lines(data, func(_ int, line []byte) {
		found = found || bytes.HasPrefix(bytes.TrimSpace(line), []byte("{"))
	})
	return found
}

func looksLikeBookmarks(data []byte) bool {
	lower := bytes.ToLower(data)
	return bytes.Contains(lower, []byte("<dt")) && bytes.Contains(lower, []byte("<a")) &&
		bytes.Contains(lower, []byte("href"))
}

// hasAnchor reports whether data has something like <a href: the least a
// forced Netscape input must have.
func hasAnchor(data []byte) bool {
	lower := bytes.ToLower(data)
	return bytes.Contains(lower, []byte("<a")) && bytes.Contains(lower, []byte("href"))
}

// isFeed reports whether the root element of data is <rss>, <rdf:RDF> or
// <feed>, skipping white space, the XML declaration, processing
// instructions, comments and a DOCTYPE (which the feed parser then refuses).
func isFeed(data []byte) bool {
	rest := data
	for {
		rest = bytes.TrimLeft(rest, " \t\r\n")
		switch {
		case bytes.HasPrefix(rest, []byte("<?")):
			rest = after(rest, "?>")
		case bytes.HasPrefix(rest, []byte("<!--")):
			rest = after(rest, "-->")
		case hasPrefixFold(rest, "<!doctype"):
			rest = afterDoctype(rest)
		default:
			for _, root := range []string{"<rss", "<rdf:RDF", "<feed"} {
				if bytes.HasPrefix(rest, []byte(root)) && len(rest) > len(root) && endsName(rest[len(root)]) {
					return true
				}
			}
			return false
		}
	}
}

// after returns what follows the first end in b, or nil.
func after(b []byte, end string) []byte {
	if i := bytes.Index(b, []byte(end)); i >= 0 {
		return b[i+len(end):]
	}
	return nil
}

// afterDoctype skips a <!DOCTYPE ...> including an internal [subset].
func afterDoctype(b []byte) []byte {
	depth := 0
	for i, c := range b {
		switch c {
		case '[':
			depth++
		case ']':
			depth--
		case '>':
			if depth <= 0 {
				return b[i+1:]
			}
		}
	}
	return nil
}

func hasPrefixFold(b []byte, prefix string) bool {
	return len(b) >= len(prefix) && bytes.EqualFold(b[:len(prefix)], []byte(prefix))
}

// endsName reports whether c can follow an element name in a start tag.
func endsName(c byte) bool {
	return c == '>' || c == '/' || c == ' ' || c == '\t' || c == '\r' || c == '\n'
}
