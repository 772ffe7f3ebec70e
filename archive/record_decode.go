package archive

import (
	"bytes"
	"encoding/json"
	"strings"
)

// rawRecord holds the raw JSON values of the keys folio reads from a
// Snapshot or ArchiveResult record, the last occurrence of a key winning
// as in Object.Get. It is filled from a line by the byte scanner without
// allocating, or from an Object, so that one decoder serves both.
type rawRecord struct {
	hasType, hasURL bool

	typ, schemaVersion, id, url, status, notes                      []byte
	crawlID, title, tags, bookmarkedAt, createdAt, timestamp, depth []byte
	fsVersion, archiveSize, outputSize                              []byte
	snapshotID, plugin, extractor, hookName, outputStr, output      []byte
	startTS, endTS, outputFiles, outputMimetypes, cmd, cmdVersion   []byte
	processID, pwd, outputJSON                                      []byte
}

func (r *rawRecord) set(key string, v []byte) {
	switch key {
	case "type":
		r.typ, r.hasType = v, true
	case "schema_version":
		r.schemaVersion = v
	case "id":
		r.id = v
	case "url":
		r.url, r.hasURL = v, true
	case "status":
		r.status = v
	case "notes":
		r.notes = v
	case "crawl_id":
		r.crawlID = v
	case "title":
		r.title = v
	case "tags":
		r.tags = v
	case "bookmarked_at":
		r.bookmarkedAt = v
	case "created_at":
		r.createdAt = v
	case "timestamp":
		r.timestamp = v
	case "depth":
		r.depth = v
	case "fs_version":
		r.fsVersion = v
	case "archive_size":
		r.archiveSize = v
	case "output_size":
		r.outputSize = v
	case "snapshot_id":
		r.snapshotID = v
	case "plugin":
		r.plugin = v
	case "extractor":
		r.extractor = v
	case "hook_name":
		r.hookName = v
	case "output_str":
		r.outputStr = v
	case "output":
		r.output = v
	case "start_ts":
		r.startTS = v
	case "end_ts":
		r.endTS = v
	case "output_files":
		r.outputFiles = v
	case "output_mimetypes":
		r.outputMimetypes = v
	case "cmd":
		r.cmd = v
	case "cmd_version":
		r.cmdVersion = v
	case "process_id":
		r.processID = v
	case "pwd":
		r.pwd = v
	case "output_json":
		r.outputJSON = v
	}
}

// scan fills r from one JSON object and reports whether it is one.
func (r *rawRecord) scan(obj []byte) bool {
	*r = rawRecord{}
	return scanMembers(obj, func(key, val []byte) {
		if bytes.IndexByte(key, '\\') < 0 {
			r.set(string(key[1:len(key)-1]), val)
		} else {
			r.set(keyString(key), val)
		}
	})
}

func (r *rawRecord) fromObject(o Object) {
	*r = rawRecord{}
	for _, m := range o {
		r.set(m.Key, m.Value)
	}
}

// kind is the record type as ArchiveBox's loader sees it: the "type"
// string, else Snapshot for an object with a url and no type at all.
func (r *rawRecord) kind() string {
	if r.hasType {
		return shortString(r.typ)
	}
	if r.hasURL {
		return TypeSnapshot
	}
	return ""
}

// decodeSnapshot reads a Snapshot record, tolerating every shape ArchiveBox
// wrote: tags as a string or a list, ids dashed or compact, times in any
// ISO form or unix seconds.
func decodeSnapshot(r *rawRecord) Snapshot {
	s := Snapshot{
		ID:            compactID(stringValue(r.id)),
		CrawlID:       compactID(stringValue(r.crawlID)),
		URL:           stringValue(r.url),
		Timestamp:     scalarString(r.timestamp),
		Title:         stringValue(r.title),
		Tags:          decodeTags(r.tags),
		BookmarkedAt:  decodeTime(r.bookmarkedAt),
		CreatedAt:     decodeTime(r.createdAt),
		Depth:         int(decodeInt(r.depth)),
		Status:        shortString(r.status),
		FSVersion:     shortString(r.fsVersion),
		ArchiveSize:   decodeInt(r.archiveSize),
		Notes:         stringValue(r.notes),
		SchemaVersion: shortString(r.schemaVersion),
	}
	if s.ArchiveSize == 0 {
		s.ArchiveSize = decodeInt(r.outputSize)
	}
	return s
}

func decodeResult(r *rawRecord) Result {
	res := decodeOutputs(r)
	res.ID = stringValue(r.id)
	res.SnapshotID = compactID(stringValue(r.snapshotID))
	res.StartTS, res.EndTS = decodeTime(r.startTS), decodeTime(r.endTS)
	res.OutputSize = decodeInt(r.outputSize)
	res.OutputMimetypes = shortString(r.outputMimetypes)
	res.Cmd, res.CmdVersion = decodeCmd(r.cmd), stringValue(r.cmdVersion)
	res.ProcessID, res.Pwd = stringValue(r.processID), stringValue(r.pwd)
	res.SchemaVersion = shortString(r.schemaVersion)
	if r.outputJSON != nil && string(r.outputJSON) != "null" {
		res.OutputJSON = append(json.RawMessage(nil), r.outputJSON...)
	}
	return res
}

// decodeOutputs reads the fields of an ArchiveResult record that say what
// it made: its plugin (extractor in 0.7's records), hook_name, status,
// output_str (0.7's output) and output_files.
func decodeOutputs(r *rawRecord) Result {
	res := Result{
		Plugin:      shortString(r.plugin),
		HookName:    stringValue(r.hookName),
		Status:      shortString(r.status),
		OutputStr:   stringValue(r.outputStr),
		OutputFiles: decodeOutputFiles(r.outputFiles),
	}
	if res.Plugin == "" {
		res.Plugin = shortString(r.extractor)
	}
	if res.OutputStr == "" {
		res.OutputStr = stringValue(r.output)
	}
	return res
}

// compactID writes dashed UUIDs as the 32-hex form ArchiveBox 0.9.4 uses.
func compactID(s string) string {
	if len(s) == 36 && strings.Count(s, "-") == 4 {
		return strings.ToLower(strings.ReplaceAll(s, "-", ""))
	}
	return s
}
