package export

import (
	"bytes"
	"fmt"
	"strings"
)

// Archived documents are shown only inside sandboxed frames, never as
// pages of their own: a host that ignores _headers (GitHub Pages, S3, a
// plain nginx, python -m http.server) would run an archived page's
// scripts with the export's origin, where they could read and change
// everything the site holds (the CVE-2023-45815 class). So the pages link
// such a file through the viewer, one page of the export's own that frames
// it with the sandbox the preview has (no allow-same-origin), and link
// straight only to files a browser shows without running them.

// ViewPage is the viewer, relative to the export root. It reads its file
// from the address's fragment, which works from file:// and on every
// host and which no server sees: site/view.html#<snapshot folder>:<file>,
// both relative to the export root and quoted, the file relative to the
// snapshot folder (quoting turns every ":" of a path into %3A, so the
// first ":" separates them). It frames only a file below archive/ of the
// same export.
const ViewPage = SiteDir + "/view.html"

// directExts are the files the pages link straight to: images (not SVG,
// which runs scripts as a document), PDF, audio and video, and plain text
// and data, style sheets and scripts, which a browser shows as text and
// never sniffs as HTML.
// Everything else (HTML, XHTML, SVG, XML, MHTML, and any type a browser
// or a host might guess, a name without an extension first) opens in the
// viewer. The WARC and WACZ downloads link straight with the download
// attribute, which makes a browser save the file rather than open it.
var directExts = setOf("png jpg jpeg gif webp ico bmp avif pdf txt md json jsonl csv tsv log css js")

// direct reports whether the pages link the archived file rel straight.
func direct(rel string) bool {
	e := ext(rel)
	return directExts[e] || videoExts[e] || audioExts[e]
}

// openHref returns the link from a page in folder from to r, a file of
// the snapshot in folder snap: straight to it when direct says so, else
// to the viewer.
func openHref(from, snap string, r Ref) string {
	if direct(r.Rel) {
		return r.From(from)
	}
	h := relHref(from, ViewPage) + "#" + Quote(snap) + ":" + Quote(strings.TrimPrefix(r.Rel, snap+"/"))
	if r.Query != "" {
		h += "?" + r.Query
	}
	return h
}

type viewView struct {
	CSP, SiteTitle, Sandbox, Version string
}

// writeView writes the viewer, unless it is there as it would be written.
func (s *site) writeView() error {
	var b bytes.Buffer
	if err := s.tpl.View.Execute(&b, &viewView{CSP: CSP, SiteTitle: s.opts.Title, Sandbox: s.sandbox, Version: s.opts.Version}); err != nil {
		return fmt.Errorf("render %s: %w", ViewPage, err)
	}
	return s.writeChanged(ViewPage, b.Bytes())
}
