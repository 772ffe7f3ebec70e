package export_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/export"
	"github.com/folio-archive/folio/gen"
	"github.com/folio-archive/folio/layout"
)

// generated makes a collection of n synthetic snapshots (odd names,
// unicode, %, missing outputs, hostile titles) in a temp folder.
func generated(t testing.TB, n int, seed uint64) (*archive.Collection, *gen.Manifest) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "data")
	if keep := os.Getenv("FOLIO_KEEP_EXPORT"); keep != "" {
		dir = keep
	}
	m, err := gen.Current(dir, gen.Options{N: n, Seed: seed, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	c, err := archive.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return c, m
}

func run(t testing.TB, opts export.Options) export.Stats {
	t.Helper()
	st, err := export.Run(context.Background(), opts, archive.Discard)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// handMade is a snapshot written by the test itself.
type handMade struct {
	snap    archive.Snapshot
	results []archive.Result
	files   map[string]string // path in the snapshot folder -> content
}

var clock = time.Date(2024, 7, 20, 10, 0, 0, 0, time.UTC)

func (h handMade) write(t testing.TB, c *archive.Collection) string {
	t.Helper()
	s := h.snap
	if s.ID == "" {
		s.ID = archive.NewID(clock, bytes.NewReader(bytes.Repeat([]byte(s.URL+"0123456789abcdef"), 4)))
	}
	if s.BookmarkedAt.IsZero() {
		s.BookmarkedAt = clock
	}
	if s.Status == "" {
		s.Status = "sealed"
	}
	s.FSVersion = layout.Current
	rel, err := layout.SnapshotDir("system", s.BookmarkedAt, s.URL, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	dir := c.Path(rel)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ix, _ := archive.ParseIndex(nil)
	ix.SetSnapshot(s)
	for _, r := range h.results {
		r.SnapshotID = s.ID
		ix.AddResult(r)
	}
	if err := archive.WriteIndex(dir, ix); err != nil {
		t.Fatal(err)
	}
	for p, content := range h.files {
		fp := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(fp), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(fp, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return rel
}

func ok(plugin, outputStr string, files ...string) archive.Result {
	r := archive.Result{Plugin: plugin, Status: archive.StatusSucceeded, OutputStr: outputStr, StartTS: clock, EndTS: clock}
	for _, f := range files {
		r.OutputFiles = append(r.OutputFiles, archive.OutputFile{Path: f, Size: 10})
	}
	return r
}

// oddSnapshots adds hand-made snapshots with the names and records that
// break naive exporters: %, spaces, unicode, ? and #, outputs recorded but
// missing, paths with .., absolute paths, symlinks out of the collection,
// and a snapshot never captured.
func oddSnapshots(t testing.TB, c *archive.Collection) (odd, pending string) {
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.html"), []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	odd = handMade{
		snap: archive.Snapshot{URL: "https://odd.example/a b/%41?x=1#frag", Title: "Odd names", Tags: []string{"odd"}, ArchiveSize: 99},
		results: []archive.Result{
			ok("wget", "wget/index%3A.html", "index%3A.html"),
			ok("singlefile", "singlefile/singlefile.html", "singlefile.html"),
			ok("screenshot", "screenshot/screenshot.png", "screenshot.png"),
			ok("dom", "dom/spaced name ü.html", "spaced name ü.html"),
			ok("readability", "readability/q?a=1#b.html", "q?a=1#b.html"),
			ok("staticfile", "staticfile/prenav.json", "prenav.json"),
			ok("pdf", "../../../../../../../etc/passwd"),
			ok("htmltotext", "/etc/passwd"),
			ok("mercury", "mercury/leak.html", "leak.html"),
			ok("ytdlp", "ytdlp/saved.m4a", "saved.m4a", "deleted.temp.m4a", "clip.mp4"),
			{Plugin: "git", Status: archive.StatusFailed, OutputStr: "Not a git URL", StartTS: clock},
		},
		files: map[string]string{
			"wget/index%3A.html":         "<p>wget</p>",
			"singlefile/singlefile.html": "<!DOCTYPE html><title>sf</title><p>singlefile page</p>",
			"screenshot/screenshot.png":  "\x89PNG fake",
			"dom/spaced name ü.html":     "<p>dom</p>",
			"readability/q?a=1#b.html":   "<p>readability</p>",
			"ytdlp/saved.m4a":            "m4a data",
			"ytdlp/clip.mp4":             "mp4 data, larger",
			"favicon/favicon.ico":        "ico",
		},
	}.write(t, c)
	os.MkdirAll(c.Path(odd+"/mercury"), 0o755)
	if err := os.Symlink(filepath.Join(outside, "secret.html"), c.Path(odd+"/mercury/leak.html")); err != nil {
		t.Fatal(err)
	}
	pending = handMade{snap: archive.Snapshot{URL: "https://pending.example/never", Status: "queued"}}.write(t, c)
	return odd, pending
}

var (
	forbidden  = []string{"/admin/", "/snapshot/", "/web/", "/static/", "/None", "core/snapshot.html"}
	schemeRE   = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
	shardStart = regexp.MustCompile(`^folioSearch\.add\(\d+, `)
	snapRE     = regexp.MustCompile(`archive/users/[^/]+/snapshots/[^/]+/[^/]+/[^/]+`)
)

// linkCheck follows every href and src of every generated page (root
// pages, site pages, snapshot pages) and every link in the search shards,
// and fails unless each resolves to a regular file inside the export. It
// also fails on live-server routes and absolute paths. It returns the
// number of pages and links checked.
func linkCheck(t *testing.T, root string, secrets ...string) (pages, links int) {
	t.Helper()
	var htmlPages, shards []string
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && (d.Name() == ".folio" || d.Name() == "sources" || d.Name() == "logs") {
			return filepath.SkipDir
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		switch {
		case rel == "index.html" || strings.HasPrefix(rel, "site/") && strings.HasSuffix(rel, ".html"):
			htmlPages = append(htmlPages, rel)
		case strings.HasPrefix(rel, "site/search/") && strings.HasSuffix(rel, ".js"):
			shards = append(shards, rel)
		case strings.HasPrefix(rel, "archive/") && d.Name() == "index.html" && exists(filepath.Join(filepath.Dir(p), "index.jsonl")):
			htmlPages = append(htmlPages, rel)
		}
		return nil
	})
	var resolve func(page, ref string)
	resolve = func(page, ref string) {
		t.Helper()
		links++
		if strings.HasPrefix(ref, "/") || strings.HasPrefix(ref, "file:") {
			t.Errorf("%s: absolute link %q", page, ref)
			return
		}
		p := ref
		if i := strings.IndexAny(p, "?#"); i >= 0 {
			p = p[:i]
		}
		if p == "" {
			return // a fragment of the page itself
		}
		dec, err := url.PathUnescape(p)
		if err != nil {
			t.Errorf("%s: link %q: %v", page, ref, err)
			return
		}
		target := path.Join(path.Dir(page), dec)
		if target == ".." || strings.HasPrefix(target, "../") {
			t.Errorf("%s: link %q leaves the export", page, ref)
			return
		}
		if _, frag, _ := strings.Cut(ref, "#"); target == export.ViewPage && frag != "" {
			// The viewer frames the file its fragment names: that one
			// must resolve, from the export root.
			dir, file, ok := strings.Cut(frag, ":")
			if !ok || !strings.HasPrefix(dir, "archive/") {
				t.Errorf("%s: viewer link %q names no snapshot folder", page, ref)
			}
			links--
			resolve("index.html", "./"+dir+"/"+file)
			return
		}
		// Inside a snapshot folder names are data (a user may be called
		// admin, a wget path may hold /web/); routes show up elsewhere.
		route := "/" + snapRE.ReplaceAllString(target, "archive/SNAP")
		if i := strings.Index(route, "archive/SNAP/"); i >= 0 {
			route = route[:i]
		}
		for _, f := range forbidden {
			if strings.Contains(route, f) || strings.Contains(ref, f) && !strings.Contains(target, "archive/users/") {
				t.Errorf("%s: link %q contains %s", page, ref, f)
			}
		}
		fi, err := os.Lstat(filepath.Join(root, filepath.FromSlash(target)))
		if err != nil || !fi.Mode().IsRegular() {
			t.Errorf("%s: link %q -> %s does not resolve to a file (%v)", page, ref, target, err)
		}
	}
	for _, page := range htmlPages {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(page)))
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range append([]string{root}, secrets...) {
			if bytes.Contains(data, []byte(s)) {
				t.Errorf("%s contains %q", page, s)
			}
		}
		if strings.Contains(string(data), `href="./index.json"`) {
			t.Errorf("%s links index.json", page)
		}
		doc, err := goquery.NewDocumentFromReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		doc.Find("[href],[src],[data-fallbacks]").Each(func(_ int, s *goquery.Selection) {
			for _, attr := range []string{"href", "src"} {
				v, ok := s.Attr(attr)
				if !ok {
					continue
				}
				if v == "data:," {
					continue // the empty icon that keeps browsers from asking for /favicon.ico
				}
				if schemeRE.MatchString(v) {
					// Only the original URL may leave the export, and only
					// as an explicit outbound link.
					if s.HasClass("snapshot-url") || s.Closest(".notes").Length() > 0 {
						continue
					}
					t.Errorf("%s: %s=%q leaves the export", page, attr, v)
					continue
				}
				resolve(page, v)
			}
			if v, ok := s.Attr("data-fallbacks"); ok && v != "" {
				for _, f := range strings.Split(v, ",") {
					resolve(page, f)
				}
			}
		})
		pages++
	}
	for _, sh := range shards {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(sh)))
		if err != nil {
			t.Fatal(err)
		}
		body := shardStart.ReplaceAll(bytes.TrimSpace(data), nil)
		body = bytes.TrimSuffix(body, []byte(");"))
		// A row: 18 strings, then its icons as [plugin, icon, href]; every
		// link in it is relative to the export root (export/shards.go).
		var rows [][]json.RawMessage
		if err := json.Unmarshal(body, &rows); err != nil {
			t.Fatalf("%s: %v", sh, err)
		}
		for _, raw := range rows {
			var f [18]string
			var icons [][3]string
			for i := range f {
				if err := json.Unmarshal(raw[i], &f[i]); err != nil {
					t.Fatalf("%s: field %d: %v", sh, i, err)
				}
			}
			if err := json.Unmarshal(raw[18], &icons); err != nil {
				t.Fatalf("%s: icons: %v", sh, err)
			}
			hrefs := []string{f[0], f[8], f[10]}
			hrefs = append(hrefs, strings.Split(f[9], ",")...)
			hrefs = append(hrefs, strings.Split(f[11], ",")...)
			for _, ic := range icons {
				hrefs = append(hrefs, ic[2])
			}
			for _, h := range hrefs {
				if h != "" {
					resolve("index.html", h)
				}
			}
		}
	}
	if pages == 0 {
		t.Fatalf("no pages in %s", root)
	}
	return pages, links
}

func exists(p string) bool { _, err := os.Lstat(p); return err == nil }

func TestLinkCheckInPlaceAndOut(t *testing.T) {
	c, m := generated(t, 120, 7)
	odd, pending := oddSnapshots(t, c)
	st := run(t, export.Options{Collection: c, PageSize: 25})
	if st.Snapshots != len(m.Snapshots)+2 {
		t.Fatalf("exported %d, want %d", st.Snapshots, len(m.Snapshots)+2)
	}
	pages, links := linkCheck(t, c.Dir)
	t.Logf("in place: %d pages, %d links", pages, links)
	if want := st.Snapshots + max(1, (st.Snapshots+12)/25) + 1; pages != want { // + index.html, site/page-N.html and site/view.html
		t.Errorf("checked %d pages, want %d", pages, want)
	}
	for _, s := range m.Snapshots {
		if !exists(c.Path(s.Dir + "/index.html")) {
			t.Errorf("no detail page for %s", s.Dir)
		}
	}
	checkOddPage(t, c.Path(odd+"/index.html"))
	checkRelated(t, c.Dir, m)
	if !exists(c.Path(pending + "/index.html")) {
		t.Errorf("never-captured snapshot got no page")
	}

	out := filepath.Join(t.TempDir(), "public")
	run(t, export.Options{Collection: c, Out: out, PageSize: 25})
	linkCheck(t, out, c.Dir)
	checkOddPage(t, filepath.Join(out, filepath.FromSlash(odd), "index.html"))
}

// checkRelated asserts that each page of a URL captured more than once
// links the other captures.
func checkRelated(t *testing.T, root string, m *gen.Manifest) {
	t.Helper()
	byURL := map[string][]string{}
	for _, s := range m.Snapshots {
		byURL[s.URL] = append(byURL[s.URL], s.Dir)
	}
	found := 0
	for _, dirs := range byURL {
		if len(dirs) < 2 {
			continue
		}
		for _, d := range dirs {
			page, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(d), "index.html"))
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range dirs {
				if o == d {
					continue
				}
				found++
				rel, _ := filepath.Rel(d, o+"/index.html")
				if !strings.Contains(string(page), `href="`+export.Quote(rel)+`"`) {
					t.Errorf("page of %s does not link its other capture %s", d, o)
				}
			}
		}
	}
	if found == 0 {
		t.Errorf("the generated collection has no URL captured twice")
	}
}

// checkOddPage asserts what the odd snapshot's page links and omits.
func checkOddPage(t *testing.T, page string) {
	t.Helper()
	data, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	for _, want := range []string{
		`./wget/index%253A.html`, `./screenshot/screenshot.png`, `./dom/spaced%20name%20%C3%BC.html`,
		`./readability/q%3Fa=1%23b.html`, `./ytdlp/saved.m4a`, `./ytdlp/clip.mp4`, `href="./index.jsonl"`,
		`src="./singlefile/singlefile.html"`, `sandbox=""`, `git (failed)`,
	} {
		if !strings.Contains(s, want) {
			t.Errorf("odd page lacks %s", want)
		}
	}
	for _, bad := range []string{"prenav.json", "deleted.temp.m4a", "passwd", "leak.html", "allow-same-origin"} {
		if strings.Contains(s, bad) {
			t.Errorf("odd page contains %s", bad)
		}
	}
	// media order: playable video first, then playable audio
	media := s[strings.Index(s, `class="media"`):]
	if strings.Index(media, "clip.mp4") > strings.Index(media, "saved.m4a") {
		t.Errorf("media not sorted video first")
	}
}

func TestManifest(t *testing.T) {
	c, m := generated(t, 40, 3)
	run(t, export.Options{Collection: c})
	data, err := os.ReadFile(c.Path("index.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for i, b := range data {
		if b > 0x7e || b < 0x20 && b != '\n' {
			t.Fatalf("byte %d of index.jsonl is %#x: not ensure_ascii", i, b)
		}
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != len(m.Snapshots) {
		t.Fatalf("%d records, want %d", len(lines), len(m.Snapshots))
	}
	want := map[string]gen.Entry{}
	for _, s := range m.Snapshots {
		want[s.ID] = s
	}
	wantKeys := strings.Fields(`TYPE archive_path archive_size archive_url base_url basename bookmarked_at
		bookmarked_date crawl_id created_at depth domain downloaded_at downloaded_datestr extension fs_version
		id is_archived is_static link_dir modified_at num_failures num_outputs output_dir output_size path
		retry_at scheme status tags timestamp title url`)
	var prev time.Time
	for i, line := range lines {
		dec := json.NewDecoder(strings.NewReader(line))
		tok, _ := dec.Token()
		if tok != json.Delim('{') {
			t.Fatalf("line %d is not an object", i+1)
		}
		var keys []string
		for dec.More() {
			k, _ := dec.Token()
			keys = append(keys, k.(string))
			var v json.RawMessage
			dec.Decode(&v)
		}
		if strings.Join(keys, " ") != strings.Join(wantKeys, " ") {
			t.Fatalf("line %d keys\n%v\nwant\n%v", i+1, keys, wantKeys)
		}
		if !strings.Contains(line, `", "`) && !strings.Contains(line, `, "`) {
			t.Fatalf("line %d does not use Python separators", i+1)
		}
		var r struct {
			TYPE, ID, URL, ArchivePath, ArchiveURL string
			Tags                                   []string
			Type                                   *string `json:"type"`
			Bookmarked                             string  `json:"bookmarked_at"`
		}
		r.ArchivePath = ""
		var raw map[string]any
		json.Unmarshal([]byte(line), &raw)
		json.Unmarshal([]byte(line), &r)
		if raw["TYPE"] != "core.models.Snapshot" || raw["type"] != nil {
			t.Errorf("line %d: TYPE %v type %v", i+1, raw["TYPE"], raw["type"])
		}
		e, ok := want[r.ID]
		if !ok {
			t.Fatalf("line %d: unknown id %s", i+1, r.ID)
		}
		if raw["archive_path"] != e.Dir || raw["archive_url"] != "./"+e.Dir+"/index.html" || raw["output_dir"] != e.Dir {
			t.Errorf("line %d: archive_path %v archive_url %v", i+1, raw["archive_path"], raw["archive_url"])
		}
		tags, isList := raw["tags"].([]any)
		if !isList {
			t.Errorf("line %d: tags %T", i+1, raw["tags"])
		}
		if len(tags) != len(e.Tags) {
			t.Errorf("line %d: tags %v want %v", i+1, tags, e.Tags)
		}
		if raw["url"] != e.URL {
			t.Errorf("line %d: url %v want %v", i+1, raw["url"], e.URL)
		}
		bt, _ := archive.ParseTime(r.Bookmarked)
		if i > 0 && bt.After(prev) {
			t.Errorf("line %d: not newest first", i+1)
		}
		prev = bt
	}
}

func TestXSS(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	res, err := archive.Init(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	c := res.Collection
	hostile := `<script>alert(1)</script>`
	rel := handMade{
		snap: archive.Snapshot{
			URL:   `javascript:alert(2)//"><img src=x onerror=alert(3)>`,
			Title: hostile + `" onmouseover="alert(4)`,
			Tags:  []string{`<img src=x onerror=alert(5)>`, `"><svg onload=alert(6)>`},
			Notes: "# Notes\n\n<script>alert(7)</script>\n\n[click](javascript:alert(8)) <img src=x onerror=alert(9)>\n\n**bold**",
		},
		results: []archive.Result{ok("singlefile", "singlefile/singlefile.html", "singlefile.html")},
		files:   map[string]string{"singlefile/singlefile.html": "<script>alert('archived')</script><p>archived page</p>"},
	}.write(t, c)
	rel2 := handMade{snap: archive.Snapshot{URL: `https://x.example/"><script>alert(10)</script>`, Title: hostile, BookmarkedAt: clock.Add(time.Hour)}}.write(t, c)
	run(t, export.Options{Collection: c})
	for _, p := range []string{"index.html", rel + "/index.html", rel2 + "/index.html"} {
		data, err := os.ReadFile(c.Path(p))
		if err != nil {
			t.Fatal(err)
		}
		checkInert(t, p, data)
		if !strings.Contains(string(data), "&lt;script&gt;alert(1)&lt;/script&gt;") {
			t.Errorf("%s does not show the hostile title as text", p)
		}
	}
	shard, err := os.ReadFile(c.Path("site/search/1.js"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.ContainsAny(shard, "<>") {
		t.Errorf("search shard holds raw < or >: %s", shard)
	}
	detail, _ := os.ReadFile(c.Path(rel + "/index.html"))
	if !strings.Contains(string(detail), "<strong>bold</strong>") {
		t.Errorf("notes not rendered from Markdown")
	}
	if !strings.Contains(string(detail), `http-equiv="Content-Security-Policy"`) {
		t.Errorf("no CSP meta")
	}
	if !strings.Contains(string(detail), `sandbox=""`) {
		t.Errorf("archived page not sandboxed")
	}
	run(t, export.Options{Collection: c, AllowArchivedScripts: true})
	detail, _ = os.ReadFile(c.Path(rel + "/index.html"))
	if !strings.Contains(string(detail), `sandbox="allow-scripts"`) || strings.Contains(string(detail), "allow-same-origin") {
		t.Errorf("--allow-archived-scripts sandbox wrong")
	}
}

// TestOutCopy exports a selection into a publishable folder and checks it
// holds the selected snapshots only, hard links to their files, fresh
// pages, and nothing of the collection's private files.
func TestOutCopy(t *testing.T) {
	c, m := generated(t, 60, 11)
	for _, p := range []string{"ArchiveBox.conf", "index.sqlite3", "sources/1-import.txt", "logs/errors.log"} {
		os.MkdirAll(filepath.Dir(c.Path(p)), 0o755)
		if err := os.WriteFile(c.Path(p), []byte("private"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run(t, export.Options{Collection: c}) // in place first: snapshot folders get index.html
	tag := ""
	for _, s := range m.Snapshots {
		if len(s.Tags) > 0 {
			tag = s.Tags[0]
			break
		}
	}
	var selected, other []gen.Entry
	for _, s := range m.Snapshots {
		if contains(s.Tags, tag) {
			selected = append(selected, s)
		} else {
			other = append(other, s)
		}
	}
	out := filepath.Join(t.TempDir(), "public")
	// A stale hard link from the out folder into the collection must be
	// replaced, never written through.
	first := selected[0].Dir
	inPlace := c.Path(first + "/index.html")
	before, _ := os.ReadFile(inPlace)
	os.MkdirAll(filepath.Join(out, filepath.FromSlash(first)), 0o755)
	os.MkdirAll(filepath.Join(out, "site"), 0o755)
	os.WriteFile(filepath.Join(out, "site", "folio.js"), nil, 0o644)
	if err := os.Link(inPlace, filepath.Join(out, filepath.FromSlash(first), "index.html")); err != nil {
		t.Fatal(err)
	}
	q := export.Options{Collection: c, Out: out}
	q.Query.Tags = []string{tag}
	st := run(t, q)
	if st.Snapshots != len(selected) {
		t.Fatalf("exported %d, want %d", st.Snapshots, len(selected))
	}
	if after, _ := os.ReadFile(inPlace); !bytes.Equal(before, after) {
		t.Fatalf("the --out export wrote through a hard link into %s", inPlace)
	}
	filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		name := d.Name()
		switch {
		case name == "ArchiveBox.conf", strings.Contains(name, ".sqlite3"), name == "sources", name == "logs", name == ".folio", strings.HasSuffix(name, ".log") && !strings.Contains(p, "/archive/"):
			t.Errorf("--out holds %s", p)
		}
		return nil
	})
	for _, s := range selected {
		pg := filepath.Join(out, filepath.FromSlash(s.Dir), "index.html")
		pi, err := os.Stat(pg)
		if err != nil {
			t.Errorf("no page for %s", s.Dir)
			continue
		}
		if ci, err := os.Stat(c.Path(s.Dir + "/index.html")); err == nil && os.SameFile(pi, ci) {
			t.Errorf("page of %s is the collection's file", s.Dir)
		}
		si, err := os.Stat(c.Path(s.Dir + "/index.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		di, err := os.Stat(filepath.Join(out, filepath.FromSlash(s.Dir), "index.jsonl"))
		if err != nil || !os.SameFile(si, di) {
			t.Errorf("index.jsonl of %s not hard-linked: %v", s.Dir, err)
		}
	}
	for _, s := range other {
		if exists(filepath.Join(out, filepath.FromSlash(s.Dir))) {
			t.Errorf("unselected %s copied", s.Dir)
		}
	}
	if hb, err := os.ReadFile(filepath.Join(out, "_headers")); err != nil || !strings.Contains(string(hb), "Content-Security-Policy: sandbox") {
		t.Errorf("_headers: %q %v", hb, err)
	}
	linkCheck(t, out, c.Dir)

	// Narrow the selection on purpose (AllowShrink): copies of snapshots
	// no longer selected go.
	q.AllowShrink = true
	q.Query.Tags = nil
	q.Query.Patterns = []string{selected[0].URL}
	q.Query.FilterType = "exact"
	st = run(t, q)
	if st.Removed == 0 || exists(filepath.Join(out, filepath.FromSlash(selected[len(selected)-1].Dir))) && selected[len(selected)-1].URL != selected[0].URL {
		t.Errorf("narrowed export removed %d folders", st.Removed)
	}
	linkCheck(t, out, c.Dir)
}

// checkInert fails when a page holds markup an archived string could have
// injected: inline scripts, event handler attributes, javascript: links,
// or elements the templates never write.
func checkInert(t *testing.T, name string, data []byte) {
	t.Helper()
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	doc.Find("*").Each(func(_ int, s *goquery.Selection) {
		n := s.Get(0)
		if n.Data == "script" && (strings.TrimSpace(s.Text()) != "" || s.AttrOr("src", "") == "") {
			t.Errorf("%s: inline script %q", name, s.Text())
		}
		if n.Data == "svg" || n.Data == "object" || n.Data == "embed" || n.Data == "form" {
			t.Errorf("%s: injected <%s>", name, n.Data)
		}
		for _, a := range n.Attr {
			if strings.HasPrefix(strings.ToLower(a.Key), "on") {
				t.Errorf("%s: event handler %s=%q on <%s>", name, a.Key, a.Val, n.Data)
			}
			v := strings.ToLower(strings.TrimSpace(a.Val))
			if (a.Key == "href" || a.Key == "src") && (strings.HasPrefix(v, "javascript:") || strings.HasPrefix(v, "data:text")) {
				t.Errorf("%s: %s=%q", name, a.Key, a.Val)
			}
			if a.Key == "sandbox" && strings.Contains(v, "allow-same-origin") && strings.Contains(v, "allow-scripts") {
				t.Errorf("%s: sandbox %q", name, a.Val)
			}
		}
		if n.Data == "img" && s.AttrOr("src", "") == "x" {
			t.Errorf("%s: injected <img src=x>", name)
		}
	})
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

type fileID struct {
	ino   uint64
	mtime time.Time
}

func snapshotOf(t *testing.T, root string) map[string]fileID {
	t.Helper()
	out := map[string]fileID{}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if rel == "index.html" || strings.HasPrefix(rel, "site/") || strings.HasSuffix(rel, "/index.html") {
			fi, _ := d.Info()
			out[rel] = fileID{ino: inode(fi), mtime: fi.ModTime()}
		}
		return nil
	})
	return out
}

// TestIncremental changes one snapshot and checks that only its page, the
// root page that lists it and that page's search shard are rewritten.
func TestIncremental(t *testing.T) {
	c, m := generated(t, 90, 5)
	st := run(t, export.Options{Collection: c, PageSize: 20})
	if st.Written != 90 || st.RootWritten != 5 { // the first of 10 rows, four of 20
		t.Fatalf("first export: %+v", st)
	}
	before := snapshotOf(t, c.Dir)
	st = run(t, export.Options{Collection: c, PageSize: 20})
	if st.Written != 0 || st.RootWritten != 0 {
		t.Fatalf("unchanged export rewrote %d pages, %d root pages", st.Written, st.RootWritten)
	}
	// Pick a snapshot whose URL has no other capture, so no other page
	// mentions it.
	urls := map[string]int{}
	for _, s := range m.Snapshots {
		urls[s.URL]++
	}
	pick := -1
	for i, s := range m.Snapshots {
		if urls[s.URL] == 1 && i < 60 {
			pick = i
		}
	}
	target := m.Snapshots[pick]
	time.Sleep(10 * time.Millisecond) // a distinct mtime on coarse clocks
	if err := gen.RetitleIndex(c.Path(target.Dir), "Retitled snapshot"); err != nil {
		t.Fatal(err)
	}
	st = run(t, export.Options{Collection: c, PageSize: 20})
	if st.Written != 1 || st.RootWritten != 1 {
		t.Fatalf("after one change: %d pages, %d root pages written", st.Written, st.RootWritten)
	}
	after := snapshotOf(t, c.Dir)
	// The snapshots are listed newest first: find the page of target.
	sorted := append([]gen.Entry(nil), m.Snapshots...)
	sort.SliceStable(sorted, func(a, b int) bool { return sorted[a].BookmarkedAt.After(sorted[b].BookmarkedAt) })
	pos := 0
	for i, s := range sorted {
		if s.Dir == target.Dir {
			pos = i
		}
	}
	page := 1 // the first page lists 10, the others 20 (the oldest)
	if pos >= 10 {
		page = (pos-10)/20 + 2
	}
	rootPage := "index.html"
	if page > 1 {
		rootPage = "site/page-" + itoa(page) + ".html"
	}
	changed := map[string]bool{target.Dir + "/index.html": true, rootPage: true, "site/search/" + itoa(page) + ".js": true}
	for rel, b := range before {
		a, ok := after[rel]
		if !ok {
			t.Errorf("%s vanished", rel)
			continue
		}
		if got := a != b; got != changed[rel] {
			t.Errorf("%s rewritten = %v, want %v", rel, got, changed[rel])
		}
	}
	data, _ := os.ReadFile(c.Path(rootPage))
	if !strings.Contains(string(data), "Retitled snapshot") {
		t.Errorf("%s does not show the new title", rootPage)
	}
	// --full renders every page again; those whose bytes are on disk
	// already are left as they were, the others are written.
	st = run(t, export.Options{Collection: c, PageSize: 20, Full: true})
	if st.Written != 0 || st.Same != 90 || st.RootWritten != 0 || st.RootSame != 5 {
		t.Errorf("--full: %+v", st)
	}
	if full := snapshotOf(t, c.Dir); !maps.Equal(full, after) {
		t.Errorf("--full over an unchanged site rewrote files")
	}
	time.Sleep(10 * time.Millisecond)
	if err := gen.RetitleIndex(c.Path(target.Dir), "Retitled again"); err != nil {
		t.Fatal(err)
	}
	st = run(t, export.Options{Collection: c, PageSize: 20, Full: true})
	if st.Written != 1 || st.Same != 89 || st.RootWritten != 1 || st.RootSame != 4 {
		t.Errorf("--full after one change: %+v", st)
	}
	for rel, b := range snapshotOf(t, c.Dir) {
		if got := after[rel] != b; got != changed[rel] {
			t.Errorf("--full after one change: %s rewritten = %v, want %v", rel, got, changed[rel])
		}
	}
}

func itoa(n int) string { return strings.TrimSpace(strings.Repeat(" ", 0) + fmtInt(n)) }

func fmtInt(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for n > 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	return string(b)
}

func TestOutRefusesForeignFolder(t *testing.T) {
	c, _ := generated(t, 3, 1)
	out := t.TempDir()
	os.WriteFile(filepath.Join(out, "notes.txt"), []byte("mine"), 0o644)
	_, err := export.Run(context.Background(), export.Options{Collection: c, Out: out}, archive.Discard)
	if err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Fatalf("err = %v", err)
	}
	_, err = export.Run(context.Background(), export.Options{Collection: c, Out: c.Path("archive/x")}, archive.Discard)
	if err == nil {
		t.Fatalf("export into archive/ accepted")
	}
	if !errors.Is(err, err) {
		t.Fatal(err)
	}
}

// recorder is a Printer that keeps warnings.
type recorder struct{ warnings []string }

func (r *recorder) Infof(string, ...any)          {}
func (r *recorder) Warnf(f string, a ...any)      { r.warnings = append(r.warnings, fmt.Sprintf(f, a...)) }
func (r *recorder) Progress(string, int64, int64) {}

// TestHostLimitWarning exports a snapshot holding a sparse 1.1 GB file (a
// hard link in the copy, so the test costs no disk) and expects the GitHub
// Pages warning.
func TestHostLimitWarning(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	res, err := archive.Init(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	c := res.Collection
	rel := handMade{snap: archive.Snapshot{URL: "https://big.example/video"}, results: []archive.Result{ok("ytdlp", "ytdlp/big.mp4", "big.mp4")}}.write(t, c)
	big := c.Path(rel + "/ytdlp/big.mp4")
	os.MkdirAll(filepath.Dir(big), 0o755)
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1100 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	var rec recorder
	st, err := export.Run(context.Background(), export.Options{Collection: c, Out: filepath.Join(t.TempDir(), "public")}, &rec)
	if err != nil {
		t.Fatal(err)
	}
	if st.Bytes < 1100<<20 || len(rec.warnings) != 1 || !strings.Contains(rec.warnings[0], "GitHub Pages") {
		t.Errorf("bytes %d, warnings %q", st.Bytes, rec.warnings)
	}
}

// TestTemplateOverride checks that an overridden page template is the one
// rendered (the built-in pages have a renderer of their own).
func TestTemplateOverride(t *testing.T) {
	c, m := generated(t, 3, 1)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "snapshot.html"), []byte("<p class=\"mine\">{{.Title}}</p>\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, export.Options{Collection: c, Templates: dir})
	data, err := os.ReadFile(c.Path(m.Snapshots[0].Dir + "/index.html"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(data), `<p class="mine">`) {
		t.Fatalf("page not rendered from the override: %.80q", data)
	}
	root, err := os.ReadFile(c.Path("index.html"))
	if err != nil || !strings.HasPrefix(string(root), "<!DOCTYPE html>") {
		t.Fatalf("root page: %.80q, %v", root, err)
	}
}

// TestExportLetsGoOfFolders checks that the snapshot folders an export
// holds open while it makes their pages are closed again.
func TestExportLetsGoOfFolders(t *testing.T) {
	c, _ := generated(t, 60, 7)
	openFDs := func() int {
		entries, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Fatal(err)
		}
		return len(entries)
	}
	run(t, export.Options{Collection: c, Full: true}) // the runtime's own descriptors opened
	before := openFDs()
	for range 3 {
		if st := run(t, export.Options{Collection: c, Full: true}); st.Same+st.Written != 60 {
			t.Fatalf("pages rendered: %+v, want all 60", st)
		}
	}
	if after := openFDs(); after > before+2 {
		t.Errorf("%d descriptors open after three exports of 60 snapshots, %d before", after, before)
	}
}

// A snapshot neither sealed nor with results counts as archived in the
// root manifest when its folder holds one of the files ArchiveBox looks
// for, or a folder named for its host (0.7's wget mirror); a plugin
// folder without that file does not count.
func TestArchivedByMarkers(t *testing.T) {
	c := newCollection(t)
	want := map[string]bool{}
	queued := func(host string, archived bool, files map[string]string) {
		want["https://"+host+"/"] = archived
		handMade{snap: archive.Snapshot{URL: "https://" + host + "/", Title: host, Status: "queued"}, files: files}.write(t, c)
	}
	queued("top.example", true, map[string]string{"output.html": "<p>"})
	queued("deep.example", true, map[string]string{"readability/content.html": "<article>"})
	queued("mirror.example", true, map[string]string{"mirror.example/index.html": "<p>"})
	queued("halfway.example", false, map[string]string{"readability/content.txt": "text"})
	queued("bare.example", false, map[string]string{})
	run(t, export.Options{Collection: c})
	data, err := os.ReadFile(c.Path("index.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for line := range strings.SplitSeq(strings.TrimSpace(string(data)), "\n") {
		var r struct {
			URL        string `json:"url"`
			IsArchived bool   `json:"is_archived"`
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		got[r.URL] = r.IsArchived
	}
	if !maps.Equal(got, want) {
		t.Errorf("is_archived %v, want %v", got, want)
	}
}
