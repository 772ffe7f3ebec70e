package migrate

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"

	"github.com/folio-archive/folio/layout"
)

// crawlLink returns the crawl symlink of a snapshot at dest (both slash
// paths relative to the data dir): the link's path and its relative
// target, or "" when the snapshot has no known crawl.
func (x *executor) crawlLink(it *Item, dest string) (link, target string) {
	if it == nil || it.Crawl == nil || !layout.IsCompactID(it.Crawl.ID) {
		return "", ""
	}
	dir := x.crawlDir(it.Crawl)
	if dir == "" {
		return "", ""
	}
	parent := path.Join(dir, "snapshots", layout.Domain(it.Snapshot.URL))
	rel, err := filepath.Rel(x.c.Path(parent), x.c.Path(dest))
	if err != nil {
		return "", ""
	}
	return path.Join(parent, it.Snapshot.ID), filepath.ToSlash(rel)
}

// crawlDir returns the compact-id folder of a crawl ("" when it has no
// valid one), computed once per crawl: an automatic crawl's urls list
// every snapshot of the collection.
func (x *executor) crawlDir(cr *Crawl) string {
	x.mu.Lock()
	defer x.mu.Unlock()
	if d, ok := x.crawlDirs[cr]; ok {
		return d
	}
	var dir string
	if cr.Dir != "" {
		dir = path.Join(path.Dir(cr.Dir), cr.ID)
	} else if d, err := layout.CrawlDir(cr.User, cr.CreatedAt, cr.URLs, cr.ID); err == nil {
		dir = d
	}
	if x.crawlDirs == nil {
		x.crawlDirs = map[*Crawl]string{}
	}
	x.crawlDirs[cr] = dir
	return dir
}

func (x *executor) linkPresent(link, target string) bool {
	t, err := os.Readlink(x.c.Path(link))
	return err == nil && t == target
}

// makeLink creates (or corrects) a crawl symlink. A real file or folder
// at the link's place is left alone; a stale link under the snapshot's
// dashed id is removed.
func (x *executor) makeLink(link, target string) error {
	if link == "" {
		return nil
	}
	if err := layout.RealFolders(x.c.Dir, path.Dir(link)); err != nil {
		return err
	}
	p := x.c.Path(link)
	if dashed := layout.Dashed(path.Base(link)); dashed != "" {
		old := filepath.Join(filepath.Dir(p), dashed)
		if fi, err := os.Lstat(old); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			if err := os.Remove(old); err != nil {
				return fmt.Errorf("remove stale crawl link %s: %w", old, err)
			}
		}
	}
	fi, err := os.Lstat(p)
	switch {
	case err == nil && fi.Mode()&fs.ModeSymlink == 0:
		return nil
	case err == nil:
		if t, _ := os.Readlink(p); t == target {
			return nil
		}
		if err := os.Remove(p); err != nil {
			return fmt.Errorf("replace crawl link %s: %w", p, err)
		}
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	if err := x.dirs.mkdirAll(filepath.Dir(p)); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(p), err)
	}
	if err := os.Symlink(target, p); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("create crawl link %s: %w", p, err)
	}
	return nil
}

// tidyCrawlLinks removes, in a crawl folder, the symlinks named by a
// snapshot's dashed id that a link named by its compact id has replaced
// (a merge of a dashed crawl folder into an existing compact one brings
// them along).
func tidyCrawlLinks(crawl string) error {
	domains, err := readNames(filepath.Join(crawl, "snapshots"))
	if err != nil {
		return err
	}
	for _, d := range domains {
		dir := filepath.Join(crawl, "snapshots", d)
		names, err := readNames(dir)
		if err != nil {
			continue
		}
		for _, n := range names {
			compact, ok := layout.Undash(n)
			if !ok {
				continue
			}
			old := filepath.Join(dir, n)
			fi, err := os.Lstat(old)
			if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
				continue
			}
			if nfi, err := os.Lstat(filepath.Join(dir, compact)); err == nil && nfi.Mode()&fs.ModeSymlink != 0 {
				if err := os.Remove(old); err != nil {
					return fmt.Errorf("remove stale crawl link %s: %w", old, err)
				}
			}
		}
	}
	return nil
}
