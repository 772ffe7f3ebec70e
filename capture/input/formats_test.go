package input_test

import (
	"testing"

	"github.com/folio-archive/folio/capture/input"
)

// Free text yields the URLs in it, trimmed of what the prose put around
// them, in input order.
func TestText(t *testing.T) {
	data := "Meeting notes\n" +
		"read https://a.example/post. Then (see https://b.example/wiki/Fog_(signal)) and\n" +
		"[docs](https://c.example/docs), \"https://d.example/q?a=1&amp;b=2\" or <https://e.example/>!\n" +
		"both: https://f.example/,https://g.example/ and `https://h.example/x`\n" +
		"archived at https://web.archive.org/web/2020/https://i.example/page?\n" +
		"no URL here, nor in ftp://j.example/ or example.com\n" +
		"again https://a.example/post\n"
	items, invalid := mustParse(t, data, input.Auto)
	want := []input.Item{
		{URL: "https://a.example/post", Line: 2},
		{URL: "https://b.example/wiki/Fog_(signal)", Line: 2},
		{URL: "https://c.example/docs", Line: 3},
		{URL: "https://d.example/q?a=1&b=2", Line: 3},
		{URL: "https://e.example/", Line: 3},
		{URL: "https://f.example/", Line: 4},
		{URL: "https://g.example/", Line: 4},
		{URL: "https://h.example/x", Line: 4},
		{URL: "https://web.archive.org/web/2020/https://i.example/page", Line: 5},
		{URL: "https://i.example/page", Line: 5},
	}
	assertItems(t, items, want)
	if len(invalid) != 0 {
		t.Errorf("free text reported %+v", invalid)
	}
}

// Any HTML page's absolute links are items; in-page anchors, relative
// links and mailto: are not, and are not reported. Pocket's HTML export
// gives dates and tags.
func TestHTML(t *testing.T) {
	data := "<!DOCTYPE html>\n<html><head><title>Pocket Export</title></head><body>\n" +
		"<h1>Unread</h1>\n<ul>\n" +
		"<li><a href=\"https://a.example/\" time_added=\"1710754200\" tags=\"fog,lights\">Keepers</a></li>\n" +
		"<li><a href=\"#top\">top</a> <a href=\"/relative\">rel</a> <a href=\"mailto:x@a.example\">mail</a></li>\n" +
		"<li><a HREF=\"HTTP://b.example/x\">B</a></li>\n" +
		"</ul></body></html>\n"
	items, invalid := mustParse(t, data, input.Auto)
	assertItems(t, items, []input.Item{
		{URL: "https://a.example/", Title: "Keepers", Tags: []string{"fog", "lights"}, BookmarkedAt: date("2024-03-18T09:30:00Z"), Line: 5},
		{URL: "HTTP://b.example/x", Title: "B", Line: 7},
	})
	if len(invalid) != 0 {
		t.Errorf("generic HTML reported %+v", invalid)
	}
}

// Pinboard's JSON export: an array of objects with href, description
// (the title), time and space-separated tags.
func TestJSONArray(t *testing.T) {
	data := "[\n" +
		`{"href":"https://a.example/","description":"Keepers","extended":"","time":"2024-03-18T09:30:00Z","shared":"no","toread":"yes","tags":"fog lights"},` + "\n" +
		`  {"href":"ftp://b.example/"},` + "\n" +
		`  "not an object", {"url":"https://c.example/"}` + "\n]\n"
	items, invalid := mustParse(t, data, input.Auto)
	assertItems(t, items, []input.Item{
		{URL: "https://a.example/", Title: "Keepers", Tags: []string{"fog", "lights"}, BookmarkedAt: date("2024-03-18T09:30:00Z"), Line: 2},
		{URL: "https://c.example/", Line: 4},
	})
	if len(invalid) != 2 || invalid[0].Line != 3 || invalid[0].Reason != "not an http(s) or file URL" ||
		invalid[1].Line != 4 || invalid[1].Reason != "not a JSON object" {
		t.Errorf("invalid = %+v", invalid)
	}
}

// Pocket's CSV export (tags joined by "|", unix times) and Instapaper's
// (capitalised names, a Folder as the tag) are read by their header.
func TestCSV(t *testing.T) {
	pocket := "title,url,time_added,cursor,tags,status\n" +
		"\"Horns, bells & guns\",https://a.example/fog,1712081100,abc,fog|sound,unread\n" +
		"\n" +
		"Untitled,not a url,,,,archive\n" +
		"\"multi\nline\",https://b.example/,,,,unread\n"
	items, invalid := mustParse(t, pocket, input.Auto)
	assertItems(t, items, []input.Item{
		{URL: "https://a.example/fog", Title: "Horns, bells & guns", Tags: []string{"fog", "sound"}, BookmarkedAt: date("2024-04-02T18:05:00Z"), Line: 2},
		{URL: "https://b.example/", Title: "multi line", Line: 5},
	})
	if len(invalid) != 1 || invalid[0].Line != 4 || invalid[0].Text != "not a url" {
		t.Errorf("invalid = %+v", invalid)
	}
	instapaper := "URL,Title,Selection,Folder,Timestamp\nhttps://c.example/,C,,Unread,1710754200\n"
	items, _ = mustParse(t, instapaper, input.Auto)
	assertItems(t, items, []input.Item{
		{URL: "https://c.example/", Title: "C", Tags: []string{"Unread"}, BookmarkedAt: date("2024-03-18T09:30:00Z"), Line: 2},
	})
}
