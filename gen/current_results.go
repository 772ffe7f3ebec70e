package gen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/layout"
)

type plugin struct {
	name, hook string
	bin        string
	skipped    string // output_str of a skipped run
	noresults  string // output_str of a run that found nothing; "" when the plugin never reports it
	outputs    func(g *snapGen) []output
}

// output is one file of a result, path relative to the plugin folder.
type output struct {
	rel  string
	mime string
	data []byte
}

// plugins in ArchiveBox's execution order.
var plugins = []plugin{
	{name: "headers", hook: "on_Snapshot__27_headers.daemon.bg.js", bin: "node", skipped: "HEADERS_ENABLED=False", outputs: (*snapGen).headers},
	{name: "wget", hook: "on_Snapshot__35_wget.finite.bg.py", bin: "wget", skipped: "WGET_ENABLED=False", outputs: (*snapGen).wget},
	{name: "favicon", hook: "on_Snapshot__37_favicon.finite.bg.py", bin: "python", skipped: "FAVICON_ENABLED=False", noresults: "No favicon found", outputs: (*snapGen).favicon},
	{name: "singlefile", hook: "on_Snapshot__50_singlefile.py", bin: "chromium", skipped: "SINGLEFILE_ENABLED=False", outputs: (*snapGen).singlefile},
	{name: "screenshot", hook: "on_Snapshot__51_screenshot.js", bin: "chromium", skipped: "SCREENSHOT_ENABLED=False", outputs: (*snapGen).screenshot},
	{name: "pdf", hook: "on_Snapshot__52_pdf.js", bin: "chromium", skipped: "PDF_ENABLED=False", outputs: (*snapGen).pdf},
	{name: "dom", hook: "on_Snapshot__53_dom.js", bin: "chromium", skipped: "DOM_ENABLED=False", noresults: "DOM too short (42 chars)", outputs: (*snapGen).dom},
	{name: "title", hook: "on_Snapshot__54_title.js", bin: "chromium", skipped: "TITLE_ENABLED=False", outputs: (*snapGen).titleFile},
	{name: "readability", hook: "on_Snapshot__56_readability.py", bin: "node", skipped: "READABILITY_ENABLED=False", noresults: "No article content found", outputs: (*snapGen).readability},
	{name: "htmltotext", hook: "on_Snapshot__58_htmltotext.py", bin: "python", skipped: "HTMLTOTEXT_ENABLED=False", outputs: (*snapGen).htmltotext},
}

var pluginByName = func() map[string]*plugin {
	m := map[string]*plugin{}
	for i := range plugins {
		m[plugins[i].name] = &plugins[i]
	}
	return m
}()

var failures = []string{
	"TimeoutError: Navigation timeout of 60000 ms exceeded",
	"net::ERR_NAME_NOT_RESOLVED",
	"net::ERR_CONNECTION_REFUSED",
	"Exit code 8: server issued an error response (HTTP 404)",
	"Error: Protocol error (Page.printToPDF): Printing failed",
	"ProcessKilled: hook exceeded its timeout of 120s",
}

func (g *snapGen) results() []result {
	n := len(plugins)
	switch g.snap.Status {
	case "queued":
		return nil
	case "started":
		n = 1 + g.r.IntN(len(plugins)-1)
	}
	t := g.snap.CreatedAt.Add(time.Duration(1+g.r.IntN(5000)) * time.Millisecond)
	out := make([]result, 0, n)
	for k := range n {
		p := &plugins[k]
		start := t.Truncate(time.Microsecond)
		dur := time.Duration(50+g.r.IntN(20000)) * time.Millisecond
		t = start.Add(time.Duration(10+g.r.IntN(500)) * time.Millisecond)
		res := result{Result: archive.Result{
			ID:         archive.NewID(start, g.ids),
			SnapshotID: g.snap.ID,
			Plugin:     p.name,
			HookName:   p.hook,
			StartTS:    start,
			EndTS:      start.Add(dur).Truncate(time.Microsecond),
		}}
		roll := g.r.IntN(100)
		switch {
		case g.snap.Status == "started" && k == n-1:
			res.Status, res.EndTS = "started", time.Time{}
		case p.name == "title" && g.snap.Title == "":
			res.Status, res.OutputStr = archive.StatusFailed, "No title found in page"
		case p.name == "title" || roll < 80:
			g.succeed(p, &res)
		case roll < 90:
			res.Status, res.OutputStr = archive.StatusFailed, failures[g.r.IntN(len(failures))]
		case roll < 97 || p.noresults == "":
			res.Status, res.OutputStr = archive.StatusSkipped, p.skipped
		default:
			res.Status, res.OutputStr = "noresults", p.noresults
		}
		if g.tracked && res.Status != archive.StatusSkipped {
			bin := g.mach.binaries[p.bin]
			res.Cmd = []string{bin.abspath, p.hook, "--url=" + g.snap.URL, "--snapshot-id=" + g.snap.ID}
			res.CmdVersion = bin.version
			res.ProcessID = archive.NewID(start, g.ids)
			res.Pwd = "/data/" + g.dir + "/" + p.name
		}
		out = append(out, res)
	}
	return out
}

func (g *snapGen) succeed(p *plugin, res *result) {
	res.Status = archive.StatusSucceeded
	outs := p.outputs(g)
	for _, f := range outs {
		res.OutputFiles = append(res.OutputFiles, archive.OutputFile{
			Path: f.rel, Size: int64(len(f.data)), Mimetype: f.mime, Extension: strings.TrimPrefix(path.Ext(f.rel), "."),
		})
		res.OutputSize += int64(len(f.data))
	}
	res.OutputMimetypes = archive.MimetypesBySize(res.OutputFiles)
	res.OutputStr = p.name + "/" + outs[0].rel
	if p.name == "title" {
		res.OutputStr = g.snap.Title
	}
	missing := -1
	if len(outs) > 0 && g.r.IntN(50) == 0 { // recorded, but gone from disk
		missing = 0
	}
	for k, f := range outs {
		if k != missing {
			res.files = append(res.files, file{rel: p.name + "/" + f.rel, data: f.data})
		}
	}
}

func (g *snapGen) headers() []output {
	h := map[string]any{
		"url":    g.snap.URL,
		"status": 200,
		"headers": map[string]string{
			"content-type":  "text/html; charset=utf-8",
			"server":        []string{"nginx", "Apache", "cloudflare", "gws"}[g.r.IntN(4)],
			"date":          g.snap.CreatedAt.Format(time.RFC1123),
			"cache-control": "max-age=" + strconv.Itoa(60*g.r.IntN(100)),
		},
	}
	b, _ := json.MarshalIndent(h, "", "  ")
	return []output{{"headers.json", "application/json", b}}
}

func (g *snapGen) wget() []output {
	page := g.page("wget")
	host := layout.Domain(g.snap.URL)
	switch roll := g.r.IntN(100); {
	case roll < 6:
		return []output{{"index%3A.html", "text/html", page}}
	case roll < 10:
		return []output{{"my page (1).html", "text/html", page}}
	case roll < 13:
		return []output{{"ünïcødé 文件.html", "text/html", page}}
	case roll < 15:
		return []output{{"100% done.html", "text/html", page}}
	}
	return []output{{host + "/index.html", "text/html", page}}
}

func (g *snapGen) favicon() []output {
	return []output{{"favicon.ico", "image/vnd.microsoft.icon", icoData()}}
}

func (g *snapGen) singlefile() []output {
	return []output{{"singlefile.html", "text/html", g.page("singlefile")}}
}

func (g *snapGen) screenshot() []output {
	if g.o.Plain {
		return []output{{"screenshot.png", "image/png", pagePNG(g.snap.URL)}}
	}
	return []output{{"screenshot.png", "image/png", pngData()}}
}

func (g *snapGen) pdf() []output {
	return []output{{"output.pdf", "application/pdf", pdfData()}}
}

func (g *snapGen) dom() []output {
	return []output{{"output.html", "text/html", g.page("dom")}}
}

func (g *snapGen) titleFile() []output {
	return []output{{"title.txt", "text/plain", []byte(g.snap.Title)}}
}

func (g *snapGen) readability() []output {
	text := g.text()
	article, _ := json.Marshal(map[string]any{
		"title": g.snap.Title, "byline": nil, "excerpt": firstWords(text, 12), "length": len(text),
	})
	return []output{
		{"content.html", "text/html", []byte("<div id=\"readability-page-1\"><p>" + html.EscapeString(text) + "</p></div>\n")},
		{"content.txt", "text/plain", []byte(text + "\n")},
		{"article.json", "application/json", article},
	}
}

func (g *snapGen) htmltotext() []output {
	return []output{{"htmltotext.txt", "text/plain", []byte(g.snap.Title + "\n\n" + g.text() + "\n")}}
}

// page is a small HTML document for the snapshot.
func (g *snapGen) page(kind string) []byte {
	var b bytes.Buffer
	t := html.EscapeString(g.snap.Title)
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>%s</title>", t)
	if kind == "singlefile" {
		b.WriteString(`<style>body{font-family:sans-serif;max-width:40em;margin:auto}</style>`)
	}
	fmt.Fprintf(&b, "</head>\n<body><h1>%s</h1>\n", t)
	for range 1 + g.r.IntN(4) {
		fmt.Fprintf(&b, "<p>%s</p>\n", html.EscapeString(g.text()))
	}
	fmt.Fprintf(&b, "<p><a href=\"%s\">source</a></p>\n</body></html>\n", html.EscapeString(g.snap.URL))
	return b.Bytes()
}

// text is a sentence or two of searchable words; each snapshot's text
// carries its position as a word ("n123") so search tests can find it.
func (g *snapGen) text() string {
	var b strings.Builder
	n := 12 + g.r.IntN(40)
	if g.o.TextWords > 0 {
		n = g.o.TextWords
	}
	for k := range n {
		if k > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(words[g.r.IntN(len(words))])
	}
	fmt.Fprintf(&b, " n%d.", g.i)
	return b.String()
}

func firstWords(s string, n int) string {
	f := strings.Fields(s)
	if len(f) > n {
		f = f[:n]
	}
	return strings.Join(f, " ")
}
