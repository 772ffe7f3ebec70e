package archive

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// LegacyIndex is what folio reads from a snapshot's index.json, whichever
// of ArchiveBox's shapes it has: the 0.4-0.8 Link form with "history", the
// 0.9 dev form with "archive_results", or the to_dict form with "TYPE".
type LegacyIndex struct {
	Snapshot  Snapshot
	Results   []Result
	FSVersion string // detected as ArchiveBox's _detect_fs_version_from_index does
	Object    Object // the top-level object, for keys folio does not model
}

// ErrEmptyIndex reports an index.json with no content.
var ErrEmptyIndex = errors.New("file is empty")

// ParseLegacyIndex decodes index.json content. An empty or corrupt file is
// an error; the caller decides whether that is fatal.
func ParseLegacyIndex(data []byte) (*LegacyIndex, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil, ErrEmptyIndex
	}
	obj, err := parseObject(data)
	if err != nil {
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	li := &LegacyIndex{Snapshot: decodeSnapshot(obj), Object: obj}
	list, hasList := obj.Get("archive_results")
	switch {
	case obj.String("fs_version") != "":
		li.FSVersion = obj.String("fs_version")
	case hasList:
		li.FSVersion = "0.8.0"
	default:
		li.FSVersion = "0.7.0"
	}
	if hasList {
		var entries []json.RawMessage
		if json.Unmarshal(list, &entries) == nil {
			for _, e := range entries {
				if o, err := parseObject(e); err == nil {
					li.Results = append(li.Results, legacyResult(o, ""))
				}
			}
		}
	}
	if raw, ok := obj.Get("history"); ok {
		if history, err := parseObject(raw); err == nil {
			for _, m := range history {
				var entries []json.RawMessage
				if json.Unmarshal(m.Value, &entries) != nil {
					continue
				}
				for _, e := range entries {
					if o, err := parseObject(e); err == nil {
						li.Results = append(li.Results, legacyResult(o, m.Key))
					}
				}
			}
		}
	}
	return li, nil
}

// legacyResult converts one legacy result as convert_index_json_to_jsonl
// does: plugin from the entry or its history key, status normalised,
// output as output_str.
func legacyResult(o Object, key string) Result {
	r := decodeResult(o)
	if r.Plugin == "" {
		r.Plugin = key
	}
	if r.Status == "" {
		r.Status = StatusFailed
	}
	r.Status = NormalizeStatus(r.Status)
	if r.OutputStr == "" {
		// Errors were stored as objects or strings under "output".
		if raw, ok := o.Get("output"); ok && len(raw) > 0 && raw[0] != '"' && string(raw) != "null" {
			r.OutputStr = string(raw)
		}
	}
	return r
}

// ReadLegacyIndex reads dir/index.json.
func ReadLegacyIndex(dir string) (*LegacyIndex, error) {
	path := filepath.Join(dir, LegacyIndexFile)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	li, err := ParseLegacyIndex(data)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return li, nil
}
