package catalog

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime"

	"golang.org/x/sync/errgroup"

	"github.com/folio-archive/folio/archive"
)

// Drift is how far the catalog is from the tree, found by a stat-only walk
// (no index file is read).
type Drift struct {
	Scanned    int       // snapshot folders on disk
	Legacy     int       // of them legacy archive/<timestamp> folders, from one listing of archive/
	New        int       // folders on disk the catalog does not know
	Changed    int       // folders whose index file changed since it was cataloged
	Gone       int       // catalog rows whose folder is gone
	Unreadable int       // folders that could not be cataloged and are unchanged since
	Staging    int       // staging folders of copies a crash interrupted (folio update settles them)
	Problems   []Problem // folders that could not be listed, and the stored problems of unreadable folders
	// Retry lists the folders that could not be cataloged and whose index
	// changed since (a reindex reads them again), of Changed.
	Retry []string
}

// Stale reports whether the tree changed since the catalog was updated.
func (d Drift) Stale() bool { return d.New+d.Changed+d.Gone > 0 }

// Drift compares the catalog with the tree without reading any index file
// and without writing anything.
func (c *Catalog) Drift(ctx context.Context, workers int) (Drift, error) {
	var d Drift
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	// Drift only reads: it trusts the catalog's listings, keeps no new one.
	hidden, err := c.coll.HiddenDirs()
	if err != nil {
		return d, err
	}
	w := &walker{root: c.coll.Dir, workers: workers, skip: hidden}
	done, err := c.openWalk(ctx, w)
	if err != nil {
		return d, err
	}
	defer done()
	folders := make(chan folder, 512)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		defer close(folders)
		return w.walk(gctx, folders)
	})
	g.Go(func() error {
		for f := range folders {
			switch {
			case f.known == nil:
				d.New++
			case f.known.rowid == 0:
				d.Retry = append(d.Retry, f.dir)
				fallthrough
			default:
				d.Changed++
			}
		}
		return nil
	})
	if err := g.Wait(); err != nil {
		return d, fmt.Errorf("scan %s: %w", c.coll.Dir, err)
	}
	for _, r := range w.gone {
		if r.rowid != 0 && !w.hidden(r.dir) {
			d.Gone++
		}
	}
	d.Scanned = int(w.scanned.Load())
	d.Legacy = int(w.legacy.Load())
	d.Unreadable = int(w.unreadable.Load())
	d.Staging = int(w.staging.Load())
	d.Problems = w.problems
	return d, nil
}

// CountInvalid counts the folders ArchiveBox and folio set aside as
// unidentifiable: the entries of invalid/<YYYYMMDD>/.
func CountInvalid(c *archive.Collection) (int, error) {
	days, err := os.ReadDir(c.Path(archive.InvalidDir))
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("list %s: %w", c.Path(archive.InvalidDir), err)
	}
	n := 0
	for _, d := range days {
		if !realDir(d) {
			n++ // a stray file or link directly under invalid/ counts as one entry
			continue
		}
		p := c.Path(archive.InvalidDir + "/" + d.Name())
		entries, err := os.ReadDir(p)
		if err != nil {
			return n, fmt.Errorf("list %s: %w", p, err)
		}
		for _, e := range entries {
			if !archive.IsTemp(e.Name()) {
				n++
			}
		}
	}
	return n, nil
}
