package migrate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	"golang.org/x/sys/unix"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/layout"
)

// folder is what Scan reads from one snapshot folder (legacy or 0.9).
type folder struct {
	name  string // last path component
	rel   string // slash path relative to the data dir
	mtime time.Time

	snap      archive.Snapshot // first Snapshot record of index.jsonl, else index.json
	hasSnap   bool
	results   []archive.Result
	foreign   [][]byte
	from      string // "index.jsonl" or "index.json" when hasSnap
	fsVersion string // detected from the record (formats spec §3.2)
	wayback   string // original URL recovered from archive.org.txt
	problems  []string
	err       error // the folder could not be read
	// rowNamed: a folder under archive/ named not by a legacy timestamp
	// but exactly by a database row's timestamp, which it belongs to.
	rowNamed bool
}

// snapshotURL is the url the folder's records give, else the one
// archive.org.txt recovers ("" when none).
func (f *folder) snapshotURL() string {
	if f.hasSnap && f.snap.URL != "" {
		return f.snap.URL
	}
	return f.wayback
}

// urlFrom names the file snapshotURL comes from.
func (f *folder) urlFrom() string {
	if f.hasSnap && f.snap.URL != "" {
		return f.from
	}
	return "archive.org.txt"
}

// readFolder reads the index files of the folder at abs. Missing files are
// not errors; corrupt ones are noted in problems.
func readFolder(abs string, f *folder) {
	ix, _, err := archive.ReadIndex(abs)
	switch {
	case err == nil:
		f.foreign = ix.Foreign()
		if s, ok := ix.Snapshot(); ok {
			f.snap, f.hasSnap, f.from = s, true, archive.IndexFile
			f.results = ix.Results()
			f.fsVersion = s.FSVersion
			if f.fsVersion == "" {
				f.fsVersion = "0.7.0"
			}
		}
	case !errors.Is(err, fs.ErrNotExist):
		f.err = err // a *fs.PathError naming the file
		return
	}
	if !f.hasSnap || f.snap.URL == "" {
		li, err := archive.ReadLegacyIndex(abs)
		switch {
		case err == nil:
			if !f.hasSnap || li.Snapshot.URL != "" {
				f.snap, f.hasSnap, f.from = li.Snapshot, true, archive.LegacyIndexFile
				f.results = li.Results
				f.fsVersion = li.FSVersion
			}
		case errors.Is(err, fs.ErrNotExist):
		case isPathError(err):
			// The file exists but cannot be read: leave the folder
			// alone rather than judge it by what could not be seen.
			f.err = err
			return
		default:
			f.problems = append(f.problems, err.Error())
		}
	}
	if !f.hasSnap || f.snap.URL == "" {
		line, err := firstLine(filepath.Join(abs, "archive.org.txt"))
		switch {
		case err == nil:
			f.wayback = waybackURL(line)
		case !errors.Is(err, fs.ErrNotExist):
			f.err = err // a *fs.PathError naming the file
		}
	}
}

func firstLine(p string) (string, error) {
	data, err := archive.ReadRegular(p)
	if err != nil {
		return "", err
	}
	line, _, _ := strings.Cut(string(data), "\n")
	return strings.TrimRight(line, "\r"), nil
}

// readFolders reads fs in parallel.
func readFolders(ctx context.Context, root string, fs []*folder, workers int, pr archive.Printer) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(workers)
	var mu sync.Mutex
	var done int64
	for _, f := range fs {
		g.Go(func() error {
			if err := ctx.Err(); err != nil {
				return err
			}
			abs := filepath.Join(root, filepath.FromSlash(f.rel))
			if f.mtime.IsZero() {
				if st, err := os.Lstat(abs); err == nil {
					f.mtime = st.ModTime()
				}
			}
			readFolder(abs, f)
			mu.Lock()
			done++
			n := done
			mu.Unlock()
			pr.Progress("scan", n, int64(len(fs)))
			return nil
		})
	}
	return g.Wait()
}

// currentDir is a snapshot folder of the users/ tree.
type currentDir struct {
	rel      string
	user     string
	id       string // compact
	dashed   bool
	hasIndex bool // index.jsonl present (checked for compact dirs only)
}

// crawlDir is a crawl folder of the users/ tree.
type crawlDir struct {
	rel     string
	user    string
	id      string // compact
	dashed  bool
	created time.Time // from the date bucket of the path
}

// walkCurrent lists archive/users/<user>/{snapshots,crawls}/<date>/<domain>/<id>
// folders, and the staging folders of interrupted copies beside them.
// Symlinked folders at any level are projections, not snapshots, and are
// not followed.
func walkCurrent(ctx context.Context, root string, workers int) ([]currentDir, []crawlDir, []string, error) {
	usersAbs := filepath.Join(root, filepath.FromSlash(archive.UsersDir))
	users, err := readDirs(usersAbs)
	if err != nil {
		return nil, nil, nil, err
	}
	type job struct{ user, kind, date string }
	var jobs []job
	for _, u := range users {
		for _, kind := range []string{"snapshots", "crawls"} {
			if layout.RealFolders(root, path.Join(archive.UsersDir, u, kind)) != nil {
				continue // a symlinked snapshots/ or crawls/: a projection
			}
			dates, err := readDirs(filepath.Join(usersAbs, u, kind))
			if err != nil {
				return nil, nil, nil, err
			}
			for _, d := range dates {
				jobs = append(jobs, job{u, kind, d})
			}
		}
	}
	var mu sync.Mutex
	var snaps []currentDir
	var crawls []crawlDir
	var staging []string
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(workers)
	for _, j := range jobs {
		g.Go(func() error {
			if err := ctx.Err(); err != nil {
				return err
			}
			dateAbs := filepath.Join(usersAbs, j.user, j.kind, j.date)
			domains, err := readDirs(dateAbs)
			if err != nil {
				return err
			}
			var ls []currentDir
			var lc []crawlDir
			var lst []string
			for _, dom := range domains {
				names, err := readDirs(filepath.Join(dateAbs, dom))
				if err != nil {
					return err
				}
				for _, name := range names {
					if archive.IsStaging(name) {
						lst = append(lst, path.Join(archive.UsersDir, j.user, j.kind, j.date, dom, name))
						continue
					}
					id, ok := layout.ParseID(name)
					if !ok || (!layout.IsCompactID(name) && !layout.IsDashedID(name)) {
						continue
					}
					rel := path.Join(archive.UsersDir, j.user, j.kind, j.date, dom, name)
					dashed := layout.IsDashedID(name)
					if j.kind == "crawls" {
						created, _ := time.Parse("20060102", j.date)
						lc = append(lc, crawlDir{rel: rel, user: j.user, id: id, dashed: dashed, created: created})
						continue
					}
					d := currentDir{rel: rel, user: j.user, id: id, dashed: dashed}
					if !dashed {
						_, err := os.Lstat(filepath.Join(dateAbs, dom, name, archive.IndexFile))
						d.hasIndex = err == nil
					}
					ls = append(ls, d)
				}
			}
			mu.Lock()
			snaps = append(snaps, ls...)
			crawls = append(crawls, lc...)
			staging = append(staging, lst...)
			mu.Unlock()
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, nil, nil, err
	}
	return snaps, crawls, staging, nil
}

// readDirs returns the names of the real (non-symlink) directories in dir;
// a missing dir has none.
func readDirs(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", dir, err)
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// isPathError reports an error of the file system (open or read failed), as
// opposed to a problem with the content.
func isPathError(err error) bool {
	var pe *fs.PathError
	return errors.As(err, &pe)
}

// staleCompact returns, as folders to read, the compact-id folders whose
// index.jsonl declares an fs_version that has a hop to the current one
// (ArchiveBox 0.9.0-0.9.3 wrote them at their place). It reads the head of
// each index only — ArchiveBox writes the Snapshot record first — and the
// whole file when the head holds none, so a rerun over a current
// collection costs one page per snapshot. Unreadable indexes are
// left to reindex to report.
//
// It also returns the ids of the folders whose snapshot is open (queued or
// started): a legacy database row among them was left open by a folio that
// did not seal migrated rows yet, and is sealed now (see resealRows).
func staleCompact(ctx context.Context, root string, dirs []currentDir, workers int) ([]*folder, map[string]bool, error) {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(workers)
	stale := make([]bool, len(dirs))
	open := make([]bool, len(dirs))
	for i, d := range dirs {
		g.Go(func() error {
			if err := ctx.Err(); err != nil {
				return err
			}
			v, status, ok := headSnapshot(filepath.Join(root, filepath.FromSlash(d.rel), archive.IndexFile))
			stale[i] = ok && staleVersion(v)
			open[i] = ok && (status == "queued" || status == "started")
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, nil, err
	}
	opened := map[string]bool{}
	for i, d := range dirs {
		if open[i] {
			opened[d.id] = true
		}
	}
	var out []*folder
	for i, d := range dirs {
		if stale[i] {
			out = append(out, &folder{name: path.Base(d.rel), rel: d.rel})
		}
	}
	return out, opened, nil
}

// headBytes is how much of an index.jsonl headSnapshot reads first: a
// page, more than a Snapshot record takes unless its notes are long.
const headBytes = 4 << 10

// headFSVersion returns the fs_version of the first Snapshot record of
// the index.jsonl at p ("" when it has none), reading its complete lines
// within the first headBytes and the whole file only when those hold no
// Snapshot record. Only the type of each line is decoded, and the members
// of the Snapshot record: the results after it are not looked at.
func headFSVersion(p string) (string, bool) {
	v, _, ok := headSnapshot(p)
	return v, ok
}

// headSnapshot is headFSVersion that also returns the record's status.
func headSnapshot(p string) (fsVersion, status string, ok bool) {
	fd, err := unix.Open(p, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", "", false
	}
	defer unix.Close(fd)
	pb := headBufs.Get().(*[]byte)
	defer headBufs.Put(pb)
	buf := *pb
	n := 0
	for n < len(buf) {
		r, err := unix.Read(fd, buf[n:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return "", "", false
		}
		if r == 0 {
			break
		}
		n += r
	}
	whole := n < len(buf)
	head := buf[:n]
	if !whole {
		head = head[:bytes.LastIndexByte(head, '\n')+1]
	}
	if v, st, ok := firstSnapshotVersion(head); ok || whole {
		return v, st, ok
	}
	rest, err := archive.ReadFd(fd, 0)
	if err != nil {
		return "", "", false
	}
	return firstSnapshotVersion(append(buf[:n:n], rest...))
}

// headBufs are headFSVersion's read buffers: a rerun reads the head of
// every snapshot's index.
var headBufs = sync.Pool{New: func() any { b := make([]byte, headBytes); return &b }}

// firstSnapshotVersion finds the first Snapshot record among the lines of
// data, by ParseIndex's rules, and returns its fs_version ("" for a bare
// URL or id line) and status.
func firstSnapshotVersion(data []byte) (string, string, bool) {
	for len(data) > 0 {
		var line []byte
		line, data, _ = bytes.Cut(data, []byte{'\n'})
		if archive.ClassifyLine(line).Kind != archive.TypeSnapshot {
			continue
		}
		obj, err := archive.ParseObject(bytes.TrimSpace(line))
		if err != nil {
			return "", "", true // a bare URL or id line
		}
		return obj.String("fs_version"), obj.String("status"), true
	}
	return "", "", false
}
