package plugins

import "context"

// Frame is one document of a loaded page as the reader saw it, read for
// the singlefile plugin: the DOM as it stands after scripts ran, with
// what the DOM alone does not say written into it as data-folio-*
// attributes (see the marker constants), which the inliner turns into
// plain HTML and removes.
type Frame struct {
	URL     string // the document's URL: relative references resolve against it (or its <base>)
	HTML    string // the serialized DOM with its doctype
	Charset string // document.characterSet: the encoding of resources that do not say theirs
	// Frames are the documents of the frames inside this one, by the value
	// of their <iframe>/<frame> element's MarkFrame attribute.
	Frames map[string]*Frame
}

// The attributes Page.Capture writes into Frame.HTML. Shadow roots are
// serialized as declarative <template shadowrootmode> elements, their
// adopted style sheets (and the document's) as <style MarkAdopted>.
const (
	MarkFrame   = "data-folio-frame"   // on an iframe/frame: the key of its document in Frames
	MarkCanvas  = "data-folio-canvas"  // on a canvas: a data: URL of the pixels it showed
	MarkCurrent = "data-folio-current" // on an img: the absolute URL of the image it displayed (currentSrc)
	MarkNatural = "data-folio-natural" // on an img: "W H", its density-corrected natural size in CSS pixels
	MarkValue   = "data-folio-value"   // on an input or textarea: its current value
	MarkChecked = "data-folio-checked" // on a checkbox or radio: "true" or "false"
	MarkChosen  = "data-folio-chosen"  // on an option: "true" or "false", whether it is selected
	MarkCSSOM   = "data-folio-cssom"   // on a <style>: its rules as the CSSOM holds them, when a script changed them
	MarkAdopted = "data-folio-adopted" // on a <style> folio added for adopted style sheets
)

// Capture reads the loaded page as Frames for the singlefile plugin.
func (p *Page) Capture(ctx context.Context) (*Frame, error) {
	html, err := p.HTML(ctx)
	if err != nil {
		return nil, err
	}
	u := p.FinalURL
	if u == "" {
		u = p.URL
	}
	return &Frame{URL: u, HTML: html, Charset: "UTF-8"}, nil
}
