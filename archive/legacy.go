package archive

import (
	"bytes"
	"errors"
	"fmt"
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
	obj, err := ParseObject(data)
	if err != nil {
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	var top rawRecord
	top.fromObject(obj)
	li := &LegacyIndex{Snapshot: decodeSnapshot(&top), Object: obj}
	list, hasList := obj.Get("archive_results")
	switch {
	case li.Snapshot.FSVersion != "":
		li.FSVersion = li.Snapshot.FSVersion
	case hasList:
		li.FSVersion = "0.8.0"
	default:
		li.FSVersion = "0.7.0"
	}
	// The whole file is valid JSON by now, so the lists and objects inside
	// are walked without decoding them first.
	var r rawRecord
	addEntries := func(entries []byte, plugin string) {
		scanElements(entries, func(e []byte) {
			if e[0] == '{' && r.scan(e) {
				li.Results = append(li.Results, legacyResult(&r, plugin))
			}
		})
	}
	if hasList {
		addEntries(list, "")
	}
	if history, ok := obj.Get("history"); ok {
		scanMembers(history, func(key, entries []byte) {
			addEntries(entries, keyString(key))
		})
	}
	return li, nil
}

// legacyResult converts one legacy result as convert_index_json_to_jsonl
// does: plugin from the entry or its history key, status normalised,
// output as output_str.
func legacyResult(raw *rawRecord, key string) Result {
	r := decodeResult(raw)
	if r.Plugin == "" {
		r.Plugin = key
	}
	if r.Status == "" {
		r.Status = StatusFailed
	}
	r.Status = NormalizeStatus(r.Status)
	if r.OutputStr == "" {
		// Errors were stored as objects or strings under "output".
		if out := raw.output; len(out) > 0 && out[0] != '"' && string(out) != "null" {
			r.OutputStr = string(out)
		}
	}
	return r
}

// ReadLegacyIndex reads dir/index.json.
func ReadLegacyIndex(dir string) (*LegacyIndex, error) {
	path := filepath.Join(dir, LegacyIndexFile)
	data, err := ReadIndexFile(path)
	if err != nil {
		return nil, err
	}
	li, err := ParseLegacyIndex(data)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return li, nil
}
