package plugins

import (
	"bytes"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/PuerkitoBio/goquery"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// External SVG sprites. Chromium draws nothing for a <use> whose href is
// a data: URL with a fragment, so the symbols a page uses from a sprite
// file are copied into the page, in a hidden <svg>, and each <use> points
// at its copy by id.

// sprites holds the sprite files of a page, each fetched and parsed once
// (nil when it could not be).
type sprites struct {
	docs map[string]*html.Node
}

func newSprites() *sprites { return &sprites{docs: map[string]*html.Node{}} }

// spriteScope is where the copies for one id scope go: the document, or
// one declarative shadow root (ids do not cross into a shadow tree).
type spriteScope struct {
	parent *html.Node // body, or the shadow root's template
	defs   *html.Node // the hidden svg's defs, made on first use
}

// spriteDoc is the state of one document: the ids it holds and the copies
// made so far.
type spriteDoc struct {
	ids    map[string]bool
	copies map[copyKey]string // the copy's id of each sprite element copied
	scopes map[*html.Node]*spriteScope
}

type copyKey struct {
	scope   *spriteScope
	url, id string
}

// inline copies the symbols the document's <use> elements take from
// other files into it, and points them there (a use of the document's
// own URL, at its own element). A use of a file that cannot
// be had loses its href.
func (sp *sprites) inline(in *inliner, doc *goquery.Document, base *url.URL, docURL string) {
	self, _ := resolve(docURL, base)
	uses := doc.Find("use")
	var urls []string
	uses.Each(func(_ int, s *goquery.Selection) {
		u, _ := resolve(useHref(s.Nodes[0]), base)
		urls = append(urls, u)
	})
	in.prefetch(urls)
	d := &spriteDoc{ids: map[string]bool{}, copies: map[copyKey]string{}, scopes: map[*html.Node]*spriteScope{}}
	doc.Find("[id]").Each(func(_ int, s *goquery.Selection) { d.ids[attrVal(s, "id")] = true })
	body := doc.Find("body").First()
	uses.Each(func(_ int, s *goquery.Selection) {
		n := s.Nodes[0]
		ref := useHref(n)
		if strings.HasPrefix(strings.TrimSpace(ref), "#") {
			return
		}
		id := ""
		if u, frag := resolve(ref, base); u == self && frag != "" {
			id = frag // the document itself
		} else if u != "" && frag != "" {
			if root := sp.doc(in, u); root != nil {
				scope := d.scope(n, body)
				id = d.copy(scope, root, u, frag)
			}
		}
		for i := range n.Attr {
			if n.Attr[i].Key == "href" {
				n.Attr[i].Val = ""
				if id != "" {
					n.Attr[i].Val = "#" + id
				}
			}
		}
	})
}

// useHref is a use element's href, else its xlink:href.
func useHref(n *html.Node) string {
	ref := ""
	for _, a := range n.Attr {
		if a.Key == "href" && (a.Namespace == "" || ref == "") {
			ref = a.Val
		}
	}
	return ref
}

// doc returns the parsed sprite file at u.
func (sp *sprites) doc(in *inliner, u string) *html.Node {
	if root, ok := sp.docs[u]; ok {
		return root
	}
	sp.docs[u] = nil
	f, err := in.get(u)
	if err != nil || !bytes.Contains(f.Body, []byte("<svg")) {
		return nil
	}
	text, _ := decodeCSS(f.Body, f.Header.Get("Content-Type"), "utf-8") // BOM and charset as for CSS
	root, err := html.Parse(strings.NewReader(text))
	if err != nil {
		return nil
	}
	if fu, err := url.Parse(f.URL); err == nil {
		absoluteImages(root, fu)
	}
	sp.docs[u] = root
	return root
}

// scope returns the id scope n is in.
func (d *spriteDoc) scope(n *html.Node, body *goquery.Selection) *spriteScope {
	parent := n.Parent
	for ; parent != nil; parent = parent.Parent {
		if parent.Type == html.ElementNode && parent.Data == "template" && hasAttr(parent, "shadowrootmode") {
			break
		}
	}
	if parent == nil {
		if body.Length() == 0 {
			return nil
		}
		parent = body.Nodes[0]
	}
	if s, ok := d.scopes[parent]; ok {
		return s
	}
	s := &spriteScope{parent: parent}
	d.scopes[parent] = s
	return s
}

func hasAttr(n *html.Node, key string) bool {
	for _, a := range n.Attr {
		if a.Key == key {
			return true
		}
	}
	return false
}

// copy copies the element with the given id from a sprite (and what it
// refers to inside the sprite) into scope, and returns the copy's id
// ("" when the sprite has no such element).
func (d *spriteDoc) copy(scope *spriteScope, root *html.Node, u, id string) string {
	if scope == nil {
		return ""
	}
	if c, ok := d.copies[copyKey{scope, u, id}]; ok {
		return c
	}
	el := byID(root, id)
	if el == nil {
		return ""
	}
	c := cloneSVG(el)
	// Every id inside the copy is renamed when the page holds it already,
	// and registered first, so that references between them (and cycles)
	// end.
	renamed := map[string]string{}
	walkElements(c, func(n *html.Node) {
		for _, a := range n.Attr {
			if a.Key == "id" && a.Namespace == "" {
				name := d.fresh(a.Val)
				renamed[a.Val] = name
				d.copies[copyKey{scope, u, a.Val}] = name
			}
		}
	})
	walkElements(c, func(n *html.Node) {
		for i, a := range n.Attr {
			switch {
			case a.Key == "id" && a.Namespace == "":
				n.Attr[i].Val = renamed[a.Val]
			case a.Key == "href" && strings.HasPrefix(a.Val, "#"):
				n.Attr[i].Val = "#" + d.ref(scope, root, u, a.Val[1:], renamed)
			case strings.Contains(a.Val, "url(#") || strings.Contains(a.Val, `url("#`) || strings.Contains(a.Val, "url('#"):
				n.Attr[i].Val = localURL.ReplaceAllStringFunc(a.Val, func(m string) string {
					return "url(#" + d.ref(scope, root, u, localURL.FindStringSubmatch(m)[1], renamed) + ")"
				})
			}
		}
	})
	d.defs(scope).AppendChild(c)
	return renamed[id]
}

var localURL = regexp.MustCompile(`url\(\s*["']?#([^"')\s]+)["']?\s*\)`)

// ref is the id in the page of the sprite's element id: the copy's own
// when it holds it, else a copy made now.
func (d *spriteDoc) ref(scope *spriteScope, root *html.Node, u, id string, renamed map[string]string) string {
	if r, ok := renamed[id]; ok {
		return r
	}
	if r := d.copy(scope, root, u, id); r != "" {
		return r
	}
	return id
}

// fresh returns id, or id with a number after it when the page already
// holds it, and takes it.
func (d *spriteDoc) fresh(id string) string {
	name := id
	for i := 2; d.ids[name]; i++ {
		name = id + "-" + strconv.Itoa(i)
	}
	d.ids[name] = true
	return name
}

// defs returns the hidden svg's <defs> of scope, adding them on first use.
// Not display:none: the gradients and patterns of an svg that is not
// rendered are not drawn either.
func (d *spriteDoc) defs(scope *spriteScope) *html.Node {
	if scope.defs == nil {
		svg := &html.Node{Type: html.ElementNode, Data: "svg", DataAtom: atom.Svg, Namespace: "svg", Attr: []html.Attribute{
			{Key: "aria-hidden", Val: "true"}, {Key: "width", Val: "0"}, {Key: "height", Val: "0"},
			{Key: "style", Val: "position:absolute;overflow:hidden"},
		}}
		scope.defs = &html.Node{Type: html.ElementNode, Data: "defs", Namespace: "svg"}
		svg.AppendChild(scope.defs)
		scope.parent.AppendChild(svg)
	}
	return scope.defs
}

func byID(root *html.Node, id string) *html.Node {
	var found *html.Node
	walkElements(root, func(n *html.Node) {
		if found == nil {
			for _, a := range n.Attr {
				if a.Key == "id" && a.Namespace == "" && a.Val == id {
					found = n
				}
			}
		}
	})
	return found
}

func walkElements(n *html.Node, fn func(*html.Node)) {
	if n.Type == html.ElementNode {
		fn(n)
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walkElements(c, fn)
	}
}

// cloneSVG copies n deeply, leaving out scripts and event handlers.
func cloneSVG(n *html.Node) *html.Node {
	c := &html.Node{Type: n.Type, DataAtom: n.DataAtom, Data: n.Data, Namespace: n.Namespace}
	for _, a := range n.Attr {
		if !strings.HasPrefix(strings.ToLower(a.Key), "on") {
			c.Attr = append(c.Attr, a)
		}
	}
	for ch := n.FirstChild; ch != nil; ch = ch.NextSibling {
		if ch.Type == html.ElementNode && strings.EqualFold(ch.Data, "script") {
			continue
		}
		c.AppendChild(cloneSVG(ch))
	}
	return c
}

// absoluteImages resolves the hrefs of a sprite's images against its URL,
// so that they inline with the page's.
func absoluteImages(root *html.Node, base *url.URL) {
	walkElements(root, func(n *html.Node) {
		if n.Data != "image" && n.Data != "feImage" {
			return
		}
		for i, a := range n.Attr {
			if a.Key == "href" && !strings.HasPrefix(a.Val, "#") && !strings.HasPrefix(a.Val, "data:") {
				if v, err := base.Parse(a.Val); err == nil {
					n.Attr[i].Val = v.String()
				}
			}
		}
	})
}
