package plugins

import (
	"bytes"
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"time"

	readability "codeberg.org/readeck/go-readability/v2"

	"github.com/folio-archive/folio/htmltext"
)

// Readability writes readability/content.html, content.txt and
// article.json (the article's metadata) from the rendered DOM, with
// codeberg.org/readeck/go-readability (a port of Mozilla's Readability.js,
// the library ArchiveBox's readability-extractor runs).
type Readability struct{ builtin }

func (p *Readability) Run(ctx context.Context, job *Job) Outcome {
	_, cancel, o := tab(ctx, job)
	if o != nil {
		return *o
	}
	cancel()
	page, err := job.Page.HTML(ctx)
	if err != nil {
		return failed("read the DOM: %v", err)
	}
	base := job.Page.FinalURL
	if base == "" {
		base = job.URL
	}
	u, err := url.Parse(base)
	if err != nil {
		return failed("%v", err)
	}
	article, err := readability.FromReader(strings.NewReader(page), u)
	if err != nil || article.Node == nil {
		return noResults("No article found")
	}
	var content, text bytes.Buffer
	if err := article.RenderHTML(&content); err != nil {
		return failed("render the article: %v", err)
	}
	if err := article.RenderText(&text); err != nil {
		return failed("render the article's text: %v", err)
	}
	if strings.TrimSpace(text.String()) == "" {
		return noResults("No article found")
	}
	meta := map[string]any{
		"title": article.Title(), "byline": article.Byline(), "excerpt": article.Excerpt(),
		"siteName": article.SiteName(), "lang": article.Language(), "length": len([]rune(text.String())),
	}
	if t, err := article.PublishedTime(); err == nil {
		meta["publishedTime"] = t.UTC().Format(time.RFC3339)
	}
	js, err := json.MarshalIndent(meta, "", "  ")
	if err != nil {
		return failed("%v", err)
	}
	if _, err := write(job, p.name, "content.txt", text.Bytes()); err != nil {
		return failed("%v", err)
	}
	if _, err := write(job, p.name, "article.json", append(js, '\n')); err != nil {
		return failed("%v", err)
	}
	return save(job, p.name, "content.html", content.Bytes())
}

// HTMLToText writes htmltotext/htmltotext.txt: the page's text, without
// what script, style, head, meta, link and noscript hold, joined by single
// spaces.
type HTMLToText struct{ builtin }

func (p *HTMLToText) Run(ctx context.Context, job *Job) Outcome {
	_, cancel, o := tab(ctx, job)
	if o != nil {
		return *o
	}
	cancel()
	page, err := job.Page.HTML(ctx)
	if err != nil {
		return failed("read the DOM: %v", err)
	}
	text := htmltext.Of(page)
	if len(text) < 10 {
		return noResults("No text found")
	}
	return save(job, p.name, "htmltotext.txt", []byte(text))
}

var (
	_ Plugin = (*Readability)(nil)
	_ Plugin = (*HTMLToText)(nil)
)
