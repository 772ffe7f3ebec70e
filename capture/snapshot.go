package capture

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sync"
	"time"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/capture/input"
	"github.com/folio-archive/folio/layout"
)

// snapshot is one snapshot folder being captured: its index.jsonl held in
// memory and written again, atomically, after every change.
type snapshot struct {
	c   *archive.Collection
	dir string // relative to the data directory
	mu  sync.Mutex
	ix  *archive.Index
	rec archive.Snapshot
	// crawl is the snapshot's Crawl record (this file's own copy), nil
	// when its index.jsonl has none (made by a folio before 0.9.4's).
	crawl *archive.Crawl
	// prior maps plugin+hook to the id of a result an earlier run
	// recorded, so that capturing again replaces it.
	prior map[string]string
}

// abs is the snapshot folder's absolute path.
func (s *snapshot) abs() string { return s.c.Path(s.dir) }

// setStatus writes the snapshot record with a new status.
func (s *snapshot) setStatus(status string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rec.Status = status
	s.setRecords()
	return archive.WriteIndex(s.abs(), s.ix)
}

// setRecords puts the Snapshot record, and the Crawl record with the
// snapshot's status (the state of the crawl as far as this snapshot
// knows it), into the index.
func (s *snapshot) setRecords() {
	s.ix.SetSnapshot(s.rec)
	if s.crawl != nil {
		s.crawl.Status = s.rec.Status
		s.ix.SetCrawl(*s.crawl)
	}
}

// addResult records one plugin's result (replacing an earlier run's result
// of the same plugin and hook) and writes the index.
func (s *snapshot) addResult(res archive.Result) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if id, ok := s.prior[res.Plugin+"\x00"+res.HookName]; ok {
		res.ID = id
	}
	s.ix.AddResult(res)
	return archive.WriteIndex(s.abs(), s.ix)
}

// seal marks the snapshot captured, with its size: the bytes of every
// result's output files.
func (s *snapshot) seal() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var size int64
	for _, res := range s.ix.Results() {
		size += res.OutputSize
	}
	s.rec.Status, s.rec.ArchiveSize = "sealed", size
	s.setRecords()
	return archive.WriteIndex(s.abs(), s.ix)
}

// openSnapshot reads an existing snapshot folder (for --resume).
func openSnapshot(c *archive.Collection, dir string) (*snapshot, error) {
	ix, bad, err := archive.ReadIndex(c.Path(dir))
	if err != nil {
		return nil, err
	}
	if len(bad) > 0 {
		return nil, fmt.Errorf("%s: %v (fix or remove the line, then resume)", archive.IndexFile, bad[0])
	}
	rec, ok := ix.Snapshot()
	if !ok {
		return nil, fmt.Errorf("%s has no Snapshot record", archive.IndexFile)
	}
	s := &snapshot{c: c, dir: dir, ix: ix, rec: rec, prior: map[string]string{}}
	if cr, ok := ix.Crawl(); ok {
		s.crawl = &cr
	}
	for _, res := range ix.Results() {
		s.prior[res.Plugin+"\x00"+res.HookName] = res.ID
	}
	return s, nil
}

// create makes a snapshot folder, status queued, for each item, and the
// crawl's links to them. A folder appears whole or not at all: it is
// made under a temporary name with its index.jsonl and then renamed. An
// item whose folder would lie below a symlinked folder of archive/users/
// is refused with one line and counted; the others are created.
func (r *run) create(items []input.Item, depth int, crawlID string, crawl *archive.Crawl) ([]*snapshot, error) {
	out := make([]*snapshot, 0, len(items))
	for _, it := range items {
		s, err := r.newSnapshot(it, depth, crawlID, crawl)
		if errors.Is(err, layout.ErrLinkedFolder) {
			r.p.Warnf("%v", err)
			r.mu.Lock()
			r.st.Refused++
			r.mu.Unlock()
			continue
		}
		if err != nil {
			return out, err
		}
		out = append(out, s)
		r.mu.Lock()
		r.st.Created++
		r.mu.Unlock()
	}
	return out, nil
}

func (r *run) newSnapshot(it input.Item, depth int, crawlID string, crawl *archive.Crawl) (*snapshot, error) {
	created := r.createdAt()
	rec := archive.Snapshot{
		ID: r.opts.IDs(), CrawlID: crawlID, URL: it.URL, Timestamp: layout.Timestamp(created),
		Title: it.Title, Tags: it.Tags, BookmarkedAt: it.BookmarkedAt, CreatedAt: created,
		Depth: depth, Status: "queued", FSVersion: layout.Current, SchemaVersion: archive.SchemaVersion,
	}
	if rec.BookmarkedAt.IsZero() {
		rec.BookmarkedAt = created
	}
	dir, err := layout.SnapshotDir(r.user, rec.BookmarkedAt, rec.URL, rec.ID)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", it.URL, err)
	}
	if err := layout.RealFolders(r.c.Dir, dir); err != nil {
		return nil, fmt.Errorf("%s: %w", it.URL, err)
	}
	ix, _ := archive.ParseIndex(nil)
	s := &snapshot{c: r.c, dir: dir, ix: ix, rec: rec, prior: map[string]string{}}
	if crawl != nil {
		own := *crawl
		s.crawl = &own
	}
	s.setRecords()
	if err := r.note(dir); err != nil {
		return nil, err
	}
	final := r.c.Path(dir)
	if err := os.MkdirAll(filepath.Dir(final), 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", filepath.Dir(final), err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(final), path.Base(dir)+archive.TempMarker)
	if err != nil {
		return nil, fmt.Errorf("create the folder of %s: %w", it.URL, err)
	}
	if err := os.Chmod(tmp, 0o755); err == nil {
		err = archive.WriteIndex(tmp, ix)
	}
	if err == nil {
		err = os.Rename(tmp, final)
	}
	if err == nil {
		err = archive.SyncDir(filepath.Dir(final))
	}
	if err != nil {
		os.RemoveAll(tmp)
		return nil, fmt.Errorf("create %s: %w", dir, err)
	}
	if crawlID != "" && crawlID == r.crawlID {
		if err := r.linkToCrawl(dir, rec); err != nil {
			r.p.Warnf("%s: %v", dir, err)
		}
	}
	return s, nil
}

// createdAt returns now, or a microsecond after the last snapshot's time
// when the clock has not moved: timestamps identify snapshots too.
func (r *run) createdAt() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	t := r.now().UTC().Truncate(time.Microsecond)
	if !t.After(r.lastTS) {
		t = r.lastTS.Add(time.Microsecond)
	}
	r.lastTS = t
	return t
}

// linkToCrawl adds the snapshot to the run's crawl folder as ArchiveBox
// does: crawls/<date>/<domain>/<crawl id>/snapshots/<domain>/<id>, a
// relative symlink to the snapshot folder.
func (r *run) linkToCrawl(dir string, rec archive.Snapshot) error {
	r.mu.Lock()
	if r.crawl == "" {
		var urls string
		if len(r.items) > 0 {
			urls = r.items[0].URL
		}
		crawl, err := layout.CrawlDir(r.user, rec.CreatedAt, urls, r.crawlID)
		if err != nil {
			r.mu.Unlock()
			return err
		}
		r.crawl, r.st.CrawlDir = crawl, crawl
	}
	crawl := r.crawl
	r.mu.Unlock()
	if err := layout.RealFolders(r.c.Dir, path.Join(crawl, "snapshots", layout.Domain(rec.URL))); err != nil {
		return err
	}
	parent := r.c.Path(path.Join(crawl, "snapshots", layout.Domain(rec.URL)))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("create the crawl folder: %w", err)
	}
	target, err := filepath.Rel(parent, r.c.Path(dir))
	if err != nil {
		return err
	}
	link := filepath.Join(parent, rec.ID)
	if err := os.Symlink(target, link); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("link the snapshot into its crawl: %w", err)
	}
	return nil
}
