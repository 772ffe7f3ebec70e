package plugins

import (
	"encoding/base64"
	"net/url"

	"github.com/PuerkitoBio/goquery"
)

// maxFrameNesting bounds frames inside frames; maxFrameHTML bounds one
// inlined frame document. A frame past either is left empty.
const (
	maxFrameNesting = 5
	maxFrameHTML    = 64 << 20
)

// frames embeds the document of each frame the capture read (the
// frame's MarkFrame names it in f.Frames), inlined by the same rules with
// its own URL and encoding: an <iframe> as its srcdoc, a <frame> (which
// has no srcdoc) as a data: URL. A frame without a captured document
// loses its src; an iframe's own srcdoc is inlined like a document.
func (in *inliner) frames(doc *goquery.Document, f *Frame, base *url.URL, depth int) {
	doc.Find("iframe, frame").Each(func(_ int, s *goquery.Selection) {
		iframe := goquery.NodeName(s) == "iframe"
		sub := f.Frames[attrVal(s, MarkFrame)]
		if srcdoc, ok := s.Attr("srcdoc"); ok && sub == nil && iframe {
			sub = &Frame{URL: base.String(), HTML: srcdoc, Charset: "UTF-8"}
		}
		s.RemoveAttr("src")
		s.RemoveAttr("srcdoc")
		if sub == nil || depth >= maxFrameNesting {
			return
		}
		page, err := in.document(sub, depth+1)
		if err != nil || len(page) > maxFrameHTML {
			return
		}
		if iframe {
			s.SetAttr("srcdoc", page)
		} else {
			s.SetAttr("src", "data:text/html;charset=utf-8;base64,"+base64.StdEncoding.EncodeToString([]byte(page)))
		}
	})
}
