package export

import (
	"bytes"
	"html/template"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/folio-archive/folio/templates"
)

// hostile are strings every field of a page takes in turn: markup,
// quotes, the characters html/template escapes, URLs with and without a
// scheme it refuses, percent escapes valid and not, invalid UTF-8.
var hostile = []string{
	"", "plain", "<script>alert(1)</script>", "\"'&+<>\x00", "javascript:alert(1)", "JaVaScRiPt:x",
	"http://a.example/b?c=d&e=f+g#h", "HTTPS://x/y", "mailto:x@y.example", "data:text/html,<b>x</b>",
	"/abs/path", "../x/y z%20%zz%4", "üñí 文件 \xff\xfe", "a:b/c", "//evil.example", "\u2028\u2029",
	"%41%", "tab\tnl\n", "{{.X}}", "(paren)'s [x] !$*,;=@~", "archive/users/system/snapshots/20240101/example.com/x/index.html",
}

func pick(i, k int) string { return hostile[(i*7+k*3)%len(hostile)] }

// randomStrings are byte strings of every value, ASCII punctuation
// weighted, from a fixed seed.
func randomStrings(n int) []string {
	r := rand.New(rand.NewPCG(1, 2))
	const punct = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~ \t\n\x00azAZ09"
	out := make([]string, n)
	for i := range out {
		b := make([]byte, r.IntN(24))
		for k := range b {
			if r.IntN(3) == 0 {
				b[k] = byte(r.IntN(256))
			} else {
				b[k] = punct[r.IntN(len(punct))]
			}
		}
		out[i] = string(b)
	}
	return out
}

func detailViews() []detailView {
	var out []detailView
	random := randomStrings(1000)
	for i := range 3*len(hostile) + len(random) {
		s := func(k int) string { return pick(i, k) }
		if i >= 3*len(hostile) {
			s = func(k int) string { return random[(i+k)%len(random)] }
		}
		v := detailView{CSP: s(0), Site: s(1), RootHref: s(2), ManifestHref: s(3), SiteTitle: s(4), Version: s(5),
			Title: s(6), URL: s(7), Linkable: i%2 == 0, Saved: s(8), Status: s(9), StatusLabel: s(10), Size: s(11),
			Favicon: s(12), FaviconFallbacks: s(13), State: s(50), Empty: s(51)}
		if i%4 != 0 {
			v.Tags = []string{s(14), s(15)}
		}
		switch i % 3 {
		case 1:
			v.Preview = &previewView{Plugin: s(16), Href: s(17), Kind: "image", Sandbox: s(18)}
		case 2:
			v.Preview = &previewView{Plugin: s(16), Href: s(17), Kind: "html", Sandbox: s(18)}
		}
		if i%5 != 0 {
			for k, kind := range []string{"image", "html", "file"} {
				v.Cards = append(v.Cards, cardView{Plugin: s(19 + k), Href: s(20 + k), Path: s(21 + k), Size: s(22 + k),
					Kind: kind, Ext: s(23 + k), Sandbox: s(24 + k), Previewable: (i+k)%2 == 0})
			}
			if i%3 == 1 {
				v.Cards[0].Text = s(40)
				v.Cards[1].Files = []fileView{{Dir: s(41), Name: s(42), Href: s(43)}, {Name: s(44), Href: s(45)}}
				v.Cards[1].More = s(46)
			}
		}
		if i%4 == 2 {
			v.Downloads = []fileView{{Name: s(47), Href: s(48), Size: s(49)}}
		}
		if i%2 == 0 {
			v.Media = []mediaView{{Type: "video", Href: s(25), Name: s(26), Size: s(27), Playable: true},
				{Type: "audio", Href: s(28), Name: s(29), Size: s(30), Playable: i%4 == 0}, {Type: s(31), Href: s(32), Name: s(33)}}
		}
		if i%3 == 0 {
			v.Failed = []failedView{{Plugin: s(34), Reason: s(35)}, {Plugin: s(35)}}
		}
		if i%2 == 1 {
			v.Notes = template.HTML("<p>" + s(36) + "</p>")
		}
		if i%4 == 1 {
			v.Related = []relatedYear{{Year: 2024, Items: []relatedItem{{Href: s(37), Title: s(38), Saved: s(39)}}}, {Year: 1999}}
		}
		out = append(out, v)
	}
	return out
}

func rootViews() []rootView {
	var out []rootView
	random := randomStrings(1000)
	for i := range 3*len(hostile) + len(random) {
		s := func(k int) string { return pick(i, k) }
		if i >= 3*len(hostile) {
			s = func(k int) string { return random[(i+k)%len(random)] }
		}
		v := rootView{CSP: s(0), Site: s(1), DataRoot: s(2), RootHref: s(3), ManifestHref: s(4), Title: s(5), Version: s(6),
			Total: i * 1000, Page: i%4 + 1, Pages: i % 5, PrevHref: s(7), NextHref: s(8)}
		if i%3 == 0 {
			v.PrevHref, v.NextHref = "", ""
		}
		v.PageLinks = []pageLink{{N: 1, Href: s(9)}, {Gap: true}, {N: 7, Href: s(10), Current: true}, {N: 8, Href: s(11)}}
		for k := range 3 {
			r := rowView{Status: s(12 + k), Href: s(13 + k), Saved: s(14 + k), Date: s(15 + k), Time: s(16 + k), Epoch: s(17 + k),
				Pending: (i+k)%3 == 0, Preview: s(18 + k), PreviewFallbacks: s(19 + k), Favicon: s(20 + k), FaviconFallbacks: s(21 + k),
				Title: s(22 + k), FullTitle: s(32 + k), URL: s(23 + k), Linkable: (i+k)%2 == 1, SizeHref: s(24 + k), Size: s(25 + k), Outputs: (i + k) % 3, StatusLabel: s(33 + k),
				State: s(34 + k), Failures: (i + k) % 4}
			if (i+k)%2 == 0 {
				r.Tags = []string{s(26 + k), s(27 + k)}
				r.Icons = []iconView{{Href: s(28 + k), Plugin: s(29 + k), Icon: s(30 + k)}, {Href: s(31), Plugin: "wget", Icon: "globe"}}
			}
			v.Rows = append(v.Rows, r)
		}
		if i%6 == 5 {
			v.Rows = nil
		}
		out = append(out, v)
	}
	return out
}

// TestRenderMatchesTemplates checks that the Go renderers of the
// embedded pages write exactly what html/template writes from
// templates/root.html and snapshot.html, escaping included.
func TestRenderMatchesTemplates(t *testing.T) {
	tpl, err := templates.Load("", template.FuncMap{})
	if err != nil {
		t.Fatal(err)
	}
	if !tpl.RootBuiltin || !tpl.SnapshotBuiltin {
		t.Fatal("the embedded templates are not marked built in")
	}
	for i, v := range detailViews() {
		var want, got bytes.Buffer
		if err := tpl.Snapshot.Execute(&want, &v); err != nil {
			t.Fatal(err)
		}
		renderSnapshot(&got, &v)
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Fatalf("snapshot view %d:\n%s", i, firstDiff(got.Bytes(), want.Bytes()))
		}
	}
	for i, v := range rootViews() {
		var want, got bytes.Buffer
		if err := tpl.Root.Execute(&want, &v); err != nil {
			t.Fatal(err)
		}
		renderRoot(&got, &v)
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Fatalf("root view %d:\n%s", i, firstDiff(got.Bytes(), want.Bytes()))
		}
	}
}

// firstDiff shows where two renderings part.
func firstDiff(got, want []byte) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	from := max(i-120, 0)
	return "got:  ..." + string(got[from:min(i+120, len(got))]) + "\nwant: ..." + string(want[from:min(i+120, len(want))])
}

// escURLBytes is escURL byte by byte, as it was written first: the
// reference the run-copying one must match.
func escURLBytes(b *bytes.Buffer, s string) {
	if protocol, _, ok := strings.Cut(s, ":"); ok && !strings.Contains(protocol, "/") &&
		!strings.EqualFold(protocol, "http") && !strings.EqualFold(protocol, "https") && !strings.EqualFold(protocol, "mailto") {
		b.WriteString("#ZgotmplZ")
		return
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9',
			c == '-', c == '.', c == '_', c == '~',
			c == '!', c == '#', c == '$', c == '*', c == ',', c == '/', c == ':', c == ';', c == '=', c == '?', c == '@', c == '[', c == ']':
			b.WriteByte(c)
		case c == '&':
			b.WriteString("&amp;")
		case c == '+':
			b.WriteString("&#43;")
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			b.WriteByte(c)
		default:
			b.WriteByte('%')
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&15])
		}
	}
}

var escURLSeeds = []string{
	"", "https://example.com/a/b?q=1&r=2#frag", "archive/users/a/snapshots/20240101/münchen.de/x/index.html",
	"a b+c%20d%2", "%", "%4", "%41", "%zz", "javascript:alert(1)", "HTTP://X", "mailto:a@b", "data:x", "x/y:z",
	"\x00\x7f\xff<>\"'`", "wget/example.com/index.html?a=[1]",
}

func TestEscURL(t *testing.T) {
	for _, s := range escURLSeeds {
		sameAsReference(t, "escURL", escURL, escURLBytes, s)
	}
}

func FuzzEscURL(f *testing.F) {
	for _, s := range escURLSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sameAsReference(t, "escURL", escURL, escURLBytes, s)
	})
}
