// Package export writes a collection as a static site: a root list of
// snapshots in pages (newest first) with a filter box that searches all of
// them, a detail page in every snapshot folder, and a root index.jsonl
// manifest. Every link is relative and names .../index.html, so the site
// works from file://, under any sub-path and on any static host. Exports
// are incremental: a page is rewritten only when what it shows changed.
package export

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/yuin/goldmark"
	"golang.org/x/sync/errgroup"
	"golang.org/x/sys/unix"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/archive/catalog"
	"github.com/folio-archive/folio/templates"
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

	Full                 bool   // render every page again, ignoring the previous export
	Gzip                 bool   // write .gz siblings of the generated files
	Bundle               string // also write the site as one .tar.zst file here
	AllowArchivedScripts bool   // let archived pages run scripts in their sandbox
	AllowCrawlers        bool   // robots.txt lets search engines index the archived copies too

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

	// Fault, when set, is called at the export's steps: "page" after each
	// snapshot page is written, "state" before the state file is. A
	// non-nil error ends the export there (FOLIO_FAULT).
	Fault func(step, what string) error

	// Rewrite names snapshot folders (relative to the collection) whose
	// pages are written again though nothing the export looks at changed:
	// files written inside an output folder, which watch sees.
	Rewrite []string

	// Watched says the caller has seen every change in the tree since the
	// previous export ended (folio watch, which ran that export and lost
	// no event since): only the snapshot folders in Changed, or below one
	// of them, are looked at again; the others keep what that export saw
	// of their names. Without it every folder exported before is stat'ed.
	Watched bool
	Changed []string

	// Cache, when set, carries the export's state in memory to the next
	// export with the same Cache (folio watch exports again and again):
	// the state file is then read only when another process wrote it.
	Cache *Cache

	// Defer, with Cache, leaves the root manifest and the state file as
	// they are when the export re-exports from the catalog's change feed
	// (the pages it writes are durable all the same): the changed
	// snapshots' records wait in Cache until Flush splices them into the
	// manifest and writes the state. folio watch defers while changes
	// come and flushes once the tree is still: the manifest of 100k
	// snapshots is 145 MB, and writing it again for each change cost
	// more than all the rest. An export that dies before Flush leaves the
	// manifest and the state of the last one written, which agree; the
	// next export writes again the pages they do not account for.
	Defer bool

	// Now is the clock; nil means time.Now. A folder changed less than
	// catalog.ListingAge before it is looked at again next time.
	Now func() time.Time
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
	// Same and RootSame count the pages rendered again and found on disk
	// with the same bytes already (--full, mostly): left as they were.
	Same, RootSame int64

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
// export's own files, no inline code, no forms, no plugins. connect-src
// 'self' lets a page's context fetch robots.txt, as audits (Lighthouse's
// SEO) do; the pages' own script fetches nothing.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"media-src 'self'; frame-src 'self'; child-src 'self'; font-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'"

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
	s, err := newSite(opts, cat, p)
	if err != nil {
		return Stats{}, err
	}
	defer s.folders.bases.close()
	if s.touched, err = s.openTouched(); err != nil {
		return Stats{}, err
	}
	defer s.touched.Close() // a run that returns has removed its own temp files
	// The last export's state is read, and the snapshot folders it
	// exported are looked at, while the catalog catches up: decoding,
	// then system calls, beside the reindex's system calls and reads
	// (at 100k snapshots the state takes 0.2 s to decode, a tenth of
	// an export after one change).
	looked := make(chan error, 1)
	go func() {
		err := s.takeState()
		if err == nil {
			err = s.lookFolders(ctx)
		}
		looked <- err
	}()
	var rs catalog.ReindexStats
	if !opts.SkipReindex {
		rs, err = cat.Reindex(ctx, catalog.ReindexOptions{Printer: p, Now: s.opts.Now})
	}
	if lerr := <-looked; err == nil {
		err = lerr
	}
	if err != nil {
		return Stats{}, err
	}
	s.rows = openRowCache(s.statePth, s.key, s.prev == nil)
	defer s.rows.close()
	// A reindex reads on two connections while it writes on a third;
	// the export reads on two at most (its stream, and the shards' texts),
	// and each connection closed lets go of its page cache.
	cat.LimitConns(2)
	if err := s.checkShrink(ctx); err != nil {
		return Stats{}, err
	}
	if s.inPlace && s.prev == nil && s.last != nil {
		// Only the last export's key is looked at from here on (see
		// removeGzip): the snapshots it lists are let go.
		s.folders.detach()
		s.last.Snaps = nil
	}
	if s.next.Catalog, err = cat.Generation(ctx); err != nil {
		return Stats{}, err
	}
	st, err := s.run(ctx)
	if err == nil && s.inPlace {
		err = s.rememberInPlace()
	}
	st.Reindex = rs
	return st, fullDisk(s.dst, err)
}

// Flush writes what exports with Options.Defer left in opts.Cache: the
// root manifest with the records they changed spliced in, and the state.
// It returns how many held records it wrote; with nothing held back it does
// nothing. opts must select and render as those exports did (the same
// options, Defer aside); its Rewrite is not used.
//
// When something other than an export changed the manifest since (a file
// copied over it, an edit), the records cannot be spliced in: an export
// of the whole selection writes it again, with them, before Flush returns.
// Should that export fail (another process holding the collection), the
// state says it is still due (Held), and the next Flush runs it.
func Flush(ctx context.Context, opts Options, p archive.Printer) (int, error) {
	if p == nil {
		p = archive.Discard
	}
	n, err := flushHeld(ctx, opts, p)
	if err != nil {
		return 0, err
	}
	if st, err := opts.Cache.current(); err != nil || st == nil || st.ManifestSize >= 0 {
		return n, err
	}
	opts.Defer, opts.Rewrite = false, nil // (the passes hold nothing back in any case)
	testEvent("flush export")
	if _, err := Run(ctx, opts, p); err != nil {
		return 0, err
	}
	return n, nil
}

// flushHeld is Flush but for a manifest changed by something else, for
// which it writes the state saying so (see state.ManifestSize).
func flushHeld(ctx context.Context, opts Options, p archive.Printer) (n int, err error) {
	if c := opts.Cache; c == nil || c.st == nil || !c.st.unsaved {
		return 0, nil
	}
	lock, err := opts.Collection.Lock("export")
	if err != nil {
		return 0, err
	}
	defer lock.Unlock()
	opts.Rewrite = nil
	s, err := newSite(opts, nil, p)
	if err != nil {
		return 0, err
	}
	if err := s.takeState(); err != nil {
		return 0, err
	}
	st := s.prev
	if st == nil || !st.unsaved {
		// Another export wrote the state since, and with it the
		// manifest: nothing is held back any more.
		if s.last != nil && !s.last.unsaved {
			opts.Cache.keep(s.statePth, s.last)
		}
		return 0, nil
	}
	s.next = st
	n = len(st.pending)
	if n > 0 {
		target := s.abs(ManifestFile)
		fi, err := os.Stat(target)
		if err != nil || !fi.Mode().IsRegular() || fi.Size() != st.ManifestSize || fi.ModTime().UnixNano() != st.ManifestMTime {
			// Changed since by something else: an export writes it
			// whole.
			st.ManifestSize = -1
		} else {
			if err := s.spliceManifest(target, st.pending); err != nil {
				return 0, err
			}
			moveOffsets(st.Snaps, st.pending)
		}
	}
	if err := s.batch.Sync(); err != nil {
		return 0, err
	}
	st.pending, st.unsaved = nil, false
	return n, s.writeState()
}

// Looked is what Look found.
type Looked struct {
	// Changed are the snapshot folders whose names changed since the
	// export (for Options.Changed).
	Changed []string
	// Rewrite are snapshot folders Changed named before, a folder in
	// which changed since (for Options.Rewrite).
	Rewrite []string
}

// settleFor is how long Look keeps an eye on the folders inside a
// snapshot folder it named: a plugin that made its folder may fill it
// for minutes, and a file written there moves no name an export looks at.
const settleFor = 10 * time.Minute

// Look looks at the snapshot folders at or below dirs (slash paths
// relative to the collection) that the export kept in opts.Cache wrote
// its pages for, as that export's successor would. It names those whose
// names changed since (a plugin folder or an output put in by hand, a
// folder gone) once each, with the folders in it, has been still for
// catalog.ListingAge; then, for settleFor after their last change, those
// a folder inside changed in (Looked.Rewrite). What it found of the other
// folders is kept in the cached state, as that export's look would have
// kept it. ok is false, and nothing is looked at, when the cache has kept
// no export yet (the state file another process wrote since is read).
//
// 'folio watch --export' asks it, on the timer that polls them, of the
// folders inotify has no watch for: a change there then starts an export
// of its own, and an export need not look at them all itself.
func Look(ctx context.Context, opts Options, dirs []string) (found Looked, ok bool, err error) {
	c := opts.Cache
	st, err := c.current()
	if err != nil || st == nil || opts.Collection == nil {
		return Looked{}, false, err
	}
	opts = opts.withDefaults()
	at := opts.Now()
	fs := foldersAt(opts.Collection.Dir, at)
	defer fs.bases.close()
	moved, err := fs.look(ctx, st, opts.Workers, append([]string{}, dirs...)) // (not nil: none looks at none)
	if err != nil {
		return Looked{}, true, err
	}
	fs.looked(func(h uint64, f folderSeen) {
		if ss, ok := st.Snaps[h]; ok && f.sig == ss.Folder {
			ss.setSeen(f) // (a page written after the export's look moved its ctime)
			st.Snaps[h] = ss
		}
	})
	// The folders changed are looked into first, then those named before,
	// within one budget per look: what it leaves is looked at next time.
	budget := lookBudget
	var named []settling
	for _, dir := range moved {
		inside, still := fs.still(dir, &budget)
		if !still {
			continue
		}
		found.Changed = append(found.Changed, dir)
		named = append(named, settling{inside, at})
	}
	for dir, was := range c.settling {
		var gone unix.Stat_t
		if fs.lstat(dir, &gone) != nil {
			delete(c.settling, dir)
			continue
		}
		inside, whole := fs.insideStamp(dir, &budget)
		switch {
		case !whole:
		case inside != was.stamp && inside < fs.trustBefore:
			found.Rewrite = append(found.Rewrite, dir)
			c.settling[dir] = settling{inside, at}
		case inside == was.stamp && at.Sub(was.since) > settleFor:
			delete(c.settling, dir)
		}
	}
	for i, dir := range found.Changed {
		if c.settling == nil {
			c.settling = map[string]settling{}
		}
		if _, ok := c.settling[dir]; ok || len(c.settling) < maxSettling {
			c.settling[dir] = named[i]
		}
	}
	return found, true, nil
}

// lookBudget is how many folders inside snapshot folders one Look looks
// into, and maxSettling how many snapshot folders it keeps an eye on.
const (
	lookBudget  = 4096
	maxSettling = 1024
)

// lookFolders looks at the snapshot folders of the last export (also for
// --full, which keeps what the state knows of unchanged folders).
func (s *site) lookFolders(ctx context.Context) error {
	last := cmp.Or(s.prev, s.last)
	if last == nil {
		return nil
	}
	var only []string // nil: look at every folder
	if s.opts.Watched {
		only = append([]string{}, s.opts.Changed...) // not nil when empty: look at none
	}
	changed, err := s.folders.look(ctx, last, s.opts.Workers, only)
	s.foldersChanged = append(changed, s.opts.Rewrite...)
	return err
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
	// folders knows the names in the snapshot folders; foldersChanged
	// are the folders exported before whose names changed since.
	folders        folders
	foldersChanged []string
	last           *state // the previous export's state even when it is not used (--full): what to clean up
	stateID        fileID // of the state file last was read from (or kept for)
	next           *state
	statePth       string

	groups   map[uint64]group
	seen     seenRecs             // from pass 1
	captures map[uint64][]capture // captures of URLs captured more than once
	deferred []*item              // pages written once captures are known
	heldBack bool                 // delta left the manifest and state to Flush (Options.Defer)
	total    int
	pages    int // root pages (pageLayout)
	first    int // snapshots the first lists

	parents sync.Map // folders checked by files: rel -> absolute path ("" unsafe)

	mu                                                                   sync.Mutex // guards next.Snaps
	written, kept, rootWritten, rootKept, linked, copied, same, rootSame atomic.Int64

	// batch writes every regenerated file of the export: each appears
	// atomically, and all are made durable by one Sync before the state
	// file that claims them is written.
	batch *archive.Batch
	// touched notes the snapshot folders this export writes in, so that
	// the next one can remove what a kill left there (see openTouched).
	touched *archive.TouchLog
	warcs   *warcCounts // record counts of the WARC files the pages show
	rows    *rowCache   // what kept pages' rows need from their folders
}

// withDefaults is opts with what it leaves unset filled in.
func (opts Options) withDefaults() Options {
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
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return opts
}

// foldersAt returns the snapshot folders of the collection at root as
// looked at now: a ctime older than the listing age is trusted.
func foldersAt(root string, now time.Time) folders {
	return folders{root: root, trustBefore: now.Add(-catalog.ListingAge).UnixNano()}
}

func newSite(opts Options, cat *catalog.Catalog, p archive.Printer) (*site, error) {
	opts = opts.withDefaults()
	tpl, err := templates.Load(opts.Templates, template.FuncMap{})
	if err != nil {
		return nil, err
	}
	s := &site{opts: opts, p: p, cat: cat, src: opts.Collection.Dir, tpl: tpl, md: goldmark.New(),
		sandbox: Sandbox(opts.AllowArchivedScripts), groups: map[uint64]group{}, folders: foldersAt(opts.Collection.Dir, opts.Now())}
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
	if err := s.checkSymlinks(); err != nil {
		return nil, err
	}
	s.key = newHasher().str(tpl.Version).str(opts.Title).str(opts.Version).
		u64(uint64(opts.PageSize)).str(s.sandbox).str(strconv.FormatBool(opts.Gzip)).str(s.dst).sum()
	s.warcs = loadWARCCounts(opts.Collection.Path(archive.StateDir + "/export/warc-counts"))
	s.next = newState(s.key)
	s.next.Select = selectionKey(s.query())
	s.batch = archive.NewBatch(s.dst)
	return s, nil
}

// takeState reads the last export's state (or takes it from
// Options.Cache): s.last, and s.prev when this export builds on it.
func (s *site) takeState() error {
	prev, err := s.opts.Cache.take(s.statePth)
	if err != nil {
		return err
	}
	s.last = prev
	if prev == nil {
		return nil
	}
	s.stateID, _ = fileIDOf(s.statePth)
	s.next.RowBase = prev.RowBase
	if !s.opts.Full && prev.Key == s.key {
		s.prev = prev
		for _, dir := range s.opts.Rewrite { // what their pages were written from is forgotten
			h := hashString(dir)
			if ss, ok := prev.Snaps[h]; ok {
				ss.FP, ss.Own = 0, 0
				prev.Snaps[h] = ss
			}
		}
	}
	return nil
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
	State       string // catalog.Entry.State
	own, fp     uint64 // ownFP and fingerprint
	dh          uint64 // hashString(Dir), set by pass 1
	archived    bool   // the manifest's is_archived
	sort        int64  // catalog.SortTime
	page        int    // the root page that lists it, set by page
	noted       bool   // its folder is in the touch log already, set by page
}

func itemOf(e catalog.Entry) item {
	return item{Dir: e.Dir, IndexFile: e.IndexFile, Snapshot: e.Snapshot, IndexSize: e.IndexSize,
		IndexMTime: e.IndexMTime, TextStamp: e.TextStamp, NumOutputs: e.NumOutputs, NumFailures: e.NumFailures, State: e.State, sort: catalog.SortTime(e.Snapshot)}
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
	if err := s.writeView(); err != nil {
		return st, err
	}
	if err := s.writeRobots(); err != nil {
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
	s.rows.sync()
	testEvent("sync")
	if s.seen != nil {
		for h, ss := range s.next.Snaps {
			l := s.seen.get(h)
			ss.Off, ss.Len = l.off, int64(l.n)
			ss.setSeen(s.folders.of(ss.Dir)) // kept pages keep the folder's new ctime
			s.next.Snaps[h] = ss
		}
	} else {
		// delta has set the offsets (or left them to Flush), and the
		// folders not looked at keep what the state knew of them.
		s.folders.looked(func(h uint64, f folderSeen) {
			if ss, ok := s.next.Snaps[h]; ok {
				ss.setSeen(f)
				s.next.Snaps[h] = ss
			}
		})
	}
	if s.heldBack {
		// The state waits in the cache for Flush (see Options.Defer).
		s.next.unsaved = true
		s.opts.Cache.keep(s.statePth, s.next)
	} else {
		if s.next.RowBase, err = s.rows.compact(s.next.Snaps, s.next.RowBase); err != nil {
			return st, err
		}
		if err := s.writeState(); err != nil {
			return st, err
		}
	}
	if err := s.warcs.save(s.opts.Full); err != nil {
		return st, err
	}
	st.Written, st.Kept = s.written.Load(), s.kept.Load()
	st.RootWritten, st.RootKept = s.rootWritten.Load(), s.rootKept.Load()
	st.Same, st.RootSame = s.same.Load(), s.rootSame.Load()
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

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

func (s *site) abs(rel string) string { return filepath.Join(s.dst, filepath.FromSlash(rel)) }

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
		it.own = s.ownFP(&it)
		it.fp = s.fingerprint(s.groups, &it)
		it.archived = s.seen.get(hashString(it.Dir)).archived
		s.addCapture(&e, s.groups)
		batch = append(batch, it)
		if len(batch) == pageRows(page+1, s.first, s.opts.PageSize) {
			flush()
		}
		return gctx.Err()
	})
	if err == nil && (len(batch) > 0 || page == 0) {
		flush()
	}
	// A worker's error cancels gctx, which ends the stream with
	// context.Canceled: the worker's error is the one to report.
	if werr := g.Wait(); werr != nil && (err == nil || ctx.Err() == nil) {
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
			h := hashString(it.Dir)
			s.mu.Lock()
			ss.Row = s.next.Snaps[h].Row // its row is written already
			s.next.Snaps[h] = ss
			s.mu.Unlock()
			return nil
		})
	}
	return g.Wait()
}

// hasMarker reports whether the folder of e holds one of archivedMarkers
// or a folder named for its URL's host (ArchiveBox 0.7's wget mirror).
func (s *site) hasMarker(e *catalog.Entry) bool {
	dir := filepath.Join(s.src, filepath.FromSlash(e.Dir))
	entries, err := readDir(dir) // one listing instead of a dozen lstats
	if err != nil {
		return false
	}
	names := make(map[string]bool, len(entries))
	for _, d := range entries {
		names[d.Name()] = true
	}
	if n := splitURL(e.Snapshot.URL).netloc; n != "" && names[n] {
		return true
	}
	for _, m := range archivedMarkers {
		if top, _, deeper := strings.Cut(m, "/"); names[top] && (!deeper || exists(filepath.Join(dir, m))) {
			return true
		}
	}
	return false
}

func fileURL(p string) string {
	return "file://" + Quote(filepath.ToSlash(p))
}

// stateStill reports whether the state file is still the one takeState
// read.
func (s *site) stateStill() bool {
	id, ok := fileIDOf(s.statePth)
	return ok && id == s.stateID
}

// writeState writes the next state to the state file and keeps it in the
// cache.
func (s *site) writeState() error {
	if err := os.MkdirAll(filepath.Dir(s.statePth), 0o755); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	testEvent("state")
	if err := s.fault("state", s.statePth); err != nil {
		return err
	}
	d := s.next.digest()
	if last := s.last; last != nil && !last.unsaved && last.disk == d && s.stateStill() {
		testEvent("state unchanged") // the file holds this state already
	} else if err := s.next.write(s.statePth); err != nil {
		return err
	}
	s.next.disk = d
	s.opts.Cache.keep(s.statePth, s.next)
	return nil
}
