// capture.js serializes one document as the reader saw it, for
// Page.Capture (frame.go). It runs in an isolated world of the frame, so
// the page's own scripts cannot change what it calls, and it only reads:
// the markers are written into the HTML it builds, never into the live
// DOM, so other plugins reading the same tab see the page untouched.
//
// Called with Runtime.callFunctionOn as fn(opts, ...nodes): nodes are
// opts.frames.length frame owner elements (their keys in opts.frames,
// in the same order) followed by the document's closed shadow roots,
// which only the DevTools protocol can reach. opts.marks names the
// attributes (the Mark* constants of frame.go).
//
// The serialization follows the HTML standard's "serializing HTML
// fragments", with every shadow root written as a declarative
// <template shadowrootmode>.
function capture(opts, ...nodes) {
  const M = opts.marks;
  const HTML = "http://www.w3.org/1999/xhtml", SVG = "http://www.w3.org/2000/svg", MATHML = "http://www.w3.org/1998/Math/MathML";
  const XML = "http://www.w3.org/XML/1998/namespace", XMLNS = "http://www.w3.org/2000/xmlns/", XLINK = "http://www.w3.org/1999/xlink";
  const VOID = new Set(["area", "base", "basefont", "bgsound", "br", "col", "embed", "frame", "hr", "img", "input", "keygen", "link", "meta", "param", "source", "track", "wbr"]);
  const RAW = new Set(["style", "script", "xmp", "iframe", "noembed", "noframes", "plaintext", "noscript"]);

  const owners = new Map();
  opts.frames.forEach((key, i) => nodes[i] && owners.set(nodes[i], key));
  const closed = new Map();
  for (const root of nodes.slice(opts.frames.length)) {
    if (root && root.host) closed.set(root.host, root);
  }
  const used = [];
  const out = [];

  const escText = s => s.replace(/&/g, "&amp;").replace(/\u00a0/g, "&nbsp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  const escAttr = s => s.replace(/&/g, "&amp;").replace(/\u00a0/g, "&nbsp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  const attr = (name, value) => out.push(" ", name, '="', escAttr(String(value)), '"');
  const rawCSS = css => css.replace(/<\/(style)/gi, "<\\/$1");
  const rulesText = sheet => {
    try {
      return Array.from(sheet.cssRules, r => r.cssText).join("\n");
    } catch (e) {
      return null; // a cross-origin sheet keeps its rules to itself
    }
  };

  function attrName(a) {
    switch (a.namespaceURI) {
      case null: return a.localName;
      case XML: return "xml:" + a.localName;
      case XMLNS: return a.localName === "xmlns" ? "xmlns" : "xmlns:" + a.localName;
      case XLINK: return "xlink:" + a.localName;
      default: return a.name;
    }
  }

  // cssomChanged tells whether a script changed a <style>'s rules (with
  // insertRule, say): its rules are not those its text parses to.
  function cssomChanged(style) {
    const sheet = style.sheet;
    if (!sheet) return null;
    const live = rulesText(sheet);
    if (live === null) return null;
    const text = style.textContent;
    if (!text.trim()) return sheet.cssRules.length ? live : null;
    const parsed = new CSSStyleSheet();
    parsed.replaceSync(text); // drops @import rules: compare without them
    const own = Array.from(sheet.cssRules).filter(r => !(r instanceof CSSImportRule)).map(r => r.cssText).join("\n");
    return own === rulesText(parsed) ? null : live;
  }

  // marks writes the state the markup does not hold.
  function marks(e, tag) {
    switch (tag) {
      case "iframe":
      case "frame":
        if (owners.has(e)) {
          attr(M.frame, owners.get(e));
          used.push(owners.get(e));
        }
        break;
      case "canvas":
        if (e.width > 0 && e.height > 0) {
          try {
            attr(M.canvas, e.toDataURL());
          } catch (err) {} // a tainted canvas cannot be read
        }
        break;
      case "img":
        if (e.currentSrc) attr(M.current, e.currentSrc);
        if (e.complete && e.naturalWidth > 0) attr(M.natural, e.naturalWidth + " " + e.naturalHeight);
        break;
      case "input": {
        const type = e.type;
        if (type === "checkbox" || type === "radio") {
          attr(M.checked, e.checked);
        } else if (type !== "file" && type !== "password" && e.value !== e.defaultValue) {
          attr(M.value, e.value);
        }
        break;
      }
      case "textarea":
        if (e.value !== e.defaultValue) attr(M.value, e.value);
        break;
      case "option":
        attr(M.chosen, e.selected);
        break;
    }
  }

  function adopted(sheets) {
    for (const sheet of sheets || []) {
      const css = rulesText(sheet);
      if (css === null || sheet.disabled) continue;
      out.push("<style ", M.adopted, '=""');
      if (sheet.media && sheet.media.mediaText) attr("media", sheet.media.mediaText);
      out.push(">", rawCSS(css), "</style>");
    }
  }

  function children(parent) {
    for (let c = parent.firstChild; c; c = c.nextSibling) node(c, parent);
  }

  function node(n, parent) {
    switch (n.nodeType) {
      case Node.ELEMENT_NODE:
        return element(n);
      case Node.TEXT_NODE:
      case Node.CDATA_SECTION_NODE:
        if (parent.nodeType === Node.ELEMENT_NODE && parent.namespaceURI === HTML && RAW.has(parent.localName)) {
          out.push(n.data);
        } else {
          out.push(escText(n.data));
        }
        return;
      case Node.COMMENT_NODE:
        return out.push("<!--", n.data, "-->");
      case Node.PROCESSING_INSTRUCTION_NODE:
        return out.push("<?", n.target, " ", n.data, ">");
      case Node.DOCUMENT_TYPE_NODE:
        return out.push("<!DOCTYPE ", n.name, n.publicId ? ' PUBLIC "' + n.publicId + '"' : "",
          n.systemId ? ' "' + n.systemId + '"' : "", ">\n");
    }
  }

  function element(e) {
    const ns = e.namespaceURI;
    const html = ns === HTML;
    const tag = html || ns === SVG || ns === MATHML ? e.localName : e.nodeName;
    out.push("<", tag);
    for (const a of e.attributes) {
      if (!a.name.startsWith("data-folio-")) attr(attrName(a), a.value);
    }
    if (html) marks(e, tag);
    if (html && tag === "style" || ns === SVG && tag === "style") {
      const css = cssomChanged(e);
      if (css !== null) attr(M.cssom, css);
    }
    out.push(">");
    if (html && VOID.has(tag)) return;
    const root = e.shadowRoot || closed.get(e);
    if (root) {
      out.push('<template shadowrootmode="', root.mode, '"');
      if (root.delegatesFocus) out.push(' shadowrootdelegatesfocus=""');
      if (root.clonable) out.push(' shadowrootclonable=""');
      if (root.serializable) out.push(' shadowrootserializable=""');
      out.push(">");
      children(root);
      adopted(root.adoptedStyleSheets);
      out.push("</template>");
    }
    const first = e.firstChild;
    if (html && (tag === "pre" || tag === "textarea" || tag === "listing") && first && first.nodeType === Node.TEXT_NODE && first.data[0] === "\n") {
      out.push("\n"); // the parser drops one newline after the start tag
    }
    children(html && tag === "template" ? e.content : e);
    if (e === document.body || (!document.body && e === document.documentElement)) {
      adopted(document.adoptedStyleSheets);
    }
    out.push("</", tag, ">");
  }

  children(document);
  return {html: out.join(""), url: document.URL, base: document.baseURI, charset: document.characterSet, frames: used};
}
