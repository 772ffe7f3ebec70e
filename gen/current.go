package gen

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"html"
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
	"golang.org/x/sys/unix"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/layout"
)

// Options says what Current writes.
type Options struct {
	N    int    // number of snapshots
	Seed uint64 // what is written depends on the Options (Workers aside) and nothing else

	// Users owns the snapshots; the first one gets about half of them, the
	// rest share the other half. Default DefaultUsers.
	Users []string

	// Base is the newest bookmarked_at; snapshots are spread evenly over
	// Span before it, in position order. Defaults DefaultBase, DefaultSpan.
	Base time.Time
	Span time.Duration

	// Workers write snapshots in parallel; default 4 per CPU (the work is
	// mostly waiting on the filesystem).
	Workers int

	// Minimal writes index.jsonl only: results are recorded as usual but
	// their files are not written, as in a tree whose payload was pruned.
	// For large benchmark trees.
	Minimal bool

	// Plain gives the snapshots believable titles, URLs and tags, for the
	// demo; without it they are the odd and hostile values tests need.
	Plain bool

	// Text, with Minimal, still writes the text files search indexes
	// (readability/content.txt and htmltotext/htmltotext.txt).
	Text bool

	// TextWords is the length of each capture's text in words; 0 means
	// 12 to 51 words. About 7 bytes a word.
	TextWords int

	// NoSync writes files plainly and calls syncfs(2) once at the end instead
	// of writing each one through archive.WriteFile (temp file, fsync,
	// rename, fsync of the folder). Generated trees are scratch data, and
	// per-file fsyncs make a 100k tree take minutes instead of seconds.
	NoSync bool

	// Printer receives progress ("generate", done, N); nil reports nothing.
	Printer archive.Printer
}

// Defaults of Options.
var (
	DefaultUsers = []string{"system", "admin", "alice", "bob"}
	DefaultBase  = time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
)

// DefaultSpan is the default time range of bookmarked_at values.
const DefaultSpan = 12 * 365 * 24 * time.Hour

// Manifest lists what Current wrote, in position order.
type Manifest struct {
	Dir       string  // absolute data directory
	Snapshots []Entry // one per snapshot, position i at index i
	Files     int64   // output files written (index.jsonl not counted)
	Bytes     int64   // bytes written, index.jsonl included
}

// Entry is one written snapshot, with the facts a catalog must reproduce.
type Entry struct {
	Dir          string // snapshot folder relative to the data dir, slash-separated
	ID           string
	URL          string
	Title        string // "" when the record's title is null
	Tags         []string
	User         string
	Status       string
	BookmarkedAt time.Time
	Results      int // ArchiveResult records in index.jsonl
	Files        int // output files written into the folder
	Missing      int // output files recorded in index.jsonl but not written
}

// IndexPath returns the absolute path of entry i's index.jsonl.
func (m *Manifest) IndexPath(i int) string {
	return filepath.Join(m.Dir, filepath.FromSlash(m.Snapshots[i].Dir), archive.IndexFile)
}

// Current writes o.N synthetic snapshots in the current layout into the
// data directory dir, creating the collection when dir is not one yet.
// Running it twice with the same Options rewrites the same files.
func Current(dir string, o Options) (*Manifest, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	if !archive.IsCollection(dir) {
		if _, err := archive.Init(dir, false); err != nil {
			return nil, err
		}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("generate into %s: %w", dir, err)
	}
	m := &Manifest{Dir: abs, Snapshots: make([]Entry, o.N)}
	mach := newMachine(o.Seed)
	var (
		next, done   atomic.Int64
		files, bytes atomic.Int64
		progress     sync.Mutex
	)
	g, ctx := errgroup.WithContext(context.Background())
	for range min(o.Workers, max(o.N, 1)) {
		g.Go(func() error {
			for {
				i := int(next.Add(1) - 1)
				if i >= o.N || ctx.Err() != nil { // done, or another worker failed
					return nil
				}
				s, err := plan(&o, mach, i)
				if err != nil {
					return err
				}
				n, err := s.write(abs, o.NoSync)
				if err != nil {
					return err
				}
				m.Snapshots[i] = s.entry
				files.Add(int64(s.entry.Files))
				bytes.Add(n)
				if d := done.Add(1); d%512 == 0 || d == int64(o.N) {
					progress.Lock()
					o.Printer.Progress("generate", d, int64(o.N))
					progress.Unlock()
				}
			}
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	if o.NoSync {
		if err := syncFS(abs); err != nil {
			return nil, err
		}
	}
	m.Files, m.Bytes = files.Load(), bytes.Load()
	return m, nil
}

func (o Options) withDefaults() (Options, error) {
	if o.N < 0 {
		return o, fmt.Errorf("generate: negative snapshot count %d", o.N)
	}
	if len(o.Users) == 0 {
		o.Users = DefaultUsers
	}
	for _, u := range o.Users {
		if !layout.Component(u) {
			return o, fmt.Errorf("generate: unsafe user name %q", u)
		}
	}
	if o.Base.IsZero() {
		o.Base = DefaultBase
	}
	if o.Span <= 0 {
		o.Span = DefaultSpan
	}
	if o.Workers <= 0 {
		o.Workers = 4 * runtime.GOMAXPROCS(0)
	}
	if o.Printer == nil {
		o.Printer = archive.Discard
	}
	return o, nil
}

// RetitleIndex sets the title of the Snapshot record in dir/index.jsonl,
// the hand edit tests make to see a change picked up.
func RetitleIndex(dir, title string) error {
	ix, _, err := archive.ReadIndex(dir)
	if err != nil {
		return fmt.Errorf("retitle %s: %w", dir, err)
	}
	s, ok := ix.Snapshot()
	if !ok {
		return fmt.Errorf("retitle %s: no Snapshot record in %s", dir, archive.IndexFile)
	}
	s.Title = title
	ix.SetSnapshot(s)
	return archive.WriteIndex(dir, ix)
}

// snapshot is one planned snapshot folder.
type snapshot struct {
	entry Entry
	index []byte
	files []file
}

// file is an output file, path relative to the snapshot folder.
type file struct {
	rel  string
	data []byte
}

func (s *snapshot) write(root string, noSync bool) (int64, error) {
	dir := filepath.Join(root, filepath.FromSlash(s.entry.Dir))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, fmt.Errorf("generate: %w", err)
	}
	made := map[string]bool{"": true}
	var n int64
	for _, f := range s.files {
		parent := path.Dir(f.rel)
		if parent == "." {
			parent = ""
		}
		if !made[parent] {
			if err := os.MkdirAll(filepath.Join(dir, filepath.FromSlash(parent)), 0o755); err != nil {
				return 0, fmt.Errorf("generate: %w", err)
			}
			made[parent] = true
		}
		if err := writeFile(filepath.Join(dir, filepath.FromSlash(f.rel)), f.data, noSync); err != nil {
			return 0, err
		}
		n += int64(len(f.data))
	}
	// index.jsonl last, as ArchiveBox writes it when the snapshot is sealed.
	if err := writeFile(filepath.Join(dir, archive.IndexFile), s.index, noSync); err != nil {
		return 0, err
	}
	return n + int64(len(s.index)), nil
}

// syncFS flushes the filesystem holding dir (syncfs(2)).
func syncFS(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	defer f.Close()
	if err := unix.Syncfs(int(f.Fd())); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}

func writeFile(p string, data []byte, noSync bool) error {
	if !noSync {
		return archive.WriteFile(p, data, 0o644)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		return fmt.Errorf("generate: %w", err)
	}
	return nil
}

// plan derives snapshot i from the Options and i alone.
func plan(o *Options, mach *machine, i int) (*snapshot, error) {
	r := rand.New(rand.NewPCG(o.Seed, uint64(i)))
	ids := rngReader{r}

	slot := max(o.Span/time.Duration(o.N), time.Microsecond)
	bookmarked := o.Base.Add(-o.Span).Add(time.Duration(i)*slot + time.Duration(r.Int64N(int64(slot)))).Truncate(time.Microsecond)
	if r.IntN(10) == 0 {
		bookmarked = bookmarked.Truncate(time.Second)
	}
	created := bookmarked.Add(time.Duration(r.Int64N(int64(3 * time.Second)))).Truncate(time.Microsecond)
	if r.IntN(5) == 0 { // imported from a bookmarks file long after it was bookmarked
		if later := created.Add(time.Duration(1+r.IntN(900)) * 24 * time.Hour); later.Before(o.Base) {
			created = later
		}
	}

	url := urlFor(o.Seed, i)
	if i > 0 && r.IntN(100) < 3 { // another capture of an earlier URL
		url = urlFor(o.Seed, r.IntN(i))
	}
	user := o.Users[0]
	if len(o.Users) > 1 && r.IntN(2) == 0 {
		user = o.Users[1+r.IntN(len(o.Users)-1)]
	}
	snap := archive.Snapshot{
		ID:        archive.NewID(created, ids),
		URL:       url,
		Timestamp: layout.Timestamp(bookmarked),
		Title:     titleFor(r, i),
		Tags:      tagsFor(r),
		Depth:     0,
		Status:    pickStatus(r),
		FSVersion: layout.Current,

		BookmarkedAt: bookmarked,
		CreatedAt:    created,
	}
	if o.Plain { // after the draws above, so the rest is as without it
		p := plainPageFor(i)
		snap.URL, snap.Title, snap.Tags = p.url, p.title, p.tags
	}
	snap.CrawlID = archive.NewID(created.Add(-time.Second), ids)
	if r.IntN(30) == 0 {
		snap.Notes = notes[r.IntN(len(notes))]
	}
	dir, err := layout.SnapshotDir(user, bookmarked, url, snap.ID)
	if err != nil {
		return nil, fmt.Errorf("generate snapshot %d: %w", i, err)
	}
	s := &snapshot{entry: Entry{
		Dir: dir, ID: snap.ID, URL: url, Title: snap.Title, Tags: snap.Tags,
		User: user, Status: snap.Status, BookmarkedAt: bookmarked,
	}}

	g := &snapGen{r: r, ids: ids, o: o, mach: mach, snap: &snap, dir: dir, i: i, tracked: r.IntN(4) == 0}
	results := g.results()
	for _, res := range results {
		snap.ArchiveSize += res.OutputSize
	}

	// The Snapshot record first, then per result its Binary (once) and
	// Process records and the ArchiveResult, as ArchiveBox orders them. Each
	// canonical record is encoded by archive.Index; the lines are joined
	// here because Index.Append re-parses every line it is given.
	ix, _ := archive.ParseIndex(nil)
	if r.IntN(50) == 0 {
		// A Snapshot record carrying a key folio does not model.
		var w pyWriter
		w.str("type", archive.TypeSnapshot)
		w.str("url", url)
		w.str("archived_by", "bookmarklet")
		ix.Append(w.bytes())
	}
	ix.SetSnapshot(snap)
	buf := ix.Bytes()
	if r.IntN(20) == 0 {
		buf = append(append(buf, g.crawlRecord(user)...), '\n')
	}
	seen := map[string]bool{}
	for _, res := range results {
		if g.tracked && res.ProcessID != "" {
			bin := mach.binaries[pluginByName[res.Plugin].bin]
			if !seen[bin.id] {
				seen[bin.id] = true
				buf = append(append(buf, bin.line...), '\n')
			}
			buf = append(append(buf, g.processRecord(res, bin)...), '\n')
		}
		rx, _ := archive.ParseIndex(nil)
		rx.AddResult(res.Result)
		buf = append(buf, rx.Bytes()...)
	}
	s.index = buf
	s.entry.Results = len(results)
	for _, res := range results {
		for _, f := range res.files {
			if !o.Minimal || o.Text && (f.rel == "readability/content.txt" || f.rel == "htmltotext/htmltotext.txt") {
				s.files = append(s.files, f)
				s.entry.Files++
			}
		}
	}
	for _, res := range results {
		s.entry.Missing += len(res.OutputFiles)
	}
	s.entry.Missing -= s.entry.Files
	return s, nil
}

// result is a planned ArchiveResult and the files written for it.
type result struct {
	archive.Result
	files []file
}

// snapGen holds the state of planning one snapshot.
type snapGen struct {
	r       *rand.Rand
	ids     rngReader
	o       *Options
	mach    *machine
	snap    *archive.Snapshot
	dir     string
	i       int
	tracked bool // captured with process tracking: Binary and Process records, cmd, pwd
}

type plugin struct {
	name, hook string
	bin        string
	skipped    string // output_str of a skipped run
	noresults  string // output_str of a run that found nothing; "" when the plugin never reports it
	outputs    func(g *snapGen) []output
}

// output is one file of a result, path relative to the plugin folder.
type output struct {
	rel  string
	mime string
	data []byte
}

// plugins in ArchiveBox's execution order.
var plugins = []plugin{
	{name: "headers", hook: "on_Snapshot__27_headers.daemon.bg.js", bin: "node", skipped: "HEADERS_ENABLED=False", outputs: (*snapGen).headers},
	{name: "wget", hook: "on_Snapshot__35_wget.finite.bg.py", bin: "wget", skipped: "WGET_ENABLED=False", outputs: (*snapGen).wget},
	{name: "favicon", hook: "on_Snapshot__37_favicon.finite.bg.py", bin: "python", skipped: "FAVICON_ENABLED=False", noresults: "No favicon found", outputs: (*snapGen).favicon},
	{name: "singlefile", hook: "on_Snapshot__50_singlefile.py", bin: "chromium", skipped: "SINGLEFILE_ENABLED=False", outputs: (*snapGen).singlefile},
	{name: "screenshot", hook: "on_Snapshot__51_screenshot.js", bin: "chromium", skipped: "SCREENSHOT_ENABLED=False", outputs: (*snapGen).screenshot},
	{name: "pdf", hook: "on_Snapshot__52_pdf.js", bin: "chromium", skipped: "PDF_ENABLED=False", outputs: (*snapGen).pdf},
	{name: "dom", hook: "on_Snapshot__53_dom.js", bin: "chromium", skipped: "DOM_ENABLED=False", noresults: "DOM too short (42 chars)", outputs: (*snapGen).dom},
	{name: "title", hook: "on_Snapshot__54_title.js", bin: "chromium", skipped: "TITLE_ENABLED=False", outputs: (*snapGen).titleFile},
	{name: "readability", hook: "on_Snapshot__56_readability.py", bin: "node", skipped: "READABILITY_ENABLED=False", noresults: "No article content found", outputs: (*snapGen).readability},
	{name: "htmltotext", hook: "on_Snapshot__58_htmltotext.py", bin: "python", skipped: "HTMLTOTEXT_ENABLED=False", outputs: (*snapGen).htmltotext},
}

var pluginByName = func() map[string]*plugin {
	m := map[string]*plugin{}
	for i := range plugins {
		m[plugins[i].name] = &plugins[i]
	}
	return m
}()

var failures = []string{
	"TimeoutError: Navigation timeout of 60000 ms exceeded",
	"net::ERR_NAME_NOT_RESOLVED",
	"net::ERR_CONNECTION_REFUSED",
	"Exit code 8: server issued an error response (HTTP 404)",
	"Error: Protocol error (Page.printToPDF): Printing failed",
	"ProcessKilled: hook exceeded its timeout of 120s",
}

func (g *snapGen) results() []result {
	n := len(plugins)
	switch g.snap.Status {
	case "queued":
		return nil
	case "started":
		n = 1 + g.r.IntN(len(plugins)-1)
	}
	t := g.snap.CreatedAt.Add(time.Duration(1+g.r.IntN(5000)) * time.Millisecond)
	out := make([]result, 0, n)
	for k := range n {
		p := &plugins[k]
		start := t.Truncate(time.Microsecond)
		dur := time.Duration(50+g.r.IntN(20000)) * time.Millisecond
		t = start.Add(time.Duration(10+g.r.IntN(500)) * time.Millisecond)
		res := result{Result: archive.Result{
			ID:         archive.NewID(start, g.ids),
			SnapshotID: g.snap.ID,
			Plugin:     p.name,
			HookName:   p.hook,
			StartTS:    start,
			EndTS:      start.Add(dur).Truncate(time.Microsecond),
		}}
		roll := g.r.IntN(100)
		switch {
		case g.snap.Status == "started" && k == n-1:
			res.Status, res.EndTS = "started", time.Time{}
		case p.name == "title" && g.snap.Title == "":
			res.Status, res.OutputStr = archive.StatusFailed, "No title found in page"
		case p.name == "title" || roll < 80:
			g.succeed(p, &res)
		case roll < 90:
			res.Status, res.OutputStr = archive.StatusFailed, failures[g.r.IntN(len(failures))]
		case roll < 97 || p.noresults == "":
			res.Status, res.OutputStr = archive.StatusSkipped, p.skipped
		default:
			res.Status, res.OutputStr = "noresults", p.noresults
		}
		if g.tracked && res.Status != archive.StatusSkipped {
			bin := g.mach.binaries[p.bin]
			res.Cmd = []string{bin.abspath, p.hook, "--url=" + g.snap.URL, "--snapshot-id=" + g.snap.ID}
			res.CmdVersion = bin.version
			res.ProcessID = archive.NewID(start, g.ids)
			res.Pwd = "/data/" + g.dir + "/" + p.name
		}
		out = append(out, res)
	}
	return out
}

func (g *snapGen) succeed(p *plugin, res *result) {
	res.Status = archive.StatusSucceeded
	outs := p.outputs(g)
	for _, f := range outs {
		res.OutputFiles = append(res.OutputFiles, archive.OutputFile{
			Path: f.rel, Size: int64(len(f.data)), Mimetype: f.mime, Extension: strings.TrimPrefix(path.Ext(f.rel), "."),
		})
		res.OutputSize += int64(len(f.data))
	}
	res.OutputMimetypes = archive.MimetypesBySize(res.OutputFiles)
	res.OutputStr = p.name + "/" + outs[0].rel
	if p.name == "title" {
		res.OutputStr = g.snap.Title
	}
	missing := -1
	if len(outs) > 0 && g.r.IntN(50) == 0 { // recorded, but gone from disk
		missing = 0
	}
	for k, f := range outs {
		if k != missing {
			res.files = append(res.files, file{rel: p.name + "/" + f.rel, data: f.data})
		}
	}
}

func (g *snapGen) headers() []output {
	h := map[string]any{
		"url":    g.snap.URL,
		"status": 200,
		"headers": map[string]string{
			"content-type":  "text/html; charset=utf-8",
			"server":        []string{"nginx", "Apache", "cloudflare", "gws"}[g.r.IntN(4)],
			"date":          g.snap.CreatedAt.Format(time.RFC1123),
			"cache-control": "max-age=" + strconv.Itoa(60*g.r.IntN(100)),
		},
	}
	b, _ := json.MarshalIndent(h, "", "  ")
	return []output{{"headers.json", "application/json", b}}
}

func (g *snapGen) wget() []output {
	page := g.page("wget")
	host := layout.Domain(g.snap.URL)
	switch roll := g.r.IntN(100); {
	case roll < 6:
		return []output{{"index%3A.html", "text/html", page}}
	case roll < 10:
		return []output{{"my page (1).html", "text/html", page}}
	case roll < 13:
		return []output{{"ünïcødé 文件.html", "text/html", page}}
	case roll < 15:
		return []output{{"100% done.html", "text/html", page}}
	}
	return []output{{host + "/index.html", "text/html", page}}
}

func (g *snapGen) favicon() []output {
	return []output{{"favicon.ico", "image/vnd.microsoft.icon", icoData}}
}

func (g *snapGen) singlefile() []output {
	return []output{{"singlefile.html", "text/html", g.page("singlefile")}}
}

func (g *snapGen) screenshot() []output {
	return []output{{"screenshot.png", "image/png", pngData}}
}

func (g *snapGen) pdf() []output {
	return []output{{"output.pdf", "application/pdf", pdfData}}
}

func (g *snapGen) dom() []output {
	return []output{{"output.html", "text/html", g.page("dom")}}
}

func (g *snapGen) titleFile() []output {
	return []output{{"title.txt", "text/plain", []byte(g.snap.Title)}}
}

func (g *snapGen) readability() []output {
	text := g.text()
	article, _ := json.Marshal(map[string]any{
		"title": g.snap.Title, "byline": nil, "excerpt": firstWords(text, 12), "length": len(text),
	})
	return []output{
		{"content.html", "text/html", []byte("<div id=\"readability-page-1\"><p>" + html.EscapeString(text) + "</p></div>\n")},
		{"content.txt", "text/plain", []byte(text + "\n")},
		{"article.json", "application/json", article},
	}
}

func (g *snapGen) htmltotext() []output {
	return []output{{"htmltotext.txt", "text/plain", []byte(g.snap.Title + "\n\n" + g.text() + "\n")}}
}

// page is a small HTML document for the snapshot.
func (g *snapGen) page(kind string) []byte {
	var b bytes.Buffer
	t := html.EscapeString(g.snap.Title)
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>%s</title>", t)
	if kind == "singlefile" {
		b.WriteString(`<style>body{font-family:sans-serif;max-width:40em;margin:auto}</style>`)
	}
	fmt.Fprintf(&b, "</head>\n<body><h1>%s</h1>\n", t)
	for range 1 + g.r.IntN(4) {
		fmt.Fprintf(&b, "<p>%s</p>\n", html.EscapeString(g.text()))
	}
	fmt.Fprintf(&b, "<p><a href=\"%s\">source</a></p>\n</body></html>\n", html.EscapeString(g.snap.URL))
	return b.Bytes()
}

// text is a sentence or two of searchable words; each snapshot's text
// carries its position as a word ("n123") so search tests can find it.
func (g *snapGen) text() string {
	var b strings.Builder
	n := 12 + g.r.IntN(40)
	if g.o.TextWords > 0 {
		n = g.o.TextWords
	}
	for k := range n {
		if k > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(words[g.r.IntN(len(words))])
	}
	fmt.Fprintf(&b, " n%d.", g.i)
	return b.String()
}

func firstWords(s string, n int) string {
	f := strings.Fields(s)
	if len(f) > n {
		f = f[:n]
	}
	return strings.Join(f, " ")
}

func (g *snapGen) processRecord(res result, bin binRecord) []byte {
	var w pyWriter
	w.str("type", "Process")
	w.str("schema_version", archive.SchemaVersion)
	w.str("id", res.ProcessID)
	w.str("machine_id", g.mach.id)
	w.strs("cmd", res.Cmd)
	w.str("pwd", res.Pwd)
	w.str("status", "exited")
	code := 0
	if res.Status == archive.StatusFailed {
		code = 1
	}
	w.int("exit_code", int64(code))
	w.str("started_at", archive.IsoTime(res.StartTS))
	if res.EndTS.IsZero() {
		w.null("ended_at")
	} else {
		w.str("ended_at", archive.IsoTime(res.EndTS))
	}
	w.str("binary_id", bin.id)
	w.int("pid", int64(1000+g.r.IntN(60000)))
	w.int("timeout", 120)
	return w.bytes()
}

func (g *snapGen) crawlRecord(user string) []byte {
	var w pyWriter
	w.str("type", "Crawl")
	w.str("schema_version", archive.SchemaVersion)
	w.str("id", g.snap.CrawlID)
	w.str("urls", g.snap.URL)
	w.str("status", "sealed")
	w.int("max_depth", 0)
	w.str("tags_str", archive.TagString(g.snap.Tags))
	w.str("label", "")
	w.str("created_at", archive.IsoTime(g.snap.CreatedAt.Add(-time.Second)))
	w.str("created_by", user)
	return w.bytes()
}

// machine is the capturing machine shared by every snapshot of a run: its
// Binary records are the same lines in every index.jsonl.
type machine struct {
	id       string
	binaries map[string]binRecord
}

type binRecord struct {
	id, abspath, version string
	line                 []byte
}

func newMachine(seed uint64) *machine {
	r := rand.New(rand.NewPCG(seed, 1<<63))
	ids := rngReader{r}
	at := DefaultBase.Add(-DefaultSpan)
	m := &machine{id: archive.NewID(at, ids), binaries: map[string]binRecord{}}
	for _, b := range []struct{ name, path, version, provider string }{
		{"chromium", "/usr/bin/chromium", "126.0.6478.126", "apt"},
		{"node", "/usr/bin/node", "22.12.0", "env"},
		{"python", "/usr/bin/python3", "3.11.2", "env"},
		{"wget", "/usr/bin/wget", "1.21.3", "apt"},
	} {
		id := archive.NewID(at, ids)
		var w pyWriter
		w.str("type", "Binary")
		w.str("schema_version", archive.SchemaVersion)
		w.str("id", id)
		w.str("machine_id", m.id)
		w.str("name", b.name)
		w.str("binproviders", "env,apt,brew")
		w.raw("overrides", "{}")
		w.str("binprovider", b.provider)
		w.str("abspath", b.path)
		w.str("version", b.version)
		w.str("sha256", "")
		w.str("status", "installed")
		m.binaries[b.name] = binRecord{id: id, abspath: b.path, version: b.version, line: w.bytes()}
	}
	return m
}

func pickStatus(r *rand.Rand) string {
	switch roll := r.IntN(100); {
	case roll < 88:
		return "sealed"
	case roll < 96:
		return "queued"
	case roll < 98:
		return "started"
	}
	return "paused"
}

// rngReader turns a seeded generator into the io.Reader archive.NewID takes.
type rngReader struct{ r *rand.Rand }

func (x rngReader) Read(p []byte) (int, error) {
	var buf [8]byte
	for i := 0; i < len(p); i += 8 {
		binary.LittleEndian.PutUint64(buf[:], x.r.Uint64())
		copy(p[i:], buf[:])
	}
	return len(p), nil
}

// pyWriter builds one JSON object in Python's json.dumps style (", " and
// ": " separators, non-ASCII escaped) for records folio keeps verbatim.
type pyWriter struct {
	b []byte
}

func (w *pyWriter) key(k string) {
	if len(w.b) == 0 {
		w.b = append(w.b, '{')
	} else {
		w.b = append(w.b, ", "...)
	}
	w.b = appendPyString(w.b, k)
	w.b = append(w.b, ": "...)
}

func (w *pyWriter) str(k, v string) { w.key(k); w.b = appendPyString(w.b, v) }
func (w *pyWriter) int(k string, v int64) {
	w.key(k)
	w.b = strconv.AppendInt(w.b, v, 10)
}
func (w *pyWriter) null(k string)   { w.key(k); w.b = append(w.b, "null"...) }
func (w *pyWriter) raw(k, v string) { w.key(k); w.b = append(w.b, v...) }
func (w *pyWriter) bytes() []byte   { return append(w.b, '}') }
func (w *pyWriter) strs(k string, v []string) {
	w.key(k)
	w.b = append(w.b, '[')
	for i, s := range v {
		if i > 0 {
			w.b = append(w.b, ", "...)
		}
		w.b = appendPyString(w.b, s)
	}
	w.b = append(w.b, ']')
}

// appendPyString escapes like Python's ensure_ascii encoder.
func appendPyString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	u := func(b []byte, c rune) []byte {
		return append(b, '\\', 'u', hex[c>>12&15], hex[c>>8&15], hex[c>>4&15], hex[c&15])
	}
	b = append(b, '"')
	for _, c := range s {
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', byte(c))
		case c == '\n':
			b = append(b, `\n`...)
		case c == '\r':
			b = append(b, `\r`...)
		case c == '\t':
			b = append(b, `\t`...)
		case c == '\b':
			b = append(b, `\b`...)
		case c == '\f':
			b = append(b, `\f`...)
		case c >= 0x20 && c < 0x7f:
			b = append(b, byte(c))
		case c > 0xffff:
			c -= 0x10000
			b = u(u(b, 0xd800+c>>10), 0xdc00+c&0x3ff)
		default:
			b = u(b, c)
		}
	}
	return append(b, '"')
}

// Output payloads shared by every snapshot: a tiny valid PNG, an ICO
// holding a PNG, a one-page PDF.
var (
	pngData = encodePNG(8, 6)
	icoData = encodeICO(16)
	pdfData = encodePDF()
)

func encodePNG(w, h int) []byte {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.NRGBA{uint8(32 * x), uint8(40 * y), 160, 255})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		panic("gen: encode png: " + err.Error())
	}
	return b.Bytes()
}

func encodeICO(size int) []byte {
	p := encodePNG(size, size)
	b := []byte{0, 0, 1, 0, 1, 0, byte(size), byte(size), 0, 0, 1, 0, 32, 0}
	b = binary.LittleEndian.AppendUint32(b, uint32(len(p)))
	b = binary.LittleEndian.AppendUint32(b, 22)
	return append(b, p...)
}

const pdfText = "BT /F1 18 Tf 20 40 Td (archived page) Tj ET"

func encodePDF() []byte {
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 100] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
		fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(pdfText), pdfText),
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
	}
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n")
	offsets := make([]int, len(objs))
	for k, o := range objs {
		offsets[k] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", k+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return b.Bytes()
}

// urlFor is the URL of position j; it depends on the seed and j only, so
// a later snapshot can capture an earlier URL again.
func urlFor(seed uint64, j int) string {
	r := rand.New(rand.NewPCG(^seed, uint64(j)))
	n := strconv.Itoa(j)
	switch roll := r.IntN(1000); {
	case roll < 30:
		return []string{
			"http://localhost:8080/app/item/" + n,
			"https://example.com:8443/secure/" + n,
			"http://127.0.0.1:8000/page/" + n,
			"http://example.com:80/explicit-port/" + n,
			"https://intranet.example.com:0/zero-port/" + n,
		}[r.IntN(5)]
	case roll < 45:
		return []string{
			"http://[::1]:8080/ipv6/" + n,
			"http://[2001:db8::1]/doc/" + n,
			"https://[2001:db8:85a3::8a2e:370:7334]:8443/x?id=" + n,
		}[r.IntN(3)]
	case roll < 75:
		return []string{
			"https://münchen.de/straße/" + n,
			"https://日本語.jp/記事/" + n,
			"https://xn--mnchen-3ya.de/punycode/" + n,
			"https://ÉCOLE.fr/Cours/" + n,
			"https://пример.рф/статья?id=" + n,
		}[r.IntN(5)]
	case roll < 105:
		return []string{
			"https://search.example.com/search?q=go+lang&page=" + n + "&sort=new",
			"https://video.example.com/watch?v=" + n + "&list=PL1#t=42",
			"https://example.com/a/b/?utm_source=rss&utm_medium=feed&id=" + n,
			"https://shop.example.com/item/" + n + "?color=red&size=xl#reviews",
		}[r.IntN(4)]
	case roll < 125:
		return []string{
			"https://example.org/files/100%25%20done/" + n,
			"https://en.example.org/wiki/Caf%C3%A9_" + n,
			"https://example.org/path%2Fwith%2Fslashes/" + n,
		}[r.IntN(3)]
	case roll < 145:
		return []string{
			"file:///home/alice/Documents/report-" + n + ".html",
			"file:///tmp/saved%20page%20" + n + ".htm",
		}[r.IntN(2)]
	case roll < 160:
		return "ftp://ftp.example.org/pub/release-" + n + ".tar.gz"
	case roll < 175:
		return "http://example.com./trailing-dot/" + n
	case roll < 185:
		return "https://user:secret@private.example.com/wiki/" + n
	case roll < 195:
		return "HTTPS://WWW.Example.COM/Upper/Case/" + n
	case roll < 200:
		return "data:text/plain;charset=utf-8,snapshot%20" + n
	}
	host := hosts[int(r.ExpFloat64()*40)%len(hosts)]
	var b strings.Builder
	b.WriteString("https://")
	b.WriteString(host)
	b.WriteByte('/')
	b.WriteString(sections[r.IntN(len(sections))])
	b.WriteByte('/')
	for range 1 + r.IntN(5) {
		b.WriteString(words[r.IntN(len(words))])
		b.WriteByte('-')
	}
	b.WriteString(n)
	if r.IntN(5) == 0 {
		b.WriteString("?ref=feed&id=" + n)
	}
	if r.IntN(10) == 0 {
		b.WriteString("#comments")
	}
	return b.String()
}

var hosts = func() []string {
	subs := []string{"www.", "blog.", "news.", "docs.", "", "m.", "en."}
	tlds := []string{".com", ".org", ".net", ".io", ".dev", ".co.uk", ".de"}
	out := make([]string, 0, 500)
	for k := range 500 {
		out = append(out, subs[k%len(subs)]+words[(k*7)%len(words)]+words[(k*13+3)%len(words)]+tlds[(k/7)%len(tlds)])
	}
	return out
}()

var sections = []string{"articles", "blog", "news", "docs", "wiki", "2019/04", "p", "en-us/library", "r/golang/comments"}

var words = strings.Fields(`archive web page snapshot river mountain coffee garden library
	network kernel compiler rust gopher python database index market weather museum
	history science music travel recipe bread paper bicycle ocean forest planet signal
	window shadow bridge harbor lantern meadow orbit pixel quartz saddle timber velvet
	whistle yellow zephyr amber basil cedar delta ember falcon glacier hazel iris jasper`)

func titleFor(r *rand.Rand, i int) string {
	n := strconv.Itoa(i)
	switch roll := r.IntN(100); {
	case roll < 5:
		return ""
	case roll < 13:
		return []string{
			"Über München — Straßenbahn & Öffis " + n,
			"日本語のページ " + n,
			"Привет, мир: заметка " + n,
			"مرحبا بالعالم " + n,
			"Ελληνικά και ελληνικά " + n,
			"Ça va? Crème brûlée à la française n°" + n,
		}[r.IntN(6)]
	case roll < 18:
		return []string{
			"🚀 Launch day 🎉 " + n,
			"Family 👨‍👩‍👧 and flags 🇯🇵🇫🇷 " + n,
			"math 𝔸𝔹ℂ and 🧪 lab notes " + n,
		}[r.IntN(3)]
	case roll < 23:
		return []string{
			`He said "hello" & 'goodbye' ` + n,
			`C:\Users\alice\path\to\file ` + n,
			`Quotes “curly” ‘single’ «guillemets» ` + n,
		}[r.IntN(3)]
	case roll < 27:
		return []string{
			`<script>alert("xss ` + n + `")</script>`,
			`</title><img src=x onerror=alert(1)> ` + n,
			`{{.Title}} {{template "x"}} ${title} ` + n,
		}[r.IntN(3)]
	case roll < 30:
		var b strings.Builder
		for limit := 300 + r.IntN(3000); b.Len() < limit; {
			b.WriteString(words[r.IntN(len(words))])
			b.WriteByte(' ')
		}
		return strings.TrimSpace(b.String()) + " " + n
	case roll < 32:
		return "Tab\there and a\nnewline " + n
	}
	var b strings.Builder
	for k := range 2 + r.IntN(6) {
		w := words[r.IntN(len(words))]
		if k == 0 {
			w = strings.ToUpper(w[:1]) + w[1:]
		}
		b.WriteString(w)
		b.WriteByte(' ')
	}
	b.WriteString(n)
	if r.IntN(3) == 0 {
		b.WriteString(" | " + []string{"Example News", "The Blog", "Docs", "Wiki"}[r.IntN(4)])
	}
	return b.String()
}

var tagPool = []string{
	"news", "research", "to read", "read later", "golang", "python", "rust", "work",
	"personal", "recipes", "2019", "archive-me", "café", "日本語", "Ünïcode", "emoji 🎉",
	"c++", "c#", "#hashtag", "with  two  spaces", `quote"tag`, "<b>html</b>", "a/b",
	"dots.in.tag", "ñandú", "über", "very long tag name that keeps on going and going",
}

func tagsFor(r *rand.Rand) []string {
	n := 0
	switch roll := r.IntN(100); {
	case roll < 30:
	case roll < 65:
		n = 1
	case roll < 85:
		n = 2
	default:
		n = 3 + r.IntN(3)
	}
	tags := make([]string, 0, n)
	for range n {
		tags = append(tags, tagPool[r.IntN(len(tagPool))])
	}
	return archive.NormalizeTags(tags)
}

var notes = []string{
	"Saved for the **quarterly review**.\n\n- check the numbers\n- compare with last year",
	"Notes with <script>alert('raw html')</script> that must stay inert.",
	"Ünïcode notes — 日本語 and emoji 🎉.",
}
