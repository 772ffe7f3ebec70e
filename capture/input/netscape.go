package input

import (
	"bytes"
	"strings"

	"golang.org/x/net/html"
)

// anchors reads every <a href> of an HTML file, with its ADD_DATE (or
// Pocket's TIME_ADDED), TAGS and anchor text: Netscape bookmark files,
// Pocket's HTML export, any page of links. The HTML tokenizer tolerates
// any markup around the anchors; an anchor left open ends at the next <a>,
// <dt>, <dd>, <dl>, <li> or <h3>. A bookmark file's every href is an item
// (a bad one is reported); a generic page's links that are not absolute
// http(s) or file URLs (in-page anchors, relative links, mailto:) are not
// items.
func (p *parser) anchors(data []byte, generic bool) {
	z := html.NewTokenizer(bytes.NewReader(data))
	var (
		line  = 1
		open  *Item // the anchor being read
		title strings.Builder
	)
	closeAnchor := func() {
		if open != nil {
			open.Title = title.String()
			p.add(*open)
			open = nil
		}
	}
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			closeAnchor()
			return
		}
		start := line
		line += bytes.Count(z.Raw(), []byte("\n"))
		switch tt {
		case html.TextToken:
			if open != nil {
				title.Write(z.Text())
				title.WriteByte(' ')
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			if endsAnchor(string(name)) {
				closeAnchor()
			}
			if string(name) != "a" || !hasAttr {
				continue
			}
			it, ok := anchor(z)
			if !ok || (generic && !absolute(it.URL)) {
				continue
			}
			it.Line = start
			open, title = &it, strings.Builder{}
			if tt == html.SelfClosingTagToken {
				closeAnchor()
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			if n := string(name); n == "a" || n == "dl" || n == "dt" || n == "li" {
				closeAnchor()
			}
		}
	}
}

// endsAnchor reports whether a start tag ends an anchor left open.
func endsAnchor(name string) bool {
	switch name {
	case "a", "dt", "dd", "dl", "li", "h3":
		return true
	}
	return false
}

// anchor reads the attributes of an <a> start tag; ok is false when it has
// no href (a named anchor).
func anchor(z *html.Tokenizer) (it Item, ok bool) {
	var date, added string
	for {
		key, val, more := z.TagAttr()
		switch string(key) { // the tokenizer lowercases names
		case "href":
			it.URL, ok = string(val), true
		case "add_date":
			date = string(val)
		case "time_added": // Pocket's export
			added = string(val)
		case "tags":
			it.Tags = strings.Split(string(val), ",")
		}
		if !more {
			break
		}
	}
	if date == "" {
		date = added
	}
	it.BookmarkedAt = epochString(date)
	return it, ok
}

// absolute reports whether href starts with http://, https:// or file:.
func absolute(href string) bool {
	scheme, _, ok := strings.Cut(strings.TrimSpace(href), ":")
	switch strings.ToLower(scheme) {
	case "http", "https":
		return ok && strings.HasPrefix(strings.TrimSpace(href)[len(scheme)+1:], "//")
	case "file":
		return ok
	}
	return false
}
