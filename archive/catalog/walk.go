package catalog

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/errgroup"
	"golang.org/x/sys/unix"

	"folio/archive"
	"folio/layout"
)

// folder is one snapshot folder found by the walk.
type folder struct {
	dir    string // slash path relative to the data dir
	layout string
	user   string
	name   string // last path component: the id or the legacy timestamp
	known  *known // the catalog's row for dir, nil when new
}

// known is what the catalog remembers of a folder to decide, from a stat
// alone, whether it must be read again.
type known struct {
	rowid     int64 // 0 for a folder that could not be cataloged
	stamp     string
	indexFile string
	problems  []Problem // why the folder could not be cataloged
	seen      bool      // set by the one walker that visits the folder
}

// walker finds snapshot folders with as few system calls as possible:
// one ReadDir per folder above the snapshot level and, for folders the
// catalog knows, one lstat of the index file.
type walker struct {
	root    string // absolute data dir
	workers int
	known   map[string]*known
	force   bool // read every folder, changed or not

	scanned    atomic.Int64
	unchanged  atomic.Int64
	unreadable atomic.Int64 // unchanged folders that could not be cataloged before

	mu       sync.Mutex
	blind    []string // folders that could not be listed: rows below them are kept
	problems []Problem
}

// walk sends every snapshot folder that is new or whose index changed to
// out. Folders that are unchanged are only counted.
func (w *walker) walk(ctx context.Context, out chan<- folder) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(w.workers)
	emit := func(f folder) error {
		w.scanned.Add(1)
		if k := w.known[f.dir]; k != nil {
			k.seen = true
			f.known = k
			if !w.force && statStamp(filepath.Join(w.root, filepath.FromSlash(f.dir)), f.layout, k.indexFile) == k.stamp {
				if k.rowid == 0 {
					w.unreadable.Add(1)
					w.mu.Lock()
					w.problems = append(w.problems, k.problems...)
					w.mu.Unlock()
					return nil
				}
				w.unchanged.Add(1)
				return nil
			}
		}
		select {
		case out <- f:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}

	// Legacy folders: real directories directly under archive/ named like
	// a timestamp. Symlinks there are projections of other folders.
	buf := make([]byte, 32<<10)
	entries, _ := w.readDir(ctx, archive.ArchiveDir, buf)
	var legacy []string
	for _, e := range entries {
		if _, ok := layout.LegacyTimestamp(e.name); ok && !archive.IsTemp(e.name) && e.isDir(w.abs(archive.ArchiveDir)) {
			legacy = append(legacy, e.name)
		}
	}
	for len(legacy) > 0 {
		n := min(len(legacy), 256)
		chunk := legacy[:n]
		legacy = legacy[n:]
		g.Go(func() error {
			for _, name := range chunk {
				if err := ctx.Err(); err != nil {
					return err
				}
				if err := emit(folder{dir: archive.ArchiveDir + "/" + name, layout: LayoutLegacy, name: name}); err != nil {
					return err
				}
			}
			return nil
		})
	}

	// Current layout: archive/users/<user>/snapshots/<date>/<domain>/<id>.
	users, _ := w.readDir(ctx, archive.UsersDir, buf)
	for _, u := range w.dirs(archive.UsersDir, users) {
		snaps := archive.UsersDir + "/" + u + "/snapshots"
		if !w.isRealDir(snaps) {
			continue // absent, or a symlinked snapshots/ root: a projection
		}
		dates, _ := w.readDir(ctx, snaps, buf)
		for _, d := range w.dirs(snaps, dates) {
			dateDir := snaps + "/" + d
			if err := ctx.Err(); err != nil {
				return err
			}
			g.Go(func() error {
				buf := make([]byte, 32<<10)
				domains, _ := w.readDir(ctx, dateDir, buf)
				for _, dom := range w.dirs(dateDir, domains) {
					domDir := dateDir + "/" + dom
					ids, _ := w.readDir(ctx, domDir, buf)
					for _, id := range w.dirs(domDir, ids) {
						if err := emit(folder{dir: domDir + "/" + id, layout: LayoutCurrent, user: u, name: id}); err != nil {
							return err
						}
					}
				}
				return nil
			})
		}
	}
	return g.Wait()
}

// dirs returns the names of the real directories among entries of the
// folder rel, skipping symlinks and temp names.
func (w *walker) dirs(rel string, entries []dirent) []string {
	var out []string
	parent := w.abs(rel)
	for _, e := range entries {
		if !archive.IsTemp(e.name) && e.isDir(parent) {
			out = append(out, e.name)
		}
	}
	return out
}

func (w *walker) abs(rel string) string { return w.root + "/" + rel }

// readDir lists a folder relative to the data dir. A folder that does not
// exist is empty; one that cannot be listed is a Problem, and the catalog
// keeps its rows below it rather than dropping what it cannot see.
func (w *walker) readDir(ctx context.Context, rel string, buf []byte) ([]dirent, bool) {
	if ctx.Err() != nil {
		return nil, false
	}
	entries, err := listDir(w.abs(rel), buf)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, false
		}
		w.mu.Lock()
		w.blind = append(w.blind, rel)
		w.problems = append(w.problems, Problem{Path: rel, Err: err})
		w.mu.Unlock()
		return nil, false
	}
	return entries, true
}

func (w *walker) isRealDir(rel string) bool {
	st, err := os.Lstat(filepath.Join(w.root, filepath.FromSlash(rel)))
	return err == nil && st.IsDir()
}

// hidden reports whether the walk could not see below dir.
func (w *walker) hidden(dir string) bool {
	for _, b := range w.blind {
		if dir == b || strings.HasPrefix(dir, b+"/") {
			return true
		}
	}
	return false
}

// realDir reports whether a directory entry is a directory and not a
// symlink (ReadDir reports the link itself, never its target).
func realDir(e os.DirEntry) bool {
	return e.Type()&fs.ModeSymlink == 0 && e.IsDir()
}

// stampFiles lists the index files whose stat decides whether a folder
// changed: index.jsonl, plus index.json for legacy folders and for folders
// whose record came from index.json.
func stampFiles(layoutName, indexFile string) []string {
	if layoutName == LayoutLegacy || indexFile != archive.IndexFile {
		return []string{archive.IndexFile, archive.LegacyIndexFile}
	}
	return []string{archive.IndexFile}
}

// statStamp encodes size, mtime and inode of the folder's index files.
func statStamp(absDir, layoutName, indexFile string) string {
	var b []byte
	for i, name := range stampFiles(layoutName, indexFile) {
		if i > 0 {
			b = append(b, '|')
		}
		var st unix.Stat_t
		b = appendStamp(b, absDir+string(filepath.Separator)+name, &st)
	}
	return string(b)
}

func appendStamp(b []byte, p string, st *unix.Stat_t) []byte {
	if err := unix.Lstat(p, st); err != nil {
		return append(b, '-')
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		b = append(b, 'x')
		return strconv.AppendUint(b, uint64(st.Mode), 8)
	}
	return appendRegularStamp(b, st)
}

func appendRegularStamp(b []byte, st *unix.Stat_t) []byte {
	b = strconv.AppendInt(b, st.Size, 10)
	b = append(b, ':')
	b = strconv.AppendInt(b, st.Mtim.Nano(), 10)
	b = append(b, ':')
	return strconv.AppendUint(b, st.Ino, 10)
}

// relJoin joins a slash path relative to the data dir with a file name.
func relJoin(dir, name string) string { return path.Join(dir, name) }
