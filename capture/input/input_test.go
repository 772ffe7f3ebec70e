package input_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/folio-archive/folio/capture/input"
)

const base = "http://127.0.0.1:8080"

// fixture reads a file of the fixture site with {{BASE}} filled in.
func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "fixtures", "site", name))
	if err != nil {
		t.Fatal(err)
	}
	return []byte(strings.ReplaceAll(string(b), "{{BASE}}", base))
}

func date(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

// assertItems compares items field by field, dates with time.Equal.
func assertItems(t *testing.T, got, want []input.Item) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d items, want %d:\n%+v", len(got), len(want), got)
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.URL != w.URL || g.Title != w.Title || g.Line != w.Line ||
			!reflect.DeepEqual(g.Tags, w.Tags) || !g.BookmarkedAt.Equal(w.BookmarkedAt) {
			t.Errorf("item %d:\n got %+v\nwant %+v", i, g, w)
		}
	}
}

func mustParse(t *testing.T, data, format string) ([]input.Item, []input.Invalid) {
	t.Helper()
	items, invalid, _, err := input.Parse([]byte(data), format)
	if err != nil {
		t.Fatalf("Parse(%q): %v", format, err)
	}
	return items, invalid
}

func TestParseFixtures(t *testing.T) {
	// Every fixture lists the same three pages; only what each format can
	// say about them differs.
	keepers := input.Item{URL: base + "/index.html", Title: "Keepers of the Light",
		Tags: []string{"lighthouses", "history"}, BookmarkedAt: date("2024-03-18T09:30:00Z")}
	fog := input.Item{URL: base + "/fog-signals.html", Title: "Horns, bells & guns: fog signals",
		Tags: []string{"fog"}, BookmarkedAt: date("2024-04-02T18:05:00Z")}
	about := input.Item{URL: base + "/about.html", Title: "About this notebook"}

	at := func(it input.Item, line int, edit func(*input.Item)) input.Item {
		it.Line = line
		if edit != nil {
			edit(&it)
		}
		return it
	}
	bare := func(it *input.Item) { *it = input.Item{URL: it.URL, Line: it.Line} }
	tests := []struct {
		file, format string
		want         []input.Item
	}{
		{"urls.txt", input.URLList, []input.Item{at(keepers, 2, bare), at(fog, 3, bare), at(about, 5, bare)}},
		{"bookmarks.html", input.Netscape, []input.Item{at(keepers, 11, nil), at(fog, 13, nil),
			at(about, 15, func(it *input.Item) { it.BookmarkedAt = date("2024-01-10T08:00:00Z") })}},
		{"feed.xml", input.Feed, []input.Item{at(keepers, 9, nil), at(fog, 19, nil),
			at(about, 27, func(it *input.Item) { it.BookmarkedAt = date("2024-01-10T13:00:00Z") })}}, // EST
		{"atom.xml", input.Feed, []input.Item{at(keepers, 9, nil), at(fog, 19, nil),
			at(about, 27, func(it *input.Item) { it.BookmarkedAt = date("2024-01-10T13:00:00Z") })}},
		{"urls.jsonl", input.JSONL, []input.Item{at(keepers, 1, nil), at(fog, 2, nil), at(about, 3, nil)}},
	}
	for _, tt := range tests {
		for _, format := range []string{input.Auto, tt.format} {
			t.Run(tt.file+"/"+format, func(t *testing.T) {
				items, invalid, used, err := input.Parse(fixture(t, tt.file), format)
				if err != nil {
					t.Fatal(err)
				}
				if used != tt.format {
					t.Errorf("used %q, want %q", used, tt.format)
				}
				if len(invalid) > 0 {
					t.Errorf("invalid: %+v", invalid)
				}
				assertItems(t, items, tt.want)
			})
		}
	}
}

func TestParseDetect(t *testing.T) {
	tests := []struct{ name, data, want string }{
		{"empty", "", input.URLList},
		{"urls", "http://a.example/\n", input.URLList},
		{"jsonl after comments", "# export\n\n  {\"url\": \"http://a.example/\"}\n", input.JSONL},
		{"netscape marker", "<!DOCTYPE NETSCAPE-Bookmark-file-1>\n", input.Netscape},
		{"netscape without marker", "<dl><DT><A HREF=\"http://a.example/\">a</A></dl>", input.Netscape},
		{"rss", "\uFEFF<?xml version=\"1.0\"?>\n<!-- hi -->\n<rss version=\"2.0\"><channel/></rss>", input.Feed},
		{"rss with html lists", "<rss><channel><item><description><![CDATA[<dl><dt><a href=\"x\">]]></description></item></channel></rss>", input.Feed},
		{"rdf", "<?xml version=\"1.0\"?><rdf:RDF xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\"></rdf:RDF>", input.Feed},
		{"atom", "<feed xmlns=\"http://www.w3.org/2005/Atom\"/>", input.Feed},
		{"rss-like name", "<rssfoo/>", input.URLList},
		{"html page", "<html><a href=\"http://a.example/\">a</a></html>", input.HTML},
		{"pocket html", "<!DOCTYPE html>\n<ul>\n<li><a href=\"http://a.example/\" time_added=\"1\">a</a></li>\n</ul>", input.HTML},
		{"pinboard json", "[{\"href\":\"http://a.example/\"}]", input.JSON},
		{"pocket csv", "title,url,time_added,tags,status\n", input.CSV},
		{"csv without url column", "a,b\nc,d\n", input.URLList},
		{"free text", "read http://a.example/ later\n", input.Text},
		{"list with a bad word", "http://a.example/\nexample.org\n", input.URLList},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, used, _ := input.Parse([]byte(tt.data), input.Auto)
			if used != tt.want {
				t.Errorf("detected %q, want %q", used, tt.want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, data, format, want string
	}{
		{"unknown format", "http://a.example/", "xml", `unknown input format "xml"`},
		{"json on url list", string(fixture(t, "urls.txt")), input.JSON, "not a JSON array of objects"},
		{"truncated json", "[{\"url\":\"http://a.example/\"},", input.Auto, "not a JSON array of objects: "},
		{"csv on url list", string(fixture(t, "urls.txt")), input.CSV, "not a CSV file with a header row naming a url column"},
		{"html on url list", string(fixture(t, "urls.txt")), input.HTML, "not an HTML file with links"},
		{"rss on url list", string(fixture(t, "urls.txt")), input.Feed, "not an RSS or Atom feed"},
		{"rss on bookmarks", string(fixture(t, "bookmarks.html")), input.Feed, "not an RSS or Atom feed"},
		{"netscape on url list", string(fixture(t, "urls.txt")), input.Netscape, "not a Netscape bookmark file"},
		{"jsonl on url list", string(fixture(t, "urls.txt")), input.JSONL, "not a JSON Lines file"},
		{"doctype", "<?xml version=\"1.0\"?>\n<!DOCTYPE rss [<!ENTITY x \"y\">]>\n<rss><channel/></rss>", input.Auto,
			"feed has a DOCTYPE or ENTITY declaration (refused)"},
		{"entity", "<rss><channel><item><!entity x 'y'></item></channel></rss>", input.Feed,
			"feed has a DOCTYPE or ENTITY declaration (refused)"},
		{"malformed", "<rss><channel><item><link>http://a.example/</item></channel></rss>", input.Feed, "parse feed: "},
		{"truncated", "<feed><entry><link href=\"http://a.example/\"/>", input.Auto, "parse feed: "},
		{"unknown charset", "<?xml version=\"1.0\" encoding=\"koi8-r\"?><rss/>", input.Feed, "unsupported feed encoding"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, _, err := input.Parse([]byte(tt.data), tt.format)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
	t.Run("url list never fails", func(t *testing.T) {
		items, invalid, _, err := input.Parse(fixture(t, "feed.xml"), input.URLList)
		if err != nil || len(items) != 0 || len(invalid) == 0 {
			t.Errorf("got %d items, %d invalid, err %v", len(items), len(invalid), err)
		}
	})
}

func TestURLListInvalid(t *testing.T) {
	long := "http://a.example/" + strings.Repeat("x", 3000)
	data := strings.Join([]string{
		"ftp://x",
		"http://",
		"http://a b",
		"javascript:alert(1)",
		long,
		"http://a.example/\x00b",
		"  http://ok.example/path?q=1#f  ",
		"not a url",
	}, "\n")
	items, invalid := mustParse(t, data, input.URLList)
	assertItems(t, items, []input.Item{{URL: "http://ok.example/path?q=1#f", Line: 7}})
	want := []input.Invalid{
		{1, "ftp://x", "not an http(s) or file URL"},
		{2, "http://", "no host"},
		{3, "http://a b", "contains whitespace"},
		{4, "javascript:alert(1)", "not an http(s) or file URL"},
		{5, long[:200], "longer than 2048 bytes"},
		{6, "http://a.example/\x00b", "contains a control character"},
		{8, "not a url", "contains whitespace"},
	}
	if !reflect.DeepEqual(invalid, want) {
		t.Errorf("invalid:\n got %+v\nwant %+v", invalid, want)
	}
}

func TestBOMAndCRLF(t *testing.T) {
	want := []input.Item{{URL: "http://a.example/", Line: 1}, {URL: "http://b.example/", Line: 3}}
	tests := []struct{ name, data, format string }{
		{"url list", "\uFEFFhttp://a.example/\r\n# note\r\nhttp://b.example/\r\n", input.URLList},
		{"jsonl", "\uFEFF{\"url\":\"http://a.example/\"}\r\n\r\n{\"url\":\"http://b.example/\"}\r\n", input.JSONL},
		{"netscape", "\uFEFF<DL><p>\r\n<DT><A HREF=\"http://a.example/\"></A>\r\n<DT><A HREF=\"http://b.example/\"></A>\r\n",
			input.Netscape},
		{"rss", "\uFEFF<rss><channel><item>\r\n<link>http://a.example/</link></item>\r\n<item><link>http://b.example/</link></item></channel></rss>",
			input.Feed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			items, invalid, used, err := input.Parse([]byte(tt.data), input.Auto)
			if err != nil || used != tt.format || len(invalid) > 0 {
				t.Fatalf("used %q, invalid %+v, err %v", used, invalid, err)
			}
			w := want
			if tt.name == "netscape" {
				w = []input.Item{{URL: "http://a.example/", Line: 2}, {URL: "http://b.example/", Line: 3}}
			}
			assertItems(t, items, w)
		})
	}
}

func TestDuplicatesMerged(t *testing.T) {
	data := `{"url": "http://a.example/", "tags": "x, y"}
{"url": "http://b.example/", "title": "B"}
{"url": " http://a.example/ ", "title": "A", "tags": ["y", "z"], "timestamp": 1712081100}
{"url": "http://a.example/", "title": "later", "tags": ["x", " w "], "timestamp": 1}
`
	items, invalid := mustParse(t, data, input.Auto)
	if len(invalid) > 0 {
		t.Errorf("invalid: %+v", invalid)
	}
	assertItems(t, items, []input.Item{
		{URL: "http://a.example/", Title: "A", Tags: []string{"x", "y", "z", "w"},
			BookmarkedAt: date("2024-04-02T18:05:00Z"), Line: 1},
		{URL: "http://b.example/", Title: "B", Line: 2},
	})
}

func TestNetscape(t *testing.T) {
	data := `<dl>
<dt><a href="http://s.example/" add_date="1712081100" tags=" a, ,b,a ">  Seconds
   &amp;  <b>bold</b>  </a>
<DT><A HREF="http://ms.example/" ADD_DATE="1712081100000">ms</A>
<DT><A HREF='http://us.example/' ADD_DATE=1712081100000000>µs</A>
<DT><A HREF="http://mac.example/" ADD_DATE="733773900">mac</A>
<DT><A HREF="http://far.example/" ADD_DATE="3000000000">too late</A>
<DT><A HREF="http://junk.example/" ADD_DATE="soon">junk date</A>
<DT><A HREF="javascript:alert(1)">bookmarklet</A>
<DT><A HREF="place:sort=8&maxResults=10">Recent Tags</A>
<DT><A HREF="relative/page.html">relative</A>
<DT><A NAME="top">no href</A>
<DT><A HREF="http://open.example/">left open
<DD>a description
<li><a href="http://pocket.example/" time_added="1712081100" tags="p">pocket</a></li>
</dl>`
	items, invalid := mustParse(t, data, input.Auto)
	when := date("2024-04-02T18:05:00Z")
	assertItems(t, items, []input.Item{
		{URL: "http://s.example/", Title: "Seconds & bold", Tags: []string{"a", "b"}, BookmarkedAt: when, Line: 2},
		{URL: "http://ms.example/", Title: "ms", BookmarkedAt: when, Line: 4},
		{URL: "http://us.example/", Title: "µs", BookmarkedAt: when, Line: 5},
		{URL: "http://mac.example/", Title: "mac", BookmarkedAt: when, Line: 6},
		{URL: "http://far.example/", Title: "too late", Line: 7},
		{URL: "http://junk.example/", Title: "junk date", Line: 8},
		{URL: "http://open.example/", Title: "left open", Line: 13},
		{URL: "http://pocket.example/", Title: "pocket", Tags: []string{"p"}, BookmarkedAt: when, Line: 15},
	})
	want := []input.Invalid{
		{9, "javascript:alert(1)", "not an http(s) or file URL"},
		{10, "place:sort=8&maxResults=10", "not an http(s) or file URL"},
		{11, "relative/page.html", "not an http(s) or file URL"},
	}
	if !reflect.DeepEqual(invalid, want) {
		t.Errorf("invalid:\n got %+v\nwant %+v", invalid, want)
	}
}

func TestFeedRSS1(t *testing.T) {
	data := `<?xml version="1.0" encoding="UTF-8"?>
<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"
  xmlns="http://purl.org/rss/1.0/" xmlns:dc="http://purl.org/dc/elements/1.1/">
<channel rdf:about="http://pinboard.example/u:me"><title>me</title></channel>
<item rdf:about="http://a.example/">
  <title>A &amp; B&nbsp;C</title>
  <link>http://a.example/</link>
  <dc:date>2024-03-18T09:30:00+00:00</dc:date>
  <dc:subject>go</dc:subject>
  <dc:subject>web</dc:subject>
</item>
<item rdf:about="http://about.example/">
  <title>only about</title>
</item>
<item>
  <title>no link at all</title>
</item>
</rdf:RDF>`
	items, invalid := mustParse(t, data, input.Auto)
	assertItems(t, items, []input.Item{
		{URL: "http://a.example/", Title: "A & B C", Tags: []string{"go", "web"},
			BookmarkedAt: date("2024-03-18T09:30:00Z"), Line: 5},
		{URL: "http://about.example/", Title: "only about", Line: 12},
	})
	want := []input.Invalid{{15, "no link at all", "no link"}}
	if !reflect.DeepEqual(invalid, want) {
		t.Errorf("invalid:\n got %+v\nwant %+v", invalid, want)
	}
}

func TestFeedRSS2(t *testing.T) {
	data := `<?xml version="1.0" encoding="ISO-8859-1"?>
<rss version="2.0"><channel>
<item><title>caf` + "\xe9" + `</title><guid>http://guid.example/</guid><pubDate>2 Apr 24 18:05 GMT</pubDate></item>
<item><title>iso</title><link>http://iso.example/</link><pubDate>2024-04-02T18:05:00Z</pubDate></item>
<item><title>bad date</title><link>http://nodate.example/</link><pubDate>someday</pubDate></item>
<item><title>relative</title><link>/local.html</link></item>
</channel></rss>`
	items, invalid := mustParse(t, data, input.Feed)
	when := date("2024-04-02T18:05:00Z")
	assertItems(t, items, []input.Item{
		{URL: "http://guid.example/", Title: "café", BookmarkedAt: when, Line: 3},
		{URL: "http://iso.example/", Title: "iso", BookmarkedAt: when, Line: 4},
		{URL: "http://nodate.example/", Title: "bad date", Line: 5},
	})
	want := []input.Invalid{{6, "/local.html", "not an http(s) or file URL"}}
	if !reflect.DeepEqual(invalid, want) {
		t.Errorf("invalid:\n got %+v\nwant %+v", invalid, want)
	}
}

func TestAtomTitles(t *testing.T) {
	data := `<feed xmlns="http://www.w3.org/2005/Atom">
<entry><title type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml">An <em>xhtml</em> title</div></title>
<link rel="alternate" href="http://x.example/"/><published>2024-04-02T20:05:00+02:00</published></entry>
<entry><title>only edit</title><link rel="edit" href="http://edit.example/"/></entry>
</feed>`
	items, invalid := mustParse(t, data, input.Auto)
	assertItems(t, items, []input.Item{
		{URL: "http://x.example/", Title: "An xhtml title", BookmarkedAt: date("2024-04-02T18:05:00Z"), Line: 2},
	})
	want := []input.Invalid{{4, "only edit", "no link"}}
	if !reflect.DeepEqual(invalid, want) {
		t.Errorf("invalid:\n got %+v\nwant %+v", invalid, want)
	}
}

func TestJSONL(t *testing.T) {
	data := `{"url": "http://iso.example/", "created_at": "2024-04-02 18:05:00", "tags": "a b  c"}
{"URL": "http://nozone.example/", "name": "named", "date": "2024-04-02T18:05:00"}
{"href": "", "url": "http://ms.example/", "time": 1712081100000, "tags": ["x", 3, "y"]}
{"url": "http://us.example/", "saved": "1712081100000000", "title": "", "description": "desc"}
{"url": "http://bad-date.example/", "timestamp": "soon", "created": "2024-04-02T18:05:00Z"}
{"type": "Snapshot", "url": "http://typed.example/"}
not json
[{"url": "http://array.example/"}]
{"title": "no url"}
{"url": 42}
{"url": "ftp://files.example/"}
{"type": "Tag", "name": "x"}
{"url": "http://two.example/"} {"url": "http://objects.example/"}
null
`
	items, invalid := mustParse(t, data, input.Auto)
	when := date("2024-04-02T18:05:00Z")
	assertItems(t, items, []input.Item{
		{URL: "http://iso.example/", Tags: []string{"a", "b", "c"}, BookmarkedAt: when, Line: 1},
		{URL: "http://nozone.example/", Title: "named", BookmarkedAt: when, Line: 2},
		{URL: "http://ms.example/", Tags: []string{"x", "y"}, BookmarkedAt: when, Line: 3},
		{URL: "http://us.example/", Title: "desc", BookmarkedAt: when, Line: 4},
		{URL: "http://bad-date.example/", BookmarkedAt: when, Line: 5},
		{URL: "http://typed.example/", Line: 6},
	})
	want := []input.Invalid{
		{7, "not json", "not a JSON object"},
		{8, `[{"url": "http://array.example/"}]`, "not a JSON object"},
		{9, `{"title": "no url"}`, "no url field"},
		{10, `{"url": 42}`, "no url field"},
		{11, "ftp://files.example/", "not an http(s) or file URL"},
		{12, `{"type": "Tag", "name": "x"}`, "record of type Tag"},
		{13, `{"url": "http://two.example/"} {"url": "http://objects.example/"}`, "not a JSON object"},
		{14, "null", "not a JSON object"},
	}
	if !reflect.DeepEqual(invalid, want) {
		t.Errorf("invalid:\n got %+v\nwant %+v", invalid, want)
	}
}

func TestValidate(t *testing.T) {
	tests := []struct{ raw, want, err string }{
		{" https://a.example/x?y#z\n", "https://a.example/x?y#z", ""},
		{"HTTP://A.example", "HTTP://A.example", ""},
		{"http://[::1]:8080/", "http://[::1]:8080/", ""},
		{"http://user:pw@a.example/", "http://user:pw@a.example/", ""},
		{"", "", "empty URL"},
		{"ftp://x", "", "not an http(s) or file URL"},
		{"file:///home/me/page.html", "file:///home/me/page.html", ""},
		{"FILE://localhost/tmp/a%20b.html", "FILE://localhost/tmp/a%20b.html", ""},
		{"file://server/share/page.html", "", "a file URL of another machine (server); only local files can be captured"},
		{"file:page.html", "", "a file URL without an absolute path"},
		{"javascript:alert(1)", "", "not an http(s) or file URL"},
		{"//a.example/", "", "not an http(s) or file URL"},
		{"http://", "", "no host"},
		{"http:a.example", "", "no host"},
		{"http://:80/", "", "no host"},
		{"http://a b", "", "contains whitespace"},
		{"http://a\u00a0b/", "", "contains whitespace"},
		{"http://a.example/\x00", "", "contains a control character"},
		{"http://a.example/\x7f", "", "contains a control character"},
		{"http://a.example/\xff", "", "not valid UTF-8"},
		{"http://a.example/%zz", "", "malformed URL"},
		{"http://a.example/" + strings.Repeat("x", 2048-17), "http://a.example/" + strings.Repeat("x", 2048-17), ""},
		{"http://a.example/" + strings.Repeat("x", 2048-16), "", "longer than 2048 bytes"},
	}
	for _, tt := range tests {
		got, err := input.Validate(tt.raw)
		if got != tt.want || errText(err) != tt.err {
			t.Errorf("Validate(%.40q) = %q, %v; want %q, %q", tt.raw, got, err, tt.want, tt.err)
		}
	}
	// The links of a captured page never lead to the local disk.
	for raw, want := range map[string]string{"file:///etc/passwd": "not an http(s) URL", "https://a.example/": ""} {
		if _, err := input.ValidateWeb(raw); errText(err) != want {
			t.Errorf("ValidateWeb(%q): %v, want %q", raw, err, want)
		}
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestFormats(t *testing.T) {
	want := []string{"auto", "url_list", "netscape_html", "rss", "jsonl", "json", "csv", "html", "txt"}
	if got := input.Formats(); !reflect.DeepEqual(got, want) {
		t.Errorf("Formats() = %q, want %q", got, want)
	}
}
