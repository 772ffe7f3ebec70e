package export

import (
	"bytes"
	"strconv"
	"strings"
	"sync"
)

// buffers are the pages' render buffers, reused: a page is written out
// before its buffer is put back.
var buffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

func getBuffer() *bytes.Buffer { return buffers.Get().(*bytes.Buffer) }

func putBuffer(b *bytes.Buffer) {
	if b.Cap() <= 1<<20 {
		b.Reset()
		buffers.Put(b)
	}
}

// The embedded root.html and snapshot.html, written out in Go: the same
// bytes html/template produces from them (TestRenderMatchesTemplates
// compares the two on hostile values), without its reflection per
// action, which was a fifth of a full export's CPU time. Used only when
// neither page template is overridden.
//
// Escaping is html/template's for each context the templates use: text
// and quoted attribute values replace NUL, ", &, ', +, < and > (escText);
// href and src values are first filtered (a scheme other than http,
// https or mailto becomes "#ZgotmplZ") and normalized (bytes outside
// RFC 3986's sets are percent-encoded) (escURL). Notes are HTML already
// (goldmark without raw HTML) and are written as they are.

var htmlReplacements = [256]string{
	0: "\uFFFD", '"': "&#34;", '&': "&amp;", '\'': "&#39;", '+': "&#43;", '<': "&lt;", '>': "&gt;",
}

// escText writes s escaped for HTML text or a quoted attribute value.
func escText(b *bytes.Buffer, s string) {
	written := 0
	for i := 0; i < len(s); i++ {
		if r := htmlReplacements[s[i]]; r != "" {
			b.WriteString(s[written:i])
			b.WriteString(r)
			written = i + 1
		}
	}
	b.WriteString(s[written:])
}

const hexDigits = "0123456789abcdef"

// escURL writes s as the whole value (or its start) of an href or src
// attribute.
func escURL(b *bytes.Buffer, s string) {
	if protocol, _, ok := strings.Cut(s, ":"); ok && !strings.Contains(protocol, "/") &&
		!strings.EqualFold(protocol, "http") && !strings.EqualFold(protocol, "https") && !strings.EqualFold(protocol, "mailto") {
		b.WriteString("#ZgotmplZ")
		return
	}
	done := 0 // s[done:i] is to be copied as it is
	for i := 0; i < len(s); i++ {
		c := s[i]
		if urlPlain[c] || c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			continue
		}
		b.WriteString(s[done:i])
		done = i + 1
		switch c {
		case '&':
			b.WriteString("&amp;")
		case '+':
			b.WriteString("&#43;")
		default:
			b.WriteByte('%')
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&15])
		}
	}
	b.WriteString(s[done:])
}

// urlPlain marks the bytes escURL copies as they are; the rest are
// escaped (a run of plain bytes is copied whole).
var urlPlain = plainBytes("-._~!#$*,/:;=?@[]")

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func writeInt(b *bytes.Buffer, n int) {
	var buf [20]byte
	b.Write(strconv.AppendInt(buf[:0], int64(n), 10))
}

// renderSnapshot writes templates/snapshot.html for v.
func renderSnapshot(b *bytes.Buffer, v *detailView) {
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta http-equiv=\"Content-Security-Policy\" content=\"")
	escText(b, v.CSP)
	b.WriteString("\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<meta name=\"referrer\" content=\"no-referrer\">\n<meta name=\"description\" content=\"Snapshot of ")
	escText(b, v.URL)
	b.WriteString(" saved ")
	escText(b, v.Saved)
	b.WriteString(" (")
	escText(b, v.StatusLabel)
	b.WriteString("): its captured copies, files and notes.\">\n<link rel=\"icon\" href=\"data:,\">\n<title>")
	escText(b, v.TabTitle)
	b.WriteString("</title>\n<link rel=\"stylesheet\" href=\"")
	escURL(b, v.Site)
	b.WriteString("folio.css\">\n<script src=\"")
	escURL(b, v.Site)
	b.WriteString("folio.js\"></script>\n</head>\n<body class=\"folio-snapshot\">\n<header class=\"bar\">\n  <a class=\"brand\" href=\"")
	escURL(b, v.RootHref)
	b.WriteString("\"><span class=\"ic ic-mark mark\" aria-hidden=\"true\"></span>")
	escText(b, v.SiteTitle)
	b.WriteString("</a>\n  <span class=\"meta\"><a href=\"")
	escURL(b, v.ManifestHref)
	b.WriteString("\"><span class=\"ic ic-folder\" aria-hidden=\"true\"></span> Snapshot manifest</a></span>\n</header>\n<main>\n<section class=\"summary\">\n  <h1>")
	if v.Favicon != "" {
		b.WriteString("<img src=\"")
		escURL(b, v.Favicon)
		b.WriteString("\" data-fallbacks=\"")
		escText(b, v.FaviconFallbacks)
		b.WriteString("\" class=\"favicon\" alt=\"\">")
	}
	escText(b, v.Title)
	b.WriteString("</h1>\n  <p class=\"original\">")
	if v.Linkable {
		b.WriteString("<a class=\"snapshot-url\" href=\"")
		escURL(b, v.URL)
		b.WriteString("\" target=\"_blank\" rel=\"noopener noreferrer\">")
		escText(b, v.URL)
		b.WriteString("</a>")
	} else {
		b.WriteString("<span class=\"snapshot-url\">")
		escText(b, v.URL)
		b.WriteString("</span>")
	}
	b.WriteString("</p>\n  <dl class=\"facts\">\n    <dt>Saved</dt><dd><a href=\"./index.html\">")
	escText(b, v.Saved)
	b.WriteString("</a></dd>\n    <dt>Status</dt><dd><span class=\"status-pill status-")
	escText(b, v.State)
	b.WriteString("\">")
	escText(b, v.StatusLabel)
	b.WriteString("</span></dd>\n    <dt>Size</dt><dd>")
	escText(b, v.Size)
	b.WriteString("</dd>\n    <dt>Tags</dt><dd>")
	for _, t := range v.Tags {
		b.WriteString("<span class=\"snapshot-tag\">")
		escText(b, t)
		b.WriteString("</span>")
	}
	if len(v.Tags) == 0 {
		b.WriteString("<span class=\"empty-value\">untagged</span>")
	}
	b.WriteString("</dd>\n    <dt>Files</dt><dd><a href=\"")
	escURL(b, v.ManifestHref)
	b.WriteString("\">index.jsonl</a></dd>\n  </dl>\n</section>\n")
	if p := v.Preview; p != nil {
		b.WriteString("<section class=\"preview\">\n  <div class=\"preview-head\"><span>")
		escText(b, p.Plugin)
		b.WriteString("</span><a href=\"")
		escURL(b, p.Open)
		b.WriteString("\" target=\"_blank\" rel=\"noopener\">open <span class=\"ic ic-external\" aria-hidden=\"true\"></span></a></div>\n  ")
		if p.Kind == "image" {
			b.WriteString("<img id=\"preview-frame\" class=\"preview-image\" src=\"")
			escURL(b, p.Href)
			b.WriteString("\" alt=\"")
			escText(b, p.Plugin)
			b.WriteString("\">")
		} else if p.Kind == "pdf" {
			b.WriteString("<iframe id=\"preview-frame\" class=\"preview-frame preview-pdf\" src=\"")
			escURL(b, p.Href)
			b.WriteString("\" referrerpolicy=\"no-referrer\" title=\"")
			escText(b, p.Plugin)
			b.WriteString(" preview\"></iframe>")
		} else {
			b.WriteString("<iframe id=\"preview-frame\" name=\"preview\" class=\"preview-frame\" src=\"")
			escURL(b, p.Href)
			b.WriteString("\" sandbox=\"")
			escText(b, p.Sandbox)
			b.WriteString("\" referrerpolicy=\"no-referrer\" title=\"")
			escText(b, p.Plugin)
			b.WriteString(" preview\"></iframe>")
		}
		b.WriteString("\n</section>")
	} else {
		b.WriteString("<section class=\"preview empty\"><p class=\"empty-value\">")
		escText(b, v.Empty)
		b.WriteString("</p></section>")
	}
	b.WriteString("\n")
	if len(v.Cards) > 0 {
		b.WriteString("<section class=\"cards\">\n")
		for i := range v.Cards {
			c := &v.Cards[i]
			b.WriteString("<article class=\"card card-")
			escText(b, c.Plugin)
			b.WriteString("\">\n  <div class=\"card-thumb\">")
			switch {
			case c.Text != "":
				b.WriteString("<pre class=\"card-text\">")
				escText(b, c.Text)
				b.WriteString("</pre>")
			case c.Kind == "image":
				b.WriteString("<img src=\"")
				escURL(b, c.Href)
				b.WriteString("\" loading=\"lazy\" alt=\"\">")
			case c.Kind == "html":
				b.WriteString("<iframe src=\"")
				escURL(b, c.Href)
				b.WriteString("\" sandbox=\"")
				escText(b, c.Sandbox)
				b.WriteString("\" loading=\"lazy\" tabindex=\"-1\" referrerpolicy=\"no-referrer\" title=\"")
				escText(b, c.Plugin)
				b.WriteString("\"></iframe>")
			default:
				b.WriteString("<span class=\"card-kind\">")
				escText(b, c.Ext)
				b.WriteString("</span>")
			}
			b.WriteString("</div>\n  <h2><a href=\"")
			escURL(b, c.Open)
			b.WriteString("\"")
			if c.Previewable {
				b.WriteString(" data-preview=\"")
				escText(b, c.Href)
				b.WriteString("\"")
			}
			b.WriteString(">")
			escText(b, c.Plugin)
			b.WriteString("</a></h2>\n  <p class=\"card-path\"><a href=\"")
			escURL(b, c.Open)
			b.WriteString("\" target=\"_blank\" rel=\"noopener\">")
			escText(b, c.Path)
			b.WriteString("</a> <small>")
			escText(b, c.Size)
			b.WriteString("</small></p>\n")
			if len(c.Files) > 0 {
				b.WriteString("  <ul class=\"card-files\">")
				for _, f := range c.Files {
					b.WriteString("<li><a href=\"")
					escURL(b, f.Href)
					b.WriteString("\">")
					if f.Dir != "" {
						b.WriteString("<span class=\"card-dir\">")
						escText(b, f.Dir)
						b.WriteString("</span>")
					}
					escText(b, f.Name)
					b.WriteString("</a></li>")
				}
				if c.More != "" {
					b.WriteString("<li class=\"card-more\">")
					escText(b, c.More)
					b.WriteString("</li>")
				}
				b.WriteString("</ul>\n")
			}
			b.WriteString("</article>\n")
		}
		b.WriteString("</section>")
	}
	b.WriteString("\n")
	if len(v.Media) > 0 {
		b.WriteString("<section class=\"media\"><h2>Media</h2><ul>\n")
		for i := range v.Media {
			m := &v.Media[i]
			b.WriteString("<li class=\"media-")
			escText(b, m.Type)
			b.WriteString("\">")
			if m.Playable {
				if m.Type == "video" {
					b.WriteString("<video controls preload=\"none\" src=\"")
					escURL(b, m.Href)
					b.WriteString("\"></video>")
				} else {
					b.WriteString("<audio controls preload=\"none\" src=\"")
					escURL(b, m.Href)
					b.WriteString("\"></audio>")
				}
			}
			b.WriteString("<a href=\"")
			escURL(b, m.Href)
			b.WriteString("\">")
			escText(b, m.Name)
			b.WriteString("</a> <small>")
			escText(b, m.Size)
			b.WriteString("</small></li>\n")
		}
		b.WriteString("</ul></section>")
	}
	b.WriteString("\n")
	if len(v.Downloads) > 0 {
		b.WriteString("<section class=\"downloads\"><h2>Downloads</h2><ul>\n")
		for _, d := range v.Downloads {
			b.WriteString("<li><a href=\"")
			escURL(b, d.Href)
			b.WriteString("\" download>")
			escText(b, d.Name)
			b.WriteString("</a> <small>")
			escText(b, d.Size)
			b.WriteString("</small>")
			if d.Records != "" {
				b.WriteString(" <small class=\"warc-records\">")
				escText(b, d.Records)
				b.WriteString("</small>")
			}
			b.WriteString("</li>\n")
		}
		b.WriteString("</ul></section>")
	}
	b.WriteString("\n")
	if len(v.Failed) > 0 {
		b.WriteString("<section class=\"failed\"><h2>Failed</h2><ul>")
		for _, f := range v.Failed {
			b.WriteString("<li>")
			escText(b, f.Plugin)
			b.WriteString(" (failed)")
			if f.Reason != "" {
				b.WriteString(": <span class=\"failed-reason\">")
				escText(b, f.Reason)
				b.WriteString("</span>")
			}
			b.WriteString("</li>")
		}
		b.WriteString("</ul></section>")
	}
	b.WriteString("\n")
	if v.Notes != "" {
		b.WriteString("<section class=\"notes\"><h2>Notes</h2>")
		b.WriteString(string(v.Notes))
		b.WriteString("</section>")
	}
	b.WriteString("\n")
	if len(v.Related) > 0 {
		b.WriteString("<section class=\"related\"><h2>Other captures of this URL</h2>\n")
		for _, y := range v.Related {
			b.WriteString("<h3>")
			writeInt(b, y.Year)
			b.WriteString("</h3><ul>")
			for _, it := range y.Items {
				b.WriteString("<li><a href=\"")
				escURL(b, it.Href)
				b.WriteString("\">")
				escText(b, it.Saved)
				b.WriteString("</a> ")
				escText(b, it.Title)
				b.WriteString("</li>")
			}
			b.WriteString("</ul>\n")
		}
		b.WriteString("</section>")
	}
	b.WriteString("\n</main>\n<footer>Generated by folio ")
	escText(b, v.Version)
	b.WriteString(". <a href=\"")
	escURL(b, v.RootHref)
	b.WriteString("\">All snapshots</a> · <a href=\"")
	escURL(b, v.ManifestHref)
	b.WriteString("\">Snapshot manifest</a></footer>\n</body>\n</html>\n")
}

// renderRoot writes templates/root.html for v.
func renderRoot(b *bytes.Buffer, v *rootView) {
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta http-equiv=\"Content-Security-Policy\" content=\"")
	escText(b, v.CSP)
	b.WriteString("\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<meta name=\"referrer\" content=\"no-referrer\">\n<meta name=\"description\" content=\"")
	escText(b, v.Title)
	b.WriteString(": ")
	if v.Page == 1 {
		writeInt(b, v.Total)
		b.WriteString(" ")
	}
	b.WriteString("snapshots of web pages, newest first")
	if v.Pages > 1 {
		b.WriteString(" (page ")
		writeInt(b, v.Page)
		b.WriteString(" of ")
		writeInt(b, v.Pages)
		b.WriteString(")")
	}
	b.WriteString(", searchable and readable offline.\">\n<link rel=\"icon\" href=\"data:,\">\n<title>")
	escText(b, v.Title)
	if v.Pages > 1 {
		b.WriteString(" · page ")
		writeInt(b, v.Page)
		b.WriteString(" of ")
		writeInt(b, v.Pages)
	}
	b.WriteString("</title>\n<link rel=\"stylesheet\" href=\"")
	escURL(b, v.Site)
	b.WriteString("folio.css\">\n<script src=\"")
	escURL(b, v.Site)
	b.WriteString("folio.js\"></script>\n</head>\n<body class=\"folio-root\" data-root=\"")
	escText(b, v.DataRoot)
	b.WriteString("\" data-site=\"")
	escText(b, v.Site)
	b.WriteString("\" data-pages=\"")
	writeInt(b, v.Pages)
	b.WriteString("\" data-page=\"")
	writeInt(b, v.Page)
	b.WriteString("\">\n<header class=\"bar\">\n  <a class=\"brand\" href=\"")
	escURL(b, v.RootHref)
	b.WriteString("\"><span class=\"ic ic-mark mark\" aria-hidden=\"true\"></span>")
	escText(b, v.Title)
	b.WriteString("</a>\n  <span class=\"meta\">Portable static archive")
	if v.Page == 1 {
		b.WriteString(" · ")
		writeInt(b, v.Total)
		b.WriteString(" snapshots")
	}
	b.WriteString("</span>\n</header>\n<main>\n<div class=\"toolbar\">\n  <input id=\"static-search\" type=\"search\" placeholder=\"Filter title, URL, tag, or status…\" autocomplete=\"off\" aria-label=\"Filter snapshots\">\n  <label class=\"search-text\" title=\"Also look in the start of the text captured from each page (loaded when ticked)\"><input id=\"static-search-text\" type=\"checkbox\"> captured text</label>\n  <span class=\"count\"><span id=\"visible-count\">")
	writeInt(b, len(v.Rows))
	if v.Page == 1 {
		b.WriteString("</span> <span id=\"count-of\">of ")
		writeInt(b, v.Total)
		b.WriteString(" snapshots</span></span>")
	} else {
		b.WriteString("</span> <span id=\"count-of\">snapshots on this page</span></span>")
	}
	b.WriteString("\n  <span id=\"search-state\" class=\"search-state\" aria-live=\"polite\"></span>\n</div>\n")
	renderPager(b, v)
	b.WriteString("\n<table id=\"table-bookmarks\">\n<thead><tr><th class=\"col-saved\">Saved</th><th class=\"col-preview\">Preview</th><th class=\"col-snapshot\">Snapshot")
	if v.Page == 1 {
		b.WriteString(" (")
		writeInt(b, v.Total)
		b.WriteString(")")
	}
	b.WriteString("</th><th class=\"col-tags\">Tags</th><th class=\"col-status\">Status</th><th class=\"col-files\">Files</th><th class=\"col-size\">Size</th></tr></thead>\n<tbody id=\"page-rows\">\n")
	for i := range v.Rows {
		renderRow(b, &v.Rows[i])
	}
	if len(v.Rows) == 0 {
		b.WriteString(emptyCollectionRow)
	}
	b.WriteString("</tbody>\n<tbody id=\"search-rows\" hidden></tbody>\n</table>\n")
	renderPager(b, v)
	b.WriteString("\n</main>\n<footer>Generated by folio ")
	escText(b, v.Version)
	b.WriteString(". <a href=\"")
	escURL(b, v.ManifestHref)
	b.WriteString("\">Download JSONL metadata</a></footer>\n</body>\n</html>\n\n") // the second: after {{define "pager"}}
}

// emptyCollectionRow is what the root page of an empty selection says.
const emptyCollectionRow = "<tr class=\"empty-collection\"><td colspan=\"7\">No snapshots yet. Archive a page with <code>folio add URL</code> (or a bookmarks file with <code>folio add --from bookmarks.html</code>), then run <code>folio export</code> again.</td></tr>\n"

func renderRow(b *bytes.Buffer, r *rowView) {
	b.WriteString("<tr class=\"snapshot-row status-")
	escText(b, r.Status)
	b.WriteString("\">\n<td class=\"snapshot-time\" title=\"Bookmarked: ")
	escText(b, r.Saved)
	b.WriteString("\" data-sort=\"")
	escText(b, r.Epoch)
	b.WriteString("\"><a href=\"")
	escURL(b, r.Href)
	b.WriteString("\"><span>")
	escText(b, r.Date)
	b.WriteString("</span><small>")
	escText(b, r.Time)
	b.WriteString("</small></a></td>\n<td class=\"snapshot-preview-cell\"><a href=\"")
	escURL(b, r.Href)
	b.WriteString("\" tabindex=\"-1\" aria-hidden=\"true\">")
	switch {
	case r.Pending:
		b.WriteString("<span class=\"snapshot-preview-empty pending-label\">")
		escText(b, r.StatusLabel)
		b.WriteString("</span>")
	case r.Preview != "":
		b.WriteString("<img src=\"")
		escURL(b, r.Preview)
		b.WriteString("\" data-fallbacks=\"")
		escText(b, r.PreviewFallbacks)
		b.WriteString("\" class=\"snapshot-preview screenshot\" loading=\"lazy\" alt=\"\">")
	default:
		b.WriteString("<span class=\"snapshot-preview-empty\">no preview</span>")
	}
	b.WriteString("</a></td>\n<td class=\"snapshot-title-cell\"><a class=\"snapshot-title\" href=\"")
	escURL(b, r.Href)
	b.WriteString("\"")
	if r.FullTitle != "" {
		b.WriteString(" title=\"")
		escText(b, r.FullTitle)
		b.WriteString("\"")
	}
	b.WriteString(">")
	if r.Favicon != "" {
		b.WriteString("<img src=\"")
		escURL(b, r.Favicon)
		b.WriteString("\" data-fallbacks=\"")
		escText(b, r.FaviconFallbacks)
		b.WriteString("\" class=\"favicon\" loading=\"lazy\" alt=\"\">")
	}
	escText(b, r.Title)
	b.WriteString("</a>")
	if r.Linkable {
		b.WriteString("<a class=\"snapshot-url\" href=\"")
		escURL(b, r.URL)
		b.WriteString("\" title=\"")
		escText(b, r.URL)
		b.WriteString("\" target=\"_blank\" rel=\"noopener noreferrer\">")
		escText(b, r.URL)
		b.WriteString("</a>")
	} else {
		b.WriteString("<span class=\"snapshot-url\" title=\"")
		escText(b, r.URL)
		b.WriteString("\">")
		escText(b, r.URL)
		b.WriteString("</span>")
	}
	b.WriteString("<span class=\"snapshot-mobile-saved\">")
	escText(b, r.Date)
	b.WriteString("</span></td>\n<td class=\"snapshot-tags\">")
	for _, t := range r.Tags {
		b.WriteString("<span class=\"snapshot-tag\">")
		escText(b, t)
		b.WriteString("</span>")
	}
	b.WriteString("</td>\n<td class=\"snapshot-status\"><span class=\"status-pill status-")
	escText(b, r.State)
	b.WriteString("\">")
	escText(b, r.StatusLabel)
	b.WriteString("</span></td>\n<td class=\"snapshot-files-cell\"><span class=\"files-icons\">")
	for _, ic := range r.Icons {
		b.WriteString("<a href=\"")
		escURL(b, ic.Href)
		b.WriteString("\" class=\"exists-True ic ic-")
		escText(b, ic.Icon)
		b.WriteString("\" title=\"")
		escText(b, ic.Plugin)
		b.WriteString("\"><span class=\"sr\">")
		escText(b, ic.Plugin)
		b.WriteString("</span></a>")
	}
	b.WriteString("</span></td>\n<td class=\"snapshot-size-cell\"><a href=\"")
	escURL(b, r.SizeHref)
	b.WriteString("\" title=\"View archived file manifest\">")
	escText(b, r.Size)
	b.WriteString("</a><small>")
	writeInt(b, r.Outputs)
	b.WriteString(" output")
	if r.Outputs != 1 {
		b.WriteString("s")
	}
	b.WriteString("</small>")
	if r.Failures > 0 {
		b.WriteString("<small class=\"failures\">")
		writeInt(b, r.Failures)
		b.WriteString(" failed</small>")
	}
	b.WriteString("</td>\n</tr>\n")
}

func renderPager(b *bytes.Buffer, v *rootView) {
	if v.Pages <= 1 {
		return
	}
	b.WriteString("<nav class=\"pager\" aria-label=\"Pages\">")
	if v.PrevHref != "" {
		b.WriteString("<a href=\"")
		escURL(b, v.PrevHref)
		b.WriteString("\" rel=\"prev\"><span class=\"ic ic-prev\" aria-hidden=\"true\"></span>newer</a>")
	}
	for _, l := range v.PageLinks {
		switch {
		case l.Gap:
			b.WriteString("<span class=\"gap\">…</span>")
		case l.Current:
			b.WriteString("<span class=\"current\">")
			writeInt(b, l.N)
			b.WriteString("</span>")
		default:
			b.WriteString("<a href=\"")
			escURL(b, l.Href)
			b.WriteString("\">")
			writeInt(b, l.N)
			b.WriteString("</a>")
		}
	}
	if v.NextHref != "" {
		b.WriteString("<a href=\"")
		escURL(b, v.NextHref)
		b.WriteString("\" rel=\"next\">older<span class=\"ic ic-next\" aria-hidden=\"true\"></span></a>")
	}
	b.WriteString("</nav>")
}
