package plugins

import (
	"context"
	"encoding/base64"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/PuerkitoBio/goquery"
	"golang.org/x/net/html"
	"golang.org/x/sync/errgroup"

	"github.com/folio-archive/folio/archive"
)

// SingleFile writes singlefile/singlefile.html: the rendered DOM as one
// self-contained page. Images, style sheets (with their own url()s and
// @imports), fonts, icons, canvases, frames and the symbols of external
// SVG sprites become data: URLs or inline markup, scripts and event
// handlers are removed (shadow roots and frame documents included), links
// are made absolute, form state is written into the attributes, and a
// Content-Security-Policy keeps the saved page from reaching the network,
// so it renders the same with no network at all.
type SingleFile struct{ builtin }

// maxResource bounds one inlined resource; a larger one is left out.
const maxResource = 20 << 20

// fetchers is how many resources of a page are fetched at once.
const fetchers = 6

// offlineCSP allows only what the page itself carries. object-src is for
// images in <object>/<embed>, the only content inlined there.
const offlineCSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline' data:; font-src data:; media-src data:; frame-src data:; object-src data:"

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
	page, err := inline(ctx, job, doc)
	if err != nil {
		return failed("%v", err)
	}
	return save(job, p.name, "singlefile.html", []byte(page))
}

// inliner fetches each resource once per page, frames included.
type inliner struct {
	ctx   context.Context
	job   *Job
	mu    sync.Mutex
	cache map[string]*resource // by absolute URL without fragment
	svg   *sprites
}

// resource is one fetch, shared by everyone who asks for its URL.
type resource struct {
	done chan struct{}
	f    *fetched
	err  error
	once sync.Once
	data string // the data: URL, made on first use
}

// inline turns a captured page into one self-contained HTML document.
func inline(ctx context.Context, job *Job, f *Frame) (string, error) {
	in := &inliner{ctx: ctx, job: job, cache: map[string]*resource{}, svg: newSprites()}
	return in.document(f, 0)
}

// document inlines one frame's document; depth counts the frames around it.
func (in *inliner) document(f *Frame, depth int) (string, error) {
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(f.HTML))
	if err != nil {
		return "", err
	}
	base, err := url.Parse(f.URL)
	if err != nil {
		return "", err
	}
	if href, ok := doc.Find("base[href]").First().Attr("href"); ok {
		if u, err := base.Parse(href); err == nil {
			base = u
		}
	}
	applyState(doc)
	doc.Find("script, noscript, base, link[rel~=preload], link[rel~=prefetch], link[rel~=modulepreload], link[rel~=dns-prefetch], link[rel~=preconnect], meta[http-equiv]").Remove()
	in.prefetch(resourceURLs(doc, base))
	doc.Find("*").Each(func(_ int, s *goquery.Selection) {
		for _, a := range s.Nodes[0].Attr {
			if strings.HasPrefix(strings.ToLower(a.Key), "on") {
				s.RemoveAttr(a.Key)
			}
		}
		if st, ok := s.Attr("style"); ok && strings.Contains(st, "url(") {
			s.SetAttr("style", in.css(st, base, f.Charset, false))
		}
	})
	in.styles(doc, base, f.Charset)
	freezeCanvases(doc)
	in.images(doc, base)
	in.svg.inline(in, doc, base, f.URL)
	in.attributes(doc, base)
	absoluteLinks(doc, base)
	in.frames(doc, f, base, depth)
	dropMarkers(doc)
	head := doc.Find("head")
	if head.Length() == 0 {
		doc.Find("html").PrependHtml("<head></head>")
		head = doc.Find("head")
	}
	head.PrependHtml(`<meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="` + offlineCSP + `">`)
	return goquery.OuterHtml(doc.Selection) // the document's doctype is part of it
}

// absoluteLinks points links and forms at the web, javascript: ones at
// nothing.
func absoluteLinks(doc *goquery.Document, base *url.URL) {
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
}

// setRawText makes css the only content of a <style> element. The text is
// raw, not escaped: a style element's content is never parsed as HTML.
func setRawText(n *html.Node, css string) {
	for c := n.FirstChild; c != nil; c = n.FirstChild {
		n.RemoveChild(c)
	}
	n.AppendChild(&html.Node{Type: html.TextNode, Data: strings.ReplaceAll(css, "</style", `<\/style`)})
}

// resolve returns ref relative to base as an absolute http(s) URL without
// its fragment, and the fragment ("" when ref is not fetchable).
func resolve(ref string, base *url.URL) (string, string) {
	ref = strings.TrimSpace(ref)
	if ref == "" || strings.HasPrefix(ref, "data:") || strings.HasPrefix(ref, "#") {
		return "", ""
	}
	u, err := base.Parse(ref)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return "", ""
	}
	frag := u.Fragment
	u.Fragment, u.RawFragment = "", ""
	return u.String(), frag
}

// get fetches one resource (once per page: later callers wait for the
// first one's answer).
func (in *inliner) get(u string) (*fetched, error) {
	return in.resource(u).result()
}

func (in *inliner) resource(u string) *resource {
	in.mu.Lock()
	r, ok := in.cache[u]
	if !ok {
		r = &resource{done: make(chan struct{})}
		in.cache[u] = r
	}
	in.mu.Unlock()
	if !ok {
		ctx, cancel := withTimeout(in.ctx, 20*time.Second)
		r.f, r.err = get(ctx, in.job, u, maxResource)
		cancel()
		if r.err == nil && r.f.Status/100 != 2 {
			r.err = &url.Error{Op: "get", URL: u, Err: errStatus(r.f.Status)}
		}
		close(r.done)
	}
	return r
}

func (r *resource) result() (*fetched, error) {
	<-r.done
	return r.f, r.err
}

// prefetch fetches urls a few at a time, so that the pass that inlines
// them finds them cached.
func (in *inliner) prefetch(urls []string) {
	var g errgroup.Group
	g.SetLimit(fetchers)
	seen := map[string]bool{}
	for _, u := range urls {
		if u == "" || seen[u] {
			continue
		}
		seen[u] = true
		g.Go(func() error {
			in.resource(u)
			return nil
		})
	}
	g.Wait()
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
	u, frag := resolve(ref, base)
	if u == "" {
		return ""
	}
	r := in.resource(u)
	f, err := r.result()
	if err != nil {
		return ""
	}
	r.once.Do(func() { r.data = encodeData(f, u) })
	if frag != "" {
		return r.data + "#" + frag
	}
	return r.data
}

func encodeData(f *fetched, u string) string {
	ct := contentType(f, u)
	if ct == "" {
		ct = "application/octet-stream"
	}
	return "data:" + ct + ";base64," + base64.StdEncoding.EncodeToString(f.Body)
}

// contentType is the response's media type, else the one its URL's
// extension names when the server gave none or a generic one.
func contentType(f *fetched, u string) string {
	ct := f.ContentType
	if ct == "" || ct == "application/octet-stream" || ct == "text/plain" {
		if guess := archive.WebType(strings.SplitN(u, "?", 2)[0]); guess != "application/octet-stream" {
			ct = guess
		}
	}
	return ct
}

var _ Plugin = (*SingleFile)(nil)
