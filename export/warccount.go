package export

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/warc"
)

// warcCounts remembers how many records each WARC file holds, for the
// WARC lines of the snapshot pages: counting reads (and inflates) the
// whole file, so each file is read once, and again only when its size or
// mtime changed. The counts live in .folio/export/warc-counts, shared by
// every export of the collection, and survive --full (which keeps only
// the files its pages still show).
type warcCounts struct {
	path string
	mu   sync.Mutex
	m    map[string]warcCount // by the file's path relative to the collection
	used map[string]bool
	new  bool // a count was added or changed
}

type warcCount struct {
	size, mtime int64
	n           int // -1: the file could not be read whole
}

const warcCountsMagic = "folio-warc-counts 1\n"

// loadWARCCounts reads the counts file at p; a missing or damaged one is
// an empty cache (its counts are made again).
func loadWARCCounts(p string) *warcCounts {
	c := &warcCounts{path: p, m: map[string]warcCount{}, used: map[string]bool{}}
	data, err := os.ReadFile(p)
	if err != nil || !bytes.HasPrefix(data, []byte(warcCountsMagic)) {
		return c
	}
	sc := bufio.NewScanner(bytes.NewReader(data[len(warcCountsMagic):]))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		f := strings.SplitN(sc.Text(), " ", 4)
		if len(f) != 4 {
			continue
		}
		size, e1 := strconv.ParseInt(f[0], 10, 64)
		mtime, e2 := strconv.ParseInt(f[1], 10, 64)
		n, e3 := strconv.Atoi(f[2])
		rel, e4 := strconv.Unquote(f[3])
		if e1 == nil && e2 == nil && e3 == nil && e4 == nil {
			c.m[rel] = warcCount{size, mtime, n}
		}
	}
	return c
}

// count returns the number of records of the WARC file ref (rel is its
// path relative to the collection), -1 when it cannot be read whole.
func (c *warcCounts) count(rel string, ref *Ref) int {
	st, err := os.Lstat(ref.Disk)
	if err != nil || !st.Mode().IsRegular() {
		return -1
	}
	key := warcCount{size: st.Size(), mtime: st.ModTime().UnixNano()}
	c.mu.Lock()
	got, ok := c.m[rel]
	c.used[rel] = true
	c.mu.Unlock()
	if ok && got.size == key.size && got.mtime == key.mtime {
		return got.n
	}
	n, err := warc.Count(ref.Disk)
	if err != nil {
		n = -1
	}
	key.n = n
	c.mu.Lock()
	c.m[rel], c.new = key, true
	c.mu.Unlock()
	return n
}

// save writes the counts when any changed; with prune (a --full export,
// which looked at every page) only those of files looked at are kept.
func (c *warcCounts) save(prune bool) error {
	if !c.new && !(prune && len(c.used) < len(c.m)) {
		return nil
	}
	var b bytes.Buffer
	b.WriteString(warcCountsMagic)
	for rel, wc := range c.m {
		if prune && !c.used[rel] {
			continue
		}
		fmt.Fprintf(&b, "%d %d %d %s\n", wc.size, wc.mtime, wc.n, strconv.Quote(rel))
	}
	return archive.WriteFile(c.path, b.Bytes(), 0o644)
}
