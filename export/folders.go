package export

import (
	"context"
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
}

// folders caches folderSeen by snapshot folder (its hashString, as the
// export's state keys it) for one export.
type folders struct {
	root string
	// trustBefore (ns): a folder whose ctime is not before it may change
	// again within the same ctime tick, so its ctime is not kept and it is
	// listed again next time.
	trustBefore int64
	mu          sync.Mutex
	m           map[uint64]folderSeen
}

// look stats the folders exported last time, in parallel, and lists those
// whose ctime moved. It returns the folders whose names changed. When
// again is set, only the folders it names are looked at; the others keep
// what prev saw.
func (fs *folders) look(ctx context.Context, prev *state, workers int, again func(dir string) bool) ([]string, error) {
	fs.m = make(map[uint64]folderSeen, len(prev.Snaps))
	var changed []string
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(workers)
	batch := make([]snapState, 0, 512)
	flush := func(list []snapState) {
		g.Go(func() error {
			var mine []string
			seen := make([]folderSeen, len(list))
			for i, ss := range list {
				if again != nil && !again(ss.Dir) {
					seen[i] = folderSeen{sig: ss.Folder, ctime: ss.CTime}
					continue
				}
				seen[i] = fs.read(ss.Dir, ss.CTime, ss.Folder)
				if seen[i].sig != ss.Folder {
					mine = append(mine, ss.Dir)
				}
			}
			fs.mu.Lock()
			for i, ss := range list {
				fs.m[hashString(ss.Dir)] = seen[i]
			}
			changed = append(changed, mine...)
			fs.mu.Unlock()
			return ctx.Err()
		})
	}
	for _, ss := range prev.Snaps {
		batch = append(batch, ss)
		if len(batch) == cap(batch) {
			flush(batch)
			batch = make([]snapState, 0, 512)
		}
	}
	flush(batch)
	return changed, g.Wait()
}

// of returns what is known of dir, looking at it now if it was not
// exported last time.
func (fs *folders) of(dir string) folderSeen {
	h := hashString(dir)
	fs.mu.Lock()
	f, ok := fs.m[h]
	fs.mu.Unlock()
	if ok {
		return f
	}
	f = fs.read(dir, 0, 0)
	fs.mu.Lock()
	if fs.m == nil {
		fs.m = map[uint64]folderSeen{}
	}
	fs.m[h] = f
	fs.mu.Unlock()
	return f
}

// read stats dir and, unless its ctime is still ctime (whose listing hashed
// to sig), lists it.
func (fs *folders) read(dir string, ctime int64, sig uint64) folderSeen {
	abs := fs.root + "/" + dir
	var st unix.Stat_t
	if rawsys.Lstatat(unix.AT_FDCWD, abs, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return folderSeen{}
	}
	now := st.Ctim.Nano()
	if ctime != 0 && now == ctime {
		return folderSeen{sig: sig, ctime: now}
	}
	entries, err := readDir(abs)
	if err != nil {
		return folderSeen{}
	}
	var sum uint64 // so the listing's order does not matter
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, RootPage) || archive.IsTemp(name) {
			continue // the page itself, and writes in progress
		}
		sum += hashString(name)
	}
	if now >= fs.trustBefore {
		now = 0
	}
	return folderSeen{sig: sum, ctime: now}
}

// underAny returns a test of whether a folder is one of paths or lies
// below one of them (all slash paths relative to the collection).
func underAny(paths []string) func(dir string) bool {
	exact := make(map[string]bool, len(paths))
	var above []string
	for _, p := range paths {
		exact[p] = true
		if strings.Count(p, "/") < snapshotDepth {
			above = append(above, p+"/")
		}
	}
	return func(dir string) bool {
		if exact[dir] {
			return true
		}
		for _, p := range above {
			if strings.HasPrefix(dir, p) {
				return true
			}
		}
		return false
	}
}

// snapshotDepth is the number of slashes in the path of a snapshot folder
// of the current layout (archive/users/<user>/snapshots/<date>/<domain>/<id>).
const snapshotDepth = 6
