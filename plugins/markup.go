package plugins

import (
	"net/url"
	"strings"

	"github.com/PuerkitoBio/goquery"
	"golang.org/x/net/html"
)

// The parts of singlefile's inlining that read the capture's markers and
// the URL-bearing attributes of the HTML standard.

// urlAttrs are the attributes whose URL a browser still loads to render
// the element, each made a data: URL (an SVG feImage's href too, see
// attributes). An svg image's href may be xlink:href: attribute names
// match without their namespace.
var urlAttrs = []struct{ sel, attr string }{
	{"img[src]", "src"}, {"input[type=image][src]", "src"}, {"video[poster]", "poster"},
	{"link[rel~=icon][href]", "href"}, {"link[rel~=apple-touch-icon][href]", "href"},
	{"source[src]", "src"}, {"audio[src]", "src"}, {"video[src]", "src"}, {"track[src]", "src"},
	{"body[background], table[background], thead[background], tbody[background], tfoot[background], " +
		"tr[background], td[background], th[background]", "background"},
	{"image", "href"},
}

// resourceURLs lists the resources the document's attributes and linked
// style sheets refer to, to fetch them together.
func resourceURLs(doc *goquery.Document, base *url.URL) []string {
	var urls []string
	add := func(_ int, s *goquery.Selection, attr string) {
		if _, cur := s.Attr(MarkCurrent); cur && attr == "src" {
			return // the image shown is the current one, not the fallback
		}
		for _, a := range s.Nodes[0].Attr {
			if a.Key == attr {
				u, _ := resolve(a.Val, base)
				urls = append(urls, u)
			}
		}
	}
	for _, a := range append(urlAttrs, []struct{ sel, attr string }{
		{"link[rel~=stylesheet]", "href"}, {"object", "data"}, {"embed", "src"}, {"img", MarkCurrent},
	}...) {
		doc.Find(a.sel).Each(func(i int, s *goquery.Selection) { add(i, s, a.attr) })
	}
	return urls
}

// attributes makes the URL-bearing attributes data: URLs. An <object> or
// <embed> keeps its resource only when it is an image (anything else
// would be a plugin or a document with scripts).
func (in *inliner) attributes(doc *goquery.Document, base *url.URL) {
	for _, a := range urlAttrs {
		doc.Find(a.sel).Each(func(_ int, s *goquery.Selection) {
			n := s.Nodes[0]
			for i := range n.Attr {
				if n.Attr[i].Key == a.attr {
					n.Attr[i].Val = in.dataURL(n.Attr[i].Val, base)
				}
			}
		})
	}
	for _, n := range doc.Nodes {
		walkElements(n, func(n *html.Node) { // a selector does not match its capital I
			for i := range n.Attr {
				if n.Data == "feImage" && n.Attr[i].Key == "href" {
					n.Attr[i].Val = in.dataURL(n.Attr[i].Val, base)
				}
			}
		})
	}
	doc.Find("object, embed").Each(func(_ int, s *goquery.Selection) {
		attr := "data"
		if goquery.NodeName(s) == "embed" {
			attr = "src"
		}
		ref, _ := s.Attr(attr)
		if u, _ := resolve(ref, base); u != "" {
			if f, err := in.get(u); err == nil && strings.HasPrefix(contentType(f, u), "image/") {
				s.SetAttr(attr, in.dataURL(u, base))
				s.SetAttr("type", contentType(f, u))
				return
			}
		}
		if !strings.HasPrefix(ref, "data:image/") {
			s.RemoveAttr(attr)
		}
	})
}

// applyState writes the form state and the CSSOM the capture read
// (MarkValue, MarkChecked, MarkChosen, MarkCSSOM) into the markup, where
// a page without scripts shows them. A password typed in is not saved.
func applyState(doc *goquery.Document) {
	doc.Find("[" + MarkValue + "]").Not("input[type=password i]").Each(func(_ int, s *goquery.Selection) {
		v, _ := s.Attr(MarkValue)
		if goquery.NodeName(s) == "textarea" {
			n := s.Nodes[0]
			for c := n.FirstChild; c != nil; c = n.FirstChild {
				n.RemoveChild(c)
			}
			n.AppendChild(&html.Node{Type: html.TextNode, Data: v})
			return
		}
		s.SetAttr("value", v)
	})
	for _, m := range []struct{ mark, attr string }{{MarkChecked, "checked"}, {MarkChosen, "selected"}} {
		doc.Find("[" + m.mark + "]").Each(func(_ int, s *goquery.Selection) {
			if v, _ := s.Attr(m.mark); v == "true" {
				s.SetAttr(m.attr, "")
			} else {
				s.RemoveAttr(m.attr)
			}
		})
	}
	doc.Find("style[" + MarkCSSOM + "]").Each(func(_ int, s *goquery.Selection) {
		v, _ := s.Attr(MarkCSSOM)
		setRawText(s.Nodes[0], v)
	})
}

// freezeCanvases gives each canvas the capture read the pixels of an
// image of them. The canvas stays, so the page's CSS (canvas { … }
// included) still lays it out: a blank canvas is transparent, and the
// image is its background, sized to its content box as a canvas stretches
// its bitmap. Where scripting is off (the sandboxed frame of folio's
// export viewer) a canvas is no canvas but its fallback content; there
// the same image, given once as a custom property, is its content:
// url(), which Chromium draws as the element's image.
func freezeCanvases(doc *goquery.Document) {
	doc.Find("canvas[" + MarkCanvas + "]").Each(func(_ int, s *goquery.Selection) {
		data, _ := s.Attr(MarkCanvas)
		if !strings.HasPrefix(data, "data:image/") || strings.ContainsAny(data, `"\`) {
			return
		}
		style := strings.TrimSpace(attrVal(s, "style"))
		if style != "" && !strings.HasSuffix(style, ";") {
			style += ";"
		}
		s.SetAttr("style", style+`--folio-canvas:url("`+data+`");background-image:var(--folio-canvas);`+
			"background-repeat:no-repeat;background-origin:content-box;background-position:0 0;background-size:100% 100%;"+
			"content:var(--folio-canvas)")
		s.Empty()
	})
}

// dropMarkers removes every data-folio-* attribute.
func dropMarkers(doc *goquery.Document) {
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			kept := n.Attr[:0]
			for _, a := range n.Attr {
				if !strings.HasPrefix(a.Key, "data-folio-") {
					kept = append(kept, a)
				}
			}
			n.Attr = kept
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	for _, n := range doc.Nodes {
		walk(n)
	}
}
