package export

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/layout"
)

// exportedPages is what serve knows the export wrote: the snapshot
// folders listed in the root index.jsonl, one record per folder whose
// index.html the export rendered (for an in-place export and an --out
// export alike). It keeps a seeded 64-bit hash per folder, sorted, so a
// million snapshots cost 8 MB; the seed is random per process, so nobody
// can name a folder whose hash meets an exported one's on purpose. The
// set is read again when the manifest's size, mtime or inode changes, as
// 'serve --watch' re-exports while serving.
type exportedPages struct {
	file string // the root index.jsonl
	seed maphash.Seed

	mu     sync.Mutex
	key    fileKey // of the manifest the set was read from
	loaded bool
	hashes []uint64
}

// fileKey tells one version of a file from another.
type fileKey struct {
	size, mtime int64
	dev, ino    uint64
}

func keyOf(fi os.FileInfo) fileKey {
	k := fileKey{size: fi.Size(), mtime: fi.ModTime().UnixNano()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		k.dev, k.ino = uint64(st.Dev), st.Ino
	}
	return k
}

func newExportedPages(root string) *exportedPages {
	return &exportedPages{file: root + string(os.PathSeparator) + ManifestFile, seed: maphash.MakeSeed()}
}

// current reports whether there is a manifest at all (no manifest: not
// an export, nothing in it is folio's) and brings the set up to date.
func (x *exportedPages) current() bool {
	fi, err := os.Lstat(x.file)
	x.mu.Lock()
	defer x.mu.Unlock()
	if err != nil || !fi.Mode().IsRegular() {
		x.hashes, x.loaded = nil, false
		return false
	}
	if x.loaded && keyOf(fi) == x.key {
		return true
	}
	key, hashes, err := x.read()
	if err != nil {
		// Unreadable now (being replaced, say): no snapshot page is
		// trusted until it reads.
		x.hashes, x.loaded = nil, false
		return true
	}
	x.key, x.hashes, x.loaded = key, hashes, true
	return true
}

// has reports whether dir, a snapshot folder relative to the export's
// root, is one the manifest lists.
func (x *exportedPages) has(dir string) bool {
	if !x.current() {
		return false
	}
	h := maphash.String(x.seed, dir)
	x.mu.Lock()
	defer x.mu.Unlock()
	_, ok := slices.BinarySearch(x.hashes, h)
	return ok
}

// read reads the manifest's folders and the key of the version read.
func (x *exportedPages) read() (fileKey, []uint64, error) {
	f, err := os.Open(x.file)
	if err != nil {
		return fileKey{}, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fileKey{}, nil, err
	}
	if !fi.Mode().IsRegular() {
		return fileKey{}, nil, fmt.Errorf("read %s: not a regular file", x.file)
	}
	var hashes []uint64
	br := bufio.NewReaderSize(f, 64<<10)
	for {
		line, err := br.ReadSlice('\n')
		if dir, ok := manifestDir(line); ok {
			hashes = append(hashes, maphash.String(x.seed, dir))
		}
		for errors.Is(err, bufio.ErrBufferFull) { // the rest of a long line
			_, err = br.ReadSlice('\n')
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return fileKey{}, nil, fmt.Errorf("read %s: %w", x.file, err)
		}
	}
	slices.Sort(hashes)
	return keyOf(fi), slices.Compact(hashes), nil
}

// manifestHead is how every record appendManifest writes begins: sorted
// keys put archive_path second, so the folder is read without decoding
// the rest of the line (titles can be megabytes). A line in any other
// form names no folder: its page is served as an archived file.
const manifestHead = `{"TYPE": "core.models.Snapshot", "archive_path": "`

// manifestDir returns the archive_path of one manifest line when it is a
// clean folder below archive/.
func manifestDir(line []byte) (string, bool) {
	rest, ok := bytes.CutPrefix(line, []byte(manifestHead))
	if !ok {
		return "", false
	}
	end := -1
	for i := 0; i < len(rest) && end < 0; i++ {
		switch rest[i] {
		case '\\':
			i++
		case '"':
			end = i
		}
	}
	if end < 0 {
		return "", false
	}
	var dir string
	if json.Unmarshal(line[len(manifestHead)-1:len(manifestHead)+end+1], &dir) != nil {
		return "", false
	}
	if !strings.HasPrefix(dir, archive.ArchiveDir+"/") || path.Clean(dir) != dir {
		return "", false
	}
	if _, err := layout.Join("/", dir); err != nil {
		return "", false
	}
	return dir, true
}
