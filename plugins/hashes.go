package plugins

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/folio-archive/folio/archive"
)

// Hashes writes hashes/hashes.json: a sha256 Merkle tree of every file of
// the snapshot folder, in ArchiveBox's exact shape and algorithm (plugins
// spec §3.8).
type Hashes struct{ builtin }

func (p *Hashes) Run(ctx context.Context, job *Job) Outcome {
	now := time.Now
	if job.Now != nil {
		now = job.Now
	}
	doc, root, total, err := HashTree(ctx, job.Dir, now())
	if err != nil {
		return failed("%v", err)
	}
	if _, err := write(job, p.name, "hashes.json", doc); err != nil {
		return failed("%v", err)
	}
	return succeeded(fmt.Sprintf("%.1fMB %s", float64(total)/1e6, root[:12]))
}

// fileEntry is one regular file below a folder.
type fileEntry struct {
	rel  string // slash path below the folder
	size int64
}

// walkFiles lists the regular files below dir, sorted by path, skipping
// symlinks and the folders skip names (at any depth).
func walkFiles(dir string, skip map[string]bool) ([]fileEntry, error) {
	var out []fileEntry
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == dir {
				return err
			}
			return nil // an entry that went away or cannot be read
		}
		if d.IsDir() {
			if p != dir && skip[d.Name()] {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || archive.IsTemp(d.Name()) {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		out = append(out, fileEntry{rel: filepath.ToSlash(rel), size: info.Size()})
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].rel < out[j].rel })
	return out, err
}

// hashSkipped are the folders hashes.json leaves out.
var hashSkipped = map[string]bool{"hashes": true, ".git": true, "__pycache__": true}

// HashSkipped reports whether hashes.json leaves out the folders named
// name, at any depth (plugins spec §3.8).
func HashSkipped(name string) bool { return hashSkipped[name] }

// HashTree computes hashes.json of the folder dir as of now: the document
// (2-space indent, Python's ensure_ascii escaping), its root hash and the
// total size of the files.
func HashTree(ctx context.Context, dir string, now time.Time) ([]byte, string, int64, error) {
	files, err := walkFiles(dir, hashSkipped)
	if err != nil {
		return nil, "", 0, err
	}
	leaves := make([]string, len(files))
	var total int64
	for i, f := range files {
		if err := ctx.Err(); err != nil {
			return nil, "", 0, err
		}
		leaves[i] = fileHash(filepath.Join(dir, filepath.FromSlash(f.rel)))
		total += f.size
	}
	levels := MerkleLevels(leaves)
	root := MerkleRoot(levels)
	var b []byte
	str := func(s string) { b = archive.AppendPyString(b, s) }
	b = append(b, "{\n  \"root_hash\": "...)
	str(root)
	b = append(b, ",\n  \"tree_levels\": ["...)
	for i, lv := range levels {
		if i > 0 {
			b = append(b, ',')
		}
		if len(lv) == 0 {
			b = append(b, "\n    []"...)
			continue
		}
		b = append(b, "\n    ["...)
		for j, h := range lv {
			if j > 0 {
				b = append(b, ',')
			}
			b = append(b, "\n      "...)
			str(h)
		}
		b = append(b, "\n    ]"...)
	}
	b = append(b, "\n  ],\n  \"files\": ["...)
	for i, f := range files {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, "\n    {\n      \"path\": "...)
		str(f.rel)
		b = append(b, ",\n      \"hash\": "...)
		str(leaves[i])
		b = append(b, ",\n      \"size\": "...)
		b = strconv.AppendInt(b, f.size, 10)
		b = append(b, "\n    }"...)
	}
	if len(files) > 0 {
		b = append(b, "\n  "...)
	}
	b = append(b, "],\n  \"metadata\": {\n    \"timestamp\": "...)
	str(pyISO(now))
	b = append(b, ",\n    \"file_count\": "...)
	b = strconv.AppendInt(b, int64(len(files)), 10)
	b = append(b, ",\n    \"total_size\": "...)
	b = strconv.AppendInt(b, total, 10)
	b = append(b, ",\n    \"tree_depth\": "...)
	b = strconv.AppendInt(b, int64(len(levels)), 10)
	b = append(b, "\n  }\n}"...)
	return b, root, total, nil
}

// MerkleLevels builds hashes.json's tree_levels from the file hashes, in
// file order: each level above the leaves holds the sha256 of the
// concatenated hex strings of each pair, an odd node paired with itself,
// up to one root. No leaves give the one level [[]].
func MerkleLevels(leaves []string) [][]string {
	levels := [][]string{leaves}
	for cur := leaves; len(cur) > 1; {
		next := make([]string, 0, (len(cur)+1)/2)
		for i := 0; i < len(cur); i += 2 {
			right := cur[i]
			if i+1 < len(cur) {
				right = cur[i+1]
			}
			sum := sha256.Sum256([]byte(cur[i] + right))
			next = append(next, hex.EncodeToString(sum[:]))
		}
		levels = append(levels, next)
		cur = next
	}
	return levels
}

// MerkleRoot is the root hash of the levels: the one top node, or
// sha256("") when there are no files.
func MerkleRoot(levels [][]string) string {
	if top := levels[len(levels)-1]; len(top) > 0 {
		return top[0]
	}
	sum := sha256.Sum256(nil)
	return hex.EncodeToString(sum[:])
}

// fileHash is the sha256 hex of a file, 64 zeros when it cannot be read.
func fileHash(p string) string {
	f, err := os.Open(p)
	if err != nil {
		return strings.Repeat("0", 64)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return strings.Repeat("0", 64)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// pyISO is Python's datetime.now(timezone.utc).isoformat().
func pyISO(t time.Time) string {
	t = t.UTC()
	if t.Nanosecond()/1000 == 0 {
		return t.Format("2006-01-02T15:04:05+00:00")
	}
	return t.Format("2006-01-02T15:04:05.000000+00:00")
}

var _ Plugin = (*Hashes)(nil)
