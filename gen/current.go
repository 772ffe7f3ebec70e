package gen

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

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
