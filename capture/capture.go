// Package capture is `folio add`: it turns input (URLs, bookmark files,
// feeds) into new snapshots in the current layout and runs the capture
// plugins over them.
//
// The order of a run is the order of ArchiveBox's add: the raw input is
// kept under sources/, every snapshot folder is created with its
// index.jsonl (status queued) before any page is loaded, each snapshot
// goes to started when a worker takes it, gets one ArchiveResult record per
// plugin as the plugin finishes, and is sealed at the end. Every index
// write is atomic, so a run killed at any point leaves each snapshot with
// the records of the plugins that finished; `folio add --resume` captures
// the snapshots left queued or started.
package capture

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/archive/catalog"
	"github.com/folio-archive/folio/capture/input"
	"github.com/folio-archive/folio/migrate"
	"github.com/folio-archive/folio/plugins"
)

// ErrNoURLs means the input held no URL folio could archive.
var ErrNoURLs = errors.New("no valid URL to add")

// Source is one piece of input: the URLs given as arguments, stdin, or a
// file.
type Source struct {
	Name   string // how messages name it: "arguments", "stdin", the file's path
	Data   []byte
	Format string // input format; "" means Options.Parser
}

// Options controls Run.
type Options struct {
	Sources      []Source
	Parser       string // input format; "" or input.Auto detects it
	Tags         []string
	Depth        int  // 0, or 1 to also archive the pages the captured pages link to
	IndexOnly    bool // create the snapshots, capture nothing (they stay queued)
	SkipExisting bool // do not add a URL the collection already has
	Resume       bool // also capture the snapshots earlier runs left queued or started
	// Update, for a URL the collection has, runs the failed and missing
	// plugins of its newest snapshot again instead of adding a second
	// snapshot (ArchiveBox's add --update).
	Update bool
	// Overwrite, with Update and in Retry, runs again the plugins whose
	// newest result did not fail too; their old output stays until the
	// new one succeeds.
	Overwrite bool
	// DryRun makes Retry print its plan to PlanOut and change nothing.
	DryRun    bool
	PlanOut   io.Writer
	Parallel  int // snapshots captured at once; 0 means 1
	PerDomain int // snapshots of one domain captured at once; 0 means Parallel
	Plugins   []string
	Config    plugins.Config
	// CrawlLabel labels the run's crawl, as ArchiveBox's add does with
	// "user@host $ cmd [ts]"; "" leaves the label empty.
	CrawlLabel string
	// Browser, when set, is used instead of starting Chromium (tests share
	// one); Run does not close it.
	Browser *plugins.Browser
	Printer archive.Printer
	Now     func() time.Time
	IDs     archive.IDSource
	// Fault, when set, is called at the run's steps: "result" after each
	// result is recorded, "sealed" after each snapshot is sealed. A
	// non-nil error is the step's failure (FOLIO_FAULT).
	Fault func(step, what string) error
}

// Stats is what a run did.
type Stats struct {
	Invalid    int // input items skipped
	Existing   int // URLs skipped by --skip-existing
	Created    int // snapshot folders created
	Refused    int // URLs whose folder would lie below a symlinked folder (layout.RealFolders)
	Resumed    int // snapshots of earlier runs taken up again
	Updated    int // existing snapshots whose plugins ran again (update, add --update)
	Sealed     int // snapshots captured to the end
	Failed     int // snapshots that archived nothing (state failed) or could not be captured
	Partial    int // sealed snapshots with some content and a failed plugin (state partial)
	Queued     int // snapshots left queued (index-only, or interrupted)
	SourceFile string
	CrawlDir   string
	// Pending, with IndexOnly, lists the snapshots left queued (created
	// and resumed) for a job queue to take.
	Pending []Pending
	// Results counts results by plugin and status.
	Results map[string]map[string]int
	// Saved lists the folders (relative) of the snapshots sealed with
	// something archived, in the order they finished.
	Saved []string
}

// Run adds the input's URLs to the collection and captures them. The
// caller holds the collection's lock. It returns ErrNoURLs when the input
// had no valid URL (and nothing was written), archive.ErrPartial when some
// plugin failed, and the context's error when interrupted.
func Run(ctx context.Context, c *archive.Collection, opts Options) (*Stats, error) {
	r, err := newRun(c, opts)
	if err != nil {
		return nil, err
	}
	if r.touched, err = r.openTouched(); err != nil {
		return nil, err
	}
	defer r.touched.Close() // a run that returns has removed its own temp files
	return r.run(ctx)
}

// run is one add.
type run struct {
	c      *archive.Collection
	opts   Options
	p      archive.Printer
	now    func() time.Time
	user   string
	runner *plugins.Runner
	items  []input.Item
	st     Stats

	mu      sync.Mutex
	lastTS  time.Time       // snapshot creation times are strictly increasing
	seen    map[string]bool // URLs of this run (depth 1 does not add them twice)
	crawlID string
	crawl   string // crawl folder, relative
	touched *archive.TouchLog
	// registry holds every plugin of the run; retries are the existing
	// snapshots to run plugins on again, with their plans (set before
	// the workers start, read-only after).
	registry *plugins.Registry
	retries  map[*snapshot]*retry
}

func newRun(c *archive.Collection, opts Options) (*run, error) {
	if opts.Printer == nil {
		opts.Printer = archive.Discard
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.IDs == nil {
		opts.IDs = archive.RandomIDs
	}
	if opts.Parallel < 1 {
		opts.Parallel = 1
	}
	if opts.PerDomain < 1 || opts.PerDomain > opts.Parallel {
		opts.PerDomain = opts.Parallel
	}
	if opts.Depth < 0 || opts.Depth > 1 {
		return nil, fmt.Errorf("depth %d: want 0 or 1", opts.Depth)
	}
	if err := opts.Config.Validate(); err != nil {
		return nil, err
	}
	user := opts.Config.Get("SNAPSHOT_USER")
	if user == "" {
		user = "system"
	}
	r := &run{c: c, opts: opts, p: opts.Printer, now: opts.Now, user: user, seen: map[string]bool{},
		st: Stats{Results: map[string]map[string]int{}}, retries: map[*snapshot]*retry{}}
	registry := plugins.Builtins()
	hooks, err := plugins.DiscoverHooks(c.Path("custom_plugins"))
	if err != nil {
		return nil, err
	}
	for _, h := range hooks {
		registry.Register(h)
	}
	r.registry = registry
	selected, err := registry.Select(opts.Plugins, opts.Config)
	if err != nil {
		return nil, err
	}
	r.runner = &plugins.Runner{Plugins: selected, Config: opts.Config, HTTP: plugins.NewHTTPClient(opts.Config),
		IDs: opts.IDs, Now: opts.Now}
	return r, nil
}

func (r *run) run(ctx context.Context) (*Stats, error) {
	if err := r.parse(); err != nil {
		return nil, err
	}
	if len(r.items) == 0 && !r.opts.Resume {
		return nil, ErrNoURLs
	}
	var resumed, updated []*snapshot
	if r.opts.SkipExisting || r.opts.Resume || r.opts.Update {
		cat, err := r.catalog(ctx)
		if err != nil {
			return nil, err
		}
		if r.opts.SkipExisting {
			err = r.dropExisting(ctx, cat)
		}
		if err == nil && r.opts.Update {
			updated, err = r.existing(ctx, cat)
		}
		if err == nil && r.opts.Resume {
			resumed, err = r.unfinished(ctx, cat)
		}
		if cerr := cat.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, err
		}
		if len(r.items) == 0 && len(resumed) == 0 && len(updated) == 0 {
			r.p.Infof("Nothing to add: every URL is in the collection already and no snapshot waits to be captured.")
			return &r.st, nil
		}
	}
	capturing := !r.opts.IndexOnly && (len(r.items) > 0 || len(resumed) > 0)
	needs := capturing && (plugins.NeedsBrowser(r.runner.Plugins) || r.opts.Depth > 0) || r.retryNeedsBrowser()
	closeBrowser, err := r.startBrowser(needs)
	if err != nil {
		return nil, err
	}
	defer closeBrowser()

	var fresh []*snapshot
	if len(r.items) > 0 {
		if err := r.keepSources(); err != nil {
			return nil, err
		}
		r.crawlID = r.opts.IDs()
		crawl := r.crawlRecord()
		var err error
		if fresh, err = r.create(r.items, 0, r.crawlID, &crawl); err != nil {
			return &r.st, err
		}
	}
	r.st.Resumed = len(resumed)
	var runErr error
	if r.opts.IndexOnly {
		r.st.Queued = len(fresh) + len(resumed)
		for _, s := range append(resumed, fresh...) {
			r.st.Pending = append(r.st.Pending, Pending{ID: s.rec.ID, Dir: s.dir})
		}
	} else {
		runErr = r.captureAll(ctx, append(append(resumed, fresh...), updated...))
	}
	if err := r.reindex(); err != nil && runErr == nil {
		runErr = err
	}
	if runErr == nil && r.st.Failed+r.st.Partial > 0 {
		runErr = fmt.Errorf("%s: %w", r.st.failures(), archive.ErrPartial)
	}
	if runErr == nil && r.st.Refused > 0 {
		runErr = fmt.Errorf("%d URLs could not be given a folder: %w", r.st.Refused, archive.ErrPartial)
	}
	return &r.st, runErr
}

// startBrowser gives the runner the browser: Options.Browser, or a new
// Chromium when needed; the returned func closes what it started.
func (r *run) startBrowser(needed bool) (func(), error) {
	r.runner.Browser = r.opts.Browser
	if !needed || r.opts.Browser != nil {
		return func() {}, nil
	}
	r.announceBrowser()
	b, err := plugins.StartBrowser(r.opts.Config)
	if err != nil {
		return nil, fmt.Errorf("%w (or pick plugins that need no browser with --plugins)", err)
	}
	r.runner.Browser = b
	return func() { b.Close() }, nil
}

// parse reads every source into r.items, reporting what it skips.
func (r *run) parse() error {
	for _, src := range r.opts.Sources {
		format := src.Format
		if format == "" {
			format = r.opts.Parser
		}
		if format == "" {
			format = input.Auto
		}
		items, invalid, _, err := input.Parse(src.Data, format)
		if err != nil {
			return fmt.Errorf("%s: %w", src.Name, err)
		}
		for _, bad := range invalid {
			r.p.Warnf("%s line %d: %s: %s", src.Name, bad.Line, bad.Reason, bad.Text)
		}
		r.st.Invalid += len(invalid)
		for _, it := range items {
			if r.seen[it.URL] {
				continue
			}
			r.seen[it.URL] = true
			it.Tags = archive.NormalizeTags(append(it.Tags, r.opts.Tags...))
			r.items = append(r.items, it)
		}
	}
	return nil
}

// catalog opens the catalog brought up to date with the tree.
func (r *run) catalog(ctx context.Context) (*catalog.Catalog, error) {
	cat, err := catalog.Open(ctx, r.c)
	if err != nil {
		return nil, err
	}
	if _, err := cat.Reindex(ctx, catalog.ReindexOptions{Printer: r.p}); err != nil {
		cat.Close()
		return nil, err
	}
	return cat, nil
}

// dropExisting removes the items whose URL the collection has.
func (r *run) dropExisting(ctx context.Context, cat *catalog.Catalog) error {
	urls := make([]string, len(r.items))
	for i, it := range r.items {
		urls[i] = it.URL
	}
	have := map[string]bool{}
	const chunk = 500 // SQLite's bound parameters per query
	for i := 0; i < len(urls); i += chunk {
		q := catalog.Query{Patterns: urls[i:min(i+chunk, len(urls))], FilterType: catalog.FilterExact, RecordOnly: true}
		if err := cat.Each(ctx, q, func(e catalog.Entry) error {
			have[e.Snapshot.URL] = true
			return nil
		}); err != nil {
			return err
		}
	}
	kept := r.items[:0]
	for _, it := range r.items {
		if have[it.URL] {
			r.p.Infof("skipped %s: in the collection already (--skip-existing)", it.URL)
			r.st.Existing++
			continue
		}
		kept = append(kept, it)
	}
	r.items = kept
	return nil
}

// unfinished finds the snapshots an earlier run left queued or started.
// Snapshots of the legacy database are not among them: they were migrated,
// not added, and capturing them again would overwrite old snapshots with
// today's pages (or with errors for the URLs that are gone).
func (r *run) unfinished(ctx context.Context, cat *catalog.Catalog) ([]*snapshot, error) {
	legacy, err := migrate.LegacyRows(ctx, r.c)
	if err != nil {
		return nil, err
	}
	var out []*snapshot
	migrated := 0
	for _, status := range []string{"started", "queued"} {
		q := catalog.Query{Status: status, Sort: "timestamp"}
		if err := cat.Each(ctx, q, func(e catalog.Entry) error {
			if e.Layout != catalog.LayoutCurrent || e.IndexFile != archive.IndexFile {
				return nil // legacy folders are migrated, not captured
			}
			if legacy[e.Snapshot.ID] {
				migrated++
				return nil
			}
			s, err := openSnapshot(r.c, e.Dir)
			if err != nil {
				r.p.Warnf("%s: %v", e.Dir, err)
				return nil
			}
			r.seen[s.rec.URL] = true
			out = append(out, s)
			return nil
		}); err != nil {
			return nil, err
		}
	}
	if migrated > 0 {
		r.p.Warnf("%d snapshots of %s are marked %s: migrated, not added, so --resume does not capture them ('folio update --migrate-only' seals them)",
			migrated, archive.LegacyDB, "queued or started")
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].rec.Timestamp < out[j].rec.Timestamp })
	return out, nil
}

// keepSources writes the raw input to sources/<YYYY-MM-DD__HH-MM-SS>__cli_add.txt,
// as ArchiveBox does, before any snapshot exists.
func (r *run) keepSources() error {
	var b strings.Builder
	for _, src := range r.opts.Sources {
		b.Write(src.Data)
		if len(src.Data) > 0 && src.Data[len(src.Data)-1] != '\n' {
			b.WriteByte('\n')
		}
	}
	dir := r.c.Path("sources")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	stamp := r.now().UTC().Format("2006-01-02__15-04-05")
	name := stamp + "__cli_add.txt"
	for n := 2; ; n++ {
		if _, err := os.Lstat(filepath.Join(dir, name)); errors.Is(err, os.ErrNotExist) {
			break
		}
		name = fmt.Sprintf("%s__cli_add.%d.txt", stamp, n)
	}
	if err := archive.WriteFile(filepath.Join(dir, name), []byte(b.String()), 0o644); err != nil {
		return err
	}
	r.st.SourceFile = "sources/" + name
	return nil
}

// crawlRecord is the Crawl record of this run, which every snapshot it
// creates carries (formats spec §2.4, §3.8; the CLI's add creates one
// crawl per run, §6): the URLs given (the whole input is in the sources
// file), the tags, the depth and the parser as the crawl's config.
func (r *run) crawlRecord() archive.Crawl {
	urls := make([]string, len(r.items))
	for i, it := range r.items {
		urls[i] = it.URL
	}
	c := archive.Crawl{
		ID: r.crawlID, URLs: archive.BoundURLs(strings.Join(urls, "\n"), r.st.SourceFile),
		Status: "queued", MaxDepth: r.opts.Depth, Tags: r.opts.Tags, Label: r.opts.CrawlLabel,
		CreatedAt: r.now().UTC().Truncate(time.Microsecond), CreatedBy: r.user, SchemaVersion: archive.SchemaVersion,
	}
	if r.opts.Parser != "" {
		c.Config = map[string]string{"PARSER": r.opts.Parser}
	}
	return c
}

// count records one result in the stats.
func (r *run) count(res archive.Result) {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.st.Results[res.Plugin]
	if m == nil {
		m = map[string]int{}
		r.st.Results[res.Plugin] = m
	}
	m[res.Status]++
}

// reindex brings the catalog in line with the new folders, without
// being stopped by an interrupt: the folders exist either way.
func (r *run) reindex() error {
	ctx := context.WithoutCancel(context.Background())
	cat, err := catalog.Open(ctx, r.c)
	if err != nil {
		return err
	}
	_, err = cat.Reindex(ctx, catalog.ReindexOptions{Printer: r.p})
	if cerr := cat.Close(); err == nil {
		err = cerr
	}
	return err
}
