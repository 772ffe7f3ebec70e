package archive

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"
)

// HashesFile is where a snapshot folder keeps its manifest of file hashes.
const HashesFile = "hashes/hashes.json"

// Hashes is a snapshot's hashes/hashes.json: ArchiveBox's Merkle form
// {"root_hash","tree_levels","files":[{path,hash,size}],"metadata"}, or
// the older {"<path>": {size, hash, mime_type}} map its readers accept.
type Hashes struct {
	Files  map[string]HashEntry
	Order  []string // file paths as listed
	Leaves []string // their hashes, in order (Merkle form)
	Root   string   // root_hash, "" in the map form
	// Taken is when the hashes were taken (metadata.timestamp, as
	// ArchiveBox and folio write it); zero when not given.
	Taken time.Time
}

// HashEntry is one listed file; Size -1 and Hash "" when not given.
type HashEntry struct {
	Size int64
	Hash string
}

// rawEntry is one listed file as written, in every spelling ArchiveBox's
// readers accept: path (or the map's key), hash or hash_sha256, size,
// num_bytes or bytes, is_dir or mime_type inode/directory.
type rawEntry Object

func (r rawEntry) entry() HashEntry {
	o := Object(r)
	e := HashEntry{Size: -1, Hash: strings.ToLower(o.String("hash"))}
	if e.Hash == "" {
		e.Hash = strings.ToLower(o.String("hash_sha256"))
	}
	for _, k := range []string{"size", "num_bytes", "bytes"} {
		if raw, ok := o.Get(k); ok {
			if n, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
				e.Size = n
				break
			}
		}
	}
	return e
}

func (r rawEntry) dir(key string) bool {
	o := Object(r)
	isDir, _ := o.Get("is_dir")
	return string(isDir) == "true" || o.String("mime_type") == "inode/directory" || strings.HasSuffix(key, "/")
}

// ParseHashes reads hashes.json with folio's JSON scanner (encoding/json
// would be a tenth of a verify's time): ArchiveBox's form, whose
// tree_levels are skipped (the root is recomputed from the files), or the
// older map of files.
func ParseHashes(data []byte) (*Hashes, error) {
	top, err := ParseObject(data)
	if err != nil {
		return nil, fmt.Errorf("not a JSON object: %v", jsonProblem(data, err))
	}
	m := &Hashes{Files: map[string]HashEntry{}}
	add := func(key string, r rawEntry) error {
		if key == "." || key == "" || r.dir(key) {
			return nil
		}
		rel := path.Clean(key)
		if path.IsAbs(rel) || rel == ".." || strings.HasPrefix(rel, "../") {
			return fmt.Errorf("lists %q, a path outside the snapshot folder", key)
		}
		e := r.entry()
		if _, dup := m.Files[rel]; !dup {
			m.Order = append(m.Order, rel)
		}
		m.Files[rel] = e
		m.Leaves = append(m.Leaves, e.Hash)
		return nil
	}
	if files, ok := top.Get("files"); ok && bytes.HasPrefix(files, []byte("[")) {
		list, err := ParseArray(files)
		if err != nil {
			return nil, fmt.Errorf("its files list cannot be read: %v", err)
		}
		for i, raw := range list {
			obj, err := ParseObject(raw)
			if err != nil {
				return nil, fmt.Errorf("file %d of its files list is not an object", i+1)
			}
			p := obj.String("path")
			if p == "" {
				return nil, fmt.Errorf("file %d of its files list has no path", i+1)
			}
			if err := add(p, rawEntry(obj)); err != nil {
				return nil, err
			}
		}
		if raw, ok := top.Get("root_hash"); ok {
			if m.Root = top.String("root_hash"); m.Root == "" && string(raw) != `""` {
				return nil, errors.New("its root_hash is not a string")
			}
		}
		if raw, ok := top.Get("metadata"); ok {
			if meta, err := ParseObject(raw); err == nil {
				m.Taken, _ = time.Parse(time.RFC3339Nano, meta.String("timestamp"))
			}
		}
		return m, nil
	}
	for _, member := range top {
		obj, err := ParseObject(member.Value)
		if err != nil {
			return nil, fmt.Errorf("entry %q is not an object", member.Key)
		}
		if err := add(member.Key, rawEntry(obj)); err != nil {
			return nil, err
		}
	}
	m.Leaves = nil // the map form has no order and no tree
	return m, nil
}

// jsonProblem says where a JSON document stops being valid.
func jsonProblem(data []byte, err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		if int(se.Offset) >= len(bytes.TrimSpace(data)) {
			return fmt.Errorf("it ends early at byte %d (truncated?)", se.Offset)
		}
		return fmt.Errorf("byte %d: %v", se.Offset, se)
	}
	return err
}
