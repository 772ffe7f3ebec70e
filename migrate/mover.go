package migrate

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/folio-archive/folio/archive"
)

// Errors of the mover. Each is wrapped with the path it concerns.
var (
	// ErrSpecialFile: a fifo, socket or device under a snapshot folder. The
	// snapshot is left untouched.
	ErrSpecialFile = errors.New("cannot safely copy special file")
	// ErrWouldOverwrite: the destination holds a different file (or a
	// different kind of treeEntry) at a path the source also has. Nothing is
	// copied and both stay as they are.
	ErrWouldOverwrite = errors.New("would overwrite a different file")
	// ErrMismatch: verification found the destination differing from the
	// source. The source is not deleted.
	ErrMismatch = errors.New("verification failed")
	// ErrLegacySymlink: the archive/<timestamp> of a database row is a
	// symlink that does not resolve into archive/users (or is broken). The
	// symlink is kept and the row fails, as in ArchiveBox ("Legacy output
	// symlink does not point to the expected target").
	ErrLegacySymlink = errors.New("legacy output symlink does not point to the expected target")
	// ErrLeftBehind: a folder under archive/ that holds a snapshot's files
	// is still there when the run ends. The run fails rather than report
	// a migration complete that left data behind.
	ErrLeftBehind = errors.New("left behind")
)

// treeEntry is one thing in a snapshot tree, as Lstat saw it.
type treeEntry struct {
	rel    string // slash path below the tree root; "" is the root itself
	mode   fs.FileMode
	size   int64
	mtime  time.Time
	atime  time.Time
	target string // link text of a symlink
}

func (e *treeEntry) isDir() bool     { return e.mode.IsDir() }
func (e *treeEntry) isLink() bool    { return e.mode&fs.ModeSymlink != 0 }
func (e *treeEntry) isRegular() bool { return e.mode.IsRegular() }

func treeBytes(tree []treeEntry) (files, bytes int64) {
	for i := range tree {
		if tree[i].isRegular() {
			files++
			bytes += tree[i].size
		}
	}
	return files, bytes
}

// payloadBytes is the size of a snapshot's files other than its root
// index.jsonl: the archive_size a migrated snapshot gets when its record
// has none.
func payloadBytes(tree []treeEntry) int64 {
	var n int64
	for i := range tree {
		if tree[i].isRegular() && tree[i].rel != indexName {
			n += tree[i].size
		}
	}
	return n
}

// under returns root/rel for a tree-relative slash path.
func under(root, rel string) string {
	if rel == "" {
		return root
	}
	return filepath.Join(root, filepath.FromSlash(rel))
}

// copier copies snapshot trees. It is safe for concurrent use by many
// snapshots at once; each tree is copied by one goroutine.
type copier struct {
	// fault is called mid-file with step "write" so tests can fail or kill
	// a copy half way; nil in normal runs.
	fault func(step, source string) error
	label string

	// What the last moveTree left at the destination, for undoing it:
	// fresh when it created the destination folder as a whole, else the
	// entries it created inside an existing one, in creation order.
	fresh   bool
	created []string

	// dirs records the folders created above a destination; nil creates
	// them untracked.
	dirs *madeDirs
}

// madeDirs records the folders a run creates above snapshot folders (user,
// date and domain folders), so that those a failed snapshot left empty are
// removed when the run ends: then no worker can be about to move a
// snapshot into one of them.
type madeDirs struct {
	mu   sync.Mutex
	dirs []string
}

// mkdirAll is os.MkdirAll that records the folders it created.
func (m *madeDirs) mkdirAll(dir string) error {
	if m == nil {
		return os.MkdirAll(dir, 0o755)
	}
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		var st unix.Stat_t
		err := unix.Stat(d, &st)
		if err == nil {
			break
		}
		if err != unix.ENOENT || filepath.Dir(d) == d {
			return os.MkdirAll(dir, 0o755) // names the problem as MkdirAll does
		}
		missing = append(missing, d)
	}
	for i := len(missing) - 1; i >= 0; i-- {
		err := os.Mkdir(missing[i], 0o755)
		if errors.Is(err, fs.ErrExist) {
			continue // another worker's
		}
		if err != nil {
			return err
		}
		m.mu.Lock()
		m.dirs = append(m.dirs, missing[i])
		m.mu.Unlock()
	}
	return nil
}

// tidy removes the recorded folders that are empty, deepest first. A
// folder that holds anything stays: rmdir fails on it.
func (m *madeDirs) tidy() {
	m.mu.Lock()
	defer m.mu.Unlock()
	sort.Slice(m.dirs, func(i, k int) bool { return len(m.dirs[i]) > len(m.dirs[k]) })
	for _, d := range m.dirs {
		_ = unix.Rmdir(d)
	}
	m.dirs = nil
}

// undo removes what the last moveTree copied into the destination dst
// (never anything that was there before). The source is intact.
func (c *copier) undo(dst string) error {
	if c.fresh {
		c.fresh = false
		return os.RemoveAll(dst)
	}
	for i := len(c.created) - 1; i >= 0; i-- {
		if err := os.Remove(c.created[i]); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	c.created = nil
	return nil
}

var tempSeq atomic.Uint64

var bufPool = sync.Pool{New: func() any { b := make([]byte, 1<<20); return &b }}

// tempName returns a name beside base that archive.IsTemp recognises and no
// other writer uses: process id and a counter (the collection lock keeps
// other folio processes out).
func tempName(base string) string {
	return "." + base + archive.TempMarker + strconv.Itoa(os.Getpid()) + "-" + strconv.FormatUint(tempSeq.Add(1), 10)
}

// copyOp is what the pre-pass decided for one source treeEntry.
type copyOp int

const (
	opCreate copyOp = iota // absent at the destination: copy it
	opSame                 // identical treeEntry already there
	opLater                // root index.jsonl that differs: merged by the index step
	opSide                 // root index.json or index.html that differs: copied beside it (sideIndex)
)

// sideIndex is where a merged folder's root index.json (or index.html)
// goes when the destination already holds a different one: beside it,
// named after the folder it comes from (index.<folder name>.json). Two
// folders of one snapshot (its archive/<timestamp> folder and the 0.9
// folder an earlier ArchiveBox run began to fill) each carry such a record
// of the snapshot; their facts are merged into index.jsonl, and both files
// are kept byte for byte. ok is false for every other entry.
func sideIndex(src, rel string) (side string, ok bool) {
	ext, ok := sideIndexed[rel]
	if !ok {
		return "", false
	}
	return "index." + filepath.Base(src) + ext, true
}

var sideIndexed = map[string]string{archive.LegacyIndexFile: ".json", "index.html": ".html"}

// preflight compares the source tree with an existing destination and
// decides each treeEntry, before anything is written: one differing treeEntry
// aborts the whole snapshot with ErrWouldOverwrite.
func preflight(src, dst string, tree []treeEntry) ([]copyOp, error) {
	ops := make([]copyOp, len(tree))
	for i := range tree {
		e := &tree[i]
		d := under(dst, e.rel)
		fi, err := os.Lstat(d)
		if errors.Is(err, fs.ErrNotExist) {
			ops[i] = opCreate
			continue
		}
		if err != nil {
			return nil, err
		}
		switch {
		case e.isDir():
			if !fi.IsDir() {
				return nil, fmt.Errorf("%w: %s (a directory in %s)", ErrWouldOverwrite, d, src)
			}
			ops[i] = opSame
		case e.isLink():
			if fi.Mode()&fs.ModeSymlink == 0 {
				return nil, fmt.Errorf("%w: %s (a symlink in %s)", ErrWouldOverwrite, d, src)
			}
			t, err := os.Readlink(d)
			if err != nil {
				return nil, err
			}
			if t != e.target {
				return nil, fmt.Errorf("%w: %s (symlink to %q, source links to %q)", ErrWouldOverwrite, d, t, e.target)
			}
			ops[i] = opSame
		default:
			if e.rel == indexName {
				ops[i] = opLater
				if fi.Mode().IsRegular() {
					if same, err := sameContent(under(src, e.rel), d, e.size, fi.Size()); err == nil && same {
						ops[i] = opSame
					}
				}
				continue
			}
			if !fi.Mode().IsRegular() {
				return nil, fmt.Errorf("%w: %s (not a regular file)", ErrWouldOverwrite, d)
			}
			same, err := sameContent(under(src, e.rel), d, e.size, fi.Size())
			if err != nil {
				return nil, err
			}
			if same {
				ops[i] = opSame
				continue
			}
			side, ok := sideIndex(src, e.rel)
			if !ok {
				return nil, fmt.Errorf("%w: %s", ErrWouldOverwrite, d)
			}
			ops[i] = opSide
			r, _, err := compareFiles(under(src, e.rel), under(dst, side))
			switch {
			case err != nil:
				return nil, err
			case r == fileSame:
				ops[i] = opSame
			case r != fileMissing:
				return nil, fmt.Errorf("%w: %s (where the differing %s of %s is kept)", ErrWouldOverwrite, under(dst, side), e.rel, src)
			}
		}
	}
	return ops, nil
}

// indexName is the root index.jsonl, which the index step merges instead
// of copying over a destination's own.
const indexName = "index.jsonl"

// copyTree copies tree from src into dst, creating only entries ops marks
// opCreate. Files go to a temp name and are renamed into place without
// replacing anything. On error the entries it created are removed again,
// so a failed copy leaves the destination as it found it. It returns the
// bytes copied.
func (c *copier) copyTree(src, dst string, tree []treeEntry, ops []copyOp, direct bool) (n int64, err error) {
	var created []string // destination paths, in creation order
	defer func() {
		if err != nil {
			for i := len(created) - 1; i >= 0; i-- {
				os.Remove(created[i])
			}
		}
	}()
	var dirs []int // created dirs, to get their mode and times at the end
	for i := range tree {
		if ops[i] != opCreate && ops[i] != opSide {
			continue
		}
		e := &tree[i]
		s, d := under(src, e.rel), under(dst, e.rel)
		if ops[i] == opSide {
			side, _ := sideIndex(src, e.rel)
			d = under(dst, side)
		}
		switch {
		case e.isDir():
			if err := os.Mkdir(d, 0o700); err != nil {
				return n, fmt.Errorf("create %s: %w", d, err)
			}
			created = append(created, d)
			dirs = append(dirs, i)
		case e.isLink():
			if err := os.Symlink(e.target, d); err != nil {
				return n, fmt.Errorf("create symlink %s: %w", d, err)
			}
			created = append(created, d)
			ts := []unix.Timespec{unix.NsecToTimespec(e.atime.UnixNano()), unix.NsecToTimespec(e.mtime.UnixNano())}
			_ = unix.UtimesNanoAt(unix.AT_FDCWD, d, ts, unix.AT_SYMLINK_NOFOLLOW)
		default:
			w, err := c.copyFile(s, d, e, direct)
			n += w
			if err != nil {
				return n, err
			}
			created = append(created, d)
		}
	}
	c.created = append(c.created, created...)
	for j := len(dirs) - 1; j >= 0; j-- {
		e := &tree[dirs[j]]
		d := under(dst, e.rel)
		if err := os.Chmod(d, e.mode&(fs.ModePerm|fs.ModeSetgid|fs.ModeSticky)); err != nil {
			return n, fmt.Errorf("chmod %s: %w", d, err)
		}
		if err := os.Chtimes(d, e.atime, e.mtime); err != nil {
			return n, fmt.Errorf("set times of %s: %w", d, err)
		}
	}
	return n, nil
}

// copyFile copies one regular file with its mode and times to d, which
// must not exist. The data goes through copy_file_range when the kernel
// offers it. Into an existing folder it writes a temp file renamed into
// place; direct (inside a private staging folder) it writes d itself.
func (c *copier) copyFile(s, d string, e *treeEntry, direct bool) (int64, error) {
	in, err := unix.Open(s, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, &fs.PathError{Op: "open", Path: s, Err: err}
	}
	defer unix.Close(in)
	tmp := d
	if !direct {
		tmp = filepath.Join(filepath.Dir(d), tempName(filepath.Base(d)))
	}
	out, err := unix.Open(tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return 0, fmt.Errorf("copy %s: %w", s, &fs.PathError{Op: "create", Path: tmp, Err: err})
	}
	fail := func(err error) (int64, error) {
		unix.Close(out)
		unix.Unlink(tmp)
		return 0, fmt.Errorf("copy %s to %s: %w", s, d, err)
	}
	var w int64
	if c.fault != nil {
		// Half the file, then the fault point, then the rest: a failing
		// fault is a write error in the middle of a file.
		if w, err = copyData(out, in, e.size/2, s); err != nil {
			return fail(err)
		}
		if err := c.fault("write", c.label); err != nil {
			return fail(err)
		}
	}
	rest, err := copyData(out, in, e.size-w, s)
	if err != nil {
		return fail(err)
	}
	w += rest
	if err := unix.Fchmod(out, uint32(e.mode.Perm())|unixSpecialBits(e.mode)); err != nil {
		return fail(err)
	}
	// The times last: nothing writes to the file after them.
	ts := []unix.Timespec{unix.NsecToTimespec(e.atime.UnixNano()), unix.NsecToTimespec(e.mtime.UnixNano())}
	if err := unix.UtimesNanoAt(out, "", ts, unix.AT_EMPTY_PATH); err != nil {
		return fail(fmt.Errorf("set times: %w", err))
	}
	if err := unix.Close(out); err != nil {
		unix.Unlink(tmp)
		return 0, fmt.Errorf("copy %s to %s: %w", s, d, err)
	}
	if !direct {
		if err := renameNoReplace(tmp, d); err != nil {
			os.Remove(tmp)
			return 0, fmt.Errorf("copy %s to %s: %w", s, d, err)
		}
	}
	return w, nil
}

// unixSpecialBits maps the setuid, setgid and sticky bits of m to chmod's.
func unixSpecialBits(m fs.FileMode) uint32 {
	var b uint32
	if m&fs.ModeSetuid != 0 {
		b |= unix.S_ISUID
	}
	if m&fs.ModeSetgid != 0 {
		b |= unix.S_ISGID
	}
	if m&fs.ModeSticky != 0 {
		b |= unix.S_ISVTX
	}
	return b
}

// renameNoReplace renames from to to and fails if to exists.
func renameNoReplace(from, to string) error {
	err := unix.Renameat2(unix.AT_FDCWD, from, unix.AT_FDCWD, to, unix.RENAME_NOREPLACE)
	if err == nil {
		return nil
	}
	if errors.Is(err, unix.EEXIST) {
		return fmt.Errorf("%w: %s", ErrWouldOverwrite, to)
	}
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) {
		// The filesystem has no RENAME_NOREPLACE; the collection lock
		// keeps other writers out, so check and rename.
		if _, err := os.Lstat(to); err == nil {
			return fmt.Errorf("%w: %s", ErrWouldOverwrite, to)
		}
		return os.Rename(from, to)
	}
	return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
}

// sameContent compares two regular files, sizes first.
func sameContent(a, b string, sizeA, sizeB int64) (bool, error) {
	if sizeA != sizeB {
		return false, nil
	}
	r, _, err := compareFiles(a, b)
	return r == fileSame, err
}

// moveTree moves the snapshot folder src to dst (absolute paths). When dst
// does not exist it is a rename, unless forceCopy is set or src and dst
// are on different filesystems; then the tree is copied into a staging
// folder beside dst that is renamed into place when complete. When dst
// exists the trees are merged by copy, never replacing anything. In the
// copy cases src is left in place for the caller to verify and delete.
func (c *copier) moveTree(src, dst string, tree []treeEntry, forceCopy bool) (renamed bool, n int64, err error) {
	_, err = os.Lstat(dst)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, 0, err
	}
	if !exists {
		if err := c.dirs.mkdirAll(filepath.Dir(dst)); err != nil {
			return false, 0, fmt.Errorf("create %s: %w", filepath.Dir(dst), err)
		}
		if !forceCopy {
			err := renameNoReplace(src, dst)
			if err == nil {
				_, n := treeBytes(tree)
				return true, n, nil
			}
			if !errors.Is(err, unix.EXDEV) {
				return false, 0, fmt.Errorf("move %s to %s: %w", src, dst, err)
			}
		}
		stage := filepath.Join(filepath.Dir(dst), tempName(filepath.Base(dst)))
		ops := make([]copyOp, len(tree)) // all opCreate
		n, err := c.copyTree(src, stage, tree, ops, true)
		if err != nil {
			os.RemoveAll(stage)
			return false, n, err
		}
		if err := renameNoReplace(stage, dst); err != nil {
			os.RemoveAll(stage)
			return false, n, fmt.Errorf("move %s into place: %w", dst, err)
		}
		c.created, c.fresh = nil, true
		return false, n, nil
	}
	ops, err := preflight(src, dst, tree)
	if err != nil {
		return false, 0, err
	}
	n, err = c.copyTree(src, dst, tree, ops, false)
	return false, n, err
}

// removeTree deletes a verified source tree, children before parents,
// calling fault("remove") before each treeEntry so tests can stop half way.
// Directories are removed with rmdir, so an treeEntry that appeared after the
// verification is never deleted: the removal then fails.
func removeTree(root string, tree []treeEntry, fault func(step, source string) error, label string) error {
	for i := len(tree) - 1; i >= 0; i-- {
		if fault != nil {
			if err := fault("remove", label); err != nil {
				return err
			}
		}
		p := under(root, tree[i].rel)
		var err error
		if tree[i].isDir() {
			err = unix.Rmdir(p)
		} else {
			err = unix.Unlink(p)
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove %s: %w", p, err)
		}
	}
	return nil
}

// syncGroup coalesces concurrent requests for a durability barrier: every
// caller returns only after a run of fn that started after it called, but
// callers arriving together share one run (group commit).
type syncGroup struct {
	mu      sync.Mutex
	cond    *sync.Cond
	started uint64
	done    uint64
	running bool
	errs    map[uint64]error
}

func newSyncGroup() *syncGroup {
	g := &syncGroup{errs: map[uint64]error{}}
	g.cond = sync.NewCond(&g.mu)
	return g
}

func (g *syncGroup) do(fn func() error) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	// A run in progress began before this call and does not count.
	need := g.started + 1
	for g.done < need {
		if g.running {
			g.cond.Wait()
			continue
		}
		g.running = true
		g.started++
		gen := g.started
		g.mu.Unlock()
		err := fn()
		g.mu.Lock()
		g.running = false
		g.done = gen
		if err != nil {
			g.errs[gen] = err
		}
		g.cond.Broadcast()
	}
	// Any run from need on covers this caller; report its error.
	for gen := need; gen <= g.done; gen++ {
		if err := g.errs[gen]; err != nil {
			return err
		}
	}
	return nil
}

// syncFS makes everything written to the filesystem holding dir durable.
func syncFS(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := unix.Syncfs(int(f.Fd())); err != nil {
		return fmt.Errorf("sync filesystem of %s: %w", dir, err)
	}
	return nil
}
