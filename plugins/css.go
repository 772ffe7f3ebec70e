package plugins

import (
	"bytes"
	"mime"
	"net/url"
	"regexp"
	"strings"

	"github.com/PuerkitoBio/goquery"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/htmlindex"
	"golang.org/x/text/encoding/unicode"
)

// maxImportDepth bounds a chain of @imports.
const maxImportDepth = 5

// styles inlines the document's <style> elements and turns its linked
// style sheets into <style> elements. charset is the document's encoding,
// the one a sheet that does not say its own is read in.
func (in *inliner) styles(doc *goquery.Document, base *url.URL, charset string) {
	doc.Find("style").Each(func(_ int, s *goquery.Selection) {
		setRawText(s.Nodes[0], in.css(s.Text(), base, charset, true)) // its imports are read in the document's encoding
	})
	doc.Find("link[rel~=stylesheet]").Each(func(_ int, s *goquery.Selection) {
		href, _ := s.Attr("href")
		rel, _ := s.Attr("rel")
		_, disabled := s.Attr("disabled")
		u, _ := resolve(href, base)
		if u == "" || disabled || strings.Contains(" "+strings.ToLower(rel)+" ", " alternate ") {
			s.Remove()
			return
		}
		env := charset
		if c, ok := s.Attr("charset"); ok {
			env = c
		}
		text, ok := in.sheet(u, env, nil)
		if !ok {
			s.Remove()
			return
		}
		style := &html.Node{Type: html.ElementNode, Data: "style", DataAtom: atom.Style}
		if media, ok := s.Attr("media"); ok {
			style.Attr = []html.Attribute{{Key: "media", Val: media}}
		}
		s.ReplaceWithNodes(style)
		setRawText(style, text)
	})
}

// sheet fetches the style sheet at u, decodes it into UTF-8 (env is the
// encoding of what refers to it) and inlines it. stack holds the sheets
// importing it, so that a cycle ends.
func (in *inliner) sheet(u, env string, stack []string) (string, bool) {
	f, err := in.get(u)
	if err != nil {
		return "", false
	}
	text, enc := decodeCSS(f.Body, f.Header.Get("Content-Type"), env)
	base, err := url.Parse(f.URL)
	if err != nil {
		return "", false
	}
	return in.cssIn(text, base, enc, append(stack, u)), true
}

// css inlines a style sheet's @imports (when sheet: a style attribute has
// none) and its url()s, resolved against base. enc is the sheet's
// encoding, the one its imports default to.
func (in *inliner) css(css string, base *url.URL, enc string, sheet bool) string {
	if !sheet {
		return in.urls(css, base)
	}
	return in.cssIn(css, base, enc, nil)
}

func (in *inliner) cssIn(css string, base *url.URL, enc string, stack []string) string {
	head, imports, rest := splitImports(css)
	var b strings.Builder
	b.WriteString(head)
	var urls []string
	for _, im := range imports {
		u, _ := resolve(im.url, base)
		urls = append(urls, u)
	}
	in.prefetch(urls)
	for i, im := range imports {
		u := urls[i]
		if u == "" || len(stack) >= maxImportDepth || contains(stack, u) {
			continue
		}
		inner, ok := in.sheet(u, enc, stack)
		if !ok {
			continue
		}
		b.WriteString(im.wrap(inner))
		b.WriteByte('\n')
	}
	b.WriteString(rest)
	return in.urls(b.String(), base)
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

var cssURL = regexp.MustCompile(`url\(\s*(?:"([^"]*)"|'([^']*)'|([^)'"\s]*))\s*\)`)

// urls makes every url() of css a data: URL, fetching them a few at a
// time first.
func (in *inliner) urls(css string, base *url.URL) string {
	css = imageSetURLs(css)
	var refs []string
	for _, g := range cssURL.FindAllStringSubmatch(css, -1) {
		u, _ := resolve(g[1]+g[2]+g[3], base)
		refs = append(refs, u)
	}
	in.prefetch(refs)
	return cssURL.ReplaceAllStringFunc(css, func(m string) string {
		g := cssURL.FindStringSubmatch(m)
		ref := g[1] + g[2] + g[3]
		if strings.HasPrefix(ref, "#") || strings.HasPrefix(ref, "data:") {
			return m
		}
		return `url("` + in.dataURL(ref, base) + `")`
	})
}

var (
	imageSet  = regexp.MustCompile(`(?i)(?:-webkit-)?image-set\(`)
	setString = regexp.MustCompile(`(?i)url\(\s*(?:"[^"]*"|'[^']*'|[^)]*)\)|"[^"]*"|'[^']*'`)
)

// imageSetURLs writes the plain strings of image-set() as url()s, the
// images they are.
func imageSetURLs(css string) string {
	var b strings.Builder
	for {
		loc := imageSet.FindStringIndex(css)
		if loc == nil {
			b.WriteString(css)
			return b.String()
		}
		open := loc[1] - 1
		b.WriteString(css[:open])
		inner, after, ok := parens(css[open:])
		if !ok {
			b.WriteString(css[open:])
			return b.String()
		}
		b.WriteString("(" + setString.ReplaceAllStringFunc(inner, func(m string) string {
			if strings.HasPrefix(strings.ToLower(m), "url(") {
				return m // a url() already
			}
			return "url(" + m + ")"
		}) + ")")
		css = after
	}
}

// decodeCSS decodes a style sheet's bytes into UTF-8 the way CSS Syntax
// §3.2 says: a byte order mark, else the HTTP charset, else @charset,
// else env (the referring document's or sheet's encoding), else UTF-8.
// It returns the text, its @charset rule gone, and the encoding's name.
func decodeCSS(body []byte, contentType, env string) (string, string) {
	var e encoding.Encoding
	switch {
	case bytes.HasPrefix(body, []byte{0xEF, 0xBB, 0xBF}):
		e, body = unicode.UTF8, body[3:]
	case bytes.HasPrefix(body, []byte{0xFE, 0xFF}):
		e, body = unicode.UTF16(unicode.BigEndian, unicode.IgnoreBOM), body[2:]
	case bytes.HasPrefix(body, []byte{0xFF, 0xFE}):
		e, body = unicode.UTF16(unicode.LittleEndian, unicode.IgnoreBOM), body[2:]
	}
	if e == nil {
		if _, params, err := mime.ParseMediaType(contentType); err == nil {
			e = lookupEncoding(params["charset"])
		}
	}
	if e == nil {
		if m := charsetRule.FindSubmatch(body); m != nil {
			if e = lookupEncoding(string(m[1])); e != nil {
				if n, _ := htmlindex.Name(e); strings.HasPrefix(n, "utf-16") {
					e = unicode.UTF8
				}
			}
		}
	}
	if e == nil {
		e = lookupEncoding(env)
	}
	if e == nil {
		e = unicode.UTF8
	}
	text, err := e.NewDecoder().Bytes(body)
	if err != nil {
		text = bytes.ToValidUTF8(body, []byte("\uFFFD"))
	}
	name, err := htmlindex.Name(e)
	if err != nil {
		name = "utf-8"
	}
	return charsetRule.ReplaceAllString(string(text), ""), name
}

// charsetRule is @charset as CSS reads it: those exact bytes, at the start.
var charsetRule = regexp.MustCompile(`^@charset "([^"]*)";`)

func lookupEncoding(label string) encoding.Encoding {
	if strings.TrimSpace(label) == "" {
		return nil
	}
	e, err := htmlindex.Get(label)
	if err != nil {
		return nil
	}
	return e
}

// importRule is one @import: its URL and the conditions its sheet
// applies under.
type importRule struct {
	url      string
	layer    bool   // layer or layer(name)
	name     string // the layer's name, "" for an anonymous layer
	supports string // the supports() condition
	media    string // the media query list
}

// wrap puts an imported sheet's text in the blocks that give it the
// import's layer, supports() condition and media, as CSS nests them: the
// layer inside the conditions.
func (im importRule) wrap(sheet string) string {
	if im.layer {
		sheet = strings.TrimSpace("@layer "+im.name) + " {\n" + sheet + "\n}"
	}
	if im.supports != "" {
		cond := im.supports
		if declaration.MatchString(cond) {
			cond = "(" + cond + ")"
		}
		sheet = "@supports " + cond + " {\n" + sheet + "\n}"
	}
	if im.media != "" && !strings.EqualFold(im.media, "all") {
		sheet = "@media " + im.media + " {\n" + sheet + "\n}"
	}
	return sheet
}

// declaration is a supports() argument that is a declaration rather than
// a condition.
var declaration = regexp.MustCompile(`^\s*-?[A-Za-z_][-\w]*\s*:`)

// splitImports reads the @import rules at the start of a sheet (where CSS
// honours them: after @charset and @layer statements only). head is what
// comes before them to keep (comments, @layer statements), rest what
// follows them; @charset rules are dropped.
func splitImports(css string) (head string, imports []importRule, rest string) {
	var h strings.Builder
	i := 0
	for {
		j := skipSpace(css, i)
		h.WriteString(css[i:j])
		i = j
		low := strings.ToLower(css[i:min(len(css), i+8)])
		switch {
		case strings.HasPrefix(low, "@charset"):
			i = statementEnd(css, i)
		case strings.HasPrefix(low, "@layer") && isStatement(css, i):
			end := statementEnd(css, i)
			h.WriteString(css[i:end])
			i = end
		case strings.HasPrefix(low, "@import"):
			end := statementEnd(css, i)
			if im, ok := parseImport(strings.TrimSuffix(css[i+len("@import"):end], ";")); ok {
				imports = append(imports, im)
			}
			i = end
		default:
			return h.String(), imports, css[i:]
		}
	}
}

// skipSpace skips white space, comments and <!-- --> from i.
func skipSpace(css string, i int) int {
	for i < len(css) {
		switch {
		case strings.ContainsRune(" \t\r\n\f", rune(css[i])):
			i++
		case strings.HasPrefix(css[i:], "/*"):
			end := strings.Index(css[i+2:], "*/")
			if end < 0 {
				return len(css)
			}
			i += end + 4
		case strings.HasPrefix(css[i:], "<!--"):
			i += 4
		case strings.HasPrefix(css[i:], "-->"):
			i += 3
		default:
			return i
		}
	}
	return i
}

// statementEnd returns the index after the ';' ending the at-rule at i
// (outside strings and brackets), or the end of css.
func statementEnd(css string, i int) int {
	depth := 0
	for ; i < len(css); i++ {
		switch c := css[i]; c {
		case '"', '\'':
			end := strings.IndexByte(css[i+1:], c)
			if end < 0 {
				return len(css)
			}
			i += end + 1
		case '\\':
			i++
		case '(', '[':
			depth++
		case ')', ']':
			depth--
		case '{':
			if depth == 0 {
				return i // a block: not a statement
			}
		case ';':
			if depth <= 0 {
				return i + 1
			}
		}
	}
	return len(css)
}

// isStatement says whether the at-rule at i ends in ';' rather than a
// block (an @layer statement rather than an @layer block).
func isStatement(css string, i int) bool {
	end := statementEnd(css, i)
	return end > 0 && css[end-1] == ';'
}

// parseImport reads an @import's prelude: url("x") or "x", then
// layer/layer(name), supports(...), and a media query list.
func parseImport(p string) (importRule, bool) {
	var im importRule
	p = strings.TrimSpace(p)
	switch {
	case len(p) > 0 && (p[0] == '"' || p[0] == '\''):
		end := strings.IndexByte(p[1:], p[0])
		if end < 0 {
			return im, false
		}
		im.url, p = p[1:end+1], p[end+2:]
	case len(p) > 4 && strings.EqualFold(p[:4], "url("):
		arg, after, ok := parens(p[3:])
		if !ok {
			return im, false
		}
		arg = strings.TrimSpace(arg)
		if len(arg) >= 2 && (arg[0] == '"' || arg[0] == '\'') && arg[len(arg)-1] == arg[0] {
			arg = arg[1 : len(arg)-1]
		}
		im.url, p = arg, after
	default:
		return im, false
	}
	p = strings.TrimSpace(p)
	if low := strings.ToLower(p); strings.HasPrefix(low, "layer(") {
		name, after, ok := parens(p[5:])
		if !ok {
			return im, false
		}
		im.layer, im.name, p = true, strings.TrimSpace(name), strings.TrimSpace(after)
	} else if low == "layer" || strings.HasPrefix(low, "layer ") || strings.HasPrefix(low, "layer\n") {
		im.layer, p = true, strings.TrimSpace(p[5:])
	}
	if strings.HasPrefix(strings.ToLower(p), "supports(") {
		cond, after, ok := parens(p[8:])
		if !ok {
			return im, false
		}
		im.supports, p = strings.TrimSpace(cond), strings.TrimSpace(after)
	}
	im.media = p
	return im, true
}

// parens reads the balanced parentheses that s starts with, returning
// their content and what follows.
func parens(s string) (string, string, bool) {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"', '\'':
			end := strings.IndexByte(s[i+1:], c)
			if end < 0 {
				return "", "", false
			}
			i += end + 1
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return s[1:i], s[i+1:], true
			}
		}
	}
	return "", "", false
}
