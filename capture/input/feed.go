package input

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"html"
	"io"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"
)

// feedEntry holds what folio reads from an RSS <item> (2.0 or 1.0) or an
// Atom <entry>; fields name elements by local name so one shape fits all
// three.
type feedEntry struct {
	Titles     []feedText     `xml:"title"`
	Links      []feedLink     `xml:"link"`
	GUID       feedGUID       `xml:"guid"`
	About      string         `xml:"http://www.w3.org/1999/02/22-rdf-syntax-ns# about,attr"`
	PubDate    string         `xml:"pubDate"`
	Published  string         `xml:"published"`
	DCDate     string         `xml:"http://purl.org/dc/elements/1.1/ date"`
	Updated    string         `xml:"updated"`
	Categories []feedCategory `xml:"category"`
	Subjects   []string       `xml:"http://purl.org/dc/elements/1.1/ subject"`
}

type feedText struct {
	Type  string `xml:"type,attr"`
	Text  string `xml:",chardata"`
	Inner string `xml:",innerxml"`
}

// feedLink is an RSS <link>URL</link> or an Atom <link href rel/>.
type feedLink struct {
	Href string `xml:"href,attr"`
	Rel  string `xml:"rel,attr"`
	Text string `xml:",chardata"`
}

type feedGUID struct {
	IsPermaLink string `xml:"isPermaLink,attr"`
	Text        string `xml:",chardata"`
}

// feedCategory is an RSS <category>tag</category> or an Atom
// <category term="tag"/>.
type feedCategory struct {
	Term string `xml:"term,attr"`
	Text string `xml:",chardata"`
}

var errFeedDeclaration = errors.New("feed has a DOCTYPE or ENTITY declaration (refused)")

// feed reads the items of an RSS 1.0, RSS 2.0 or Atom feed. It refuses any
// DOCTYPE or ENTITY declaration, as ArchiveBox does against entity attacks,
// and fails on malformed XML.
func (p *parser) feed(data []byte) error {
	if !isFeed(data) {
		return errors.New("not an RSS or Atom feed")
	}
	lower := bytes.ToLower(data)
	if bytes.Contains(lower, []byte("<!doctype")) || bytes.Contains(lower, []byte("<!entity")) {
		return errFeedDeclaration
	}
	d := xml.NewDecoder(bytes.NewReader(data))
	d.Entity = xml.HTMLEntity // feeds often use &nbsp; and friends
	d.CharsetReader = charsetReader
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("parse feed: %w", err)
		}
		start, ok := tok.(xml.StartElement)
		if !ok || (start.Name.Local != "item" && start.Name.Local != "entry") {
			continue
		}
		line, _ := d.InputPos()
		var e feedEntry
		if err := d.DecodeElement(&e, &start); err != nil {
			return fmt.Errorf("parse feed: %w", err)
		}
		p.feedEntry(e, line)
	}
}

// feedEntry adds one entry, or records it as invalid when it has no link.
func (p *parser) feedEntry(e feedEntry, line int) {
	url := e.link()
	if url == "" {
		p.skip(line, e.title(), "no link")
		return
	}
	var tags []string
	for _, c := range e.Categories {
		if c.Term != "" {
			tags = append(tags, c.Term)
		} else {
			tags = append(tags, c.Text)
		}
	}
	p.add(Item{
		URL:          url,
		Title:        e.title(),
		Tags:         append(tags, e.Subjects...),
		BookmarkedAt: e.date(),
		Line:         line,
	})
}

// link returns the entry's page: the first RSS <link> text or Atom link
// with rel="alternate" or no rel, then a permalink <guid>, then RSS 1.0's
// rdf:about.
func (e feedEntry) link() string {
	for _, l := range e.Links {
		href := strings.TrimSpace(l.Href)
		if href == "" && l.Rel == "" {
			href = strings.TrimSpace(l.Text)
		}
		if href != "" && (l.Rel == "" || l.Rel == "alternate") {
			return href
		}
	}
	if guid := strings.TrimSpace(e.GUID.Text); guid != "" && e.GUID.IsPermaLink != "false" {
		if _, err := Validate(guid); err == nil {
			return guid
		}
	}
	return strings.TrimSpace(e.About)
}

// title returns the first title as text, with the markup of an Atom
// type="html" or "xhtml" title removed.
func (e feedEntry) title() string {
	for _, t := range e.Titles {
		s := t.Text
		switch t.Type {
		case "html":
			s = html.UnescapeString(stripTags(s))
		case "xhtml":
			s = html.UnescapeString(stripTags(t.Inner))
		}
		if s = collapseSpace(s); s != "" {
			return s
		}
	}
	return ""
}

// date returns the RSS pubDate, else the Atom published, else dc:date,
// else the Atom updated date; zero when none reads.
func (e feedEntry) date() time.Time {
	if t := rfc822Date(e.PubDate); !t.IsZero() {
		return t
	}
	for _, s := range []string{e.Published, e.DCDate, e.Updated} {
		if t := isoDate(s); !t.IsZero() {
			return t
		}
	}
	return time.Time{}
}

var tagPattern = regexp.MustCompile(`<[^>]*>`)

// stripTags removes markup from s, leaving the text between tags.
func stripTags(s string) string {
	return tagPattern.ReplaceAllString(s, " ")
}

// charsetReader lets the decoder read Latin-1 and ASCII feeds besides the
// UTF-8 it knows; any other declared encoding is an error.
func charsetReader(charset string, r io.Reader) (io.Reader, error) {
	switch strings.ToLower(charset) {
	case "iso-8859-1", "iso8859-1", "latin1", "latin-1", "us-ascii", "ascii":
		b, err := io.ReadAll(r)
		if err != nil {
			return nil, err
		}
		out := make([]byte, 0, len(b))
		for _, c := range b {
			out = utf8.AppendRune(out, rune(c))
		}
		return bytes.NewReader(out), nil
	}
	return nil, fmt.Errorf("unsupported feed encoding %q", charset)
}
