package export

import (
	"context"
	"slices"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"
	"golang.org/x/sys/unix"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/internal/rawsys"
)

// A snapshot's page shows every output in its folder, also one written
// without a record (a plugin folder or file put there by hand), which the
// catalog, reading only index files, does not see. So the page depends on
// the names in the folder too: their hash is part of its fingerprint. An
// export stats each folder it exported before and lists again only those
// whose ctime moved (any entry created, removed or renamed in a folder
// moves it). A file added inside an existing plugin folder moves only
// that folder's ctime: it shows once the index changes, or with --full.

// folderSeen is what an export knows of a snapshot folder's names.
type folderSeen struct {
	sig   uint64 // hash of the names, index.html and temp names left out
	ctime int64  // ns; 0 when the folder could not be looked at or changed too recently to trust
	// page: the folder held its page (index.html, a regular file) when
	// ctime was taken, or since, as seen while its ctime had not moved:
	// while it has not, the page is there without a look (removing or
	// replacing it moves the ctime).
	page bool
}

// folders caches folderSeen by snapshot folder (its hashString, as the
// export's state keys it) for one export.
type folders struct {
	root string
	// bases are the users' snapshot folders, open: a snapshot folder is
	// stat'ed relative to one (date/domain/id), which the kernel resolves
	// in three steps instead of every component of the absolute path
	// (at 100k snapshots an export looks at 100k folders: 3.1 instead of
	// 4.5 µs each).
	bases baseDirs
	// trustBefore (ns): a folder whose ctime is not before it may change
	// again within the same ctime tick, so its ctime is not kept and it is
	// listed again next time.
	trustBefore int64
	mu          sync.Mutex
	m           map[uint64]folderSeen
	// known, after a look, is what the last export saw of the folders
	// it exported: m holds only those the look found otherwise (most
	// often none), so that neither the look nor the state written after
	// it goes through every folder again.
	known map[uint64]snapState
	// all: the look stat'ed every folder of known; else checked holds
	// those it stat'ed (a watched export looks only at what changed).
	// Only for those is a page seen at their ctime known to be there.
	all     bool
	checked map[uint64]bool
}

// look stats the folders exported last time, in parallel, and lists those
// whose ctime moved. It returns the folders whose names changed. When
// only is not nil, only the folders it names (relative to the collection)
// or that lie below one of them are looked at; the others keep what prev
// saw.
func (fs *folders) look(ctx context.Context, prev *state, workers int, only []string) ([]string, error) {
	var changed []string
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(workers)
	batch := make([]snapState, 0, 512)
	flush := func(list []snapState) {
		g.Go(func() error {
			var mine []string
			seen := make([]folderSeen, len(list))
			for i, ss := range list {
				seen[i] = fs.read(ss.Dir, ss.seen())
				if seen[i].sig != ss.Folder {
					mine = append(mine, ss.Dir)
				}
			}
			fs.mu.Lock()
			for i, ss := range list {
				if seen[i] != ss.seen() {
					fs.m[hashString(ss.Dir)] = seen[i]
				}
			}
			changed = append(changed, mine...)
			fs.mu.Unlock()
			return ctx.Err()
		})
	}
	fs.m, fs.known = map[uint64]folderSeen{}, prev.Snaps
	fs.all, fs.checked = only == nil, map[uint64]bool{}
	add := func(ss snapState) {
		if !fs.all {
			fs.checked[hashString(ss.Dir)] = true
		}
		batch = append(batch, ss)
		if len(batch) == cap(batch) {
			flush(batch)
			batch = make([]snapState, 0, 512)
		}
	}
	switch {
	case only == nil:
		for _, ss := range prev.Snaps {
			add(ss)
		}
	case slices.ContainsFunc(only, func(p string) bool { return strings.Count(p, "/") < snapshotDepth }):
		// A folder above the snapshots': every snapshot below it.
		in := underAny(only)
		for _, ss := range prev.Snaps {
			if in(ss.Dir) {
				add(ss)
			}
		}
	default:
		// Snapshot folders, or folders inside them (which name none).
		named := map[uint64]bool{}
		for _, p := range only {
			h := hashString(p)
			if ss, ok := prev.Snaps[h]; ok && !named[h] {
				named[h] = true
				add(ss)
			}
		}
	}
	flush(batch)
	return changed, g.Wait()
}

// of returns what is known of dir: what look found when it differed
// from what the last export saw, else what that export saw (also of a
// folder look passed over), else what it holds now.
func (fs *folders) of(dir string) folderSeen {
	h := hashString(dir)
	fs.mu.Lock()
	f, ok := fs.m[h]
	fs.mu.Unlock()
	if ok {
		return f
	}
	if ss, ok := fs.known[h]; ok {
		return ss.seen()
	}
	f = fs.read(dir, folderSeen{})
	fs.mu.Lock()
	if fs.m == nil {
		fs.m = map[uint64]folderSeen{}
	}
	fs.m[h] = f
	fs.mu.Unlock()
	return f
}

// detach copies what the last export saw of each folder out of known,
// whose state is about to be let go: m then holds every folder. It
// follows a look, which made m.
func (fs *folders) detach() {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	for h, ss := range fs.known {
		if _, ok := fs.m[h]; !ok {
			fs.m[h] = ss.seen()
		}
	}
	fs.known = nil
}

// looked calls fn for each folder look found changed and each folder of
// has looked at.
func (fs *folders) looked(fn func(h uint64, f folderSeen)) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	for h, f := range fs.m {
		fn(h, f)
	}
}

// read stats dir and, unless its ctime is still was's (whose listing
// hashed to was.sig), lists it.
func (fs *folders) read(dir string, was folderSeen) folderSeen {
	var st unix.Stat_t
	if fs.lstat(dir, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return folderSeen{}
	}
	now := st.Ctim.Nano()
	if was.ctime != 0 && now == was.ctime {
		return was
	}
	testEvent("folder listed")
	entries, err := readDir(fs.root + "/" + dir)
	if err != nil {
		return folderSeen{}
	}
	var sum uint64 // so the listing's order does not matter
	page := false
	for _, e := range entries {
		name := e.Name()
		if name == RootPage && e.Type().IsRegular() {
			page = true
		}
		if strings.HasPrefix(name, RootPage) || archive.IsTemp(name) {
			continue // the page itself, and writes in progress
		}
		sum += hashString(name)
	}
	if now >= fs.trustBefore {
		now = 0
	}
	return folderSeen{sig: sum, ctime: now, page: page && now != 0}
}

// still reports whether the snapshot folder dir and the folders in it
// have changed no entry since fs.trustBefore, with the latest ctime of
// those inside (insideStamp); a folder gone, or one that cannot be read,
// has nothing to wait for. It is not still when budget ran out first.
func (fs *folders) still(dir string, budget *int) (inside int64, still bool) {
	var st unix.Stat_t
	if fs.lstat(dir, &st) != nil {
		return 0, true
	}
	inside, whole := fs.insideStamp(dir, budget)
	return inside, whole && st.Ctim.Nano() < fs.trustBefore && inside < fs.trustBefore
}

// insideStamp is the latest ctime of the folders inside the snapshot
// folder dir: each in it, then those below, three levels down and 256
// at most (a mirror's tree is not walked whole); 0 for none. A file
// written in a plugin's folder moves it, and nothing an export writes
// does (its pages lie in dir). Each folder stat'ed takes one from budget;
// whole is false when it ran out before the walk's end.
func (fs *folders) insideStamp(dir string, budget *int) (latest int64, whole bool) {
	level := []string{dir}
	for depth, left := 0, 256; depth < 3 && len(level) > 0; depth++ {
		var next []string
		for _, rel := range level {
			entries, err := readDir(fs.root + "/" + rel)
			if err != nil {
				continue
			}
			for _, e := range entries {
				if !e.IsDir() {
					continue
				}
				if left <= 0 {
					return latest, true
				}
				if *budget <= 0 {
					return latest, false
				}
				*budget, left = *budget-1, left-1
				sub := rel + "/" + e.Name()
				var st unix.Stat_t
				if fs.lstat(sub, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
					continue
				}
				latest = max(latest, st.Ctim.Nano())
				next = append(next, sub)
			}
		}
		level = next
	}
	return latest, true
}

// checkedOf returns what is known of dir without looking at it when
// this export's look stat'ed it: what look found, else what the last
// export saw, which look found still so.
func (fs *folders) checkedOf(dir string) (folderSeen, bool) {
	h := hashString(dir)
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if !fs.all && !fs.checked[h] {
		return folderSeen{}, false
	}
	if f, ok := fs.m[h]; ok {
		return f, true
	}
	ss, ok := fs.known[h]
	return ss.seen(), ok
}

// sawPage records that dir's page was found there while the folder's
// ctime was still f's.
func (fs *folders) sawPage(dir string, f folderSeen) {
	f.page = true
	fs.mu.Lock()
	fs.m[hashString(dir)] = f
	fs.mu.Unlock()
}

// lstat is lstat of the folder dir of the collection: relative to its
// user's snapshot folder when it lies in one (no absolute path is made
// for the look's 100k folders either).
func (fs *folders) lstat(dir string, st *unix.Stat_t) error {
	if base, rel, ok := splitBase(dir); ok {
		if fd := fs.bases.open(fs.root, base); fd >= 0 {
			return rawsys.Lstatat(fd, rel, st)
		}
	}
	return rawsys.Lstatat(unix.AT_FDCWD, fs.root+"/"+dir, st)
}

// pageThere reports whether the page of the snapshot folder dir is on
// disk. At 100k snapshots a root page rewritten for a snapshot added asks
// it of each of its kept snapshots, in the stream that hands out the root
// pages: in place, a folder this export's look found with the ctime at
// which its page was seen there is not looked at again, and the others
// (also those a watched export's look passed over: the watcher does not
// report a page deleted) are stat'ed as look stats folders.
func (s *site) pageThere(dir string) bool {
	if !s.inPlace {
		return exists(s.abs(dir + "/" + RootPage))
	}
	f, ok := s.folders.checkedOf(dir)
	if ok && f.ctime != 0 && f.page {
		return true
	}
	testEvent("page looked for")
	var st unix.Stat_t
	if s.folders.lstat(dir+"/"+RootPage, &st) != nil {
		return false
	}
	if ok && f.ctime != 0 && st.Mode&unix.S_IFMT == unix.S_IFREG {
		s.folders.sawPage(dir, f)
	}
	return true
}

// splitBase splits a folder of the current layout,
// archive/users/<user>/snapshots/<rest>, into its user's snapshot folder
// and the rest.
func splitBase(dir string) (base, rel string, ok bool) {
	after, found := strings.CutPrefix(dir, archive.UsersDir+"/")
	if !found {
		return "", "", false
	}
	user, rest, _ := strings.Cut(after, "/")
	rel, found = strings.CutPrefix(rest, "snapshots/")
	if user == "" || !found || rel == "" {
		return "", "", false
	}
	return dir[:len(dir)-len(rel)-1], rel, true
}

// baseDirs keeps folders open (O_PATH) by their path relative to the
// collection, for one export; -1 for one that could not be opened.
type baseDirs struct {
	mu  sync.Mutex
	fds map[string]int
}

// open returns the open folder rel of root, opening it the first time:
// as a path lookup from root would resolve it, so a stat relative to it
// finds what a stat of the whole path finds.
func (b *baseDirs) open(root, rel string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	if fd, ok := b.fds[rel]; ok {
		return fd
	}
	if b.fds == nil {
		b.fds = map[string]int{}
	}
	fd, err := rawsys.Openat(unix.AT_FDCWD, root+"/"+rel, unix.O_PATH|unix.O_DIRECTORY)
	if err != nil {
		fd = -1
	}
	b.fds[rel] = fd
	return fd
}

// close closes the folders open, which may be opened again.
func (b *baseDirs) close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, fd := range b.fds {
		if fd >= 0 {
			rawsys.Close(fd)
		}
	}
	b.fds = nil
}

// underAny returns a test of whether a folder is one of paths or lies
// below one of them (all slash paths relative to the collection).
func underAny(paths []string) func(dir string) bool {
	named := make(map[string]bool, len(paths))
	for _, p := range paths {
		named[p] = true
	}
	// dir and the folders above it are looked up, not each path tried in
	// turn: a watcher out of watches names thousands of folders.
	// A path at a snapshot folder's depth or below names only itself.
	return func(dir string) bool {
		if named[dir] {
			return true
		}
		depth := strings.Count(dir, "/")
		for p := dir; depth > 0; depth-- {
			p = p[:strings.LastIndexByte(p, '/')]
			if depth-1 < snapshotDepth && named[p] {
				return true
			}
		}
		return false
	}
}

// snapshotDepth is the number of slashes in the path of a snapshot folder
// of the current layout (archive/users/<user>/snapshots/<date>/<domain>/<id>).
const snapshotDepth = 6
