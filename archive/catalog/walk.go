package catalog

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
	"golang.org/x/sys/unix"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/internal/rawsys"
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
	closely bool     // a scoped reindex of folders changes were seen in (not Polled)
	// skip holds the folders 'folio remove' hid (archive.HiddenFile):
	// they are not reported, so their rows are dropped as gone.
	skip map[string]bool
	// A walk of the whole tree reads what the catalog knows as it goes,
	// in the order of folder paths (see sorted and walkTree): the rows
	// of snapshot folders and the listings of date folders. The folders
	// that could not be cataloged (few) are held whole in bad. A scoped
	// walk is handed known, the rows of its scope, instead.
	rows     *sorted[*known]
	listings *sorted[listing]
	bad      map[string]*known
	known    map[string]*known
	// empty: the catalog knows no folder, so every folder is new: no
	// index file is stat'ed ahead of its read (the stamp is taken when it
	// is read), and the text files are stamped while the domain folder
	// is open.
	empty bool

	scanned    atomic.Int64
	legacy     atomic.Int64 // legacy folders listed in archive/, hidden ones left out
	unchanged  atomic.Int64
	unreadable atomic.Int64 // unchanged folders that could not be cataloged before
	staging    atomic.Int64 // staging folders of interrupted copies beside snapshot folders

	// Date folders listed again whose ctime is before trustBefore (ns)
	// have their new listing kept in listed; dropped are the catalog's
	// listings that neither held nor were made again.
	trustBefore int64

	mu       sync.Mutex
	blind    []string // folders that could not be listed: rows below them are kept
	problems []Problem
	listed   []listingRow
	dropped  []string
	// gone are the catalog's rows whose folder the walk did not find,
	// those below a folder it could not list (blind) included.
	gone []goneRow
}

// goneRow is a catalog row whose folder a walk did not find; rowid 0 for
// a folder that could not be cataloged.
type goneRow struct {
	dir   string
	rowid int64
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
// out. Folders that are unchanged are only counted; rows whose folder the
// walk did not find are collected in gone.
func (w *walker) walk(ctx context.Context, out chan<- folder) error {
	if w.scope != nil {
		return w.walkScope(ctx, out)
	}
	return w.walkTree(ctx, out)
}

// walkScope looks at the folders of a scoped reindex, against the rows of
// the scope the caller loaded into w.known.
func (w *walker) walkScope(ctx context.Context, out chan<- folder) error {
	found, err := w.listScope(ctx)
	if err != nil {
		return err
	}
	todo := found[:0]
	for _, f := range found {
		if w.skip[f.dir] {
			continue
		}
		if k := w.known[f.dir]; k != nil {
			k.seen = true
			f.known = k
		}
		todo = append(todo, f)
	}
	if err := w.emitAll(ctx, todo, out); err != nil {
		return err
	}
	for dir, k := range w.known {
		if !k.seen {
			w.gone = append(w.gone, goneRow{dir: dir, rowid: k.rowid})
		}
	}
	return nil
}

// unit is a step of walkTree: a legacy folder, or a date folder of the
// current layout with the snapshot folders below it.
type unit struct {
	dir    string
	key    string // orders units as the catalog orders their rows (unitKey)
	user   string
	legacy bool
	old    listing // the catalog's listing of a date folder
	hadOld bool
	kept   bool // its listing held, or a new one is kept
	found  []folder
}

// unitKey orders units as the catalog orders the rows of their folders:
// a date folder's rows all start with its path and a slash. It is made
// once per unit: sorting the units made it afresh in each comparison
// (some 500k strings at 100k snapshots).
func unitKey(dir string, legacy bool) string {
	if legacy {
		return dir
	}
	return dir + "/"
}

// unitBatch is how many units walkTree lists before it compares them with
// the catalog: enough to keep every worker busy, few enough that what it
// holds does not grow with the tree.
const unitBatch = 64

// walkTree walks the whole tree in the order of the catalog's rows, a
// batch of date folders at a time: their listings are read from the
// catalog, the folders listed in parallel, their snapshot folders matched
// with the rows in order, and the new and changed ones stat'ed and sent
// in parallel. The catalog is read as the walk goes (w.rows, w.listings),
// so memory does not grow with the collection.
func (w *walker) walkTree(ctx context.Context, out chan<- folder) error {
	units, err := w.units(ctx)
	if err != nil {
		return err
	}
	lost := func(dir string, k *known) { w.gone = append(w.gone, goneRow{dir: dir, rowid: k.rowid}) }
	drop := func(dir string, _ listing) { w.dropped = append(w.dropped, dir) }
	for len(units) > 0 {
		batch := units[:min(len(units), unitBatch)]
		units = units[len(batch):]
		// Listings are keyed by the folder's path without the slash: a
		// date folder whose name extends another's with a character
		// before "/" ("20240720-old") comes first here but second there,
		// and the other's listing is passed, dropped and made again, a
		// listing more on every walk and nothing missed.
		for i := range batch {
			if u := &batch[i]; !u.legacy {
				w.listings.skipTo(u.dir, drop)
				u.old, u.hadOld = w.listings.at(u.dir)
			}
		}
		// The catalog's rows of the batch are read while its folders are
		// listed: the rows need only the units' paths, and reading them
		// (a tenth of a millisecond per date folder at 100k snapshots)
		// left the workers idle when it came after.
		heres := make([]map[string]*known, len(batch))
		matched := make(chan struct{})
		go func() {
			defer close(matched)
			for i := range batch {
				u := &batch[i]
				w.rows.skipTo(u.key, lost)
				here := map[string]*known{}
				if u.legacy {
					if k, ok := w.rows.at(u.dir); ok {
						here[u.dir] = k
					}
				} else {
					w.rows.below(u.dir, func(dir string, k *known) { here[dir] = k })
				}
				heres[i] = here
			}
		}()
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(w.workers)
		for i := range batch {
			u := &batch[i]
			if u.legacy {
				u.found = []folder{{dir: u.dir, layout: LayoutLegacy, name: path.Base(u.dir)}}
				continue
			}
			g.Go(func() error {
				fd, err := openDir(w.abs(u.dir))
				if err != nil {
					w.unlisted(u.dir, err)
					return nil
				}
				defer rawsys.Close(fd)
				u.found = w.dateFolder(gctx, fd, u, make([]byte, 32<<10))
				return gctx.Err()
			})
		}
		err := g.Wait()
		<-matched // it appends to w.gone, as the loop below does
		if err != nil {
			return err
		}
		var todo []folder
		for i := range batch {
			u := &batch[i]
			if u.hadOld && !u.kept {
				w.dropped = append(w.dropped, u.dir)
			}
			here := heres[i]
			for _, f := range u.found {
				if w.skip[f.dir] {
					continue // its row, if any, is gone
				}
				if k := here[f.dir]; k != nil {
					delete(here, f.dir)
					f.known = k
				} else if k := w.bad[f.dir]; k != nil {
					k.seen = true
					f.known = k
				}
				todo = append(todo, f)
			}
			for dir, k := range here {
				lost(dir, k)
			}
			u.found = nil
		}
		if err := w.emitAll(ctx, todo, out); err != nil {
			return err
		}
	}
	w.rows.skipTo("", lost)
	w.listings.skipTo("", drop)
	for dir, k := range w.bad {
		if !k.seen {
			lost(dir, k)
		}
	}
	if w.rows.err != nil {
		return w.rows.err
	}
	return w.listings.err
}

// emitAll emits folders in parallel.
func (w *walker) emitAll(ctx context.Context, todo []folder, out chan<- folder) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(w.workers)
	for len(todo) > 0 {
		chunk := todo[:min(len(todo), 128)]
		todo = todo[len(chunk):]
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

// emit compares one listed folder with the catalog's row for it (f.known)
// and sends it to out when it is new or changed. It runs in several
// goroutines at once.
func (w *walker) emit(ctx context.Context, f folder, out chan<- folder) error {
	w.scanned.Add(1)
	stampText := func() {
		f.textStamp, f.textFile = textStamp(filepath.Join(w.root, filepath.FromSlash(f.dir)), f.layout)
	}
	k := f.known
	if k == nil {
		if w.text {
			if f.textStamp == "" { // (else stamped by the walk)
				stampText()
			}
			f.readText = true
		}
	} else {
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
		// in a scoped reindex of the few folders changes were seen in,
		// or when their text was left out (NoText: no stamp).
		if same && (!w.text || !w.closely && k.textStamp != "") {
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

// units lists the legacy folders of archive/ and the date folders of the
// current layout, archive/users/<user>/snapshots/<date>, in the order of
// their keys.
func (w *walker) units(ctx context.Context) ([]unit, error) {
	var units []unit
	// Legacy folders: real directories directly under archive/ named like
	// a timestamp. Symlinks there are projections of other folders.
	buf := make([]byte, 32<<10)
	entries, _ := w.readRoot(ctx, archive.ArchiveDir, buf)
	for _, e := range entries {
		if _, ok := layout.LegacyTimestamp(e.Name); ok && !archive.IsTemp(e.Name) && isDir(e, w.abs(archive.ArchiveDir)) {
			dir := archive.ArchiveDir + "/" + e.Name
			units = append(units, unit{dir: dir, key: unitKey(dir, true), legacy: true})
			if !w.skip[dir] {
				w.legacy.Add(1)
			}
		}
	}
	// Current layout: a date or domain folder whose stamp is the one the
	// catalog listed it with holds the folders it held then (see
	// listing); the others are listed.
	users, _ := w.readRoot(ctx, archive.UsersDir, buf)
	for _, u := range w.dirs(archive.UsersDir, users) {
		snaps := archive.UsersDir + "/" + u + "/snapshots"
		if !w.isRealDir(snaps) {
			continue // absent, or a symlinked snapshots/ root: a projection
		}
		dates, _ := w.readDir(ctx, snaps, buf)
		for _, d := range w.dirs(snaps, dates) {
			dir := snaps + "/" + d
			units = append(units, unit{dir: dir, key: unitKey(dir, false), user: u})
		}
	}
	slices.SortFunc(units, func(a, b unit) int { return strings.Compare(a.key, b.key) })
	return units, ctx.Err()
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
		fd, err := rawsys.Openat(unix.AT_FDCWD, path, unix.O_RDONLY|unix.O_DIRECTORY)
		if err != nil {
			return nil, errnoErr(err)
		}
		defer rawsys.Close(fd)
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
func (w *walker) dateFolder(ctx context.Context, fd int, u *unit, buf []byte) []folder {
	rel, user := u.dir, u.user
	var st unix.Stat_t
	if err := rawsys.Fstat(fd, &st); err != nil {
		w.unlisted(rel, errnoErr(err))
		return nil
	}
	stamp := folderStamp(&st)
	old := u.old
	held := u.hadOld && !w.force && old.stamp == stamp
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
		u.kept = true
	case st.Ctim.Nano() < w.trustBefore:
		w.listed = append(w.listed, listingRow{rel, listing{stamp, string(bytes.TrimSuffix(rec, []byte{0}))}})
		u.kept = true
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
	if err := rawsys.Lstatat(fd, name, &st); err != nil {
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
		rawsys.Close(dfd)
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
			f := folder{dir: rel + "/" + id, layout: LayoutCurrent, user: user, name: id}
			switch {
			case !w.empty:
				f.pre = stampAt(fd, name+"/"+id+"/"+archive.IndexFile)
			case w.text:
				// New, so its text is read: stamped here, relative to
				// the open domain folder.
				f.textStamp, f.textFile = textStampAt(fd, name+"/"+id, LayoutCurrent)
			}
			found = append(found, f)
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
