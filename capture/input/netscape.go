package input

import (
	"bytes"
	"strings"

	"golang.org/x/net/html"
)

// netscape reads every <a href> of a Netscape bookmark file, with its
// ADD_DATE, TAGS and anchor text. The HTML tokenizer tolerates any markup
// around the anchors; an anchor left open ends at the next <a>, <dt>, <dd>,
// <dl>, <li> or <h3>.
func (p *parser) netscape(data []byte) {
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
			if !ok {
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
