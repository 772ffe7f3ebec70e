package export

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/folio-archive/folio/archive"
)

// A snapshot's row in the root list and its search entry show what its
// folder holds: the outputs found there (the icons) and its screenshot and
// favicon. Made from the folder, a row costs a read of its index.jsonl, a
// listing of the folder and a stat of each output, about 38 system calls.
// Root pages are rendered again far more often than snapshot pages: one
// snapshot added or removed moves every row after it, and the page count
// every page shows. So a row's files are kept in a row cache beside the
// export's state, and the row of a snapshot whose page is not written
// again (its ownFP unchanged: the same index file, the same names in its
// folder) is made from the cache. Such a row shows what the snapshot's
// page shows, which is written from the same files.
//
// The cache file (the state's path + rowsSuffix) is only appended to: a
// record is written each time a row is made from a folder, and the state
// keeps its offset (snapState.Row). A record names its snapshot folder,
// the export's key and the snapshot's ownFP, and carries a checksum; one
// that does not match (a state and a file from different runs, a record
// cut short by a crash) is not used, and the row is made from the folder.
// When the file holds more than twice the records the state refers to, it
// is written again with those only (compact).

// previewFiles and faviconFiles are the files of a snapshot folder its row
// links when they are not empty, each with its fallback.
var (
	previewFiles = []string{"screenshot/screenshot.png", "screenshot.png"}
	faviconFiles = []string{"favicon/favicon.ico", "favicon.ico"}
)

// rowsSuffix names the row cache after the state file it belongs to.
const rowsSuffix = ".rows"

// rowFormat changes with what a record holds or how a row is made from it.
const rowFormat = "folio-export-rows 2"

const rowHeader = 32 // payload length, checksum, folder hash, key, ownFP

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

type rowCache struct {
	path string
	key  uint64 // the export's key with rowFormat

	read *os.File // the file as the export found it; nil when there was none
	// fresh: no record of the file is used (a first or --full export); the
	// first put empties it, and what it then holds is all the state's.
	fresh bool

	mu   sync.Mutex
	w    *os.File // opened for appending by the first put
	bw   *bufio.Writer
	size int64 // of the file, buffered records included
	err  error // the first write error: later puts do nothing
}

// openRowCache opens the row cache of the state file statePath for reading
// records written by earlier exports (unless fresh); a missing or
// unreadable one is empty.
func openRowCache(statePath string, key uint64, fresh bool) *rowCache {
	c := &rowCache{path: statePath + rowsSuffix, key: newHasher().u64(key).str(rowFormat).sum(), fresh: fresh}
	if fresh {
		return c
	}
	if f, err := os.OpenFile(c.path, os.O_RDONLY|syscall.O_NOFOLLOW, 0); err == nil {
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			c.read, c.size = f, fi.Size()
		} else {
			f.Close()
		}
	}
	return c
}

// rowInputs is what a row is made of besides the catalog's record: the
// outputs found in the folder and the preview and favicon files.
type rowInputs struct {
	outs []output
	f    *files
}

// get returns the inputs stored at off (snapState.Row) for the folder dir
// with ownFP own, or false.
func (c *rowCache) get(off int64, dir string, own uint64) (rowInputs, bool) {
	if c == nil || c.read == nil || off <= 0 {
		return rowInputs{}, false
	}
	buf := make([]byte, recordGuess)
	n, err := c.read.ReadAt(buf, off-1)
	if err != nil && !errors.Is(err, io.EOF) {
		return rowInputs{}, false
	}
	testEvent("row cache record read")
	size, ok := c.header(buf[:n], dir, own)
	if !ok {
		return rowInputs{}, false
	}
	if rowHeader+size > n {
		if rowHeader+size > len(buf) {
			buf = make([]byte, rowHeader+size)
		}
		if _, err := c.read.ReadAt(buf[:rowHeader+size], off-1); err != nil {
			return rowInputs{}, false
		}
	}
	return decodeRecord(buf[:rowHeader+size], dir)
}

// recordGuess is how much of the cache a look at one record reads first:
// most records fit.
const recordGuess = 1024

// header checks the header of the record at the start of buf (which
// holds at least its header) against dir, the export's key and own, and
// returns the size of its payload.
func (c *rowCache) header(buf []byte, dir string, own uint64) (int, bool) {
	if len(buf) < rowHeader {
		return 0, false
	}
	le := binary.LittleEndian
	size := int(le.Uint32(buf))
	if le.Uint64(buf[8:]) != hashString(dir) || le.Uint64(buf[16:]) != c.key || le.Uint64(buf[24:]) != own || size > 1<<24 {
		return 0, false
	}
	return size, true
}

// decodeRecord checks the checksum of a whole record, header included,
// and decodes its payload.
func decodeRecord(rec []byte, dir string) (rowInputs, bool) {
	if crc32.Checksum(rec[8:], castagnoli) != binary.LittleEndian.Uint32(rec[4:]) {
		return rowInputs{}, false
	}
	return decodeRow(rec[rowHeader:], dir)
}

// rowSpans are parts of the cache read at once: the records of a root
// page's kept rows, which the export reads together, lie mostly side by
// side (written as the page's workers finished), and one read of
// them all costs one system call instead of one per row.
type rowSpans []rowSpan

type rowSpan struct {
	off  int64 // of data[0] in the file
	data []byte
}

// maxSpan bounds one read; maxGap is the most bytes between two records
// read over rather than read apart.
const (
	maxSpan = 1 << 20
	maxGap  = 4096
)

// readSpans reads the records at offs (snapState.Row values, 0 for none)
// in as few reads as their places allow.
func (c *rowCache) readSpans(offs []int64) rowSpans {
	if c == nil || c.read == nil {
		return nil
	}
	var at []int64
	for _, o := range offs {
		if o > 0 {
			at = append(at, o-1)
		}
	}
	slices.Sort(at)
	var out rowSpans
	for i := 0; i < len(at); {
		start, end := at[i], at[i]+recordGuess
		j := i + 1
		for ; j < len(at) && at[j] <= end+maxGap && at[j]+recordGuess-start <= maxSpan; j++ {
			end = max(end, at[j]+recordGuess)
		}
		buf := make([]byte, end-start)
		n, err := c.read.ReadAt(buf, start)
		if err == nil || errors.Is(err, io.EOF) {
			testEvent("row cache span read")
			out = append(out, rowSpan{off: start, data: buf[:n]})
		}
		i = j
	}
	return out
}

// getIn is get, from spans when they hold the whole record. A record
// whose header the spans hold and refuse is not read again.
func (c *rowCache) getIn(spans rowSpans, off int64, dir string, own uint64) (rowInputs, bool) {
	if off > 0 {
		at := off - 1
		i, _ := slices.BinarySearchFunc(spans, at, func(s rowSpan, at int64) int { return cmp.Compare(s.off, at+1) })
		if i > 0 {
			sp := spans[i-1]
			if buf := sp.data[min(at-sp.off, int64(len(sp.data))):]; len(buf) >= rowHeader {
				size, ok := c.header(buf, dir, own)
				if !ok {
					return rowInputs{}, false
				}
				if rowHeader+size <= len(buf) {
					testEvent("row from span")
					return decodeRecord(buf[:rowHeader+size], dir)
				}
			}
		}
	}
	return c.get(off, dir, own)
}

// put appends the inputs of dir's row and returns their offset for
// snapState.Row (0 when the cache cannot be written: the row is then made
// from the folder next time too).
func (c *rowCache) put(dir string, own uint64, in rowInputs) int64 {
	if c == nil {
		return 0
	}
	rec := make([]byte, rowHeader, rowHeader+512)
	le := binary.LittleEndian
	le.PutUint64(rec[8:], hashString(dir))
	le.PutUint64(rec[16:], c.key)
	le.PutUint64(rec[24:], own)
	rec = encodeRow(rec, dir, in)
	le.PutUint32(rec, uint32(len(rec)-rowHeader))
	le.PutUint32(rec[4:], crc32.Checksum(rec[8:], castagnoli))

	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return 0
	}
	if c.w == nil {
		flags := os.O_WRONLY | os.O_CREATE | os.O_APPEND | syscall.O_NOFOLLOW
		if c.fresh {
			// (A crash before the state is written leaves the old state's
			// offsets finding records that do not match: rows from folders.)
			flags |= os.O_TRUNC
		}
		c.w, c.err = os.OpenFile(c.path, flags, 0o644)
		if c.err != nil {
			return 0
		}
		fi, err := c.w.Stat()
		if err != nil {
			c.err = err
			return 0
		}
		c.size = fi.Size() // (a crash may have left records the state does not know)
		c.bw = bufio.NewWriterSize(c.w, 256<<10)
	}
	off := c.size + 1
	if _, err := c.bw.Write(rec); err != nil {
		c.err = err
		return 0
	}
	c.size += int64(len(rec))
	return off
}

// sync makes the records put durable, before the state that refers to
// them is written. An error writing the cache does not fail the export:
// the rows it could not keep are made from their folders next time.
func (c *rowCache) sync() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.w == nil || c.err != nil {
		return
	}
	if c.err = c.bw.Flush(); c.err == nil {
		c.err = c.w.Sync()
	}
}

// close ends the export's use of the cache.
func (c *rowCache) close() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.w != nil {
		if c.err == nil {
			c.err = c.bw.Flush()
		}
		c.w.Close()
		c.w = nil
	}
	if c.read != nil {
		c.read.Close()
		c.read = nil
	}
}

// compact writes the file again with only the records snaps refers to,
// and moves their offsets, when it has grown past twice its size after
// the last compaction (base, kept in the state). It returns the new base.
// It runs after sync, before the state is written; a crash in between
// leaves a state whose offsets find records that do not match, which
// costs a look at those folders, nothing more.
func (c *rowCache) compact(snaps map[uint64]snapState, base int64) (int64, error) {
	if c == nil {
		return base, nil
	}
	c.mu.Lock()
	size, werr, fresh := c.size, c.err, c.fresh && c.w != nil
	c.mu.Unlock()
	switch {
	case fresh:
		return size, nil // every record is the state's
	case werr != nil || size <= 2*base+compactSlack:
		return base, nil
	}
	return c.rewrite(snaps, base)
}

// rewrite is compact's work, whatever the file's size.
func (c *rowCache) rewrite(snaps map[uint64]snapState, base int64) (int64, error) {
	src, err := os.OpenFile(c.path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return base, fmt.Errorf("read %s: %w", c.path, err)
	}
	defer src.Close()
	type ref struct {
		h   uint64
		off int64
	}
	var live []ref
	for h, ss := range snaps {
		if ss.Row > 0 {
			live = append(live, ref{h, ss.Row})
		}
	}
	slices.SortFunc(live, func(a, b ref) int { return cmp.Compare(a.off, b.off) })
	moved := make(map[uint64]int64, len(live))
	var at int64
	err = archive.WriteFileWith(c.path, 0o644, func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 256<<10)
		br := bufio.NewReaderSize(src, 256<<10)
		var pos int64 // of br in src
		buf := make([]byte, 4096)
		for _, r := range live {
			if r.off-1 < pos { // (two states cannot share a record)
				continue
			}
			if _, err := br.Discard(int(r.off - 1 - pos)); err != nil {
				break
			}
			pos = r.off - 1
			if _, err := io.ReadFull(br, buf[:rowHeader]); err != nil {
				break
			}
			pos += rowHeader
			n := int(binary.LittleEndian.Uint32(buf))
			if n > 1<<24 {
				continue // not a record: its row is made from the folder
			}
			if rowHeader+n > len(buf) {
				buf = append(buf[:rowHeader], make([]byte, n)...)
			}
			if _, err := io.ReadFull(br, buf[rowHeader:rowHeader+n]); err != nil {
				break
			}
			pos += int64(n)
			if _, err := bw.Write(buf[:rowHeader+n]); err != nil {
				return err
			}
			moved[r.h] = at + 1
			at += int64(rowHeader + n)
		}
		return bw.Flush()
	})
	if err != nil {
		return base, err
	}
	for _, r := range live {
		ss := snaps[r.h]
		ss.Row = moved[r.h] // 0 for a record that could not be read
		snaps[r.h] = ss
	}
	return at, nil
}

// compactSlack is how much the row cache may grow past twice its last
// compacted size before it is compacted again.
const compactSlack = 1 << 20

// encodeRow appends in's outputs and row files to b, in the state file's
// encoding. Paths inside dir are kept relative to it.
func encodeRow(b []byte, dir string, in rowInputs) []byte {
	b = binary.LittleEndian.AppendUint32(b, uint32(len(in.outs)))
	for _, o := range in.outs {
		b = appendStateString(b, o.Plugin)
		b = appendRowRel(b, dir, o.Ref.Rel)
		b = appendStateString(b, o.Ref.Query)
		b = append(b, boolByte(o.Recorded))
	}
	for _, group := range [][]string{previewFiles, faviconFiles} {
		for _, name := range group {
			ref := in.f.get(name)
			if ref == nil || ref.Size <= 0 {
				b = append(b, 0)
				continue
			}
			b = append(b, 1)
			b = appendRowRel(b, dir, ref.Rel)
			b = appendStateString(b, ref.Query)
		}
	}
	return b
}

// decodeRow reads what encodeRow wrote; the files it returns answer for
// the row files only, from the record.
func decodeRow(b []byte, dir string) (rowInputs, bool) {
	r := &stateReader{b: b}
	n := r.u32()
	if r.bad || int64(n) > int64(len(b)) {
		return rowInputs{}, false
	}
	rel := func() string {
		if r.take(1)[0] == 1 {
			return dir + "/" + r.str()
		}
		return r.str()
	}
	in := rowInputs{outs: make([]output, 0, n), f: &files{dir: dir, seen: map[string]*Ref{}}}
	for range n {
		o := output{Plugin: r.str()}
		o.Ref.Rel = rel()
		o.Ref.Query = r.str()
		o.Recorded = r.take(1)[0] == 1
		in.outs = append(in.outs, o)
	}
	for _, group := range [][]string{previewFiles, faviconFiles} {
		for _, name := range group {
			if r.take(1)[0] != 1 {
				in.f.seen[name] = nil
				continue
			}
			ref := &Ref{Rel: rel(), Size: 1}
			ref.Query = r.str()
			in.f.seen[name] = ref
		}
	}
	if r.bad || len(r.b) != 0 {
		return rowInputs{}, false
	}
	return in, true
}

func boolByte(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// appendRowRel appends a path relative to the export root: one inside
// the snapshot folder dir without dir.
func appendRowRel(b []byte, dir, rel string) []byte {
	if tail, ok := strings.CutPrefix(rel, dir+"/"); ok {
		return appendStateString(append(b, 1), tail)
	}
	return appendStateString(append(b, 0), rel)
}
