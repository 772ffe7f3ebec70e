package verify

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/folio-archive/folio/archive"
)

// manifest is a snapshot's hashes/hashes.json: ArchiveBox's Merkle form
// {"root_hash","tree_levels","files":[{path,hash,size}],"metadata"}, or
// the older {"<path>": {size, hash, mime_type}} map its readers accept.
type manifest struct {
	files  map[string]entry
	order  []string // file paths as listed
	leaves []string // their hashes, in order (Merkle form)
	root   string   // root_hash, "" in the map form
}

// entry is one listed file; size -1 and hash "" when not given.
type entry struct {
	size int64
	hash string
}

// rawEntry is one listed file as written, in every spelling ArchiveBox's
// readers accept: path (or the map's key), hash or hash_sha256, size,
// num_bytes or bytes, is_dir or mime_type inode/directory.
type rawEntry archive.Object

func (r rawEntry) entry() entry {
	o := archive.Object(r)
	e := entry{size: -1, hash: strings.ToLower(o.String("hash"))}
	if e.hash == "" {
		e.hash = strings.ToLower(o.String("hash_sha256"))
	}
	for _, k := range []string{"size", "num_bytes", "bytes"} {
		if raw, ok := o.Get(k); ok {
			if n, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
				e.size = n
				break
			}
		}
	}
	return e
}

func (r rawEntry) dir(key string) bool {
	o := archive.Object(r)
	isDir, _ := o.Get("is_dir")
	return string(isDir) == "true" || o.String("mime_type") == "inode/directory" || strings.HasSuffix(key, "/")
}

// parseManifest reads hashes.json with folio's JSON scanner (encoding/json
// would be a tenth of a verify's time): ArchiveBox's form, whose
// tree_levels are skipped (the root is recomputed from the files), or the
// older map of files.
func parseManifest(data []byte) (*manifest, error) {
	top, err := archive.ParseObject(data)
	if err != nil {
		return nil, fmt.Errorf("not a JSON object: %v", jsonProblem(data, err))
	}
	m := &manifest{files: map[string]entry{}}
	add := func(key string, r rawEntry) error {
		if key == "." || key == "" || r.dir(key) {
			return nil
		}
		rel := path.Clean(key)
		if path.IsAbs(rel) || rel == ".." || strings.HasPrefix(rel, "../") {
			return fmt.Errorf("lists %q, a path outside the snapshot folder", key)
		}
		e := r.entry()
		if _, dup := m.files[rel]; !dup {
			m.order = append(m.order, rel)
		}
		m.files[rel] = e
		m.leaves = append(m.leaves, e.hash)
		return nil
	}
	if files, ok := top.Get("files"); ok && bytes.HasPrefix(files, []byte("[")) {
		list, err := archive.ParseArray(files)
		if err != nil {
			return nil, fmt.Errorf("its files list cannot be read: %v", err)
		}
		for i, raw := range list {
			obj, err := archive.ParseObject(raw)
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
			if m.root = top.String("root_hash"); m.root == "" && string(raw) != `""` {
				return nil, errors.New("its root_hash is not a string")
			}
		}
		return m, nil
	}
	for _, member := range top {
		obj, err := archive.ParseObject(member.Value)
		if err != nil {
			return nil, fmt.Errorf("entry %q is not an object", member.Key)
		}
		if err := add(member.Key, rawEntry(obj)); err != nil {
			return nil, err
		}
	}
	m.leaves = nil // the map form has no order and no tree
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
