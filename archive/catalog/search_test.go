package catalog_test

import (
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/archive/catalog"
)

// searchTree writes snapshots whose words live in different places: the
// title, the capture text only, a legacy folder's htmltotext.txt, and
// readability's HTML when it has no content.txt.
func searchTree(t *testing.T, c *archive.Collection) (*catalog.Catalog, map[string]string) {
	dirs := map[string]string{}
	dirs["title"] = writeSnapshot(t, c, "system", snapshot(1, "Lighthouse keepers of Ushant"))
	dirs["text"] = writeSnapshot(t, c, "system", snapshot(2, "An unrelated title"))
	writeFile(t, c, dirs["text"]+"/htmltotext/htmltotext.txt", "The lighthouse fog signal sounded twice.\nzyxwvut appears only here.")
	dirs["readability"] = writeSnapshot(t, c, "system", snapshot(3, "Café notes"))
	writeFile(t, c, dirs["readability"]+"/readability/content.txt", "Ein Spaziergang durch München und 東京 im Regen. c++ don't")
	dirs["html"] = writeSnapshot(t, c, "system", snapshot(4, "Stripped"))
	writeFile(t, c, dirs["html"]+"/readability/content.html", "<div><script>hiddenscriptword()</script><p>visible<b>boldword</b></p></div>")
	// With both texts, readability's (the article) is the one indexed.
	dirs["both"] = writeSnapshot(t, c, "system", snapshot(5, "Both texts"))
	writeFile(t, c, dirs["both"]+"/readability/content.txt", "guillemots nest here")
	writeFile(t, c, dirs["both"]+"/htmltotext/htmltotext.txt", "menu puffins footer")
	dirs["legacy"] = "archive/1609459200"
	writeFile(t, c, dirs["legacy"]+"/index.json", legacyLink)
	writeFile(t, c, dirs["legacy"]+"/htmltotext.txt", "quarantined seabirds of the old archive")
	cat := openCatalog(t, c)
	if _, problems := reindex(t, cat, false); len(problems) > 0 {
		t.Fatalf("problems: %q", problems)
	}
	return cat, dirs
}

func found(t *testing.T, cat *catalog.Catalog, words string) []string {
	return foundUpTo(t, cat, words, 0)
}

// foundUpTo is found with a limit: the ranking in two tiers and the
// snippets made in one query (with limit 0, all matches, one tier).
func foundUpTo(t *testing.T, cat *catalog.Catalog, words string, limit int) []string {
	t.Helper()
	var got []string
	q := catalog.Query{Search: catalog.MatchWords(words), Sort: catalog.SortRank, Snippets: true, Limit: limit}
	for _, e := range entries(t, cat, q) {
		got = append(got, e.Dir)
		if !strings.Contains(e.Snippet, catalog.SnippetOpen) {
			t.Errorf("%q: snippet %q marks no match", words, e.Snippet)
		}
	}
	return got
}

func TestSearchFindsCaptureText(t *testing.T) {
	cat, dirs := searchTree(t, newCollection(t))
	for _, tc := range []struct {
		words string
		want  []string
	}{
		{"zyxwvut", []string{dirs["text"]}},
		{"fog signal", []string{dirs["text"]}},
		{`"signal fog"`, nil},
		{`"fog signal"`, []string{dirs["text"]}},
		{"seabirds", []string{dirs["legacy"]}},
		{"boldword", []string{dirs["html"]}},
		{"hiddenscriptword", nil},
		{"guillemots", []string{dirs["both"]}},
		{"puffins", nil},
		{"munchen", []string{dirs["readability"]}},
		{"MÜNCHEN", []string{dirs["readability"]}},
		{"東京", []string{dirs["readability"]}},
		{"cafe", []string{dirs["readability"]}},
		{"c++", []string{dirs["readability"]}},
		{"don't", []string{dirs["readability"]}},
		{"zyxw*", []string{dirs["text"]}},
		{"AND", nil},
		{"ushant", []string{dirs["title"]}},
		// A title hit ranks above a hit in the capture text.
		{"lighthouse", []string{dirs["title"], dirs["text"]}},
	} {
		got := found(t, cat, tc.words)
		if strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("%q: found %q, want %q", tc.words, got, tc.want)
		}
		if got := foundUpTo(t, cat, tc.words, 20); strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("%q, limit 20: found %q, want %q", tc.words, got, tc.want)
		}
	}
	// The title tier fills a limit of one; a text-only match comes when
	// no title matches.
	if got := foundUpTo(t, cat, "lighthouse", 1); strings.Join(got, " ") != dirs["title"] {
		t.Errorf("lighthouse, limit 1: %q", got)
	}
	if got := foundUpTo(t, cat, "fog", 1); strings.Join(got, " ") != dirs["text"] {
		t.Errorf("fog, limit 1: %q", got)
	}
	// An FTS5 expression is ranked in the same tiers, and may name the
	// text's column, which the titles' own index does not have.
	for expr, want := range map[string]string{
		`body:lighthouse`:                  dirs["text"],
		`title:lighthouse`:                 dirs["title"],
		`lighthouse NOT ushant`:            dirs["text"],
		`{title body}: lighthouse`:         dirs["title"] + " " + dirs["text"],
		`"lighthouse" AND (fog OR ushant)`: dirs["title"] + " " + dirs["text"],
	} {
		var got []string
		for _, e := range entries(t, cat, catalog.Query{Search: expr, Sort: catalog.SortRank, Limit: 5}) {
			got = append(got, e.Dir)
		}
		if strings.Join(got, " ") != want {
			t.Errorf("%s, limit 5: found %q, want %q", expr, got, want)
		}
	}
}

// TestSnippetsOfABatch: the snippets of a page of results, and of all the
// results (no limit), made in a table of their own, are those snippet()
// makes in search itself, for words, phrases, prefixes, accents, scripts
// without spaces and FTS5 expressions naming columns.
func TestSnippetsOfABatch(t *testing.T) {
	c := newCollection(t)
	cat, _ := searchTree(t, c)
	// A text longer than a snippet, whose words match in several places:
	// snippet() picks the part of it to show.
	long := writeSnapshot(t, c, "system", snapshot(6, "A long report"))
	writeFile(t, c, long+"/htmltotext/htmltotext.txt", strings.Repeat("filler words of the day before ", 12)+
		"the Ålesund albatross colony counted ninety albatrosses near the fog signal "+
		strings.Repeat("more filler words after ", 12)+"a last albatross")
	if _, problems := reindex(t, cat, false); len(problems) > 0 {
		t.Fatalf("problems: %q", problems)
	}
	inSearch := searchSnippets(t, c)
	exprs := []string{`body:lighthouse`, `{title body}: lighthouse`, `lighthouse NOT ushant`,
		`NEAR(fog signal, 2)`, `^ein`, `title:light* OR body:seabird*`}
	for _, words := range []string{"lighthouse", "fog signal", `"fog signal"`, "light*", "munchen", "MÜNCHEN regen",
		"東京", "c++ don't", "boldword", "quarantined old", "cafe", "zyxw*", "albatross*", "alesund fog", "filler"} {
		exprs = append(exprs, catalog.MatchWords(words))
	}
	for _, expr := range exprs {
		want := inSearch(expr)
		if len(want) == 0 {
			t.Errorf("%s: matches nothing", expr)
		}
		for _, limit := range []int{20, 0} {
			got := map[string]string{}
			for _, e := range entries(t, cat, catalog.Query{Search: expr, Snippets: true, Sort: catalog.SortRank, Limit: limit}) {
				got[e.Dir] = e.Snippet
			}
			for dir, snip := range want {
				if !strings.Contains(snip, catalog.SnippetOpen) {
					t.Errorf("%s, %s: snippet %q marks no match", expr, dir, snip)
				}
				if got[dir] != snip {
					t.Errorf("%s, limit %d, %s: snippet %q, snippet() in search %q", expr, limit, dir, got[dir], snip)
				}
			}
			if len(got) != len(want) {
				t.Errorf("%s, limit %d: %d results, search matches %d", expr, limit, len(got), len(want))
			}
		}
	}
}

// TestSnippetsOfManyResults: results beyond one batch of snippets come
// in the order of the query, each with its own snippet.
func TestSnippetsOfManyResults(t *testing.T) {
	c := newCollection(t)
	const n = 450 // more than two batches
	for i := range n {
		dir := writeSnapshot(t, c, "system", snapshot(100+i, fmt.Sprintf("Report %d", i)))
		writeFile(t, c, dir+"/htmltotext/htmltotext.txt", fmt.Sprintf("a petrel seen at station%d today", i))
	}
	cat := openCatalog(t, c)
	if _, problems := reindex(t, cat, false); len(problems) > 0 {
		t.Fatalf("problems: %q", problems)
	}
	want := searchSnippets(t, c)(catalog.MatchWords("petr*"))
	for _, tc := range []struct {
		q    catalog.Query
		want int
	}{
		{catalog.Query{Search: catalog.MatchWords("petr*"), Sort: catalog.SortRank}, n},
		{catalog.Query{Search: catalog.MatchWords("petr*"), Sort: "url", Limit: 300}, 300},
	} {
		q := tc.q
		plain := entries(t, cat, q)
		q.Snippets = true
		withSnippets := entries(t, cat, q)
		if len(plain) != tc.want || len(withSnippets) != len(plain) {
			t.Fatalf("%+v: %d results with snippets, %d without, want %d", q, len(withSnippets), len(plain), tc.want)
		}
		for i, e := range withSnippets {
			if e.Dir != plain[i].Dir {
				t.Fatalf("%+v: result %d is %s with snippets, %s without", q, i, e.Dir, plain[i].Dir)
			}
			if e.Snippet != want[e.Dir] || !strings.Contains(e.Snippet, catalog.SnippetOpen+"petrel") {
				t.Fatalf("%+v: %s: snippet %q, want %q", q, e.Dir, e.Snippet, want[e.Dir])
			}
		}
	}
}

// searchSnippets returns a function giving the snippets that snippet()
// makes, row by row, in the catalog's search table for an expression, by
// snapshot folder: what folio shows, found without folio's way of making
// them.
func searchSnippets(t *testing.T, c *archive.Collection) func(expr string) map[string]string {
	db, err := sql.Open("sqlite", "file:"+c.Path(archive.CatalogFile)+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return func(expr string) map[string]string {
		t.Helper()
		rows, err := db.Query(`SELECT s.dir, snippet(search, -1, char(2), char(3), '…', 16) FROM search
			JOIN snapshots s ON s.rowid = search.rowid WHERE search MATCH ?`, expr)
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		defer rows.Close()
		out := map[string]string{}
		for rows.Next() {
			var dir, snip string
			if err := rows.Scan(&dir, &snip); err != nil {
				t.Fatal(err)
			}
			out[dir] = snip
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return out
	}
}

func TestMatchWords(t *testing.T) {
	for in, want := range map[string]string{
		"fog signal":       `"fog" "signal"`,
		` "fog signal"  x`: `"fog signal" "x"`,
		`say "hi`:          `"say" "hi"`,
		"c++ don't":        `"c++" "don't"`,
		`a"b`:              `"a""b"`,
		"pre*":             `"pre"*`,
		"😀 ++ *":           "",
		"NEAR(a b)":        `"NEAR(a" "b)"`,
	} {
		if got := catalog.MatchWords(in); got != want {
			t.Errorf("MatchWords(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestSearchSyntaxErrors(t *testing.T) {
	cat, _ := searchTree(t, newCollection(t))
	for _, expr := range []string{`"unbalanced`, `AND`, `fog AND`, `nosuchcolumn:fog`, `NEAR(`} {
		err := cat.Each(ctx, catalog.Query{Search: expr}, func(catalog.Entry) error { return nil })
		if !errors.Is(err, catalog.ErrQuery) || !strings.Contains(err.Error(), expr) || strings.Contains(err.Error(), "SQL logic error") {
			t.Errorf("%q: error %v, want an ErrQuery naming it", expr, err)
		}
		// Ranked with a limit, the expression runs wrapped in the tiers'
		// column filters: the error is still SQLite's about it as typed.
		var plain, ranked *catalog.SearchError
		errors.As(err, &plain)
		err = cat.Each(ctx, catalog.Query{Search: expr, Sort: catalog.SortRank, Snippets: true, Limit: 20}, func(catalog.Entry) error { return nil })
		if !errors.As(err, &ranked) || plain == nil || ranked.Reason != plain.Reason || ranked.Expr != expr {
			t.Errorf("%q ranked: error %v, want %v", expr, err, plain)
		}
		if _, err := cat.Count(ctx, catalog.Query{Search: expr}); !errors.Is(err, catalog.ErrQuery) {
			t.Errorf("%q: count error %v, want ErrQuery", expr, err)
		}
	}
	if err := (catalog.Query{Sort: catalog.SortRank}).Validate(); !errors.Is(err, catalog.ErrQuery) {
		t.Errorf("rank without a search: %v", err)
	}
}

// TestSearchFollowsReindex: text written with an index change (as every
// capture writes it) is read again by a plain reindex, unchanged text
// never is, text changed alone is read by a scoped reindex (what watch
// runs) and by a full one, and removed snapshots leave the index.
func TestSearchFollowsReindex(t *testing.T) {
	c := newCollection(t)
	cat, dirs := searchTree(t, c)
	st, _ := reindex(t, cat, false)
	if st.TextRead != 0 || st.Unchanged != st.Scanned {
		t.Fatalf("nothing changed, yet %+v", st)
	}
	later := time.Now().Add(time.Minute)
	touch := func(rel string) {
		t.Helper()
		later = later.Add(time.Second)
		if err := os.Chtimes(c.Path(rel), later, later); err != nil {
			t.Fatal(err)
		}
	}
	// The text changes, and the index records it.
	writeFile(t, c, dirs["text"]+"/htmltotext/htmltotext.txt", "now it speaks of albatrosses")
	touch(dirs["text"] + "/htmltotext/htmltotext.txt")
	touch(dirs["text"] + "/index.jsonl")
	// The index changes, the text does not: its text stays searchable.
	writeSnapshot(t, c, "system", snapshot(3, "Renamed notes"))
	touch(dirs["readability"] + "/index.jsonl")
	if err := os.RemoveAll(c.Path(dirs["legacy"])); err != nil {
		t.Fatal(err)
	}
	st, _ = reindex(t, cat, false)
	if st.TextRead != 1 || st.Updated != 2 || st.Removed != 1 {
		t.Fatalf("reindex after edits: %+v, want 1 text read, 2 updated, 1 removed", st)
	}
	for words, want := range map[string]string{
		"albatrosses": dirs["text"],
		"zyxwvut":     "",
		"renamed":     dirs["readability"],
		"café":        "", // its old title
		"münchen":     dirs["readability"],
		"seabirds":    "",
		"tech":        "", // a tag of the removed legacy folder
	} {
		if got := strings.Join(found(t, cat, words), " "); got != want {
			t.Errorf("after reindex, %q found %q, want %q", words, got, want)
		}
		// Ranked in tiers, the titles from their own index.
		if got := strings.Join(foundUpTo(t, cat, words, 3), " "); got != want {
			t.Errorf("after reindex, %q with a limit found %q, want %q", words, got, want)
		}
	}
	// The removed legacy folder's title held "page", as every URL does:
	// had its title stayed in the titles' index, it would take the one
	// place of a limit of one, and the join with snapshots would drop it.
	if got := foundUpTo(t, cat, "page", 1); len(got) != 1 {
		t.Errorf("after reindex, page with a limit of one found %q", got)
	}

	// Text changed alone: a plain reindex trusts the index, a scoped one
	// looks at the text files.
	writeFile(t, c, dirs["title"]+"/htmltotext/htmltotext.txt", "kittiwakes")
	if st, _ = reindex(t, cat, false); st.TextRead != 0 {
		t.Errorf("a plain reindex read %d texts whose index did not change", st.TextRead)
	}
	// Looked at on a timer (Polled), the folders are trusted as in a
	// plain reindex; so they are in a scope that holds the whole tree.
	st, err := cat.Reindex(ctx, catalog.ReindexOptions{Scope: []string{dirs["title"], dirs["html"]}, Polled: true})
	if err != nil || st.TextRead != 0 {
		t.Errorf("polled reindex: %+v %v, want no text read", st, err)
	}
	st, err = cat.Reindex(ctx, catalog.ReindexOptions{Scope: []string{"archive"}})
	if err != nil || st.TextRead != 0 {
		t.Errorf("reindex scoped to the whole archive: %+v %v, want no text read", st, err)
	}
	st, err = cat.Reindex(ctx, catalog.ReindexOptions{Scope: []string{dirs["title"], dirs["html"]}})
	if err != nil || st.TextRead != 1 || st.Updated != 1 || st.Unchanged != 1 {
		t.Errorf("scoped reindex: %+v %v, want the one changed text read", st, err)
	}
	if got := found(t, cat, "kittiwakes"); len(got) != 1 {
		t.Errorf("kittiwakes: found %q", got)
	}

	// NoText leaves new text out until the next reindex without it.
	writeFile(t, c, dirs["html"]+"/htmltotext/htmltotext.txt", "fulmars")
	touch(dirs["html"] + "/index.jsonl")
	if _, err := cat.Reindex(ctx, catalog.ReindexOptions{NoText: true}); err != nil {
		t.Fatal(err)
	}
	if got := found(t, cat, "fulmars"); len(got) != 0 {
		t.Errorf("NoText indexed the text: %q", got)
	}
	if st, _ = reindex(t, cat, false); st.TextRead != 1 {
		t.Errorf("the reindex after NoText read %d texts, want 1", st.TextRead)
	}
	if got := found(t, cat, "fulmars"); len(got) != 1 {
		t.Errorf("fulmars: found %q", got)
	}
	if st, _ = reindex(t, cat, true); st.TextRead != st.Scanned {
		t.Errorf("a full reindex read %d texts of %d folders", st.TextRead, st.Scanned)
	}
}
