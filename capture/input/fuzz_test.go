package input_test

import (
	"testing"
	"unicode/utf8"

	"github.com/folio-archive/folio/capture/input"
)

// FuzzParse checks that no input makes Parse panic, that every item it
// returns has a URL Validate accepts unchanged, and that Invalid texts stay
// short.
func FuzzParse(f *testing.F) {
	for _, name := range []string{"urls.txt", "bookmarks.html", "feed.xml", "atom.xml", "urls.jsonl"} {
		f.Add(fixture(f, name), input.Auto)
	}
	for _, s := range []string{
		"", "\uFEFF", "\x00\xff\xfe", "{", "{\"url\":", "<rss", "<feed><entry>", "<!DOCTYPE x>",
		"<dt><a href=", "<a href=\"http://a/\" add_date=\"-1e400\">", "{\"url\":\"http://a/\",\"timestamp\":1e308}",
		"http://a/\r\n\r\n#\n http:// ",
		"[", "[{\"href\":\"http://a/\"},1]", "url,title\n\"http://a/", "see (http://a/b_(c))., HTTPS://A/,http://b/ &amp;",
		"<li><a href=\"/rel\">x</a><a href=\"mailto:x\">", "http://web.archive.org/web/1/http://a/&quot;",
	} {
		f.Add([]byte(s), input.Auto)
	}
	f.Fuzz(func(t *testing.T, data []byte, format string) {
		for _, format := range append([]string{format}, input.Formats()...) {
			items, invalid, _, _ := input.Parse(data, format)
			for _, it := range items {
				if u, err := input.Validate(it.URL); err != nil || u != it.URL {
					t.Fatalf("%s: item URL %q: Validate = %q, %v", format, it.URL, u, err)
				}
				if it.Line < 1 {
					t.Fatalf("%s: item %q on line %d", format, it.URL, it.Line)
				}
			}
			for _, inv := range invalid {
				if len(inv.Text) > 200 || (utf8.ValidString(string(data)) && !utf8.ValidString(inv.Text)) {
					t.Fatalf("%s: invalid text %q", format, inv.Text)
				}
			}
		}
	})
}
