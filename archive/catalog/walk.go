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
	pre    string // stamp of index.jsonl taken while listing, "" if none
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
	force   bool // read every folder, changed or not
	// known is what the catalog holds; it may be loaded while the tree is
	// listed, and is read only once ready is closed (nil: known is set).
	known map[string]*known
	ready chan struct{}

	scanned    atomic.Int64
	unchanged  atomic.Int64
	unreadable atomic.Int64 // unchanged folders that could not be cataloged before

	mu       sync.Mutex
	blind    []string // folders that could not be listed: rows below them are kept
	problems []Problem
}

// walk sends every snapshot folder that is new or whose index changed to
// out. Folders that are unchanged are only counted. The tree is listed
// first, then the folders are compared with what the catalog knows.
func (w *walker) walk(ctx context.Context, out chan<- folder) error {
	found, err := w.list(ctx)
	if err != nil {
		return err
	}
	if w.ready != nil {
		select {
		case <-w.ready:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(w.workers)
	emit := func(f folder) error {
		w.scanned.Add(1)
		if k := w.known[f.dir]; k != nil {
			k.seen = true
			f.known = k
			cur := f.pre
			if cur == "" || len(stampFiles(f.layout, k.indexFile)) > 1 {
				cur = statStamp(filepath.Join(w.root, filepath.FromSlash(f.dir)), f.layout, k.indexFile)
			}
			if !w.force && cur == k.stamp {
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
	for len(found) > 0 {
		chunk := found[:min(len(found), 512)]
		found = found[len(chunk):]
		g.Go(func() error {
			for _, f := range chunk {
				if err := emit(f); err != nil {
					return err
				}
			}
			return ctx.Err()
		})
	}
	return g.Wait()
}

// list finds the snapshot folders of the tree, listing folders in
// parallel.
func (w *walker) list(ctx context.Context) ([]folder, error) {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(w.workers)
	var found []folder
	add := func(fs []folder) {
		w.mu.Lock()
		found = append(found, fs...)
		w.mu.Unlock()
	}

	// Legacy folders: real directories directly under archive/ named like
	// a timestamp. Symlinks there are projections of other folders.
	buf := make([]byte, 32<<10)
	entries, _ := w.readDir(ctx, archive.ArchiveDir, buf)
	var legacy []folder
	for _, e := range entries {
		if _, ok := layout.LegacyTimestamp(e.name); ok && !archive.IsTemp(e.name) && e.isDir(w.abs(archive.ArchiveDir)) {
			legacy = append(legacy, folder{dir: archive.ArchiveDir + "/" + e.name, layout: LayoutLegacy, name: e.name})
		}
	}
	add(legacy)

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
				return nil, err
			}
			g.Go(func() error {
				buf := make([]byte, 32<<10)
				var mine []folder
				domains, _ := w.readDir(ctx, dateDir, buf)
				for _, dom := range w.dirs(dateDir, domains) {
					domDir := dateDir + "/" + dom
					fd, ids, ok := w.openDir(ctx, domDir, buf)
					if !ok {
						continue
					}
					for _, id := range w.dirs(domDir, ids) {
						mine = append(mine, folder{dir: domDir + "/" + id, layout: LayoutCurrent, user: u, name: id,
							pre: stampAt(fd, id+"/"+archive.IndexFile)})
					}
					unix.Close(fd)
				}
				add(mine)
				return ctx.Err()
			})
		}
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return found, nil
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

// openDir is readDir that also returns the open folder, for stats
// relative to it; the caller closes it.
func (w *walker) openDir(ctx context.Context, rel string, buf []byte) (int, []dirent, bool) {
	if ctx.Err() != nil {
		return -1, nil, false
	}
	fd, err := openDir(w.abs(rel))
	var entries []dirent
	if err == nil {
		if entries, err = listDirFd(fd, buf); err != nil {
			unix.Close(fd)
		}
	}
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			w.mu.Lock()
			w.blind = append(w.blind, rel)
			w.problems = append(w.problems, Problem{Path: rel, Err: err})
			w.mu.Unlock()
		}
		return -1, nil, false
	}
	return fd, entries, true
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
	return appendStat(b, st, unix.Lstat(p, st))
}

// appendStat encodes the result of an lstat: "-" when it failed, "x" and
// the mode for anything but a regular file, else size:mtime_ns:inode.
func appendStat(b []byte, st *unix.Stat_t, err error) []byte {
	if err != nil {
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
