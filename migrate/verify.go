package migrate

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"

	"folio/layout"
)

// verifyTree checks that everything under src is also under dst: every
// directory (empty ones too) a real directory, every symlink a symlink with
// the same link text, every regular file a regular file with the same size
// and the same bytes. Entries only dst has are fine. The root index.jsonl
// is not compared when the destination has its own: the index step merges
// the source's lines into it and checks them there. It walks src afresh,
// so it verifies what is on disk now, not what a copy meant to write, and
// returns the source tree it checked.
func verifyTree(src, dst string) ([]treeEntry, error) {
	return verifyTreeWith(src, dst, nil)
}

// verifyTreeWith is verifyTree where replaced(rel) may excuse an entry
// missing at the destination (a projection another entry replaced).
func verifyTreeWith(src, dst string, replaced func(dst, rel string) bool) ([]treeEntry, error) {
	tree, err := walkTree(src)
	if err != nil {
		return nil, err
	}
	for i := range tree {
		e := &tree[i]
		d := under(dst, e.rel)
		fi, err := os.Lstat(d)
		if errors.Is(err, fs.ErrNotExist) {
			if replaced != nil && e.isLink() && replaced(dst, e.rel) {
				continue
			}
			return nil, fmt.Errorf("%w: %s is missing", ErrMismatch, d)
		}
		if err != nil {
			return nil, err
		}
		switch {
		case e.isDir():
			if !fi.IsDir() {
				return nil, fmt.Errorf("%w: %s is not a directory", ErrMismatch, d)
			}
		case e.isLink():
			if fi.Mode()&fs.ModeSymlink == 0 {
				return nil, fmt.Errorf("%w: %s is not a symlink", ErrMismatch, d)
			}
			t, err := os.Readlink(d)
			if err != nil {
				return nil, err
			}
			if t != e.target {
				return nil, fmt.Errorf("%w: %s links to %q, not %q", ErrMismatch, d, t, e.target)
			}
		default:
			if !fi.Mode().IsRegular() {
				return nil, fmt.Errorf("%w: %s is not a regular file", ErrMismatch, d)
			}
			same, err := sameContent(under(src, e.rel), d, e.size, fi.Size())
			if err != nil {
				return nil, err
			}
			if !same && e.rel == indexName {
				continue
			}
			if !same {
				if e.size != fi.Size() {
					return nil, fmt.Errorf("%w: %s has %d bytes, the source %d", ErrMismatch, d, fi.Size(), e.size)
				}
				return nil, fmt.Errorf("%w: %s differs from %s", ErrMismatch, d, under(src, e.rel))
			}
		}
	}
	return tree, nil
}

// replacedCrawlLink excuses, in a crawl folder, a missing symlink
// snapshots/<domain>/<dashed id> when the link named by the compact id is
// there: the crawl link of a renamed 0.9 snapshot replaced it.
func replacedCrawlLink(dst, rel string) bool {
	dir, name := path.Split(rel)
	compact, ok := layout.ParseID(name)
	if !ok || !layout.IsDashedID(name) || !strings.HasPrefix(dir, "snapshots/") {
		return false
	}
	fi, err := os.Lstat(under(dst, dir+compact))
	return err == nil && fi.Mode()&fs.ModeSymlink != 0
}

// recheck is the verification just before a deletion, right after
// verifyTree compared every byte (with only an index write and a syncfs in
// between, under the collection lock): it walks src again and requires
// exactly the verified entries — same kinds, sizes, mtimes and link
// texts — and each still present at dst with the same kind and size. A
// file that changed or appeared since the content check fails it.
func recheck(src, dst string, verified []treeEntry, replaced func(dst, rel string) bool) ([]treeEntry, error) {
	now, err := walkTree(src)
	if err != nil {
		return nil, err
	}
	if len(now) != len(verified) {
		return nil, fmt.Errorf("%w: %s changed since it was verified (%d entries, then %d)", ErrMismatch, src, len(now), len(verified))
	}
	for i := range now {
		a, b := &now[i], &verified[i]
		if a.rel != b.rel || a.mode != b.mode || a.size != b.size || !a.mtime.Equal(b.mtime) || a.target != b.target {
			return nil, fmt.Errorf("%w: %s changed since it was verified", ErrMismatch, under(src, a.rel))
		}
		fi, err := os.Lstat(under(dst, a.rel))
		if errors.Is(err, fs.ErrNotExist) && replaced != nil && a.isLink() && replaced(dst, a.rel) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrMismatch, err)
		}
		if fi.Mode().Type() != a.mode.Type() || (a.isRegular() && a.rel != indexName && fi.Size() != a.size) {
			return nil, fmt.Errorf("%w: %s changed since it was verified", ErrMismatch, under(dst, a.rel))
		}
	}
	return now, nil
}
