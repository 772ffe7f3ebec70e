package plugins

import (
	"strings"
	"testing"
)

// Style sheets are decoded by CSS's rules into the UTF-8 page: a
// windows-1252 sheet of a windows-1252 page that does not say its
// encoding (and the sheet it imports), one whose Content-Type says it,
// one with @charset.
func TestSingleFileDecodesStyleSheets(t *testing.T) {
	s := newSite(t, map[string]file{
		"/latin.css":    {"text/css", "@import url(latin2.css);\n#e::after { content: \"caf\xe9\" }"},
		"/latin2.css":   {"text/css", "#f::after { content: \"na\xefve\" }"},
		"/utf8.css":     {"text/css; charset=utf-8", "#g::after { content: \"\u20ac\" }"},
		"/declared.css": {"text/css", "@charset \"iso-8859-7\";\n#h::after { content: \"\xe1\" }"},
	})
	out := inlineFrame(t, &Frame{URL: s.URL + "/page.html", Charset: "windows-1252", HTML: `<!DOCTYPE html><html><head>
<link rel="stylesheet" href="latin.css"><link rel="stylesheet" href="utf8.css"><link rel="stylesheet" href="declared.css">
</head><body><p id="e"></p><p id="f"></p><p id="g"></p><p id="h"></p></body></html>`})
	s.Close()
	for _, want := range []string{`"café"`, `"naïve"`, `"€"`, `"α"`} {
		if !strings.Contains(out, want) {
			t.Errorf("the page lacks %s in UTF-8", want)
		}
	}
	if strings.Contains(out, "@charset") {
		t.Error("an @charset rule is left in the page")
	}
	got := evalJS[string](t, offline(t, out), `["e", "f", "g", "h"].map(id => getComputedStyle(document.getElementById(id), "::after").content).join(" ")`)
	if want := `"café" "naïve" "€" "α"`; got != want {
		t.Errorf("offline: %s, want %s", got, want)
	}
}

func TestDecodeCSS(t *testing.T) {
	for _, c := range []struct {
		name, body, contentType, env, want, enc string
	}{
		{"utf-8 bom beats everything", "\xef\xbb\xbfp{content:\"\xc3\xa9\"}", "text/css; charset=windows-1252", "windows-1252", `p{content:"é"}`, "utf-8"},
		{"utf-16le bom", "\xff\xfep\x00{\x00}\x00", "", "", "p{}", "utf-16le"},
		{"http charset beats @charset", "@charset \"utf-8\";p{content:\"\xe9\"}", "text/css; charset=iso-8859-1", "", `p{content:"é"}`, "windows-1252"},
		{"@charset utf-16 means utf-8", "@charset \"utf-16\";p{content:\"\xc3\xa9\"}", "text/css", "windows-1252", `p{content:"é"}`, "utf-8"},
		{"@charset not at the start is no @charset", " @charset \"iso-8859-7\";p{}", "", "windows-1252", ` @charset "iso-8859-7";p{}`, "windows-1252"},
		{"environment", "p{content:\"\xe9\"}", "", "windows-1252", `p{content:"é"}`, "windows-1252"},
		{"utf-8 by default", "p{content:\"\xc3\xa9\"}", "", "", `p{content:"é"}`, "utf-8"},
	} {
		got, enc := decodeCSS([]byte(c.body), c.contentType, c.env)
		if got != c.want || enc != c.enc {
			t.Errorf("%s: %q in %s, want %q in %s", c.name, got, enc, c.want, c.enc)
		}
	}
}

// @import's layer(), supports() and media list apply offline as they do
// live; an import cycle ends.
func TestSingleFileImportConditions(t *testing.T) {
	s := newSite(t, map[string]file{
		"/imports.html": {"text/html", `<!DOCTYPE html><html><head><link rel="stylesheet" href="css/main.css"></head>
<body><p id="x">x</p><p id="y">y</p><p id="z">z</p><p id="w">w</p></body></html>`},
		"/css/main.css": {"text/css", `/* conditions */
@import url(base.css) layer(base) supports(display:grid) screen and (min-width:10px);
@import "plain.css";
@import url('anon.css') layer;
@import url(never.css) supports(not (display:grid));
@import url(print.css) print;
p { color: rgb(0, 0, 255) }`},
		"/css/base.css":  {"text/css", "#x { color: rgb(255, 0, 0); background-color: rgb(0, 128, 0) }"},
		"/css/plain.css": {"text/css", "@import url(main.css);\n#y { color: rgb(1, 2, 3) }"},
		"/css/anon.css":  {"text/css", "#z { color: rgb(255, 0, 0); border-top: 3px solid rgb(4, 5, 6) }"},
		"/css/never.css": {"text/css", "#w { color: rgb(9, 9, 9) }"},
		"/css/print.css": {"text/css", "#w { background-color: rgb(9, 9, 9) }"},
	})
	const styles = `["x", "y", "z", "w"].map(id => { const s = getComputedStyle(document.getElementById(id));
		return id + " " + s.color + " " + s.backgroundColor + " " + s.borderTopColor; }).join(", ")`
	sameOffline(t, s, "/imports.html", styles, "x rgb(0, 0, 255) rgb(0, 128, 0) rgb(0, 0, 255), y rgb(1, 2, 3) rgba(0, 0, 0, 0) rgb(1, 2, 3), "+
		"z rgb(0, 0, 255) rgba(0, 0, 0, 0) rgb(4, 5, 6), w rgb(0, 0, 255) rgba(0, 0, 0, 0) rgb(0, 0, 255)")
}

func TestImportRules(t *testing.T) {
	for _, c := range []struct{ css, want string }{
		{`@import url(x.css) layer(base) supports(display:grid) screen and (min-width:10px);p{}`,
			"x.css: @media screen and (min-width:10px) {\n@supports (display:grid) {\n@layer base {\nS\n}\n}\n} | p{}"},
		{`@charset "utf-8"; /* c */ @layer a, b; @import "y.css" layer; @import 'z.css' supports(not (display: grid)) all;`,
			"y.css: @layer {\nS\n} | z.css: @supports not (display: grid) {\nS\n} | "},
		{`@import url("a;b.css") print; @media print { @import "late.css"; }`, "a;b.css: @media print {\nS\n} | @media print { @import \"late.css\"; }"},
		{`p { color: red } @import "after.css";`, `p { color: red } @import "after.css";`},
		{`@import nonsense; @import url(ok.css);`, "ok.css: S | "},
	} {
		_, imports, rest := splitImports(c.css)
		var got []string
		for _, im := range imports {
			got = append(got, im.url+": "+im.wrap("S"))
		}
		if s := strings.Join(append(got, rest), " | "); s != c.want {
			t.Errorf("%s:\n%q\nwant\n%q", c.css, s, c.want)
		}
	}
}

// The parsers of a page's style sheets and srcsets take any text.
func FuzzSplitImports(f *testing.F) {
	for _, s := range []string{`@import url(x.css) layer(a) supports(display:grid) print;`, `@charset "x"; @layer a; @import "y`, `@import url(`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, css string) {
		head, imports, rest := splitImports(css)
		if len(head)+len(rest) > len(css) {
			t.Errorf("splitImports grew %q", css)
		}
		for _, im := range imports {
			im.wrap("")
		}
		parseSrcset(css)
		decodeCSS([]byte(css), css, css)
	})
}

// The images of image-set() are inlined, given as strings or url()s.
func TestSingleFileInlinesImageSets(t *testing.T) {
	s := newSite(t, map[string]file{"/a.png": pngFile(2, 2, red), "/b.png": pngFile(4, 4, blue)})
	out := inlineFrame(t, &Frame{URL: s.URL + "/", Charset: "UTF-8", HTML: `<!DOCTYPE html><html><head><style>
#i { background-image: image-set("a.png" 1x, url('b.png') 2x) }
#j { background-image: -webkit-image-set('b.png' 1x, url(a.png) 2x) }
</style></head><body><p id="i">i</p><p id="j">j</p></body></html>`})
	s.Close()
	if strings.Contains(out, ".png") {
		t.Errorf("an image-set keeps a URL: %.800s", out)
	}
	got := evalJS[string](t, offline(t, out), `[i, j].map(e => getComputedStyle(e).backgroundImage.replace(/base64,[^"]*/g, "")).join(" | ")`)
	if want := `image-set(url("data:image/png;") 1dppx, url("data:image/png;") 2dppx) | image-set(url("data:image/png;") 1dppx, url("data:image/png;") 2dppx)`; got != want {
		t.Errorf("offline: %s\nwant     %s", got, want)
	}
}
