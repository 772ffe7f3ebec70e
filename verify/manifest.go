package verify

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"
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

// rawEntry holds every spelling ArchiveBox's readers accept.
type rawEntry struct {
	Path       string          `json:"path"`
	Hash       string          `json:"hash"`
	HashSHA256 string          `json:"hash_sha256"`
	Size       json.RawMessage `json:"size"`
	NumBytes   json.RawMessage `json:"num_bytes"`
	Bytes      json.RawMessage `json:"bytes"`
	IsDir      bool            `json:"is_dir"`
	MimeType   string          `json:"mime_type"`
}

func (r *rawEntry) entry() entry {
	e := entry{size: -1, hash: strings.ToLower(r.Hash)}
	if e.hash == "" {
		e.hash = strings.ToLower(r.HashSHA256)
	}
	for _, raw := range []json.RawMessage{r.Size, r.NumBytes, r.Bytes} {
		var n int64
		if len(raw) > 0 && json.Unmarshal(raw, &n) == nil {
			e.size = n
			break
		}
	}
	return e
}

func (r *rawEntry) dir(key string) bool {
	return r.IsDir || r.MimeType == "inode/directory" || strings.HasSuffix(key, "/")
}

func parseManifest(data []byte) (*manifest, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, fmt.Errorf("not a JSON object: %v", jsonProblem(data, err))
	}
	m := &manifest{files: map[string]entry{}}
	add := func(key string, r *rawEntry) error {
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
	if raw, ok := top["files"]; ok && bytes.HasPrefix(bytes.TrimSpace(raw), []byte("[")) {
		var list []rawEntry
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, fmt.Errorf("its files list cannot be read: %v", err)
		}
		for i := range list {
			if list[i].Path == "" {
				return nil, fmt.Errorf("file %d of its files list has no path", i+1)
			}
			if err := add(list[i].Path, &list[i]); err != nil {
				return nil, err
			}
		}
		if raw, ok := top["root_hash"]; ok {
			if err := json.Unmarshal(raw, &m.root); err != nil {
				return nil, errors.New("its root_hash is not a string")
			}
		}
		return m, nil
	}
	for key, raw := range top {
		var r rawEntry
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, fmt.Errorf("entry %q cannot be read: %v", key, err)
		}
		if err := add(key, &r); err != nil {
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
