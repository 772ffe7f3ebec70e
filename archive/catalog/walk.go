package catalog

import (
	"bytes"
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
	"time"

	"golang.org/x/sync/errgroup"
	"golang.org/x/sys/unix"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/layout"
)

// folder is one snapshot folder found by the walk.
type folder struct {
	dir    string // slash path relative to the data dir
	layout string
	user   string
	name   string // last path component: the id or the legacy timestamp
	known  *known // the catalog's row for dir, nil when new
	pre    string // stamp of index.jsonl taken while listing, "" if none

	// textStamp is the stamp of the folder's text files taken before
	// they are read; readText says they must be read (new or changed).
	textStamp string
	textFile  string // the text file textStamp found, "" if none
	readText  bool
}

// known is what the catalog remembers of a folder to decide, from a stat
// alone, whether it must be read again.
type known struct {
	rowid     int64 // 0 for a folder that could not be cataloged
	stamp     string
	indexFile string
	textStamp string
	problems  []Problem // why the folder could not be cataloged
	seen      bool      // set by the one walker that visits the folder
}

// walker finds snapshot folders with as few system calls as possible:
// one ReadDir per folder above the snapshot level and, for folders the
// catalog knows, one lstat of the index file.
type walker struct {
	root    string // absolute data dir
	workers int
	force   bool     // read every folder, changed or not
	text    bool     // stat (and read when changed) the text files search indexes
	scope   []string // with a scoped reindex, the folders to look in (cleanScope)
	// skip holds the folders 'folio remove' hid (archive.HiddenFile):
	// they are not reported, so their rows are dropped as gone.
	skip map[string]bool
	// known is what the catalog holds; it may be loaded while the tree is
	// listed, and is read only once ready is closed (nil: known is set).
	known map[string]*known
	ready chan struct{}

	scanned    atomic.Int64
	legacy     atomic.Int64 // legacy folders listed in archive/, hidden ones left out
	unchanged  atomic.Int64
	unreadable atomic.Int64 // unchanged folders that could not be cataloged before
	staging    atomic.Int64 // staging folders of interrupted copies beside snapshot folders

	// listings are the catalog's listings of date folders; those
	// listed again whose ctime is before trustBefore (ns) are kept in
	// listed, those whose listing still holds in trusted.
	listings    map[string]listing
	trustBefore int64

	mu       sync.Mutex
	blind    []string // folders that could not be listed: rows below them are kept
	problems []Problem
	listed   []listingRow
	trusted  []string
}

// listing is what the catalog remembers of a date folder of the current
// layout: its stamp (inode and ctime) when it was listed and, for each of
// its domain folders, the domain folder's stamp and the snapshot folders
// it held (see domainFolder). Any entry created, removed or renamed in the
// folder, and any change of its times or mode, sets its ctime to the
// current time, which no one can set back (unlike the mtime, which cp -a
// and rsync -a restore): while the stamp is the same, so is the listing.
// A listing is kept only for a folder whose ctime was already some
// seconds old when it was listed, so a change in the same clock tick as
// the listing cannot go unseen.
type listing struct {
	stamp   string
	domains string
}

type listingRow struct {
	dir string
	listing
}

// ListingAge is how old a folder's ctime must be for its listing to be
// kept: more than the coarsest timestamp granularity of the filesystems
// folio runs on. A change in the same tick as the listing would leave the
// ctime as it was.
const ListingAge = 2 * time.Second

// listingVersion leads every folder stamp (see folderStamp).
const listingVersion = "2:"

// folderStamp encodes a folder's inode and ctime. Its leading version
// changes when a listing comes to hold more than before (listings since
// version 2 keep staging folders' names), so listings of an older folio
// are read again once instead of being trusted.
func folderStamp(st *unix.Stat_t) string {
	b := append(make([]byte, 0, 40), listingVersion...)
	b = strconv.AppendUint(b, st.Ino, 10)
	b = append(b, ':')
	return string(strconv.AppendInt(b, st.Ctim.Nano(), 10))
}

// walk sends every snapshot folder that is new or whose index changed to
// out. Folders that are unchanged are only counted. Each date folder's
// snapshot folders are compared with what the catalog knows as soon as
// the folder is listed, so what the walk holds does not grow with the
// tree; only those listed before the catalog's rows are loaded (w.ready)
// wait for them, which keeps the listing and the load overlapped.
func (w *walker) walk(ctx context.Context, out chan<- folder) error {
	var (
		mu      sync.Mutex
		pending []folder // listed before ready
	)
	deliver := func(ctx context.Context, fs []folder) error {
		if w.ready != nil {
			select {
			case <-w.ready:
			default:
				mu.Lock()
				pending = append(pending, fs...)
				mu.Unlock()
				return nil
			}
		}
		for _, f := range fs {
			if err := w.emit(ctx, f, out); err != nil {
				return err
			}
		}
		return ctx.Err()
	}
	if w.scope != nil {
		found, err := w.listScope(ctx)
		if err != nil {
			return err
		}
		pending = found
	} else if err := w.list(ctx, deliver); err != nil {
		return err
	}
	// What was listed before the catalog's rows were loaded.
	if w.ready != nil {
		select {
		case <-w.ready:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(w.workers)
	for len(pending) > 0 {
		chunk := pending[:min(len(pending), 512)]
		pending = pending[len(chunk):]
		g.Go(func() error {
			for _, f := range chunk {
				if err := w.emit(ctx, f, out); err != nil {
					return err
				}
			}
			return ctx.Err()
		})
	}
	return g.Wait()
}

// emit compares one listed folder with the catalog's row for it and sends
// it to out when it is new or changed. It runs in several goroutines at
// once, and only once w.known is loaded.
func (w *walker) emit(ctx context.Context, f folder, out chan<- folder) error {
	if w.skip[f.dir] {
		return nil
	}
	w.scanned.Add(1)
	stampText := func() {
		f.textStamp, f.textFile = textStamp(filepath.Join(w.root, filepath.FromSlash(f.dir)), f.layout)
	}
	k := w.known[f.dir]
	if k == nil {
		if w.text {
			stampText()
			f.readText = true
		}
	} else {
		k.seen = true
		f.known = k
		cur := f.pre
		if cur == "" || len(stampFiles(f.layout, k.indexFile)) > 1 {
			cur = statStamp(filepath.Join(w.root, filepath.FromSlash(f.dir)), f.layout, k.indexFile)
		}
		same := !w.force && cur == k.stamp
		if same && k.rowid == 0 {
			w.unreadable.Add(1)
			w.mu.Lock()
			w.problems = append(w.problems, k.problems...)
			w.mu.Unlock()
			return nil
		}
		// Whoever writes capture text records it in the index, so
		// the text files are looked at only when the index changed,
		// in a scoped reindex, which looks closely at few folders,
		// or when their text was left out (NoText: no stamp).
		if same && (!w.text || w.scope == nil && k.textStamp != "") {
			w.unchanged.Add(1)
			return nil
		}
		if w.text {
			stampText()
			f.readText = w.force || k.rowid == 0 || f.textStamp != k.textStamp
			if same && !f.readText {
				w.unchanged.Add(1)
				return nil
			}
		}
	}
	select {
	case out <- f:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// list finds the snapshot folders of the tree, listing folders in
// parallel, and hands them to deliver a date folder at a time (the legacy
// folders of archive/ in chunks), from the listing goroutines.
func (w *walker) list(ctx context.Context, deliver func(context.Context, []folder) error) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(w.workers)

	// Legacy folders: real directories directly under archive/ named like
	// a timestamp. Symlinks there are projections of other folders.
	buf := make([]byte, 32<<10)
	entries, _ := w.readRoot(ctx, archive.ArchiveDir, buf)
	var legacy []folder
	for _, e := range entries {
		if _, ok := layout.LegacyTimestamp(e.Name); ok && !archive.IsTemp(e.Name) && isDir(e, w.abs(archive.ArchiveDir)) {
			legacy = append(legacy, folder{dir: archive.ArchiveDir + "/" + e.Name, layout: LayoutLegacy, name: e.Name})
			if !w.skip[legacy[len(legacy)-1].dir] {
				w.legacy.Add(1)
			}
		}
	}
	for len(legacy) > 0 {
		chunk := legacy[:min(len(legacy), 512)]
		legacy = legacy[len(chunk):]
		g.Go(func() error { return deliver(gctx, chunk) })
	}

	// Current layout: archive/users/<user>/snapshots/<date>/<domain>/<id>.
	// A date or domain folder whose stamp is the one the catalog listed
	// it with holds the folders it held then (see listing); the others
	// are listed.
	users, _ := w.readRoot(ctx, archive.UsersDir, buf)
	for _, u := range w.dirs(archive.UsersDir, users) {
		snaps := archive.UsersDir + "/" + u + "/snapshots"
		if !w.isRealDir(snaps) {
			continue // absent, or a symlinked snapshots/ root: a projection
		}
		dates, _ := w.readDir(ctx, snaps, buf)
		for _, d := range w.dirs(snaps, dates) {
			dateDir := snaps + "/" + d
			if gctx.Err() != nil {
				break
			}
			g.Go(func() error {
				fd, err := openDir(w.abs(dateDir))
				if err != nil {
					w.unlisted(dateDir, err)
					return nil
				}
				mine := w.dateFolder(gctx, fd, dateDir, u, make([]byte, 32<<10))
				unix.Close(fd)
				return deliver(gctx, mine)
			})
		}
	}
	if err := g.Wait(); err != nil {
		return err
	}
	return ctx.Err()
}

// dirs returns the names of the real directories among entries of the
// folder rel, skipping symlinks and temp names.
func (w *walker) dirs(rel string, entries []dirent) []string {
	var out []string
	parent := w.abs(rel)
	for _, e := range entries {
		if !archive.IsTemp(e.Name) && isDir(e, parent) {
			out = append(out, e.Name)
		}
	}
	return out
}

// snapshotDirs is dirs for a domain folder, keeping the staging folders
// of interrupted copies (archive.IsStaging): its listing remembers them,
// so a walk that trusts it still counts them.
func (w *walker) snapshotDirs(rel string, entries []dirent) []string {
	var out []string
	parent := w.abs(rel)
	for _, e := range entries {
		if (!archive.IsTemp(e.Name) || archive.IsStaging(e.Name)) && isDir(e, parent) {
			out = append(out, e.Name)
		}
	}
	return out
}

func (w *walker) abs(rel string) string { return w.root + "/" + rel }

// readDir lists a folder relative to the data dir (see unlisted for one
// that cannot be listed).
func (w *walker) readDir(ctx context.Context, rel string, buf []byte) ([]dirent, bool) {
	return w.listWith(ctx, rel, buf, listDir)
}

// readRoot is readDir for archive/ and archive/users/, which may be
// symlinks: users put them on another disk that way.
func (w *walker) readRoot(ctx context.Context, rel string, buf []byte) ([]dirent, bool) {
	return w.listWith(ctx, rel, buf, func(path string, buf []byte) ([]dirent, error) {
		fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return nil, errnoErr(err)
		}
		defer unix.Close(fd)
		return listDirFd(fd, buf)
	})
}

func (w *walker) listWith(ctx context.Context, rel string, buf []byte, list func(string, []byte) ([]dirent, error)) ([]dirent, bool) {
	if ctx.Err() != nil {
		return nil, false
	}
	entries, err := list(w.abs(rel), buf)
	if err != nil {
		w.unlisted(rel, err)
		return nil, false
	}
	return entries, true
}

// unlisted records a folder that could not be listed: a Problem, and the
// catalog keeps its rows below it rather than dropping what it cannot
// see. A folder that does not exist is just empty.
func (w *walker) unlisted(rel string, err error) {
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	w.mu.Lock()
	w.blind = append(w.blind, rel)
	w.problems = append(w.problems, Problem{Path: rel, Err: err})
	w.mu.Unlock()
}

// dateFolder returns the snapshot folders below the date folder rel,
// open as fd. It trusts the catalog's listing of the date folder and of
// each of its domain folders while their stamps have not changed, lists
// the others, and keeps the new listing for the next walk.
func (w *walker) dateFolder(ctx context.Context, fd int, rel, user string, buf []byte) []folder {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		w.unlisted(rel, errnoErr(err))
		return nil
	}
	stamp := folderStamp(&st)
	old, held := w.listings[rel]
	held = held && !w.force && old.stamp == stamp
	var found []folder
	var rec []byte
	if held {
		for line := range strings.SplitSeq(old.domains, "\x00") {
			if line == "" {
				continue
			}
			name, rest, _ := strings.Cut(line, "/")
			domStamp, ids, _ := strings.Cut(rest, "/")
			var ok bool
			if found, rec, ok = w.domainFolder(fd, rel, user, name, domStamp, ids, found, rec, buf); !ok {
				held = false
			}
			if ctx.Err() != nil {
				return nil
			}
		}
	} else {
		entries, err := listDirFd(fd, buf)
		if err != nil {
			w.unlisted(rel, err)
			return nil
		}
		for _, name := range w.dirs(rel, entries) {
			found, rec, _ = w.domainFolder(fd, rel, user, name, "", "", found, rec, buf)
			if ctx.Err() != nil {
				return nil
			}
		}
	}
	w.mu.Lock()
	switch {
	case held:
		w.trusted = append(w.trusted, rel)
	case st.Ctim.Nano() < w.trustBefore:
		w.listed = append(w.listed, listingRow{rel, listing{stamp, string(bytes.TrimSuffix(rec, []byte{0}))}})
	}
	w.mu.Unlock()
	return found
}

// domainFolder appends the snapshot folders of the domain folder name,
// below the date folder dateRel open as fd, to found, and its line of
// the date folder's listing to rec: name/stamp/id/id... and a NUL (no
// folder name holds "/" or NUL). The previous listing, oldStamp and ids,
// is used when the stamp is the same (held); else the folder is listed,
// and its stamp left out of the line when it changed too recently.
func (w *walker) domainFolder(fd int, dateRel, user, name, oldStamp, ids string, found []folder, rec, buf []byte) ([]folder, []byte, bool) {
	rel := dateRel + "/" + name
	var st unix.Stat_t
	if err := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		w.unlisted(rel, errnoErr(err))
		return found, rec, false
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return found, rec, false
	}
	stamp := folderStamp(&st)
	held := oldStamp != "" && stamp == oldStamp
	if !held {
		dfd, err := openDirAt(fd, name)
		if err != nil {
			w.unlisted(rel, err)
			return found, rec, false
		}
		entries, err := listDirFd(dfd, buf)
		unix.Close(dfd)
		if err != nil {
			w.unlisted(rel, err)
			return found, rec, false
		}
		ids = strings.Join(w.snapshotDirs(rel, entries), "/")
		if st.Ctim.Nano() >= w.trustBefore {
			stamp = "" // listed again next time
		}
	}
	rec = append(append(append(append(append(rec, name...), '/'), stamp...), '/'), ids...)
	rec = append(rec, 0)
	for id := range strings.SplitSeq(ids, "/") {
		if archive.IsStaging(id) {
			w.staging.Add(1)
			continue
		}
		if id != "" {
			found = append(found, folder{dir: rel + "/" + id, layout: LayoutCurrent, user: user, name: id,
				pre: stampAt(fd, name+"/"+id+"/"+archive.IndexFile)})
		}
	}
	return found, rec, held
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
