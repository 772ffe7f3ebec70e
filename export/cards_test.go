package export_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/export"
	"github.com/folio-archive/folio/gen"
)

func newCollection(t *testing.T) *archive.Collection {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "data")
	if _, err := archive.Init(dir, false); err != nil {
		t.Fatal(err)
	}
	c, err := archive.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func page(t *testing.T, c *archive.Collection, rel string) string {
	t.Helper()
	data, err := os.ReadFile(c.Path(rel + "/index.html"))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func writeFile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// An output written into a snapshot folder without a record, as a user
// or a tool outside folio does, shows on the next plain export: its page
// alone is written again, with the card.
func TestOutputAddedByHandAppearsInNextExport(t *testing.T) {
	c := newCollection(t)
	var dirs []string
	for _, u := range []string{"https://a.example/", "https://b.example/", "https://c.example/"} {
		dirs = append(dirs, handMade{snap: archive.Snapshot{URL: u, Title: u},
			results: []archive.Result{ok("screenshot", "screenshot/screenshot.png")},
			files:   map[string]string{"screenshot/screenshot.png": "\x89PNG"}}.write(t, c))
	}
	run(t, export.Options{Collection: c, PageSize: 1})
	if st := run(t, export.Options{Collection: c, PageSize: 1}); st.Written != 0 {
		t.Fatalf("unchanged export wrote %d pages", st.Written)
	}
	target := dirs[1]
	if strings.Contains(page(t, c, target), "card-wget") {
		t.Fatal("wget card before wget ran")
	}
	writeFile(t, c.Path(target+"/wget/b.example/index.html"), "<p>mirrored</p>")
	// With another snapshot's index changed at the same time, the export
	// works from the catalog's change feed, which knows only that one,
	// and the two are on root pages of their own.
	if err := gen.RetitleIndex(c.Path(dirs[0]), "Retitled"); err != nil {
		t.Fatal(err)
	}
	st := run(t, export.Options{Collection: c, PageSize: 1})
	if st.Written != 2 {
		t.Errorf("after an output was added by hand and another snapshot retitled: %d pages written, want 2", st.Written)
	}
	got := page(t, c, target)
	// (HTML opens in the viewer, which frames it in its sandbox.)
	for _, want := range []string{`<article class="card card-wget">`, `href="../../../../../../../site/view.html#` + target + `:wget/b.example/index.html"`} {
		if !strings.Contains(got, want) {
			t.Errorf("page lacks %q:\n%s", want, got)
		}
	}
	// A WARC added by hand in a new folder: the next export offers it.
	writeFile(t, c.Path(target+"/warc/1721469600.warc.gz"), "WARC/1.1")
	if st := run(t, export.Options{Collection: c, PageSize: 1}); st.Written != 1 {
		t.Errorf("after a WARC was added: %d pages written, want 1", st.Written)
	}
	if got := page(t, c, target); !strings.Contains(got, `<a href="./warc/1721469600.warc.gz" download>warc/1721469600.warc.gz</a>`) {
		t.Errorf("page offers no WARC download:\n%s", got)
	}
	if st := run(t, export.Options{Collection: c, PageSize: 1}); st.Written != 0 {
		t.Errorf("an export after that wrote %d pages", st.Written)
	}
}

// Each kind of plugin output gets the card its plugin calls for.
func TestPluginCards(t *testing.T) {
	c := newCollection(t)
	text := "Readable   words of the article,\n\n spread over lines. " + strings.Repeat("More text. ", 100)
	rel := handMade{snap: archive.Snapshot{URL: "https://cards.example/post", Title: "Cards"},
		results: []archive.Result{
			ok("readability", "readability/content.html", "content.html", "content.txt"),
			ok("htmltotext", "htmltotext/htmltotext.txt", "htmltotext.txt"),
			ok("wget", "wget/cards.example/post/index.html"),
			ok("screenshot", "screenshot/screenshot.png"),
			ok("archivewebpage", "archivewebpage/archivewebpage.wacz"),
		},
		files: map[string]string{
			"readability/content.html":           "<article>Readable words</article>",
			"readability/content.txt":            text,
			"htmltotext/htmltotext.txt":          "Plain text of the page",
			"wget/cards.example/post/index.html": "<p>post</p>",
			"wget/cards.example/style.css":       "p{}",
			"wget/cards.example/img/logo.png":    "\x89PNG",
			"wget/warc/1721469600.warc.gz":       "WARC/1.1",
			"screenshot/screenshot.png":          "\x89PNG",
			"archivewebpage/archivewebpage.wacz": "PK",
			// Media without a record: found in ytdlp's folder.
			"ytdlp/Talk.mp4":       "mp4",
			"ytdlp/Talk.info.json": "{}",
			// A folder only hashes.json names: its files are looked up.
			"gallerydl/photo.jpg": "\xff\xd8",
			"hashes/hashes.json": `{"root_hash": "", "files": [{"path": "gallerydl/photo.jpg", "hash": "", "size": 2},
				{"path": "gallerydl/gone.jpg", "hash": "", "size": 9}, {"path": "vanished/x.html", "hash": "", "size": 3}]}`,
		}}.write(t, c)
	run(t, export.Options{Collection: c})
	got := page(t, c, rel)
	for _, want := range []string{
		// Extractors show the start of their text, whitespace folded.
		`<article class="card card-readability">`,
		`<pre class="card-text">Readable words of the article, spread over lines. More text.`,
		`<pre class="card-text">Plain text of the page</pre>`,
		// A mirror lists its files, its WARC left to the downloads.
		`<ul class="card-files"><li><a href="./wget/cards.example/img/logo.png"><span class="card-dir">cards.example/img/</span>logo.png</a></li><li><a href="../../../../../../../site/view.html#` + rel + `:wget/cards.example/post/index.html"><span class="card-dir">cards.example/post/</span>index.html</a></li><li><a href="./wget/cards.example/style.css"><span class="card-dir">cards.example/</span>style.css</a></li></ul>`,
		// Downloads: wget's WARC and ArchiveWeb.page's WACZ.
		`<section class="downloads"><h2>Downloads</h2><ul>`,
		`<a href="./wget/warc/1721469600.warc.gz" download>wget/warc/1721469600.warc.gz</a>`,
		`<a href="./archivewebpage/archivewebpage.wacz" download>archivewebpage/archivewebpage.wacz</a>`,
		// Media found in the folder.
		`<video controls preload="none" src="./ytdlp/Talk.mp4"></video><a href="./ytdlp/Talk.mp4">Talk.mp4</a>`,
		// From hashes.json, checked on disk.
		`<article class="card card-gallerydl">`, `href="./gallerydl/photo.jpg"`,
		`<img src="./screenshot/screenshot.png" loading="lazy" alt="">`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	for _, bad := range []string{"gone.jpg", "vanished", "card-hashes", "warc/1721469600.warc.gz\"><span"} {
		if strings.Contains(got, bad) {
			t.Errorf("page shows %q", bad)
		}
	}
	if t.Failed() {
		t.Log(got)
	}
}

// A plugin's record, of any status, decides its folder's card: a failed
// run's folder gets none. Files an older version wrote at the top of a
// folder count as their plugins' (archive.org.txt is archivedotorg's,
// which gets no card; the folder named for the host is wget's). Icons in the root list stand for succeeded results
// only, unless the records stand for no output at all.
func TestRecordsDecideCardsAndIcons(t *testing.T) {
	c := newCollection(t)
	failed := ok("wget", "")
	failed.Status = "failed"
	empty := ok("ytdlp", "")
	empty.Status = "noresults"
	recorded := handMade{snap: archive.Snapshot{URL: "https://recorded.example/", Title: "Recorded"},
		results: []archive.Result{ok("screenshot", "screenshot/screenshot.png"), failed, empty},
		files: map[string]string{
			"screenshot/screenshot.png":        "\x89PNG",
			"wget/recorded.example/index.html": "<p>cut short</p>",
			"wget/stderr.log":                  "connection reset",
			"ytdlp/Talk.info.json":             "{}",
			"gallerydl/photo.jpg":              "\xff\xd8",
			"archive.org.txt":                  "https://web.archive.org/web/2017/https://recorded.example/",
			"output.pdf":                       "%PDF-1.4",
		}}.write(t, c)
	bare := handMade{snap: archive.Snapshot{URL: "https://bare.example/", Title: "Bare"},
		files: map[string]string{"screenshot.png": "\x89PNG", "output.pdf": "%PDF-1.4", "bare.example/index.html": "<p>mirror</p>"}}.write(t, c)
	// 0.7's records name a folder, not a file; a run cut short left its
	// output; the mirror of a host with a port is named as wget names it.
	started := ok("singlefile", "")
	started.Status = "started"
	folders := handMade{snap: archive.Snapshot{URL: "https://folders.example:8080/", Title: "Folders"},
		results: []archive.Result{ok("media", "media/"), ok("readability", "readability/"), ok("git", "git"), started},
		files: map[string]string{
			"media/talk.mp4":                  "mp4",
			"readability/content.html":        "<article>text</article>",
			"git/README.md":                   "# repo",
			"singlefile/singlefile.html":      "<p>cut short</p>",
			"folders.example+8080/index.html": "<p>mirror</p>",
		}}.write(t, c)
	run(t, export.Options{Collection: c})

	got := page(t, c, recorded)
	for _, want := range []string{`card card-screenshot"`, `card card-gallerydl"`, `card card-pdf"`} {
		if !strings.Contains(got, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	for _, bad := range []string{"card-wget", "card-ytdlp", "cut short", "card-archive", "web.archive.org/web/2017"} {
		if strings.Contains(got, bad) {
			t.Errorf("page shows %q", bad)
		}
	}
	if t.Failed() {
		t.Log(got)
	}

	root, err := os.ReadFile(c.Path("index.html"))
	if err != nil {
		t.Fatal(err)
	}
	rows := strings.Split(string(root), "<tr")
	row := func(dir string) string {
		for _, r := range rows {
			if strings.Contains(r, dir+"/index.html") {
				return r
			}
		}
		t.Fatalf("no row links %s", dir)
		return ""
	}
	icons := func(r string) (out []string) {
		for _, part := range strings.Split(r, `class="exists-True ic ic-`)[1:] {
			_, rest, _ := strings.Cut(part, `title="`)
			name, _, _ := strings.Cut(rest, `"`)
			out = append(out, name)
		}
		return out
	}
	if got := strings.Join(icons(row(recorded)), ","); got != "screenshot" {
		t.Errorf("icons of the recorded snapshot: %s, want screenshot", got)
	}
	if got := strings.Join(icons(row(bare)), ","); got != "pdf,screenshot,wget" {
		t.Errorf("icons of the snapshot without records: %s, want pdf,screenshot,wget", got)
	}
	if got := strings.Join(icons(row(folders)), ","); got != "git,media,readability" {
		t.Errorf("icons of the snapshot whose records name folders: %s, want git,media,readability", got)
	}
	fp := page(t, c, folders)
	for _, want := range []string{`card card-media"`, `card card-readability"`, `card card-git"`, `card card-singlefile"`, `card card-wget"`} {
		if !strings.Contains(fp, want) {
			t.Errorf("the page of the snapshot whose records name folders lacks %q:\n%s", want, fp)
		}
	}
	// The folder named for the snapshot's host is wget's mirror of an
	// older version's layout: it gets wget's card, with its file tree.
	if got := page(t, c, bare); !strings.Contains(got, `card card-wget"`) || !strings.Contains(got, `href="../../../../../../../site/view.html#`+bare+`:bare.example/index.html"`) ||
		strings.Contains(got, "card-bare.example") {
		t.Errorf("the mirror of the snapshot without records has no wget card:\n%s", got)
	}
}

// hashes.json is never read through a symlink nor from a fifo: the export
// neither leaves the folder nor hangs.
func TestHashesThatAreNotAFile(t *testing.T) {
	c := newCollection(t)
	// The list outside names the smaller file; the scan, which the
	// snapshot falls back to, picks the larger.
	outside := filepath.Join(t.TempDir(), "hashes.json")
	writeFile(t, outside, `{"files": [{"path": "other/a.txt", "hash": "", "size": 1}]}`)
	var dirs []string
	for _, kind := range []string{"fifo", "symlink"} {
		rel := handMade{snap: archive.Snapshot{URL: "https://" + kind + ".example/", Title: kind},
			results: []archive.Result{ok("screenshot", "screenshot/screenshot.png")},
			files:   map[string]string{"screenshot/screenshot.png": "\x89PNG", "other/a.txt": "a", "other/b.txt": "bbbbb"}}.write(t, c)
		p := c.Path(rel + "/hashes/hashes.json")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		var err error
		if kind == "fifo" {
			err = unix.Mkfifo(p, 0o644)
		} else {
			err = os.Symlink(outside, p)
		}
		if err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, rel)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		run(t, export.Options{Collection: c})
	}()
	select {
	case <-done:
	case <-time.After(time.Minute): // a guard against a hang, not a measure
		t.Fatal("export hangs on a hashes.json that is a fifo")
	}
	for _, rel := range dirs {
		if got := page(t, c, rel); !strings.Contains(got, `href="./other/b.txt"`) || strings.Contains(got, "other/a.txt") {
			t.Errorf("%s: the other card does not stand for other/b.txt:\n%s", rel, got)
		}
	}
}

// A file written inside a plugin folder that already has its card moves
// no name in the snapshot folder: a plain export keeps the page, one
// asked to rewrite the folder (as watch does when it sees the write)
// shows the file.
func TestRewriteShowsFileAddedInsidePluginFolder(t *testing.T) {
	c := newCollection(t)
	rel := handMade{snap: archive.Snapshot{URL: "https://talks.example/", Title: "Talks"},
		files: map[string]string{"ytdlp/first.mp4": "mp4"}}.write(t, c)
	run(t, export.Options{Collection: c})
	writeFile(t, c.Path(rel+"/ytdlp/second.webm"), "webm")
	if st := run(t, export.Options{Collection: c}); st.Written != 0 || strings.Contains(page(t, c, rel), "second.webm") {
		t.Fatalf("a plain export wrote %d pages", st.Written)
	}
	if st := run(t, export.Options{Collection: c, Rewrite: []string{rel}}); st.Written != 1 {
		t.Errorf("an export asked to rewrite the folder wrote %d pages, want 1", st.Written)
	}
	if got := page(t, c, rel); !strings.Contains(got, `src="./ytdlp/second.webm"`) {
		t.Errorf("the page does not list the file added:\n%s", got)
	}
	if st := run(t, export.Options{Collection: c}); st.Written != 0 {
		t.Errorf("the export after that wrote %d pages", st.Written)
	}
}

// Downloads are looked for in real folders only: a wget/warc/ that is a
// symlink (here to a folder of WARCs outside the collection) offers
// nothing, nor does a mirror without one, while a real one beside them
// is offered.
func TestDownloadsOnlyFromRealFolders(t *testing.T) {
	c := newCollection(t)
	outside := t.TempDir()
	writeFile(t, filepath.Join(outside, "elsewhere.warc.gz"), "WARC/1.1")
	mirror := func(host string, files map[string]string) string {
		files["wget/"+host+"/index.html"] = "<p>" + host + "</p>"
		return handMade{snap: archive.Snapshot{URL: "https://" + host + "/", Title: host},
			results: []archive.Result{ok("wget", "wget/"+host+"/index.html")}, files: files}.write(t, c)
	}
	linked := mirror("linked.example", map[string]string{})
	if err := os.Symlink(outside, c.Path(linked+"/wget/warc")); err != nil {
		t.Fatal(err)
	}
	bare := mirror("bare.example", map[string]string{})
	real := mirror("real.example", map[string]string{"wget/warc/1721469600.warc.gz": "WARC/1.1"})
	run(t, export.Options{Collection: c})
	for _, rel := range []string{linked, bare} {
		if got := page(t, c, rel); strings.Contains(got, `class="downloads"`) || strings.Contains(got, "elsewhere.warc.gz") {
			t.Errorf("%s offers downloads:\n%s", rel, got)
		}
	}
	if got := page(t, c, real); !strings.Contains(got, `<a href="./wget/warc/1721469600.warc.gz" download>`) {
		t.Errorf("%s does not offer its WARC:\n%s", real, got)
	}
}
