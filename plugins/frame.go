package plugins

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

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

// Frames deeper than maxFrameDepth, and those past the first maxFrames
// of a page, are left out (their <iframe> stays empty).
const (
	maxFrameDepth = 5
	maxFrames     = 100
)

// captureJS serializes one document; see its comment.
//
//go:embed capture.js
var captureJS string

// worldName names the isolated world folio's scripts run in: the page's
// scripts cannot see it or change what it calls.
const worldName = "folio"

// Capture reads the loaded page as Frames for the singlefile plugin. Each
// frame's document is read by capture.js in an isolated world of that
// frame, through the DevTools protocol, so frames of other origins are
// read like the page itself (folio's Chromium runs them in the page's
// process; see Browser.start). Reading changes nothing in the page.
func (p *Page) Capture(ctx context.Context) (*Frame, error) {
	tctx, cancel, ok := p.Context(ctx)
	if !ok {
		return nil, pageErr(p)
	}
	defer cancel()
	tree, err := chromedp.Call(tctx, page.GetFrameTree, cdp.Empty{})
	if err != nil {
		return nil, fmt.Errorf("read the frame tree: %w", err)
	}
	c := &capturer{ctx: tctx, left: maxFrames, worlds: map[cdp.FrameID]runtime.ExecutionContextID{}}
	defer chromedp.Call(tctx, runtime.ReleaseObjectGroup, runtime.ReleaseObjectGroupParams{ObjectGroup: worldName})
	if err := c.findClosedRoots(tree.FrameTree.Frame.ID); err != nil {
		return nil, err
	}
	return c.frame(tree.FrameTree, "", 0)
}

type capturer struct {
	ctx    context.Context
	left   int                                        // how many more frames may be read
	worlds map[cdp.FrameID]runtime.ExecutionContextID // folio's isolated world in each frame
	closed map[cdp.FrameID][]cdp.BackendNodeID        // closed shadow roots by frame
}

// world returns folio's isolated world in a frame.
func (c *capturer) world(id cdp.FrameID) (runtime.ExecutionContextID, error) {
	if w, ok := c.worlds[id]; ok {
		return w, nil
	}
	r, err := chromedp.Call(c.ctx, page.CreateIsolatedWorld, page.CreateIsolatedWorldParams{FrameID: id, WorldName: worldName})
	if err != nil {
		return 0, fmt.Errorf("open a script world in frame %s: %w", id, err)
	}
	c.worlds[id] = r.ExecutionContextID
	return r.ExecutionContextID, nil
}

// findClosedRoots lists the closed shadow roots of every frame: scripts
// cannot reach them, the DevTools protocol can.
func (c *capturer) findClosedRoots(main cdp.FrameID) error {
	w, err := c.world(main)
	if err != nil {
		return err
	}
	doc, err := chromedp.Call(c.ctx, runtime.Evaluate, runtime.EvaluateParams{Expression: "document", ContextID: w, ObjectGroup: worldName})
	if err != nil {
		return fmt.Errorf("read the document: %w", err)
	}
	depth, pierce := int64(-1), true
	root, err := chromedp.Call(c.ctx, dom.DescribeNode, dom.DescribeNodeParams{ObjectID: doc.Result.ObjectID, Depth: &depth, Pierce: &pierce})
	if err != nil {
		return fmt.Errorf("read the document's shadow roots: %w", err)
	}
	c.closed = map[cdp.FrameID][]cdp.BackendNodeID{}
	var walk func(n *cdp.Node, frame cdp.FrameID)
	walk = func(n *cdp.Node, frame cdp.FrameID) {
		if n == nil {
			return
		}
		for _, s := range n.ShadowRoots {
			if s.ShadowRootType == cdp.ShadowRootTypeClosed {
				c.closed[frame] = append(c.closed[frame], s.BackendNodeID)
			}
			walk(s, frame)
		}
		for _, ch := range n.Children {
			walk(ch, frame)
		}
		walk(n.TemplateContent, frame)
		if n.ContentDocument != nil {
			walk(n.ContentDocument, n.FrameID)
		}
	}
	walk(root.Node, main)
	return nil
}

// node returns a node of a frame as an object of folio's world there.
func (c *capturer) node(id cdp.BackendNodeID, w runtime.ExecutionContextID) (runtime.RemoteObjectID, error) {
	r, err := chromedp.Call(c.ctx, dom.ResolveNode, dom.ResolveNodeParams{BackendNodeID: id, ExecutionContextID: w, ObjectGroup: worldName})
	if err != nil {
		return "", err
	}
	return r.Object.ObjectID, nil
}

// captured is what capture.js returns.
type captured struct {
	HTML    string   `json:"html"`
	URL     string   `json:"url"`
	Base    string   `json:"base"`
	Charset string   `json:"charset"`
	Frames  []string `json:"frames"`
}

// frame reads one frame's document, after the frames inside it (so that
// only those read are marked). parentBase is the base URL of the
// document holding it ("" for the page).
func (c *capturer) frame(t *page.FrameTree, parentBase string, depth int) (*Frame, error) {
	w, err := c.world(t.Frame.ID)
	if err != nil {
		return nil, err
	}
	f := &Frame{Frames: map[string]*Frame{}}
	var keys []string
	var args []*runtime.CallArgument
	var base string
	if depth < maxFrameDepth && len(t.ChildFrames) > 0 {
		// The frames' documents are read with the document's base URL as
		// their parent's: what about:blank and srcdoc frames inherit.
		base = c.base(w)
		for i, ch := range t.ChildFrames {
			if c.left <= 0 {
				break
			}
			owner, err := chromedp.Call(c.ctx, dom.GetFrameOwner, dom.GetFrameOwnerParams{FrameID: ch.Frame.ID})
			if err != nil {
				continue // a frame gone since the tree was read
			}
			obj, err := c.node(owner.BackendNodeID, w)
			if err != nil {
				continue
			}
			c.left--
			sub, err := c.frame(ch, base, depth+1)
			if err != nil {
				continue // its <iframe> stays empty
			}
			key := strconv.Itoa(i)
			f.Frames[key] = sub
			keys = append(keys, key)
			args = append(args, &runtime.CallArgument{ObjectID: obj})
		}
	}
	for _, id := range c.closed[t.Frame.ID] {
		if obj, err := c.node(id, w); err == nil {
			args = append(args, &runtime.CallArgument{ObjectID: obj})
		}
	}
	opts, err := json.Marshal(map[string]any{
		"frames": append([]string{}, keys...),
		"marks": map[string]string{
			"frame": MarkFrame, "canvas": MarkCanvas, "current": MarkCurrent, "natural": MarkNatural,
			"value": MarkValue, "checked": MarkChecked, "chosen": MarkChosen, "cssom": MarkCSSOM, "adopted": MarkAdopted,
		},
	})
	if err != nil {
		return nil, err
	}
	args = append([]*runtime.CallArgument{{Value: jsonv2.Value(opts)}}, args...)
	yes := true
	r, err := chromedp.Call(c.ctx, runtime.CallFunctionOn, runtime.CallFunctionOnParams{
		FunctionDeclaration: captureJS, ExecutionContextID: w, Arguments: args, ReturnByValue: &yes, ObjectGroup: worldName,
	})
	if err == nil && r.ExceptionDetails != nil {
		err = &chromedp.ExceptionError{ExceptionDetails: r.ExceptionDetails}
	}
	if err != nil {
		return nil, fmt.Errorf("read the DOM of %s: %w", t.Frame.URL, err)
	}
	var got captured
	if err := json.Unmarshal(r.Result.Value, &got); err != nil {
		return nil, fmt.Errorf("read the DOM of %s: %w", t.Frame.URL, err)
	}
	f.HTML, f.URL, f.Charset = got.HTML, got.URL, got.Charset
	if strings.HasPrefix(f.URL, "about:") {
		// about:blank and srcdoc documents resolve against their parent.
		f.URL = got.Base
		if strings.HasPrefix(f.URL, "about:") || f.URL == "" {
			f.URL = parentBase
		}
	}
	used := map[string]bool{}
	for _, k := range got.Frames {
		used[k] = true
	}
	for k := range f.Frames {
		if !used[k] { // an <object> or <embed> frame: not marked
			delete(f.Frames, k)
		}
	}
	return f, nil
}

// base returns the base URL of the document in world w ("" when it
// cannot be read).
func (c *capturer) base(w runtime.ExecutionContextID) string {
	yes := true
	r, err := chromedp.Call(c.ctx, runtime.Evaluate, runtime.EvaluateParams{Expression: "document.baseURI", ContextID: w, ReturnByValue: &yes})
	if err != nil || r.ExceptionDetails != nil {
		return ""
	}
	var s string
	json.Unmarshal(r.Result.Value, &s)
	return s
}

// keepDrawingsJS runs in every document of a tab before the page's own
// scripts. A WebGL canvas clears its drawing buffer once it is shown, so
// toDataURL would read a blank image; asking for preserveDrawingBuffer
// keeps the last frame drawn for capture.js to read. Drawing is the same.
const keepDrawingsJS = `(() => {
	const get = HTMLCanvasElement.prototype.getContext;
	HTMLCanvasElement.prototype.getContext = function getContext(type, attrs) {
		if (type === "webgl" || type === "webgl2" || type === "experimental-webgl") {
			attrs = Object.assign({}, attrs, {preserveDrawingBuffer: true});
		}
		return get.call(this, type, attrs);
	};
})()`
