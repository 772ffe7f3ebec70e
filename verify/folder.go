package verify

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io/fs"
	"iter"
	"math"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/archive/catalog"
	"github.com/folio-archive/folio/internal/rawsys"
	"github.com/folio-archive/folio/plugins"
	"github.com/folio-archive/folio/warc"
)

// mutable are the root files a snapshot rewrites after hashes.json is
// written (each result appends to index.jsonl; index.json and index.html
// are written when the snapshot is sealed). The index check covers them.
var mutable = map[string]bool{archive.IndexFile: true, archive.LegacyIndexFile: true, "index.html": true}

// folderReport is what checking one snapshot folder found.
type folderReport struct {
	files, bytes          int64
	hashes, wrote, legacy bool
	problems              []Problem
}

// checker checks one snapshot folder.
type checker struct {
	c     *archive.Collection
	e     catalog.Entry
	opts  *Options
	found func(Problem)
	rep   folderReport
	warcs []string // the WARC files scan found, slash paths in the folder
	// fd is the open snapshot folder. With trusted, a folder whose
	// change time is before hashes.json's write is not listed: its files
	// are the ones hashes.json lists (see unchanged).
	fd      int
	trusted bool
	before  time.Time // a folder whose ctime is earlier is unchanged since the hashes were taken
	listed  []string  // the files hashes.json lists, sorted
	*scratch
}

// scratch is the memory a worker reuses from folder to folder.
type scratch struct {
	buf  []byte    // file reads
	dbuf []byte    // directory listings
	h    hash.Hash // sha256
	sum  [sha256.Size]byte
}

func newScratch() *scratch {
	return &scratch{buf: make([]byte, 256<<10), dbuf: make([]byte, 32<<10), h: sha256.New()}
}

// problem records a finding about rel, a slash path inside the folder
// ("" for the folder itself).
func (ch *checker) problem(k Kind, rel, format string, args ...any) {
	p := Problem{Kind: k, Path: ch.e.Dir, Snapshot: ch.e.Dir, Detail: fmt.Sprintf(format, args...)}
	if rel != "" {
		p.Path += "/" + rel
	}
	ch.rep.problems = append(ch.rep.problems, p)
	ch.found(p)
}

func (ch *checker) run(ctx context.Context) folderReport {
	dir := ch.c.Path(ch.e.Dir)
	fd, err := openAt(unix.AT_FDCWD, dir, unix.O_DIRECTORY)
	if err == nil {
		defer rawsys.Close(fd)
	}
	switch {
	case err == unix.ENOENT:
		ch.problem(Stale, "", "the catalog lists this snapshot but its folder is gone (run 'folio reindex')")
		return ch.rep
	case err == unix.ELOOP || err == unix.ENOTDIR:
		ch.problem(Stale, "", "the catalog lists this snapshot but it is no longer a folder (run 'folio reindex')")
		return ch.rep
	case err != nil:
		ch.problem(Unreadable, "", "%v", err)
		return ch.rep
	}
	ch.fd = fd
	ch.checkIndex(fd)
	if ch.e.Layout == catalog.LayoutLegacy {
		ch.checkLegacy()
	}
	m, mst, err := ch.readManifest(fd)
	noManifest := errors.Is(err, fs.ErrNotExist)
	switch {
	case noManifest:
		m = nil
	case err != nil:
		ch.problem(Manifest, archive.HashesFile, "%v", unwrapPath(err))
		m = nil
	default:
		ch.rep.hashes = true
		if m.Root != "" && !slices.Contains(m.Leaves, "") {
			if got := plugins.MerkleRoot(plugins.MerkleLevels(m.Leaves)); got != m.Root {
				ch.problem(Manifest, archive.HashesFile, "root_hash %.12s… does not match the file hashes it lists (%.12s…): the manifest was edited", m.Root, got)
			} else {
				ch.trust(m, mst) // only a list its root hash vouches for names a folder's files
			}
		}
	}
	var seen map[string]bool
	if m != nil {
		seen = make(map[string]bool, len(m.Files))
	}
	ch.scan(ctx, fd, "", m, seen, ch.trusted)
	ch.checkWARCs(ctx, dir)
	if m != nil {
		for _, rel := range m.Order {
			if !seen[rel] && !mutable[rel] && !inSkipped(rel) {
				size := ""
				if n := m.Files[rel].Size; n >= 0 {
					size = " (" + archive.HumanBytes(n) + ")"
				}
				ch.problem(Missing, rel, "listed in %s%s but not in the folder", archive.HashesFile, size)
			}
		}
	} else if noManifest && ch.opts.WriteHashes && ch.e.Layout == catalog.LayoutCurrent && ctx.Err() == nil {
		ch.writeHashes(ctx, dir)
	}
	return ch.rep
}

// readFile reads the regular file name of the open folder dirfd whole,
// and returns its stat.
func (ch *checker) readFile(dirfd int, name string) ([]byte, *unix.Stat_t, error) {
	fd, st, err := archive.OpenRegularAt(dirfd, name, true)
	if err != nil {
		return nil, nil, err
	}
	defer rawsys.Close(fd)
	data, err := archive.ReadFd(fd, st.Size)
	if err != nil {
		return nil, nil, &fs.PathError{Op: "read", Path: name, Err: err}
	}
	return data, &st, nil
}

// readManifest reads hashes/hashes.json of the open folder dirfd, and
// returns its stat.
func (ch *checker) readManifest(dirfd int) (*archive.Hashes, *unix.Stat_t, error) {
	data, st, err := ch.readFile(dirfd, archive.HashesFile)
	if err != nil {
		return nil, nil, err
	}
	m, err := archive.ParseHashes(data)
	return m, st, err
}

// trust lets scan take the entries of a folder unchanged since the
// hashes were taken from hashes.json (m, whose root hash matched; mst:
// its stat) instead of a listing. A folder's change time (ctime) moves
// with every entry added, removed or renamed in it, and cannot be set by
// hand; so a folder whose ctime is earlier than the hashes, and whose
// link count says it holds just the subfolders hashes.json names, holds
// the entries it held when they were taken: the files hashes.json lists.
// Each of them is still opened and hashed (a file changed in place does
// not touch its folder), so a missing or changed file is found as
// before. What a folder not listed cannot show is what the hashes left
// out when they were taken: a temp file of a write cut short before
// then, a file the hashing walk could not read, or a file added while the
// clock was set back by more than a second. A listing is three system
// calls per folder beside one stat, and a snapshot holds about as many
// folders as files: verify of 100k snapshots makes a third fewer calls.
//
// The hashes were taken no earlier than the earliest of hashes.json's
// mtime, the time it records (metadata.timestamp: folio takes it before
// its walk, ArchiveBox after) and the birth of the hashes/ folder, which
// ArchiveBox makes before it runs the walk in it; a second less allows
// for the kernel's coarse clock. A copy gives every folder a later ctime,
// so a copied collection is listed in full until its hashes are taken
// again. Trust needs those times, none in the future, a filesystem that
// keeps a change time and a birth time (checked per snapshot), and
// openat2 (Linux 5.6), which opens a file by its path below the snapshot
// folder through no symlink.
func (ch *checker) trust(m *archive.Hashes, mst *unix.Stat_t) {
	if m.Taken.IsZero() || !keepsCtime(ch.fd) || !canOpenBeneath(ch.fd) {
		return
	}
	var hx unix.Statx_t
	if rawsys.Statx(ch.fd, "hashes", unix.AT_SYMLINK_NOFOLLOW, unix.STATX_TYPE|unix.STATX_BTIME, &hx) != nil ||
		hx.Mask&unix.STATX_BTIME == 0 || hx.Mode&unix.S_IFMT != unix.S_IFDIR {
		return
	}
	for _, rel := range m.Order {
		if strings.ContainsRune(rel, utf8.RuneError) {
			// A name that is not UTF-8 is written as U+FFFD: the list
			// does not name the file the folder holds.
			return
		}
	}
	taken, now := m.Taken, ch.opts.Now()
	for _, t := range []time.Time{m.Taken, time.Unix(mst.Mtim.Unix()), statxTime(hx.Btime)} {
		if t.After(now) {
			return // a clock set forward, or a touch: no time to go by
		}
		if t.Before(taken) {
			taken = t
		}
	}
	ch.trusted, ch.before = true, taken.Add(-time.Second)
	ch.listed = m.Order
	if !slices.IsSorted(ch.listed) {
		ch.listed = slices.Sorted(slices.Values(m.Order))
	}
}

func statxTime(t unix.StatxTimestamp) time.Time { return time.Unix(t.Sec, int64(t.Nsec)) }

// What a look at a folder (look) tells of it.
const (
	gone      = iota // not a folder any more, or not stat'ed: its files are missing
	unchanged        // its entries are the files hashes.json lists
	uncounted        // unchanged, but holding a subfolder hashes.json does not name: listed
	changed          // changed since the hashes, or a mount: listed, and all below it
)

// look stats the folder name below the open folder dirfd (r in the
// snapshot folder) to tell whether it has changed since the hashes were
// taken. A folder holds two links and one per subfolder (ext4, XFS,
// tmpfs): one more than the subfolders hashes.json names in it is one it
// left out, such as an empty folder, which may have been given files
// since; that change does not touch this folder, so it is listed, its
// subfolders looked at in turn. A folder changed since, or a mount
// point, is listed with everything below it: a folder moved in, or
// mounted, brings subfolders whose times say nothing of the hashes.
func (ch *checker) look(dirfd int, name, r string) int {
	var st unix.Statx_t
	err := rawsys.Statx(dirfd, name, unix.AT_SYMLINK_NOFOLLOW, unix.STATX_TYPE|unix.STATX_NLINK|unix.STATX_CTIME, &st)
	if err != nil {
		if err != unix.ENOENT && err != unix.ENOTDIR {
			ch.problem(Unreadable, r, "stat: %v", err)
		}
		return gone
	}
	switch {
	case st.Mode&unix.S_IFMT != unix.S_IFDIR:
		return gone // replaced since it was listed
	case st.Mask&unix.STATX_CTIME == 0, !statxTime(st.Ctime).Before(ch.before),
		st.Attributes_mask&unix.STATX_ATTR_MOUNT_ROOT == 0, st.Attributes&unix.STATX_ATTR_MOUNT_ROOT != 0:
		return changed
	case st.Mask&unix.STATX_NLINK == 0, st.Nlink != uint32(2+ch.subfolders(r)):
		return uncounted
	}
	return unchanged
}

// subfolders counts the subfolders of the folder r that hashes.json names
// (as folders of the files it lists).
func (ch *checker) subfolders(r string) int {
	n := 0
	for _, sub := range ch.children(r) {
		if sub {
			n++
		}
	}
	return n
}

// children yields what hashes.json names directly in the folder r, in
// sorted order: each file's path (sub false), and each subfolder's path
// once (sub true), the files below it following one another in the
// sorted list.
func (ch *checker) children(r string) iter.Seq2[string, bool] {
	return func(yield func(rel string, sub bool) bool) {
		prefix := r + "/"
		i, _ := slices.BinarySearch(ch.listed, prefix)
		for i < len(ch.listed) && inFolder(ch.listed[i], r) {
			rel := ch.listed[i]
			name, _, sub := strings.Cut(rel[len(prefix):], "/")
			i++
			if sub {
				rel = prefix + name
				for i < len(ch.listed) && inFolder(ch.listed[i], rel) {
					i++
				}
			}
			if !yield(rel, sub) {
				return
			}
		}
	}
}

// fromManifest checks the folder r, unchanged since hashes.json was
// written, without listing it: the files hashes.json lists in it are
// opened by their paths below the snapshot folder, and its subfolders are
// stat'ed, each checked the same way if unchanged, else listed.
func (ch *checker) fromManifest(ctx context.Context, r string, m *archive.Hashes, seen map[string]bool) {
	warcDir := slices.Contains(warc.Dirs, r)
	for rel, sub := range ch.children(r) {
		if ctx.Err() != nil {
			return
		}
		name := path.Base(rel)
		if sub {
			switch {
			case archive.IsTemp(name): // as scan does: not entered
				ch.problem(Temp, rel, "%s", tempDetail)
			case !plugins.HashSkipped(name):
				ch.folder(ctx, ch.fd, rel, rel, m, seen, true)
			}
			continue
		}
		if archive.IsTemp(name) {
			ch.problem(Temp, rel, "%s", tempDetail)
			continue
		}
		fd, err := rawsys.Openat2(ch.fd, rel, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY, beneath)
		switch {
		case err == unix.ENOENT || err == unix.ELOOP || err == unix.ENXIO || err == unix.ENOTDIR:
			continue // gone or replaced by a symlink: missing, reported at the end
		case err != nil:
			ch.problem(Unreadable, rel, "open: %v", err)
			continue
		}
		ch.check(fd, rel, m, seen)
		rawsys.Close(fd)
		if warcDir && seen[rel] && warc.IsWARC(name) { // seen: a regular file
			ch.warcs = append(ch.warcs, rel)
		}
	}
}

// inFolder reports whether the slash path rel lies in the folder dir.
func inFolder(rel, dir string) bool {
	return len(rel) > len(dir) && rel[len(dir)] == '/' && strings.HasPrefix(rel, dir)
}

// folder checks the folder name below the open folder dirfd, r in the
// snapshot folder: with trusting, from hashes.json if it is unchanged
// since (see look), else by a listing.
func (ch *checker) folder(ctx context.Context, dirfd int, name, r string, m *archive.Hashes, seen map[string]bool, trusting bool) {
	if trusting {
		switch ch.look(dirfd, name, r) {
		case gone:
			return
		case unchanged:
			ch.fromManifest(ctx, r, m, seen)
			return
		case changed:
			trusting = false
		}
	}
	var fd int
	if strings.Contains(name, "/") {
		// A path of several steps below the snapshot folder (a folder
		// of one not listed): opened through no symlink.
		var err error
		fd, err = rawsys.Openat2(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NONBLOCK|unix.O_NOCTTY, beneath)
		switch {
		case err == unix.ELOOP || err == unix.ENOTDIR || err == unix.ENOENT:
			return
		case err != nil:
			ch.problem(Unreadable, r, "open: %v", err)
			return
		}
	} else {
		var ok bool
		if fd, ok = ch.openIn(dirfd, name, r, unix.O_DIRECTORY); !ok {
			return
		}
	}
	ch.scan(ctx, fd, r, m, seen, trusting)
	rawsys.Close(fd)
}

// beneath resolves a path below the snapshot folder through no symlink
// and never above it.
const beneath = unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_BENEATH

// canOpenBeneath reports whether openat2 can be called here, asked of
// the open folder dirfd until an answer that holds for the process: it
// works, or the kernel or a filter refuses it (ENOSYS, EPERM).
func canOpenBeneath(dirfd int) bool {
	switch openat2.Load() {
	case 1:
		return true
	case 2:
		return false
	}
	fd, err := rawsys.Openat2(dirfd, ".", unix.O_RDONLY|unix.O_DIRECTORY, beneath)
	switch {
	case err == nil:
		rawsys.Close(fd)
		openat2.Store(1)
		return true
	case err == unix.ENOSYS || err == unix.EPERM:
		openat2.Store(2)
	}
	return false
}

// openat2 is what canOpenBeneath found: 0 not yet, 1 it works, 2 it
// does not.
var openat2 atomic.Int32

// keepsCtime reports whether the filesystem of the open file fd is one
// whose change times are kept as Linux sets them (trust relies on them).
func keepsCtime(fd int) bool {
	var st unix.Statfs_t
	if rawsys.Fstatfs(fd, &st) != nil {
		return false
	}
	switch uint32(st.Type) {
	case unix.EXT4_SUPER_MAGIC, unix.XFS_SUPER_MAGIC, unix.TMPFS_MAGIC,
		unix.F2FS_SUPER_MAGIC, unix.BCACHEFS_SUPER_MAGIC, zfsSuperMagic:
		return true
	}
	return false
}

// zfsSuperMagic is the f_type of OpenZFS (not in golang.org/x/sys).
const zfsSuperMagic = 0x2fc12fc1

// checkIndex checks the snapshot's index file and that the catalog read
// it as it is now.
func (ch *checker) checkIndex(dirfd int) {
	name := ch.e.IndexFile
	if name == "" {
		return // a legacy folder without an index: nothing to read
	}
	data, st, err := ch.readFile(dirfd, name)
	if errors.Is(err, fs.ErrNotExist) {
		ch.problem(Index, name, "the snapshot's %s is gone", name)
		return
	}
	if err != nil {
		ch.problem(Unreadable, name, "%v", unwrapPath(err))
		return
	}
	if name == archive.IndexFile {
		ix, bad := archive.ParseIndex(data)
		switch {
		case len(bad) == 1:
			ch.problem(Index, name, "%v", bad[0])
		case len(bad) > 1:
			ch.problem(Index, name, "%v (and %d more bad lines)", bad[0], len(bad)-1)
		}
		if _, ok := ix.Snapshot(); !ok && len(bad) == 0 {
			ch.problem(Index, name, "holds no Snapshot record")
		}
	} else if _, err := archive.ParseLegacyIndex(data); err != nil {
		ch.problem(Index, name, "%v", err)
	}
	if st.Size != ch.e.IndexSize || st.Mtim.Nano() != ch.e.IndexMTime.UnixNano() {
		ch.problem(Stale, name, "changed since the catalog read it (run 'folio reindex')")
	}
}

// checkLegacy tells a legacy folder left behind by a migration from one
// not migrated yet.
func (ch *checker) checkLegacy() {
	s := ch.e.Snapshot
	if to, ok := ch.opts.Migrated[s.URL+"\x00"+s.Timestamp]; ok && s.URL != "" {
		ch.problem(LeftBehind, "", "already migrated to %s; this copy was left behind", to)
		return
	}
	ch.rep.legacy = true
}

// scan goes through the open folder dirfd (rel inside the snapshot
// folder) as hashes.json does, symlinks and the skipped folders left out,
// and checks each regular file against the manifest m (nil: none),
// marking what it finds in seen; it notes the WARC files of warc.Dirs for
// checkWARCs. Files are opened relative to their folder and read through
// raw system calls: a snapshot folder is mostly small files, and their
// cost is in the calls, not in the hashing. The listing's entry types
// spare a stat of each folder and, without a manifest, any call for a
// file; an entry the filesystem gives no type is stat'ed.
func (ch *checker) scan(ctx context.Context, dirfd int, rel string, m *archive.Hashes, seen map[string]bool, trusting bool) {
	entries, err := archive.ReadDirFd(dirfd, ch.dbuf)
	if err != nil {
		ch.problem(Unreadable, rel, "list: %v", err)
		return
	}
	warcDir := slices.Contains(warc.Dirs, rel)
	for _, e := range entries {
		if ctx.Err() != nil {
			return
		}
		name := e.Name
		r := name
		if rel != "" {
			r = rel + "/" + name
		}
		if archive.IsTemp(name) {
			ch.problem(Temp, r, "%s", tempDetail)
			continue
		}
		typ := e.Type
		if typ == unix.DT_UNKNOWN {
			var st unix.Stat_t
			if err := rawsys.Lstatat(dirfd, name, &st); err != nil {
				ch.problem(Unreadable, r, "stat: %v", err)
				continue
			}
			typ = dtype(st.Mode)
		}
		switch {
		case typ == unix.DT_DIR && !plugins.HashSkipped(name):
			ch.folder(ctx, dirfd, name, r, m, seen, trusting)
		case typ == unix.DT_REG:
			if warcDir && warc.IsWARC(name) {
				ch.warcs = append(ch.warcs, r)
			}
			if m == nil || rel == "" && mutable[name] {
				continue // nothing to compare it with
			}
			fd, ok := ch.openIn(dirfd, name, r, 0)
			if !ok {
				continue
			}
			ch.check(fd, r, m, seen)
			rawsys.Close(fd)
		}
		// Anything else (a symlink, a socket, a fifo, a device) is not a
		// file hashes.json lists.
	}
}

// openIn opens name below the open folder dirfd (r inside the snapshot
// folder) with openAt and extra flags. An entry replaced since it was
// listed by a symlink, a socket or (with O_DIRECTORY) a file is passed
// over; any other failure is a problem.
func (ch *checker) openIn(dirfd int, name, r string, flags int) (int, bool) {
	fd, err := openAt(dirfd, name, flags)
	switch {
	case err == unix.ELOOP || err == unix.ENXIO || err == unix.ENOTDIR:
		return -1, false
	case err != nil:
		ch.problem(Unreadable, r, "open: %v", err)
		return -1, false
	}
	return fd, true
}

// dtype is the directory entry type of a file mode.
func dtype(mode uint32) uint8 {
	switch mode & unix.S_IFMT {
	case unix.S_IFDIR:
		return unix.DT_DIR
	case unix.S_IFREG:
		return unix.DT_REG
	}
	return unix.DT_LNK // anything else is passed over as a link is
}

// check compares the open file fd, rel in the folder and listed as a
// regular file, with the manifest: listed, same size, same sha256. A
// file hashes.json gives a size and a hash is hashed first and stat'ed
// only when it does not hold that many bytes: for a folder of small files
// the stat was one system call in four. Otherwise, and for a file that
// turns out another size, its stat gives the size to compare and report;
// an entry replaced since it was listed (a fifo, a device) is passed over.
func (ch *checker) check(fd int, rel string, m *archive.Hashes, seen map[string]bool) {
	want, listed := m.Files[rel]
	hashed := listed && want.Size >= 0 && want.Size < math.MaxInt64 && want.Hash != "" && want.Hash != unreadableHash
	if hashed {
		if sum, n, err := ch.hash(fd, want.Size); err == nil && n == want.Size {
			ch.compare(rel, sum, want.Hash, n, seen)
			return
		}
	}
	var st unix.Stat_t
	if err := rawsys.Fstat(fd, &st); err != nil {
		ch.problem(Unreadable, rel, "stat: %v", err)
		return
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return // replaced since it was listed
	}
	size := st.Size
	if !listed {
		ch.problem(Extra, rel, "not listed in %s (%s)", archive.HashesFile, archive.HumanBytes(size))
		return
	}
	seen[rel] = true
	if want.Size >= 0 && want.Size != size {
		ch.problem(Changed, rel, "size %d, %s says %d", size, archive.HashesFile, want.Size)
		return
	}
	if !hashed {
		return // nothing to compare with but the size
	}
	// The stat gives the listed size but the first read did not find
	// it: a read error, or a file changing as it was read. Read again.
	sum, n, err := ch.hash(fd, size)
	if err != nil {
		ch.problem(Unreadable, rel, "read: %v", err)
		return
	}
	ch.compare(rel, sum, want.Hash, n, seen)
}

// compare counts a hashed file of n bytes and reports it changed if its
// sha256 is not the one hashes.json gives.
func (ch *checker) compare(rel, sum, want string, n int64, seen map[string]bool) {
	seen[rel] = true
	if sum != want {
		ch.problem(Changed, rel, "sha256 %.12s…, %s says %.12s…", sum, archive.HashesFile, want)
	}
	ch.rep.files++
	ch.rep.bytes += n
}

// inSkipped reports whether rel lies in a folder hashes.json leaves out.
func inSkipped(rel string) bool {
	for d := path.Dir(rel); d != "."; d = path.Dir(d) {
		if plugins.HashSkipped(path.Base(d)) {
			return true
		}
	}
	return false
}

// unreadableHash is what hashes.json records for a file it could not read.
const unreadableHash = "0000000000000000000000000000000000000000000000000000000000000000"

// hash returns the sha256 hex of the open file fd's bytes from its start
// and how many there were, reading at most size+1 (size: the bytes the
// file should hold; n is size+1 for a longer file). A read that comes back
// short having reached size is the file's end, as in archive.ReadFd, so a
// file of the expected size costs no read past its end.
func (ch *checker) hash(fd int, size int64) (sum string, n int64, err error) {
	ch.h.Reset()
	for {
		asked := min(int64(len(ch.buf)), size+1-n)
		k, err := rawsys.Pread(fd, ch.buf[:asked], n)
		if err != nil {
			return "", n, err
		}
		ch.h.Write(ch.buf[:k])
		n += int64(k)
		if k == 0 || n > size || n == size && int64(k) < asked {
			return hex.EncodeToString(ch.h.Sum(ch.sum[:0])), n, nil
		}
	}
}

// openAt opens name below the folder dirfd for reading, with flags added
// (O_DIRECTORY), never through a symlink (ELOOP) and without blocking on
// a fifo.
func openAt(dirfd int, name string, flags int) (int, error) {
	return rawsys.Openat(dirfd, name, flags|unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY)
}

// writeHashes writes hashes/hashes.json for a folder that has none.
func (ch *checker) writeHashes(ctx context.Context, dir string) {
	doc, _, total, err := plugins.HashTree(ctx, dir, ch.opts.Now())
	if err == nil {
		err = os.MkdirAll(filepath.Join(dir, "hashes"), 0o755)
	}
	if err == nil {
		err = archive.WriteFile(filepath.Join(dir, filepath.FromSlash(archive.HashesFile)), doc, 0o644)
	}
	if err != nil {
		ch.problem(Unreadable, archive.HashesFile, "write: %v", err)
		return
	}
	ch.rep.wrote = true
	ch.rep.files += int64(bytes.Count(doc, []byte(`"path": `)))
	ch.rep.bytes += total
}

// unwrapPath drops the path a PathError repeats: the problem names it.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", pe.Op, pe.Err)
	}
	return err
}
