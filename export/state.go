package export

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/archive/catalog"
)

// state is what an export remembers for the next one: a fingerprint per
// snapshot page and per root page, and for --out the files each snapshot
// contributed. It lives under the collection's .folio/ folder.
type state struct {
	Key   uint64   // options and templates the export ran with
	Pages []uint64 // fingerprint of root page i+1 (and its search shard)
	Total uint64   // snapshots exported
	// ManifestSize and ManifestMTime identify the root index.jsonl the
	// snapshots' Off and Len point into. A ManifestSize below 0 says the
	// manifest lacks records the state has (Flush found it changed by
	// something else): an export must write it whole.
	ManifestSize, ManifestMTime int64
	// Catalog is the catalog generation the export read: the next one
	// reads only the rows changed since (see delta).
	Catalog catalog.Generation
	Select  uint64 // selectionKey of the query
	Snaps   map[uint64]snapState
	// RowBase is the size of the row cache when it was last compacted
	// (see rowCache.compact).
	RowBase int64

	// Kept in memory only (Options.Defer): the records the manifest on
	// disk still holds in their old form, by folder hash, and whether
	// the state differs from the file.
	pending map[uint64]splice
	unsaved bool
	// disk is the digest of the state file this state was read from or
	// last written to, 0 for none; changes made in memory since leave
	// it as it was.
	disk uint64
}

// digest sums what the state holds, whatever the order of its snapshots
// (the file lists them in the map's order): a state whose digest is the
// file's holds what the file does, and an export about to write again
// the state it read (nothing changed at all) leaves the file as it is.
// The map's key stands for each snapshot's Dir, whose hash it is.
func (st *state) digest() uint64 {
	var sum uint64
	for k, s := range st.Snaps {
		sum += s.digest(k)
	}
	return st.digestWith(sum)
}

// digestWith is digest given the sum of the snapshots' digests.
func (st *state) digestWith(sum uint64) uint64 {
	h := mixWords(0x9e3779b97f4a7c15, st.Key, st.Total, uint64(st.ManifestSize), uint64(st.ManifestMTime), st.Select,
		uint64(st.Catalog.N), hashString(st.Catalog.Epoch), uint64(st.RowBase), uint64(len(st.Pages)), uint64(len(st.Snaps)))
	h = mixWords(h, st.Pages...)
	return max(1, mixWords(h, sum)) // (0 stands for no file)
}

// digest is one snapshot's part of its state's digest; k is the map's key.
func (s *snapState) digest(k uint64) uint64 {
	return mixWords(k, s.FP, s.Own, s.URL, s.Sig, uint64(s.Off), uint64(s.Len), uint64(s.Files), uint64(s.Bytes),
		uint64(s.Sort), s.Folder, uint64(s.CTime), uint64(s.Row), uint64(s.Page), uint64(s.flags()))
}

// flags is the byte the state file keeps Archived and Paged in.
func (s *snapState) flags() byte { return boolByte(s.Archived) | boolByte(s.Paged)<<1 }

// seen is what the state knows of the snapshot's folder; setSeen
// records it.
func (s *snapState) seen() folderSeen {
	return folderSeen{sig: s.Folder, ctime: s.CTime, page: s.Paged}
}

func (s *snapState) setSeen(f folderSeen) { s.Folder, s.CTime, s.Paged = f.sig, f.ctime, f.page }

// mixWords folds words into h, each step a bijection of the word for a
// given h: one word changed changes the result.
func mixWords(h uint64, words ...uint64) uint64 {
	for _, w := range words {
		h ^= w
		h *= 0xbf58476d1ce4e5b9
		h ^= h >> 31
	}
	return h
}

// held reports whether the manifest on disk holds the record of the
// snapshot folder with hash h in an older form than the state says.
func (st *state) held(h uint64) bool {
	_, ok := st.pending[h]
	return ok
}

// splice is one record of the root manifest to replace: where the old
// one lies (Off and Len in the manifest the state describes) and the new
// bytes.
type splice struct {
	off, len int64
	rec      []byte
	// ins: the record of a snapshot added at the newest end, which goes
	// before every record of the manifest (off and len are 0); of two,
	// the one of lower seq goes first.
	ins bool
	seq int64
}

// spliceOrder orders splices as they apply to the manifest: by offset,
// the insertions first.
func spliceOrder(a, b splice) int {
	if a.ins != b.ins {
		if a.ins {
			return -1
		}
		return 1
	}
	return cmp.Or(cmp.Compare(a.off, b.off), cmp.Compare(a.seq, b.seq))
}

type snapState struct {
	Dir   string
	FP    uint64 // fingerprint of its page
	Own   uint64 // ownFP: its row and manifest record
	URL   uint64 // hash of its URL and its memberSig: the captures of
	Sig   uint64 // each URL as the export saw them
	Off   int64  // where its record lies in the root manifest
	Len   int64
	Files int64 // files in the exported copy of the folder (--out)
	Bytes int64
	Sort  int64  // catalog.SortTime: with Dir, its place in the list
	Page  uint32 // the root page that lists it
	// Archived caches the manifest's is_archived, which for a snapshot
	// neither sealed nor with outputs costs a look at its folder.
	Archived bool
	// Folder is the hash of the names in the snapshot folder and CTime
	// the folder's ctime when they were listed; Paged, that its page was
	// there then (see folderSeen).
	Folder uint64
	CTime  int64
	Paged  bool
	// Row is where the inputs of its row lie in the row cache, plus one;
	// 0 for none (see rowCache).
	Row int64
}

const stateMagic = "folio-export-state 8\n"

// stateMagic7 is the format before snapState.Paged, read as one whose
// pages were not seen (they are looked for once more).
const stateMagic7 = "folio-export-state 7\n"

func newState(key uint64) *state {
	return &state{Key: key, Snaps: map[uint64]snapState{}}
}

// Cache is an export's state kept in memory for the next export of the
// same process (see Options.Cache). The zero value is an empty cache.
type Cache struct {
	path string
	id   fileID // of the state file as the export wrote it
	st   *state
	// settling are the snapshot folders Look named, by path, with the
	// folders inside them as it last found them.
	settling map[string]settling
}

// settling is a folder Look keeps an eye on: the stamp of the folders
// inside it (folders.insideStamp), and since when it has held.
type settling struct {
	stamp int64
	since time.Time
}

// fileID tells a file apart from the one written before it: each state
// is written to a new inode.
type fileID struct{ ino, size, mtime int64 }

func fileIDOf(path string) (fileID, bool) {
	var st unix.Stat_t
	if unix.Stat(path, &st) != nil {
		return fileID{}, false
	}
	return fileID{int64(st.Ino), st.Size, st.Mtim.Nano()}, true
}

// take returns the state of path: the one kept when the file is still the
// one it was written to, else the file's. The export that takes it owns it
// (it may change it), so the cache is empty until keep.
func (c *Cache) take(path string) (*state, error) {
	if c == nil || c.path != path {
		return readState(path)
	}
	st, err := c.current()
	c.st = nil
	return st, err
}

// Held reports whether exports with Options.Defer left a manifest and a
// state for Flush to write.
func (c *Cache) Held() bool {
	return c != nil && c.st != nil && (c.st.unsaved || c.st.ManifestSize < 0)
}

// HeldListing reports whether what is held adds snapshots to the
// manifest or takes some away. Until Flush writes it, 'folio serve'
// (which takes the folders the manifest lists for the export's) serves
// the page of a snapshot just added as an archived file: with the
// sandbox CSP, not folio's.
func (c *Cache) HeldListing() bool {
	if !c.Held() {
		return false
	}
	for _, r := range c.st.pending {
		if r.ins || r.rec == nil {
			return true
		}
	}
	return false
}

// current returns the state kept, leaving it kept, when its file is
// still the one it was written to; else, when an export was kept, the
// state file as it is (another process, a 'folio export' or the refresh
// after 'folio add', may have written it since), which it keeps instead.
// nil: no export, or a file written again while it was read.
func (c *Cache) current() (*state, error) {
	if c == nil || c.path == "" {
		return nil, nil
	}
	id, ok := fileIDOf(c.path)
	if c.st != nil && ok && id == c.id {
		return c.st, nil
	}
	st, err := readState(c.path)
	if err != nil || st == nil {
		return nil, err
	}
	if now, ok := fileIDOf(c.path); !ok || now != id {
		return nil, nil // written again meanwhile: next time
	}
	c.st, c.id = st, id
	return st, nil
}

// keep remembers st, just written to path (or, deferred, still to be).
func (c *Cache) keep(path string, st *state) {
	if c == nil {
		return
	}
	c.st = nil
	if id, ok := fileIDOf(path); ok {
		c.path, c.id, c.st = path, id, st
	}
}

// readState loads a state file; a missing or unreadable one is nil, which
// means a full export.
func readState(path string) (*state, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read export state %s: %w", path, err)
	}
	testEvent("read state")
	st, ok := decodeState(data)
	if !ok {
		return nil, nil // stale or damaged state only costs a full export
	}
	return st, nil
}

// stateReader takes fixed-size fields off a state file; a read past the
// end sets bad and returns zeros.
type stateReader struct {
	b   []byte
	bad bool
}

func (r *stateReader) take(n int) []byte {
	if r.bad || len(r.b) < n {
		r.bad = true
		return make([]byte, n)
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

func (r *stateReader) u64() uint64 { return binary.LittleEndian.Uint64(r.take(8)) }
func (r *stateReader) i64() int64  { return int64(r.u64()) }
func (r *stateReader) u32() uint32 { return binary.LittleEndian.Uint32(r.take(4)) }
func (r *stateReader) u16() uint16 { return binary.LittleEndian.Uint16(r.take(2)) }
func (r *stateReader) str() string { return string(r.take(int(r.u16()))) }

func decodeState(data []byte) (*state, bool) {
	v7 := bytes.HasPrefix(data, []byte(stateMagic7))
	if !bytes.HasPrefix(data, []byte(stateMagic)) && !v7 {
		return nil, false
	}
	r := &stateReader{b: data[len(stateMagic):]} // (both are as long)
	st := &state{Key: r.u64(), Total: r.u64()}
	pages, snaps := r.u64(), r.u64()
	st.ManifestSize, st.ManifestMTime = r.i64(), r.i64()
	st.Select, st.Catalog.N, st.Catalog.Epoch, st.RowBase = r.u64(), r.i64(), r.str(), r.i64()
	if r.bad || pages > 1<<32 || snaps > 1<<32 {
		return nil, false
	}
	st.Pages = make([]uint64, pages)
	for i := range st.Pages {
		st.Pages[i] = r.u64()
	}
	st.Snaps = make(map[uint64]snapState, snaps)
	var sum uint64 // of the snapshots' digests, summed here rather than over the map
	for range snaps {
		ss := snapState{FP: r.u64(), Own: r.u64(), URL: r.u64(), Sig: r.u64(), Off: r.i64(), Len: r.i64(),
			Files: r.i64(), Bytes: r.i64(), Sort: r.i64(), Folder: r.u64(), CTime: r.i64(), Row: r.i64(), Page: r.u32()}
		flags := r.take(1)[0]
		ss.Archived, ss.Paged = flags&1 != 0, flags&2 != 0 && !v7
		ss.Dir = r.str()
		if r.bad {
			return nil, false
		}
		k := hashString(ss.Dir)
		st.Snaps[k] = ss
		sum += ss.digest(k)
	}
	if r.bad || len(r.b) != 0 {
		return nil, false
	}
	if len(st.Snaps) == int(snaps) { // (a folder listed twice: the digest is not known)
		st.disk = st.digestWith(sum)
	}
	return st, true
}

func (st *state) write(path string) error {
	return archive.WriteFileWith(path, 0o644, func(w io.Writer) error {
		le := binary.LittleEndian
		b := make([]byte, 0, 1<<16)
		b = append(b, stateMagic...)
		b = le.AppendUint64(b, st.Key)
		b = le.AppendUint64(b, st.Total)
		b = le.AppendUint64(b, uint64(len(st.Pages)))
		b = le.AppendUint64(b, uint64(len(st.Snaps)))
		b = le.AppendUint64(b, uint64(st.ManifestSize))
		b = le.AppendUint64(b, uint64(st.ManifestMTime))
		b = le.AppendUint64(b, st.Select)
		b = le.AppendUint64(b, uint64(st.Catalog.N))
		b = appendStateString(b, st.Catalog.Epoch)
		b = le.AppendUint64(b, uint64(st.RowBase))
		for _, p := range st.Pages {
			b = le.AppendUint64(b, p)
		}
		for _, s := range st.Snaps {
			for _, v := range [...]uint64{s.FP, s.Own, s.URL, s.Sig, uint64(s.Off), uint64(s.Len),
				uint64(s.Files), uint64(s.Bytes), uint64(s.Sort), s.Folder, uint64(s.CTime), uint64(s.Row)} {
				b = le.AppendUint64(b, v)
			}
			b = le.AppendUint32(b, s.Page)
			b = append(b, s.flags())
			b = appendStateString(b, s.Dir)
			if len(b) > 1<<16-512 {
				if _, err := w.Write(b); err != nil {
					return err
				}
				b = b[:0]
			}
		}
		_, err := w.Write(b)
		return err
	})
}

// appendStateString appends a string of at most 65535 bytes (longer ones
// are cut: a folder name that long cannot exist) with its length.
func appendStateString(b []byte, s string) []byte {
	if len(s) > 1<<16-1 {
		s = s[:1<<16-1]
	}
	b = binary.LittleEndian.AppendUint16(b, uint16(len(s)))
	return append(b, s...)
}

// hasher builds 64-bit fingerprints.
type hasher struct{ h uint64 }

func newHasher() *hasher { return &hasher{h: 14695981039346656037} }

func (x *hasher) bytes(b []byte) *hasher {
	for _, c := range b {
		x.h ^= uint64(c)
		x.h *= 1099511628211
	}
	x.h ^= 0xff // separator
	x.h *= 1099511628211
	return x
}

func (x *hasher) str(s string) *hasher {
	for i := 0; i < len(s); i++ {
		x.h ^= uint64(s[i])
		x.h *= 1099511628211
	}
	x.h ^= 0xff
	x.h *= 1099511628211
	return x
}

func (x *hasher) u64(v uint64) *hasher {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	return x.bytes(b[:])
}

func (x *hasher) sum() uint64 { return x.h }

// hashString is the 64-bit FNV-1a hash of s.
func hashString(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// testEvent reports the steps of an export to tests of their order; it
// does nothing otherwise.
var testEvent = func(string) {}

// memberSig is what a capture shows on the pages of the other captures
// of its URL.
func memberSig(it *item) uint64 {
	return newHasher().str(it.Dir).str(it.Snapshot.Title).u64(uint64(it.Snapshot.BookmarkedAt.UnixNano())).sum()
}

func (s *site) snapStateOf(it *item) snapState {
	ss := snapState{Dir: it.Dir, FP: it.fp, Own: it.own, URL: hashString(it.Snapshot.URL), Sig: memberSig(it),
		Archived: it.archived, Sort: it.sort, Page: uint32(it.page)}
	ss.setSeen(s.folders.of(it.Dir))
	return ss
}

// ownFP is what a snapshot's own row, manifest record and page depend
// on: its index file, its captured text for the page's text shard, and
// the names in its folder for the outputs no record names.
func (s *site) ownFP(it *item) uint64 {
	return newHasher().str(it.Dir).str(it.IndexFile).u64(uint64(it.IndexSize)).u64(uint64(it.IndexMTime.UnixNano())).str(it.TextStamp).
		u64(s.folders.of(it.Dir).sig).sum()
}

// fingerprint is what a snapshot page depends on: the snapshot's index
// file and the captures of the same URL.
func (s *site) fingerprint(groups map[uint64]group, it *item) uint64 {
	h := newHasher().u64(it.own)
	if g := groups[hashString(it.Snapshot.URL)]; g.n > 1 {
		h.u64(uint64(g.n)).u64(g.sig)
	}
	return h.sum()
}
