// Package input reads the lists of URLs that `folio add` accepts: plain URL
// lists, free text with URLs in it, Netscape bookmark exports and other
// HTML pages of links (Pocket's export), RSS and Atom feeds, JSON Lines,
// JSON arrays (Pinboard's export) and CSV with a url column (Pocket's
// newer export).
//
// Parse is pure: it takes bytes, returns items in input order and reports
// what it skipped, so the caller decides how to tell the user.
package input

import (
	"bytes"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Formats accepted by Parse's format argument.
const (
	Auto     = "auto"          // detect the format from the data
	URLList  = "url_list"      // one URL a line
	Netscape = "netscape_html" // Netscape bookmark file (browser exports)
	Feed     = "rss"           // RSS 1.0, RSS 2.0 and Atom
	JSONL    = "jsonl"         // one JSON object a line
	JSON     = "json"          // a JSON array of objects (Pinboard's export)
	CSV      = "csv"           // CSV with a header naming a url column (Pocket's export)
	HTML     = "html"          // any HTML page: its <a href> links (Pocket's HTML export)
	Text     = "txt"           // free text: every http(s) URL in it
)

// Formats returns the format names Parse accepts, Auto first.
func Formats() []string {
	return []string{Auto, URLList, Netscape, Feed, JSONL, JSON, CSV, HTML, Text}
}

// Item is one URL to archive with what the input said about it.
type Item struct {
	URL          string    // validated, see Validate
	Title        string    // empty when the input gave none
	Tags         []string  // trimmed, no empties, deduped, in input order
	BookmarkedAt time.Time // zero when the input gave none
	Line         int       // 1-based line of the input where the item starts
}

// Invalid is an input item that was skipped.
type Invalid struct {
	Line   int    // 1-based line of the input where the item starts
	Text   string // the offending text, trimmed, at most 200 bytes
	Reason string // why it was skipped, e.g. "not an http(s) or file URL"
}

// maxInvalidText bounds Invalid.Text so a huge bad line stays printable.
const maxInvalidText = 200

// Parse reads data in the given format (Auto detects it) and returns the
// items in input order, duplicates (same URL) merged into the first (tags
// unioned, first non-empty title and date kept), the items it skipped, and
// the format it used.
//
// err is only for an unknown format name, a forced format the data is not,
// and a feed that is malformed or refused (DOCTYPE or ENTITY declarations).
// An input with no valid URL is not an error: items is empty.
func Parse(data []byte, format string) (items []Item, invalid []Invalid, used string, err error) {
	data = bytes.TrimPrefix(data, utf8BOM)
	used = format
	if format == Auto {
		used = detect(data)
	}
	var p parser
	switch used {
	case URLList:
		p.urlList(data)
	case Netscape:
		if !hasAnchor(data) {
			return nil, nil, used, fmt.Errorf("not a Netscape bookmark file")
		}
		p.anchors(data, false)
	case HTML:
		if !hasAnchor(data) {
			return nil, nil, used, fmt.Errorf("not an HTML file with links")
		}
		p.anchors(data, true)
	case Text:
		p.text(data)
	case JSON:
		if err := p.jsonArray(data); err != nil {
			return nil, nil, used, err
		}
	case CSV:
		if err := p.csvRows(data); err != nil {
			return nil, nil, used, err
		}
	case Feed:
		if err := p.feed(data); err != nil {
			return nil, nil, used, err
		}
	case JSONL:
		if !hasJSONLine(data) {
			return nil, nil, used, fmt.Errorf("not a JSON Lines file")
		}
		p.jsonl(data)
	default:
		return nil, nil, format, fmt.Errorf("unknown input format %q (want one of %s)",
			format, strings.Join(Formats(), ", "))
	}
	return p.items, p.invalid, used, nil
}

var utf8BOM = []byte("\uFEFF")

// parser collects the results of one Parse call. add merges duplicates as
// items arrive, so every format gets the same rules.
type parser struct {
	items   []Item
	invalid []Invalid
	seen    map[string]int // URL -> index in items
}

// add validates it.URL and appends the item, or merges it into an earlier
// item with the same URL, or records it as invalid with the URL as its text.
func (p *parser) add(it Item) {
	u, err := Validate(it.URL)
	if err != nil {
		p.skip(it.Line, it.URL, err.Error())
		return
	}
	it.URL = u
	it.Title = collapseSpace(it.Title)
	it.Tags = cleanTags(it.Tags)
	if p.seen == nil {
		p.seen = make(map[string]int)
	}
	i, dup := p.seen[u]
	if !dup {
		p.seen[u] = len(p.items)
		p.items = append(p.items, it)
		return
	}
	first := &p.items[i]
	first.Tags = cleanTags(append(first.Tags, it.Tags...))
	if first.Title == "" {
		first.Title = it.Title
	}
	if first.BookmarkedAt.IsZero() {
		first.BookmarkedAt = it.BookmarkedAt
	}
}

// skip records an invalid item.
func (p *parser) skip(line int, text, reason string) {
	p.invalid = append(p.invalid, Invalid{Line: line, Text: truncate(strings.TrimSpace(text), maxInvalidText), Reason: reason})
}

// cleanTags trims tags and drops empties and repeats, keeping the order.
func cleanTags(tags []string) []string {
	var out []string
	for _, t := range tags {
		t = collapseSpace(t)
		if t == "" || contains(out, t) {
			continue
		}
		out = append(out, t)
	}
	return out
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// collapseSpace trims s and turns each run of white space into one space.
func collapseSpace(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// truncate cuts s to at most n bytes without splitting a UTF-8 sequence.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

// lines calls fn for each line of data with its 1-based number, without
// the line ending (LF or CRLF).
func lines(data []byte, fn func(n int, line []byte)) {
	for n := 1; len(data) > 0; n++ {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		fn(n, bytes.TrimSuffix(line, []byte("\r")))
	}
}

// isComment reports whether a trimmed line is blank or a # comment, which
// URL lists and JSON Lines both skip.
func isComment(line []byte) bool {
	return len(line) == 0 || line[0] == '#'
}
