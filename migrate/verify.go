package migrate

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/folio-archive/folio/layout"
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
	return tree, verifyCopy(src, dst, tree, replaced)
}

// verifyCopy checks dst against the source tree a copy was made from,
// comparing every byte of every file as it is now. The source is not
// walked again: an entry that appeared, went or changed since the walk
// fails the recheck that comes before any deletion.
func verifyCopy(src, dst string, tree []treeEntry, replaced func(dst, rel string) bool) error {
	for i := range tree {
		e := &tree[i]
		d := under(dst, e.rel)
		if e.isRegular() {
			r, size, err := compareFiles(under(src, e.rel), d)
			if err != nil {
				return err
			}
			if side, ok := sideIndex(src, e.rel); ok && r != fileSame {
				// A merged folder's differing index file is kept beside.
				if sr, _, err := compareFiles(under(src, e.rel), under(dst, side)); err == nil && sr == fileSame {
					continue
				}
			}
			switch {
			case r == fileSame:
			case r == fileMissing:
				return fmt.Errorf("%w: %s is missing", ErrMismatch, d)
			case r == fileNotRegular:
				return fmt.Errorf("%w: %s is not a regular file", ErrMismatch, d)
			case e.rel == indexName:
				// The index step merges the source's lines into the
				// destination's own index and checks them there.
			case r == fileSizeDiffers:
				return fmt.Errorf("%w: %s has %d bytes, the source %d", ErrMismatch, d, size, e.size)
			default:
				return fmt.Errorf("%w: %s differs from %s", ErrMismatch, d, under(src, e.rel))
			}
			continue
		}
		var st unix.Stat_t
		err := unix.Lstat(d, &st)
		if err == unix.ENOENT {
			if replaced != nil && e.isLink() && replaced(dst, e.rel) {
				continue
			}
			return fmt.Errorf("%w: %s is missing", ErrMismatch, d)
		}
		if err != nil {
			return &fs.PathError{Op: "lstat", Path: d, Err: err}
		}
		switch kind := st.Mode & unix.S_IFMT; {
		case e.isDir():
			if kind != unix.S_IFDIR {
				return fmt.Errorf("%w: %s is not a directory", ErrMismatch, d)
			}
		default: // a symlink
			if kind != unix.S_IFLNK {
				return fmt.Errorf("%w: %s is not a symlink", ErrMismatch, d)
			}
			t, err := os.Readlink(d)
			if err != nil {
				return err
			}
			if t != e.target {
				return fmt.Errorf("%w: %s links to %q, not %q", ErrMismatch, d, t, e.target)
			}
		}
	}
	return nil
}

// replacedCrawlLink excuses, in a crawl folder, a missing symlink
// snapshots/<domain>/<dashed id> when the link named by the compact id is
// there: the crawl link of a renamed 0.9 snapshot replaced it.
func replacedCrawlLink(dst, rel string) bool {
	dir, name := path.Split(rel)
	compact, ok := layout.Undash(name)
	if !ok || !strings.HasPrefix(dir, "snapshots/") {
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
		d := under(dst, a.rel)
		var st unix.Stat_t
		err := unix.Lstat(d, &st)
		if err == unix.ENOENT && replaced != nil && a.isLink() && replaced(dst, a.rel) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrMismatch, &fs.PathError{Op: "lstat", Path: d, Err: err})
		}
		if side, ok := sideIndex(src, a.rel); ok && st.Size != a.size {
			// Verified beside it (verifyCopy); check that one instead.
			d = under(dst, side)
			if err := unix.Lstat(d, &st); err != nil {
				return nil, fmt.Errorf("%w: %v", ErrMismatch, &fs.PathError{Op: "lstat", Path: d, Err: err})
			}
		}
		if fileMode(&st).Type() != a.mode.Type() || (a.isRegular() && a.rel != indexName && st.Size != a.size) {
			return nil, fmt.Errorf("%w: %s changed since it was verified", ErrMismatch, under(dst, a.rel))
		}
	}
	return now, nil
}
