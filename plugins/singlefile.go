package plugins

import (
	"context"
	"encoding/base64"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/PuerkitoBio/goquery"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/folio-archive/folio/archive"
)

// SingleFile writes singlefile/singlefile.html: the rendered DOM as one
// self-contained page. Images, style sheets (with their own url()s and
// @imports), fonts and icons become data: URLs, scripts and event handlers
// are removed, links are made absolute, and a Content-Security-Policy
// keeps the saved page from reaching the network, so it renders the same
// with no network at all.
type SingleFile struct{ builtin }

// maxResource bounds one inlined resource; a larger one is left out.
const maxResource = 20 << 20

// offlineCSP allows only what the page itself carries.
const offlineCSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline' data:; font-src data:; media-src data:; frame-src data:"

func (p *SingleFile) Run(ctx context.Context, job *Job) Outcome {
	_, cancel, o := tab(ctx, job)
	if o != nil {
		return *o
	}
	cancel()
	doc, err := job.Page.Capture(ctx)
	if err != nil {
		return failed("read the DOM: %v", err)
	}
	page, err := inline(ctx, job, doc.HTML, doc.URL)
	if err != nil {
		return failed("%v", err)
	}
	return save(job, p.name, "singlefile.html", []byte(page))
}

// inliner fetches each resource once per page.
type inliner struct {
	ctx   context.Context
	job   *Job
	mu    sync.Mutex
	cache map[string]string // absolute URL -> data: URL ("" when it could not be fetched)
}

func inline(ctx context.Context, job *Job, dom, pageURL string) (string, error) {
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(dom))
	if err != nil {
		return "", err
	}
	base, err := url.Parse(pageURL)
	if err != nil {
		return "", err
	}
	if href, ok := doc.Find("base[href]").First().Attr("href"); ok {
		if u, err := base.Parse(href); err == nil {
			base = u
		}
	}
	in := &inliner{ctx: ctx, job: job, cache: map[string]string{}}
	doc.Find("script, noscript, base, link[rel~=preload], link[rel~=prefetch], link[rel~=modulepreload], link[rel~=dns-prefetch], link[rel~=preconnect], meta[http-equiv]").Remove()
	doc.Find("*").Each(func(_ int, s *goquery.Selection) {
		for _, a := range s.Nodes[0].Attr {
			if strings.HasPrefix(strings.ToLower(a.Key), "on") {
				s.RemoveAttr(a.Key)
			}
		}
		if st, ok := s.Attr("style"); ok && strings.Contains(st, "url(") {
			s.SetAttr("style", in.css(st, base, 0))
		}
	})
	doc.Find("style").Each(func(_ int, s *goquery.Selection) {
		setRawText(s, in.css(s.Text(), base, 0))
	})
	doc.Find("link[rel~=stylesheet][href]").Each(func(_ int, s *goquery.Selection) {
		href, _ := s.Attr("href")
		u, err := base.Parse(href)
		if err != nil {
			s.Remove()
			return
		}
		f, err := in.fetch(u.String())
		if err != nil {
			s.Remove()
			return
		}
		style := &html.Node{Type: html.ElementNode, Data: "style", DataAtom: atom.Style}
		if media, ok := s.Attr("media"); ok {
			style.Attr = []html.Attribute{{Key: "media", Val: media}}
		}
		s.ReplaceWithNodes(style)
		setRawText(goquery.NewDocumentFromNode(style).Selection, in.css(string(f.Body), u, 0))
	})
	for _, a := range []struct{ sel, attr string }{
		{"img[src]", "src"}, {"input[type=image][src]", "src"}, {"video[poster]", "poster"},
		{"link[rel~=icon][href]", "href"}, {"link[rel~=apple-touch-icon][href]", "href"},
		{"source[src]", "src"}, {"audio[src]", "src"}, {"video[src]", "src"}, {"track[src]", "src"},
		{"image[href]", "href"}, {"use[href]", "href"},
	} {
		doc.Find(a.sel).Each(func(_ int, s *goquery.Selection) {
			v, _ := s.Attr(a.attr)
			s.SetAttr(a.attr, in.dataURL(v, base))
		})
	}
	doc.Find("img[srcset], source[srcset]").Each(func(_ int, s *goquery.Selection) {
		set, _ := s.Attr("srcset")
		first := strings.Fields(strings.TrimSpace(strings.Split(set, ",")[0]))
		s.RemoveAttr("srcset")
		s.RemoveAttr("sizes")
		if len(first) > 0 {
			if _, has := s.Attr("src"); !has || goquery.NodeName(s) == "source" {
				s.SetAttr("srcset", in.dataURL(first[0], base))
			}
		}
	})
	doc.Find("a[href], area[href], form[action]").Each(func(_ int, s *goquery.Selection) {
		attr := "href"
		if goquery.NodeName(s) == "form" {
			attr = "action"
		}
		v, _ := s.Attr(attr)
		if strings.HasPrefix(strings.ToLower(strings.TrimSpace(v)), "javascript:") {
			s.SetAttr(attr, "#")
			return
		}
		if u, err := base.Parse(v); err == nil && !strings.HasPrefix(v, "#") {
			s.SetAttr(attr, u.String())
		}
	})
	doc.Find("iframe[src], frame[src], object[data], embed[src]").Each(func(_ int, s *goquery.Selection) {
		s.RemoveAttr("src")
		s.RemoveAttr("data")
	})
	head := doc.Find("head")
	if head.Length() == 0 {
		doc.Find("html").PrependHtml("<head></head>")
		head = doc.Find("head")
	}
	head.PrependHtml(`<meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="` + offlineCSP + `">`)
	out, err := goquery.OuterHtml(doc.Selection)
	if err != nil {
		return "", err
	}
	return out, nil // the document's doctype is part of it
}

// setRawText makes css the only content of a <style> element. The text is
// raw, not escaped: a style element's content is never parsed as HTML.
func setRawText(s *goquery.Selection, css string) {
	n := s.Nodes[0]
	for c := n.FirstChild; c != nil; c = n.FirstChild {
		n.RemoveChild(c)
	}
	n.AppendChild(&html.Node{Type: html.TextNode, Data: strings.ReplaceAll(css, "</style", `<\/style`)})
}

// fetch gets one resource (cached per page).
func (in *inliner) fetch(u string) (*fetched, error) {
	ctx, cancel := withTimeout(in.ctx, 20*time.Second)
	defer cancel()
	f, err := get(ctx, in.job, u, maxResource)
	if err == nil && f.Status/100 != 2 {
		err = &url.Error{Op: "get", URL: u, Err: errStatus(f.Status)}
	}
	return f, err
}

type errStatus int

func (e errStatus) Error() string { return "HTTP " + strconv.Itoa(int(e)) }

// dataURL returns ref (relative to base) as a data: URL, or "" (leaving
// the attribute empty rather than pointing at the network) when it cannot
// be fetched. data: and fragment references stay as they are.
func (in *inliner) dataURL(ref string, base *url.URL) string {
	ref = strings.TrimSpace(ref)
	if ref == "" || strings.HasPrefix(ref, "data:") || strings.HasPrefix(ref, "#") {
		return ref
	}
	u, err := base.Parse(ref)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return ""
	}
	frag := ""
	if u.Fragment != "" {
		frag = "#" + u.Fragment
		u.Fragment = ""
	}
	key := u.String()
	in.mu.Lock()
	d, ok := in.cache[key]
	in.mu.Unlock()
	if !ok {
		if f, err := in.fetch(key); err == nil {
			d = encodeData(f, key)
		}
		in.mu.Lock()
		in.cache[key] = d
		in.mu.Unlock()
	}
	if d == "" {
		return ""
	}
	return d + frag
}

func encodeData(f *fetched, u string) string {
	ct := f.ContentType
	if ct == "" || ct == "application/octet-stream" || ct == "text/plain" {
		if guess := archive.WebType(strings.SplitN(u, "?", 2)[0]); guess != "application/octet-stream" {
			ct = guess
		}
	}
	if ct == "" {
		ct = "application/octet-stream"
	}
	return "data:" + ct + ";base64," + base64.StdEncoding.EncodeToString(f.Body)
}

var (
	cssURL    = regexp.MustCompile(`url\(\s*(?:"([^"]*)"|'([^']*)'|([^)'"\s]*))\s*\)`)
	cssImport = regexp.MustCompile(`@import\s+(?:url\(\s*)?(?:"([^"]*)"|'([^']*)'|([^)'"\s;]+))\s*\)?\s*([^;]*);`)
)

// css inlines a style sheet's @imports (3 levels deep) and url()s,
// resolving them against the sheet's own URL.
func (in *inliner) css(css string, base *url.URL, depth int) string {
	css = cssImport.ReplaceAllStringFunc(css, func(m string) string {
		g := cssImport.FindStringSubmatch(m)
		ref := g[1] + g[2] + g[3]
		u, err := base.Parse(ref)
		if err != nil || depth >= 3 {
			return ""
		}
		f, err := in.fetch(u.String())
		if err != nil {
			return ""
		}
		inner := in.css(string(f.Body), u, depth+1)
		if media := strings.TrimSpace(g[4]); media != "" {
			return "@media " + media + " {\n" + inner + "\n}"
		}
		return inner
	})
	return cssURL.ReplaceAllStringFunc(css, func(m string) string {
		g := cssURL.FindStringSubmatch(m)
		ref := g[1] + g[2] + g[3]
		if strings.HasPrefix(ref, "#") || strings.HasPrefix(ref, "data:") {
			return m
		}
		return `url("` + in.dataURL(ref, base) + `")`
	})
}

var _ Plugin = (*SingleFile)(nil)
