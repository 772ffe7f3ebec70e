// Package htmltext turns an HTML document into the plain text folio
// stores and searches: the words of the page outside scripts, styles and
// the head, separated by single spaces. The htmltotext plugin writes it
// and the catalog indexes it, so it sits below both.
package htmltext

import (
	"strings"

	"golang.org/x/net/html"
)

// skipped are the elements whose content is not page text.
var skipped = map[string]bool{"script": true, "style": true, "head": true, "meta": true, "link": true, "noscript": true, "template": true}

// void are the skipped elements that have no end tag.
func void(name string) bool { return name == "meta" || name == "link" }

// Of is the text of an HTML document as the htmltotext plugin writes it.
func Of(doc string) string {
	z := html.NewTokenizer(strings.NewReader(doc))
	var b strings.Builder
	depth := 0 // inside skipped elements
	for {
		switch z.Next() {
		case html.ErrorToken:
			return strings.TrimSpace(b.String())
		case html.StartTagToken:
			name, _ := z.TagName()
			if skipped[string(name)] && !void(string(name)) {
				depth++
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			if skipped[string(name)] && !void(string(name)) && depth > 0 {
				depth--
			}
		case html.TextToken:
			if depth > 0 {
				continue
			}
			for _, w := range strings.Fields(string(z.Text())) {
				if b.Len() > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(w)
			}
		}
	}
}
