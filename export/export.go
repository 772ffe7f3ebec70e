// Package export writes a collection as a static site: a root list of
// snapshots in pages (newest first) with a filter box that searches all of
// them, a detail page in every snapshot folder, and a root index.jsonl
// manifest. Every link is relative and names .../index.html, so the site
// works from file://, under any sub-path and on any static host. Exports
// are incremental: a page is rewritten only when what it shows changed.
package export

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"html"
	"html/template"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/yuin/goldmark"
	"golang.org/x/sync/errgroup"
	"golang.org/x/sys/unix"

	"folio/archive"
	"folio/archive/catalog"
	"folio/templates"
)

// Options says what to export and where.
type Options struct {
	Collection *archive.Collection

	// Out is the folder of a publishable copy; "" exports in place (the
	// pages are written into the collection itself).
	Out string

	// Query selects the snapshots (patterns, tags, status, dates). Its
	// Sort and Limit are ignored: an export lists newest first.
	Query catalog.Query

	Full                 bool   // rewrite every page, ignoring the previous export
	Gzip                 bool   // write .gz siblings of the generated files
	Bundle               string // also write the site as one .tar.zst file here
	AllowArchivedScripts bool   // let archived pages run scripts in their sandbox

	PageSize  int    // rows per root page; default 250
	Workers   int    // pages rendered and written in parallel; default 8 per CPU
	Templates string // folder whose files override the embedded templates
	// AllowShrink lets an --out export drop most of the snapshots the
	// folder's site holds (see checkShrink).
	AllowShrink bool
	Title       string // site title; default "folio archive"
	Version     string // folio version shown in footers

	// SkipReindex trusts the catalog as it is (the caller just reindexed).
	SkipReindex bool
}

// Stats says what an export did.
type Stats struct {
	Dir       string // export root
	URL       string // file:// URL of the root index.html
	Snapshots int    // snapshots exported

	Written     int64 // snapshot pages written
	Kept        int64 // snapshot pages already up to date
	RootWritten int64 // root pages (with their search shards) written
	RootKept    int64

	Linked, Copied int64 // --out: snapshot files hard-linked or copied this run
	Files, Bytes   int64 // --out: files and bytes in the export
	Removed        int   // --out: snapshot folders removed because they are no longer selected

	Reindex catalog.ReindexStats
	Bundle  string
}

// Host limits export warns about (--out).
const (
	GitHubPagesBytes     = 1 << 30
	CloudflarePagesFiles = 20000
)

// CSP is the Content-Security-Policy of folio's own pages: nothing but the
// export's own files, no inline code, no forms, no plugins.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"media-src 'self'; frame-src 'self'; child-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'"

// Sandbox returns the iframe sandbox (and CSP sandbox) value for archived
// HTML: nothing allowed, or scripts when asked. It never grants
// allow-same-origin: together with allow-scripts that would let an
// archived page remove its own sandbox.
func Sandbox(allowScripts bool) string {
	if allowScripts {
		return "allow-scripts"
	}
	return ""
}

// Paths of the generated files, relative to the export root.
const (
	SiteDir      = "site"
	ManifestFile = "index.jsonl"
	RootPage     = "index.html"
	HeadersFile  = "_headers"
)

func pagePath(n int) string {
	if n <= 1 {
		return RootPage
	}
	return SiteDir + "/page-" + strconv.Itoa(n) + ".html"
}

func pageDir(n int) string {
	if n <= 1 {
		return ""
	}
	return SiteDir
}

func shardPath(n int) string { return SiteDir + "/search/" + strconv.Itoa(n) + ".js" }

// textShardPath holds the captured text of root page n's snapshots, which
// the filter box loads only when asked to search it.
func textShardPath(n int) string { return SiteDir + "/text/" + strconv.Itoa(n) + ".js" }

// maxShardText is how much of a snapshot's captured text the export's
// text search holds: the start of the page, enough for what it is about,
// small enough that a page of 250 snapshots loads in a moment.
const maxShardText = 4 << 10

// pageWritten reports whether root page n and its shards are on disk.
func (s *site) pageWritten(n int) bool {
	return exists(s.abs(pagePath(n))) && exists(s.abs(shardPath(n))) && exists(s.abs(textShardPath(n)))
}

// Run exports the collection. It takes the collection's writer lock,
// brings the catalog up to date with the tree (unless SkipReindex), and
// streams the selected snapshots from it.
func Run(ctx context.Context, opts Options, p archive.Printer) (Stats, error) {
	if p == nil {
		p = archive.Discard
	}
	if opts.Collection == nil {
		return Stats{}, errors.New("export: no collection")
	}
	lock, err := opts.Collection.Lock("export")
	if err != nil {
		return Stats{}, err
	}
	defer lock.Unlock()
	cat, err := catalog.Open(ctx, opts.Collection)
	if err != nil {
		return Stats{}, err
	}
	defer cat.Close()
	var rs catalog.ReindexStats
	if !opts.SkipReindex {
		rs, err = cat.Reindex(ctx, catalog.ReindexOptions{Printer: p})
		if err != nil {
			return Stats{}, err
		}
	}
	s, err := newSite(opts, cat, p)
	if err != nil {
		return Stats{}, err
	}
	if err := s.checkShrink(ctx); err != nil {
		return Stats{}, err
	}
	if s.next.Catalog, err = cat.Generation(ctx); err != nil {
		return Stats{}, err
	}
	st, err := s.run(ctx)
	st.Reindex = rs
	return st, err
}

// checkShrink says when the selection matches nothing, and refuses an
// --out export that would drop most of the snapshots the folder's site
// holds (a typo in --tag must not empty a published site) unless
// opts.AllowShrink.
func (s *site) checkShrink(ctx context.Context) error {
	n, err := s.cat.Count(ctx, s.query())
	if err != nil {
		return err
	}
	if n == 0 {
		s.p.Warnf("the selection matches no snapshot in the catalog")
	}
	if s.inPlace || s.opts.AllowShrink || s.last == nil {
		return nil
	}
	if had := int(s.last.Total); had > 0 && 2*n < had {
		return fmt.Errorf("export to %s would drop %d of the %d snapshots its site holds (the selection matches %d); check the patterns and filters, or pass --allow-shrink",
			s.dst, had-n, had, n)
	}
	return nil
}

type group struct {
	n   uint32
	sig uint64
}

// capture is one snapshot of a URL captured more than once, for the
// "other captures" list of the others' pages.
type capture struct {
	dir, url, title string
	saved           time.Time
}

// site is one export run.
type site struct {
	opts     Options
	p        archive.Printer
	cat      *catalog.Catalog
	src, dst string // collection root; export root (== src in place)
	inPlace  bool
	tpl      *templates.Set
	md       goldmark.Markdown
	sandbox  string
	key      uint64
	prev     *state // nil: write everything
	last     *state // the previous export's state even when it is not used (--full): what to clean up
	next     *state
	statePth string

	groups   map[uint64]group
	seen     map[uint64]seenRec   // by folder hash, from pass 1
	captures map[uint64][]capture // captures of URLs captured more than once
	deferred []*item              // pages written once captures are known
	total    int
	pages    int

	parents sync.Map // folders checked by files: rel -> absolute path ("" unsafe)

	mu                                                   sync.Mutex // guards next.Snaps
	written, kept, rootWritten, rootKept, linked, copied atomic.Int64

	// batch writes every regenerated file of the export: each appears
	// atomically, and all are made durable by one Sync before the state
	// file that claims them is written.
	batch *archive.Batch
}

func newSite(opts Options, cat *catalog.Catalog, p archive.Printer) (*site, error) {
	if opts.PageSize <= 0 {
		opts.PageSize = 250
	}
	if opts.Workers <= 0 {
		opts.Workers = 8 * runtime.GOMAXPROCS(0)
	}
	if opts.Title == "" {
		opts.Title = "folio archive"
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	tpl, err := templates.Load(opts.Templates, template.FuncMap{})
	if err != nil {
		return nil, err
	}
	s := &site{opts: opts, p: p, cat: cat, src: opts.Collection.Dir, tpl: tpl,
		md: goldmark.New(), sandbox: Sandbox(opts.AllowArchivedScripts), groups: map[uint64]group{}}
	s.inPlace = opts.Out == ""
	if s.inPlace {
		s.dst = s.src
		s.statePth = opts.Collection.Path(archive.StateDir + "/export/in-place.state")
	} else {
		out, err := filepath.Abs(opts.Out)
		if err != nil {
			return nil, fmt.Errorf("export to %s: %w", opts.Out, err)
		}
		if err := checkOut(s.src, out); err != nil {
			return nil, err
		}
		s.dst = out
		s.statePth = opts.Collection.Path(archive.StateDir + "/export/out-" + strconv.FormatUint(hashString(out), 16) + ".state")
	}
	s.key = newHasher().str(tpl.Version).str(opts.Title).str(opts.Version).
		u64(uint64(opts.PageSize)).str(s.sandbox).str(strconv.FormatBool(opts.Gzip)).str(s.dst).sum()
	prev, err := readState(s.statePth)
	if err != nil {
		return nil, err
	}
	s.last = prev
	if !opts.Full && prev != nil && prev.Key == s.key {
		s.prev = prev
	}
	s.next = newState(s.key)
	s.next.Select = selectionKey(s.query())
	s.batch = archive.NewBatch(s.dst)
	return s, nil
}

// checkOut refuses an --out folder that would overwrite something that is
// not a folio export, or that lies inside the collection's own tree.
func checkOut(src, out string) error {
	if out == src {
		return fmt.Errorf("export to %s: that is the collection itself; omit --out to export in place", out)
	}
	if rel, err := filepath.Rel(src, out); err == nil && (rel == archive.ArchiveDir || strings.HasPrefix(rel, archive.ArchiveDir+string(filepath.Separator)) || strings.HasPrefix(rel, archive.StateDir)) {
		return fmt.Errorf("export to %s: inside the collection's %s folder", out, strings.SplitN(rel, string(filepath.Separator), 2)[0])
	}
	if rel, err := filepath.Rel(out, src); err == nil && !strings.HasPrefix(rel, "..") {
		return fmt.Errorf("export to %s: the collection %s is inside it", out, src)
	}
	entries, err := os.ReadDir(out)
	if errors.Is(err, fs.ErrNotExist) || err == nil && len(entries) == 0 {
		return nil
	}
	if err != nil {
		return fmt.Errorf("export to %s: %w", out, err)
	}
	if _, err := os.Stat(filepath.Join(out, SiteDir, "folio.js")); err == nil {
		return nil
	}
	return fmt.Errorf("export to %s: folder is not empty and holds no folio export; choose an empty or new folder", out)
}

func (s *site) query() catalog.Query {
	q := s.opts.Query
	q.Sort = "-bookmarked_at"
	q.Limit = 0
	q.WithResults = false
	return q
}

// item is one snapshot of the selection as the catalog lists it.
type item struct {
	Dir         string
	IndexFile   string
	Snapshot    archive.Snapshot
	IndexSize   int64
	IndexMTime  time.Time
	TextStamp   string
	NumOutputs  int
	NumFailures int
	own, fp     uint64 // ownFP and fingerprint
	dh          uint64 // hashString(Dir), set by pass 1
	archived    bool   // the manifest's is_archived
	sort        int64  // catalog.SortTime
	page        int    // the root page that lists it, set by page
}

func itemOf(e catalog.Entry) item {
	return item{Dir: e.Dir, IndexFile: e.IndexFile, Snapshot: e.Snapshot, IndexSize: e.IndexSize,
		IndexMTime: e.IndexMTime, TextStamp: e.TextStamp, NumOutputs: e.NumOutputs, NumFailures: e.NumFailures, sort: catalog.SortTime(e.Snapshot)}
}

// memberSig is what a capture shows on the pages of the other captures
// of its URL.
func memberSig(it *item) uint64 {
	return newHasher().str(it.Dir).str(it.Snapshot.Title).u64(uint64(it.Snapshot.BookmarkedAt.UnixNano())).sum()
}

func (s *site) snapStateOf(it *item) snapState {
	return snapState{Dir: it.Dir, FP: it.fp, Own: it.own, URL: hashString(it.Snapshot.URL), Sig: memberSig(it),
		Archived: it.archived, Sort: it.sort, Page: uint32(it.page)}
}

func (s *site) run(ctx context.Context) (Stats, error) {
	st := Stats{Dir: s.dst, URL: fileURL(filepath.Join(s.dst, RootPage))}
	q := s.query()
	for _, d := range []string{s.dst, filepath.Join(s.dst, SiteDir, "search"), filepath.Join(s.dst, SiteDir, "text")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return st, fmt.Errorf("export: %w", err)
		}
	}
	if err := s.writeAssets(); err != nil {
		return st, err
	}
	// One pass counts the selection and the captures of each URL, writes
	// the root manifest and, after an earlier export, finds the pages
	// that changed. A second pass is needed only when that one could not
	// tell (a first or --full export, a URL gaining or losing captures).
	done, err := s.delta(ctx, q)
	if err != nil {
		return st, err
	}
	if !done {
		done, err = s.pass1(ctx, q)
		if err != nil {
			return st, err
		}
	}
	st.Snapshots = s.total
	if !done {
		if err := s.pass2(ctx, q); err != nil {
			return st, err
		}
	}
	if err := s.removeStalePages(); err != nil {
		return st, err
	}
	if !s.inPlace {
		n, err := s.removeUnselected()
		if err != nil {
			return st, err
		}
		st.Removed = n
		if err := s.writeHeaders(); err != nil {
			return st, err
		}
	}
	// The state claims the pages written: only once they are durable, so
	// after a crash the next export regenerates whatever was cut short.
	if err := s.batch.Sync(); err != nil {
		return st, err
	}
	testEvent("sync")
	if err := os.MkdirAll(filepath.Dir(s.statePth), 0o755); err != nil {
		return st, fmt.Errorf("export: %w", err)
	}
	if s.seen != nil { // else delta has moved the offsets
		for h, ss := range s.next.Snaps {
			l := s.seen[h].line
			ss.Off, ss.Len = l.off, l.n
			s.next.Snaps[h] = ss
		}
	}
	testEvent("state")
	if err := s.next.write(s.statePth); err != nil {
		return st, err
	}
	st.Written, st.Kept = s.written.Load(), s.kept.Load()
	st.RootWritten, st.RootKept = s.rootWritten.Load(), s.rootKept.Load()
	st.Linked, st.Copied = s.linked.Load(), s.copied.Load()
	if !s.inPlace {
		st.Files, st.Bytes = s.siteSize()
		if st.Bytes > GitHubPagesBytes {
			s.p.Warnf("%s holds %s, more than GitHub Pages publishes (1 GB)", s.dst, fileSize(st.Bytes))
		}
		if st.Files > CloudflarePagesFiles {
			s.p.Warnf("%s holds %d files, more than Cloudflare Pages accepts (%d)", s.dst, st.Files, CloudflarePagesFiles)
		}
	}
	if s.opts.Bundle != "" {
		if err := s.bundle(ctx, s.opts.Bundle); err != nil {
			return st, err
		}
		st.Bundle = s.opts.Bundle
	}
	return st, nil
}

// ownFP is what a snapshot's own row and manifest record depend on: its
// index file, and its captured text for the page's text shard.
func ownFP(it *item) uint64 {
	return newHasher().str(it.Dir).str(it.IndexFile).u64(uint64(it.IndexSize)).u64(uint64(it.IndexMTime.UnixNano())).str(it.TextStamp).sum()
}

// fingerprint is what a snapshot page depends on: the snapshot's index
// file and the captures of the same URL.
func (s *site) fingerprint(groups map[uint64]group, it *item) uint64 {
	h := newHasher().u64(it.own)
	if g := groups[hashString(it.Snapshot.URL)]; g.n > 1 {
		h.u64(uint64(g.n)).u64(g.sig)
	}
	return h.sum()
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

func (s *site) abs(rel string) string { return filepath.Join(s.dst, filepath.FromSlash(rel)) }

// pageFP is what root page n and its shard depend on: its place among
// the pages and the rows it lists.
func pageFP(n, pages, total int, items []item) uint64 {
	ph := newHasher().u64(uint64(n)).u64(uint64(pages)).u64(uint64(total))
	for i := range items {
		ph.u64(items[i].fp)
	}
	return ph.sum()
}

// page writes root page n and its search shard, and the snapshot pages of
// its items that changed.
func (s *site) page(ctx context.Context, g *errgroup.Group, n int, items []item) {
	pfp := pageFP(n, s.pages, s.total, items)
	for len(s.next.Pages) < n {
		s.next.Pages = append(s.next.Pages, 0)
	}
	s.next.Pages[n-1] = pfp
	pageDirty := s.prev == nil || n > len(s.prev.Pages) || s.prev.Pages[n-1] != pfp ||
		!s.pageWritten(n)

	rows := make([]rowView, len(items))
	shard := make([]shardRow, len(items))
	from := pageDir(n)
	// The snapshots of the page run on the export's worker pool; the one
	// that finishes last renders the root page and its shard, so pages
	// overlap and no worker waits for a page to end.
	var pending atomic.Int64
	pending.Store(int64(len(items)) + 1)
	finish := func() error {
		if pending.Add(-1) != 0 {
			return nil
		}
		if !pageDirty {
			s.rootKept.Add(1)
			return nil
		}
		if err := s.writeRootPage(n, rows); err != nil {
			return err
		}
		if err := s.writeShard(n, shard); err != nil {
			return err
		}
		if err := s.writeTextShard(ctx, n, items); err != nil {
			return err
		}
		s.rootWritten.Add(1)
		return nil
	}
	for i := range items {
		it := &items[i]
		it.page = n
		h := hashString(it.Dir)
		dirty := true
		if s.prev != nil {
			old, ok := s.prev.Snaps[h]
			dirty = !ok || old.FP != it.fp || !exists(s.abs(it.Dir+"/"+RootPage))
			if !dirty {
				old.Page = uint32(n)
				s.setSnap(h, old)
			}
		}
		if !dirty && !pageDirty {
			s.kept.Add(1)
			pending.Add(-1) // never the last: the final finish below is still to come
			continue
		}
		g.Go(func() error {
			if err := ctx.Err(); err != nil {
				return err
			}
			ss, err := s.snapshot(it, dirty, from, &rows[i], &shard[i])
			if err != nil {
				return err
			}
			if dirty {
				s.setSnap(h, ss)
			}
			return finish()
		})
	}
	g.Go(finish)
}

func (s *site) prevSnap(dir string) (snapState, bool) {
	if s.prev == nil {
		return snapState{}, false
	}
	ss, ok := s.prev.Snaps[hashString(dir)]
	return ss, ok
}

func (s *site) setSnap(h uint64, ss snapState) {
	s.mu.Lock()
	s.next.Snaps[h] = ss
	s.mu.Unlock()
}

// snapshot reads one snapshot's records from its folder, writes its page
// when dirty (copying the folder first for --out), and fills its row.
func (s *site) snapshot(it *item, dirty bool, from string, row *rowView, sr *shardRow) (snapState, error) {
	snap, results := s.records(it)
	f := s.files(it.Dir)
	outs := f.discover(results)
	ss := s.snapStateOf(it)
	switch {
	case dirty && s.groups[hashString(it.Snapshot.URL)].n > 1:
		// Its other captures are known once the stream has ended.
		cp := *it // not it: a pointer would keep the whole page's batch alive
		s.mu.Lock()
		s.deferred = append(s.deferred, &cp)
		s.mu.Unlock()
		dirty = false
	case dirty:
		var err error
		if ss, err = s.writeSnapshot(it, &snap, results, f, outs); err != nil {
			return ss, err
		}
	default:
		s.kept.Add(1)
	}
	*row = s.row(it, &snap, results, f, outs, from)
	*sr = shardRow{relHref("", it.Dir+"/"+RootPage)[2:], row.Title, snap.URL, archive.TagString(snap.Tags),
		row.Status, row.Date + " " + row.Time, row.Size, row.StatusLabel}
	return ss, nil
}

// writeSnapshot writes a snapshot's page, copying its folder first for
// --out.
func (s *site) writeSnapshot(it *item, snap *archive.Snapshot, results []archive.Result, f *files, outs []output) (snapState, error) {
	ss := s.snapStateOf(it)
	if !s.inPlace {
		n, b, err := s.copySnapshot(it.Dir)
		if err != nil {
			return ss, err
		}
		ss.Files, ss.Bytes = n, b
	}
	if err := s.writeDetail(it, snap, results, f, outs, s.related(it)); err != nil {
		return ss, err
	}
	s.written.Add(1)
	return ss, nil
}

// detail writes the page of a deferred snapshot.
func (s *site) detail(it *item) (snapState, error) {
	snap, results := s.records(it)
	f := s.files(it.Dir)
	return s.writeSnapshot(it, &snap, results, f, f.discover(results))
}

// records returns the snapshot's record (from the catalog, which the
// export brought up to date with the tree) and its results, read from the
// folder itself: the tree is the truth, and a catalog row does not carry
// every field of output_files.
func (s *site) records(it *item) (archive.Snapshot, []archive.Result) {
	dir := filepath.Join(s.src, filepath.FromSlash(it.Dir))
	switch it.IndexFile {
	case archive.IndexFile:
		if data, err := readFile(filepath.Join(dir, archive.IndexFile)); err == nil {
			return it.Snapshot, parseResults(data)
		}
	case archive.LegacyIndexFile:
		if li, err := archive.ReadLegacyIndex(dir); err == nil {
			return it.Snapshot, li.Results
		}
	}
	return it.Snapshot, nil
}

var resultMarker = []byte(`"ArchiveResult"`)

// parseResults decodes the ArchiveResult records of an index.jsonl with
// archive's decoder, as Index.Results would, looking only at the lines
// that can be results (Process and Binary lines are skipped unread).
func parseResults(data []byte) []archive.Result {
	var out []archive.Result
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if !bytes.Contains(line, resultMarker) {
			continue
		}
		r, ok := archive.DecodeResultLine(line)
		if !ok {
			continue
		}
		if !sort.SliceIsSorted(r.OutputFiles, func(a, b int) bool { return r.OutputFiles[a].Path < r.OutputFiles[b].Path }) {
			sort.SliceStable(r.OutputFiles, func(a, b int) bool { return r.OutputFiles[a].Path < r.OutputFiles[b].Path })
		}
		out = append(out, r)
	}
	return out
}

type relatedItem struct {
	Href, Title, Saved string
	year               int
}

type relatedYear struct {
	Year  int
	Items []relatedItem
}

// maxRelated is how many other captures a page lists.
const maxRelated = 25

// related lists up to maxRelated other exported captures of the same URL,
// newest first, grouped by year.
func (s *site) related(it *item) []relatedYear {
	h := hashString(it.Snapshot.URL)
	if s.groups[h].n < 2 {
		return nil // and captures, still being filled, is not touched
	}
	var out []relatedYear
	n := 0
	for _, c := range s.captures[h] {
		if c.dir == it.Dir || c.url != it.Snapshot.URL || n >= maxRelated {
			continue
		}
		n++
		title := c.title
		if title == "" {
			title = c.url
		}
		r := relatedItem{Href: relHref(it.Dir, c.dir+"/"+RootPage), Title: truncate(html.UnescapeString(title), 110),
			Saved: c.saved.Format("2006-01-02 15:04"), year: c.saved.Year()}
		if len(out) == 0 || out[len(out)-1].Year != r.year {
			out = append(out, relatedYear{Year: r.year})
		}
		out[len(out)-1].Items = append(out[len(out)-1].Items, r)
	}
	return out
}

func savedTime(s *archive.Snapshot) time.Time {
	if !s.BookmarkedAt.IsZero() {
		return s.BookmarkedAt.UTC()
	}
	if t, ok := archive.ParseTime(s.Timestamp); ok {
		return t
	}
	return s.CreatedAt.UTC()
}

func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

func pending(status string) bool {
	switch status {
	case "queued", "started", "backoff":
		return true
	}
	return false
}

type iconView struct{ Href, Plugin, Icon string }

type rowView struct {
	Status, StatusLabel            string // the record's status, and the words the pages show for it
	Href, Saved, Date, Time, Epoch string
	Pending                        bool
	Preview, PreviewFallbacks      string
	Favicon, FaviconFallbacks      string
	Title, FullTitle, URL          string
	Linkable                       bool // URL is http(s): a link, else plain text
	Tags                           []string
	Icons                          []iconView
	SizeHref, Size                 string
	Outputs                        int
}

// shardRow is one snapshot in the search data:
// [href from the root, title, url, tags, status, saved, size, status label].
type shardRow [8]string

func candidates(f *files, from string, rels ...string) (first, rest string) {
	var hrefs []string
	for _, r := range rels {
		if ref := f.get(r); ref != nil && ref.Size > 0 {
			hrefs = append(hrefs, ref.From(from))
		}
	}
	if len(hrefs) == 0 {
		return "", ""
	}
	return hrefs[0], strings.Join(hrefs[1:], ",")
}

func (s *site) row(it *item, snap *archive.Snapshot, results []archive.Result, f *files, outs []output, from string) rowView {
	t := savedTime(snap)
	title := snap.Title
	if title == "" {
		title = snap.URL
	}
	status := snap.Status
	if status == "" {
		status = "unknown"
	}
	r := rowView{
		Status: status, Href: relHref(from, it.Dir+"/"+RootPage), Saved: archive.IsoTime(t),
		Date: t.Format("2006-01-02"), Time: t.Format("15:04"), Epoch: snap.Timestamp,
		Pending: pending(snap.Status), Title: truncate(html.UnescapeString(title), 110), URL: snap.URL,
		Linkable: webURL(snap.URL),
		Tags:     archive.NormalizeTags(snap.Tags), SizeHref: relHref(from, it.Dir+"/"+archive.IndexFile),
		Outputs: it.NumOutputs, StatusLabel: statusLabel(snap.Status, len(outs) > 0),
	}
	if full := html.UnescapeString(title); full != r.Title {
		r.FullTitle = full // the tooltip of a shortened title
	}
	if r.Epoch == "" {
		r.Epoch = strconv.FormatInt(t.Unix(), 10)
	}
	if snap.ArchiveSize > 0 {
		r.Size = fileSize(snap.ArchiveSize)
	}
	if !r.Pending {
		r.Preview, r.PreviewFallbacks = candidates(f, from, "screenshot/screenshot.png", "screenshot.png")
	}
	r.Favicon, r.FaviconFallbacks = candidates(f, from, "favicon/favicon.ico", "favicon.ico")
	byPlugin := map[string]*Ref{}
	for _, o := range outs {
		byPlugin[o.Plugin] = &o.Ref
	}
	var plugins []string
	for p := range byPlugin {
		plugins = append(plugins, p)
	}
	sort.Strings(plugins)
	for _, p := range plugins {
		icon, known := icons[p]
		if !known {
			icon = "folder"
		}
		if icon == "" {
			continue
		}
		r.Icons = append(r.Icons, iconView{Href: byPlugin[p].From(from), Plugin: p, Icon: icon})
	}
	return r
}

type previewView struct {
	Plugin, Href, Kind, Sandbox string
}

type cardView struct {
	Plugin, Href, Path, Size, Kind, Ext, Sandbox string
	Previewable                                  bool
}

type mediaView struct {
	Type, Href, Name, Size string
	Playable               bool
}

type detailView struct {
	CSP, Site, RootHref, ManifestHref, SiteTitle, Version string
	Title, URL, Saved, Status, StatusLabel, Size          string
	Linkable                                              bool // URL is http(s): a link, else plain text
	Tags                                                  []string
	Favicon, FaviconFallbacks                             string
	Preview                                               *previewView
	Cards                                                 []cardView
	Media                                                 []mediaView
	Failed                                                []string
	Notes                                                 template.HTML
	Related                                               []relatedYear
}

func kindOf(p string) string {
	e := ext(p)
	switch {
	case imageExts[e]:
		return "image"
	case htmlExts[e]:
		return "html"
	}
	return "file"
}

func statusLabel(status string, hasOutputs bool) string {
	if hasOutputs {
		return "archived"
	}
	switch status {
	case "queued":
		return "queued"
	case "started":
		return "running"
	case "paused":
		return "paused"
	case "sealed":
		return "archived"
	}
	return "not yet archived"
}

func (s *site) writeDetail(it *item, snap *archive.Snapshot, results []archive.Result, f *files, outs []output, related []relatedYear) error {
	dir := it.Dir
	t := savedTime(snap)
	title := html.UnescapeString(snap.Title)
	if title == "" {
		title = snap.URL
		if len(outs) == 0 {
			title = "Not yet archived..."
		}
	}
	v := detailView{
		CSP: CSP, Site: strings.TrimSuffix(relHref(dir, SiteDir+"/x"), "x"), RootHref: relHref(dir, RootPage),
		ManifestHref: "./" + archive.IndexFile, SiteTitle: s.opts.Title, Version: s.opts.Version,
		Title: title, URL: snap.URL, Linkable: webURL(snap.URL), Saved: t.Format("2006-01-02 15:04:05") + " UTC",
		Status: snap.Status, StatusLabel: statusLabel(snap.Status, len(outs) > 0), Size: "—",
		Tags: archive.NormalizeTags(snap.Tags),
	}
	if v.Status == "" {
		v.Status = "unknown"
	}
	if snap.ArchiveSize > 0 {
		v.Size = fileSize(snap.ArchiveSize)
	}
	v.Favicon, v.FaviconFallbacks = candidates(f, dir, "favicon/favicon.ico", "favicon.ico")
	if pv := preview(outs); pv != nil {
		kind := kindOf(pv.Ref.Rel)
		v.Preview = &previewView{Plugin: pv.Plugin, Href: pv.Ref.From(dir), Kind: kind, Sandbox: s.sandbox}
	}
	for _, o := range ordered(outs) {
		if hiddenCards[o.Plugin] || o.Ref.Size <= 0 {
			continue
		}
		k := kindOf(o.Ref.Rel)
		v.Cards = append(v.Cards, cardView{Plugin: o.Plugin, Href: o.Ref.From(dir), Path: strings.TrimPrefix(o.Ref.Rel, dir+"/"),
			Size: fileSize(o.Ref.Size), Kind: k, Ext: ext(o.Ref.Rel), Sandbox: s.sandbox,
			Previewable: v.Preview != nil && v.Preview.Kind != "image" && k != "image"})
	}
	for _, m := range f.media(results) {
		typ := "file"
		if m.Video {
			typ = "video"
		} else if m.Audio {
			typ = "audio"
		}
		v.Media = append(v.Media, mediaView{Type: typ, Href: m.Ref.From(dir), Name: m.Name, Size: fileSize(m.Ref.Size), Playable: m.Playable})
	}
	seenFailed := map[string]bool{}
	for _, r := range results {
		if archive.NormalizeStatus(r.Status) == archive.StatusFailed && r.Plugin != "" && !seenFailed[r.Plugin] {
			seenFailed[r.Plugin] = true
			v.Failed = append(v.Failed, r.Plugin)
		}
	}
	if snap.Notes != "" {
		var b bytes.Buffer
		if err := s.md.Convert([]byte(snap.Notes), &b); err == nil {
			v.Notes = template.HTML(b.String()) // goldmark without WithUnsafe drops raw HTML and unsafe links
		}
	}
	v.Related = related
	b := getBuffer()
	defer putBuffer(b)
	if s.tpl.Builtin {
		renderSnapshot(b, &v)
	} else if err := s.tpl.Snapshot.Execute(b, &v); err != nil {
		return fmt.Errorf("render page of %s: %w", dir, err)
	}
	err := s.writeGenerated(dir+"/"+RootPage, b.Bytes())
	if errors.Is(err, fs.ErrNotExist) { // a snapshot never captured: its folder is made
		if err := os.MkdirAll(s.abs(dir), 0o755); err != nil {
			return fmt.Errorf("export %s: %w", dir, err)
		}
		err = s.writeGenerated(dir+"/"+RootPage, b.Bytes())
	}
	return err
}

type pageLink struct {
	N            int
	Href         string
	Current, Gap bool
}

type rootView struct {
	CSP, Site, DataRoot, RootHref, ManifestHref, Title, Version string
	Total, Page, Pages                                          int
	PrevHref, NextHref                                          string
	PageLinks                                                   []pageLink
	Rows                                                        []rowView
}

func (s *site) writeRootPage(n int, rows []rowView) error {
	from := pageDir(n)
	v := rootView{CSP: CSP, Title: s.opts.Title, Version: s.opts.Version, Total: s.total, Page: n, Pages: s.pages, Rows: rows,
		RootHref: relHref(from, RootPage), ManifestHref: relHref(from, ManifestFile)}
	v.Site = strings.TrimSuffix(relHref(from, SiteDir+"/x"), "x")
	v.DataRoot = strings.TrimSuffix(relHref(from, "x"), "x")
	if n > 1 {
		v.PrevHref = relHref(from, pagePath(n-1))
	}
	if n < s.pages {
		v.NextHref = relHref(from, pagePath(n+1))
	}
	last := 0
	for k := 1; k <= s.pages; k++ {
		if k <= 2 || k > s.pages-2 || k >= n-3 && k <= n+3 {
			if last != 0 && k != last+1 {
				v.PageLinks = append(v.PageLinks, pageLink{Gap: true})
			}
			v.PageLinks = append(v.PageLinks, pageLink{N: k, Href: relHref(from, pagePath(k)), Current: k == n})
			last = k
		}
	}
	b := getBuffer()
	defer putBuffer(b)
	if s.tpl.Builtin {
		renderRoot(b, &v)
	} else if err := s.tpl.Root.Execute(b, &v); err != nil {
		return fmt.Errorf("render root page %d: %w", n, err)
	}
	return s.writeGenerated(pagePath(n), b.Bytes())
}

func (s *site) writeShard(n int, rows []shardRow) error {
	b := shardJS("folioSearch", n, len(rows), func(b *bytes.Buffer, i int) {
		b.WriteByte('[')
		for j, f := range rows[i] {
			if j > 0 {
				b.WriteByte(',')
			}
			appendJSString(b, f)
		}
		b.WriteByte(']')
	})
	return s.writeGenerated(shardPath(n), b.Bytes())
}

// shardJS is the script of a shard: fn.add(n, [row, …]); with each row
// written by row.
func shardJS(fn string, n, rows int, row func(b *bytes.Buffer, i int)) *bytes.Buffer {
	var b bytes.Buffer
	b.WriteString(fn)
	b.WriteString(".add(")
	b.WriteString(strconv.Itoa(n))
	b.WriteString(", [")
	for i := range rows {
		if i > 0 {
			b.WriteString(",\n")
		}
		row(&b, i)
	}
	b.WriteString("]);\n")
	return &b
}

// writeTextShard writes the captured text of page n's snapshots, as the
// catalog's search index holds it, in the order of the page's rows:
// folioText.add(n, ["text", …]), lower-cased with runs of white space made
// one space, the first maxShardText bytes of each.
func (s *site) writeTextShard(ctx context.Context, n int, items []item) error {
	dirs := make([]string, len(items))
	for i := range items {
		dirs[i] = items[i].Dir
	}
	texts, err := s.cat.Texts(ctx, dirs, 2*maxShardText)
	if err != nil {
		return err
	}
	b := shardJS("folioText", n, len(dirs), func(b *bytes.Buffer, i int) {
		t := strings.ToLower(strings.Join(strings.Fields(texts[dirs[i]]), " "))
		if len(t) > maxShardText {
			t = strings.ToValidUTF8(t[:maxShardText], "")
		}
		appendJSString(b, t)
	})
	// A page whose rows changed mostly keeps its texts: leave the file
	// alone then, so that a sync of the site copies only what changed.
	p := s.abs(textShardPath(n))
	if old, err := os.ReadFile(p); err == nil && bytes.Equal(old, b.Bytes()) && exists(p+".gz") == s.opts.Gzip {
		return nil
	}
	return s.writeGenerated(textShardPath(n), b.Bytes())
}

// appendJSString writes s as a JavaScript string literal that is also
// valid JSON, with <, >, & and the line separators escaped.
func appendJSString(b *bytes.Buffer, s string) {
	const hex = "0123456789abcdef"
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == '<' || r == '>' || r == '&' || r == 0x2028 || r == 0x2029 || r == 0x7f:
			b.WriteString(`\u`)
			b.WriteByte(hex[r>>12&0xf])
			b.WriteByte(hex[r>>8&0xf])
			b.WriteByte(hex[r>>4&0xf])
			b.WriteByte(hex[r&0xf])
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
}

func (s *site) writeAssets() error {
	for _, name := range templates.Assets {
		rel := SiteDir + "/" + name
		data := s.tpl.Asset(name)
		if old, err := os.ReadFile(s.abs(rel)); err == nil && bytes.Equal(old, data) && (!s.opts.Gzip || exists(s.abs(rel)+".gz")) {
			continue
		}
		if err := s.writeGenerated(rel, data); err != nil {
			return err
		}
	}
	return nil
}

// writeGenerated writes one generated file (atomically, so a hard link
// into the collection is replaced, never written through) with its .gz
// sibling when asked; without --gzip a stale sibling is removed.
func (s *site) writeGenerated(rel string, data []byte) error {
	p := s.abs(rel)
	if err := s.batch.WriteFile(p, data, 0o644); err != nil {
		return err
	}
	testEvent("write " + rel)
	if s.opts.Gzip {
		return s.writeGzip(p+".gz", data)
	}
	return s.removeGzip(p)
}

// removeGzip removes a stale .gz sibling of p, unless the previous export
// to this folder ran with the same options (so without --gzip either),
// when there is none.
func (s *site) removeGzip(p string) error {
	if s.last != nil && s.last.Key == s.key {
		return nil
	}
	if err := unix.Unlink(p + ".gz"); err != nil && err != unix.ENOENT {
		return fmt.Errorf("remove %s.gz: %w", p, err)
	}
	return nil
}

// removeStalePages deletes root pages and shards past the last page.
func (s *site) removeStalePages() error {
	for _, d := range []struct{ dir, prefix, suffix string }{
		{SiteDir, "page-", ".html"}, {SiteDir + "/search", "", ".js"}, {SiteDir + "/text", "", ".js"},
	} {
		entries, err := os.ReadDir(s.abs(d.dir))
		if err != nil {
			continue
		}
		for _, e := range entries {
			name := strings.TrimSuffix(e.Name(), ".gz")
			if !strings.HasPrefix(name, d.prefix) || !strings.HasSuffix(name, d.suffix) {
				continue
			}
			k, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(name, d.prefix), d.suffix))
			if err != nil || k <= s.pages || k < 1 {
				continue
			}
			if err := os.Remove(s.abs(d.dir + "/" + e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("remove stale page %s: %w", e.Name(), err)
			}
		}
	}
	return nil
}

// archivedMarkers are the files whose presence makes a snapshot that is
// neither sealed nor has results count as archived (is_archived).
var archivedMarkers = []string{"output.html", "output.pdf", "screenshot.png", "singlefile.html",
	"readability/content.html", "mercury/content.html", "htmltotext.txt", "media", "git"}

// errUnchanged aborts the write of a manifest that would be identical.
var errUnchanged = errors.New("manifest unchanged")

// pass2 streams the selection once more and schedules every page on the
// worker pool, a root page's worth of snapshots at a time, collecting the
// captures of URLs captured more than once. Snapshot pages that list
// other captures are written once the stream has ended.
func (s *site) pass2(ctx context.Context, q catalog.Query) error {
	testEvent("pass2")
	s.next.Snaps = map[uint64]snapState{}
	s.next.Pages = nil
	s.captures = map[uint64][]capture{}
	s.deferred = nil
	s.kept.Store(0)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(s.opts.Workers)
	batch := make([]item, 0, s.opts.PageSize)
	page := 0
	var done int64
	flush := func() {
		page++
		s.page(gctx, g, page, batch)
		done += int64(len(batch))
		s.p.Progress("export", done, int64(s.total))
		batch = make([]item, 0, s.opts.PageSize) // the page's workers hold the old one
	}
	err := s.cat.Each(gctx, q, func(e catalog.Entry) error {
		it := itemOf(e)
		it.own = ownFP(&it)
		it.fp = s.fingerprint(s.groups, &it)
		it.archived = s.seen[hashString(it.Dir)].archived
		s.addCapture(&e, s.groups)
		batch = append(batch, it)
		if len(batch) == s.opts.PageSize {
			flush()
		}
		return gctx.Err()
	})
	if err == nil && (len(batch) > 0 || page == 0) {
		flush()
	}
	if werr := g.Wait(); err == nil {
		err = werr
	}
	if err != nil {
		return err
	}
	return s.writeDeferred(ctx)
}

func (s *site) addCapture(e *catalog.Entry, groups map[uint64]group) {
	if h := hashString(e.Snapshot.URL); groups[h].n > 1 {
		if list := s.captures[h]; len(list) <= maxRelated {
			s.captures[h] = append(list, capture{dir: e.Dir, url: e.Snapshot.URL, title: e.Snapshot.Title, saved: savedTime(&e.Snapshot)})
		}
	}
}

// writeDeferred writes the pages that list other captures of their URL.
func (s *site) writeDeferred(ctx context.Context) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(s.opts.Workers)
	for _, it := range s.deferred {
		g.Go(func() error {
			if err := gctx.Err(); err != nil {
				return err
			}
			ss, err := s.detail(it)
			if err != nil {
				return err
			}
			s.setSnap(hashString(it.Dir), ss)
			return nil
		})
	}
	return g.Wait()
}

func (s *site) hasMarker(e *catalog.Entry) bool {
	dir := filepath.Join(s.src, filepath.FromSlash(e.Dir))
	if n := splitURL(e.Snapshot.URL).netloc; n != "" && !strings.ContainsAny(n, "/\x00") && n != "." && n != ".." {
		if exists(filepath.Join(dir, n)) {
			return true
		}
	}
	for _, m := range archivedMarkers {
		if exists(filepath.Join(dir, m)) {
			return true
		}
	}
	return false
}

func fileURL(p string) string {
	return "file://" + Quote(filepath.ToSlash(p))
}
