package archive

import (
	"bytes"
	"encoding/json"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Record types folio reads and writes in a snapshot's index.jsonl.
const (
	TypeSnapshot      = "Snapshot"
	TypeArchiveResult = "ArchiveResult"
)

// SchemaVersion is written as schema_version on records folio creates.
const SchemaVersion = "0.9.4"

// Snapshot is the first Snapshot record of a snapshot's index.jsonl: the
// identity and metadata of one archived URL.
type Snapshot struct {
	ID            string // 32 lowercase hex digits
	CrawlID       string
	URL           string
	Timestamp     string // legacy identity, e.g. "1721469600.123456"
	Title         string // "" is written as null
	Tags          []string
	BookmarkedAt  time.Time
	CreatedAt     time.Time
	Depth         int
	Status        string // queued, started, sealed, paused
	FSVersion     string
	ArchiveSize   int64
	Notes         string // written only when non-empty
	SchemaVersion string
}

// Result is one ArchiveResult record: what one capture method produced.
type Result struct {
	ID              string
	SnapshotID      string
	Plugin          string
	HookName        string
	Status          string
	OutputStr       string
	StartTS         time.Time
	EndTS           time.Time
	OutputFiles     []OutputFile
	OutputSize      int64
	OutputMimetypes string
	Cmd             []string
	CmdVersion      string
	ProcessID       string
	Pwd             string
	OutputJSON      json.RawMessage
	SchemaVersion   string
}

// OutputFile is one entry of a result's output_files. Path is relative to
// the plugin's output folder (<snapshot>/<plugin>/), as ArchiveBox keys it:
// a screenshot result lists "screenshot.png" for screenshot/screenshot.png.
type OutputFile struct {
	Path      string
	Size      int64
	Mimetype  string
	Extension string
}

// Result statuses.
const (
	StatusSucceeded = "succeeded"
	StatusFailed    = "failed"
	StatusSkipped   = "skipped"
)

// NormalizeStatus maps the statuses ArchiveBox ever wrote (typos included)
// onto the current vocabulary; anything unknown is "failed".
func NormalizeStatus(s string) string {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "succeeded", "success", "succeded":
		return StatusSucceeded
	case "skipped":
		return StatusSkipped
	case "noresults", "queued", "started", "backoff":
		return strings.ToLower(strings.TrimSpace(s))
	}
	return StatusFailed
}

// TagString joins tags the way ArchiveBox writes Snapshot.tags: sorted by
// name, comma separated, "" when there are none.
func TagString(tags []string) string {
	return strings.Join(NormalizeTags(tags), ",")
}

// NormalizeTags trims, drops empties, dedupes and sorts tag names.
func NormalizeTags(tags []string) []string {
	out := make([]string, 0, len(tags))
	for _, t := range tags {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	sort.Strings(out)
	return slices.Compact(out)
}

// SplitTags parses a comma-separated tag string.
func SplitTags(s string) []string {
	if strings.TrimSpace(s) == "" {
		return []string{}
	}
	return NormalizeTags(strings.Split(s, ","))
}

// snapshotFields lists the canonical Snapshot keys in ArchiveBox's order
// (Snapshot.to_json) with their encoded values.
func (s *Snapshot) fields() Object {
	sv := s.SchemaVersion
	if sv == "" {
		sv = SchemaVersion
	}
	var title any
	if s.Title != "" {
		title = s.Title
	}
	var crawl any
	if s.CrawlID != "" {
		crawl = s.CrawlID
	}
	obj := Object{
		{"type", py(TypeSnapshot)},
		{"schema_version", py(sv)},
		{"id", py(s.ID)},
		{"crawl_id", py(crawl)},
		{"url", py(s.URL)},
		{"title", py(title)},
		{"tags", py(TagString(s.Tags))},
		{"bookmarked_at", py(s.BookmarkedAt)},
		{"created_at", py(s.CreatedAt)},
		{"timestamp", py(s.Timestamp)},
		{"depth", py(s.Depth)},
		{"status", py(s.Status)},
		{"fs_version", py(s.FSVersion)},
		{"archive_size", py(s.ArchiveSize)},
		{"output_size", py(s.ArchiveSize)},
	}
	if s.Notes != "" {
		obj = append(obj, Member{"notes", py(s.Notes)})
	}
	return obj
}

func (r *Result) fields() Object {
	sv := r.SchemaVersion
	if sv == "" {
		sv = SchemaVersion
	}
	obj := Object{{"type", py(TypeArchiveResult)}, {"schema_version", py(sv)}}
	if r.ID != "" {
		obj = append(obj, Member{"id", py(r.ID)})
	}
	obj = append(obj,
		Member{"snapshot_id", py(r.SnapshotID)},
		Member{"plugin", py(r.Plugin)},
		Member{"hook_name", py(r.HookName)},
		Member{"status", py(r.Status)},
		Member{"output_str", py(r.OutputStr)},
		Member{"start_ts", py(r.StartTS)},
		Member{"end_ts", py(r.EndTS)},
	)
	if len(r.OutputJSON) > 0 && string(r.OutputJSON) != "null" {
		obj = append(obj, Member{"output_json", r.OutputJSON})
	}
	if len(r.OutputFiles) > 0 {
		files := make(Object, 0, len(r.OutputFiles))
		for _, f := range r.OutputFiles {
			files = append(files, Member{f.Path, py(Object{
				{"extension", py(f.Extension)},
				{"mimetype", py(f.Mimetype)},
				{"size", py(f.Size)},
			})})
		}
		obj = append(obj, Member{"output_files", py(files)})
	}
	if r.OutputSize != 0 {
		obj = append(obj, Member{"output_size", py(r.OutputSize)})
	}
	if r.OutputMimetypes != "" {
		obj = append(obj, Member{"output_mimetypes", py(r.OutputMimetypes)})
	}
	if len(r.Cmd) > 0 {
		obj = append(obj, Member{"cmd", py(r.Cmd)})
	}
	if r.CmdVersion != "" {
		obj = append(obj, Member{"cmd_version", py(r.CmdVersion)})
	}
	if r.ProcessID != "" {
		obj = append(obj, Member{"process_id", py(r.ProcessID)})
	}
	if r.Pwd != "" {
		obj = append(obj, Member{"pwd", py(r.Pwd)})
	}
	return obj
}

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
	res := Result{
		ID:              stringValue(r.id),
		SnapshotID:      compactID(stringValue(r.snapshotID)),
		Plugin:          shortString(r.plugin),
		HookName:        stringValue(r.hookName),
		Status:          shortString(r.status),
		OutputStr:       stringValue(r.outputStr),
		StartTS:         decodeTime(r.startTS),
		EndTS:           decodeTime(r.endTS),
		OutputFiles:     decodeOutputFiles(r.outputFiles),
		OutputSize:      decodeInt(r.outputSize),
		OutputMimetypes: shortString(r.outputMimetypes),
		Cmd:             decodeCmd(r.cmd),
		CmdVersion:      stringValue(r.cmdVersion),
		ProcessID:       stringValue(r.processID),
		Pwd:             stringValue(r.pwd),
		SchemaVersion:   shortString(r.schemaVersion),
	}
	if r.outputJSON != nil && string(r.outputJSON) != "null" {
		res.OutputJSON = append(json.RawMessage(nil), r.outputJSON...)
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

// The value decoders below take a raw JSON value, nil when the key is
// absent, and convert it as encoding/json would (FuzzDecodeSnapshot and
// FuzzDecodeResult compare them with a decoder built on encoding/json).

// scalarString is a string's text or a number's literal, else "".
func scalarString(raw []byte) string {
	switch {
	case len(raw) == 0:
		return ""
	case raw[0] == '"':
		return stringValue(raw)
	case raw[0] == '-' || isDigit(raw[0]):
		return string(raw)
	}
	return ""
}

func decodeTime(raw []byte) time.Time {
	if len(raw) == 0 || raw[0] == 'n' {
		return time.Time{}
	}
	if raw[0] == '"' {
		if t, ok := parseISOTime(raw[1 : len(raw)-1]); ok {
			return t
		}
	}
	t, _ := ParseTime(scalarString(raw))
	return t
}

// parseISOTime reads the datetimes ArchiveBox writes,
// 2006-01-02T15:04:05[.999999999] with "+00:00", "Z" or no offset, as
// ParseTime does, and reports false for anything else (ParseTime then
// decides). FuzzParseISOTime compares the two.
func parseISOTime(b []byte) (time.Time, bool) {
	if len(b) < 19 || b[4] != '-' || b[7] != '-' || b[10] != 'T' && b[10] != ' ' || b[13] != ':' || b[16] != ':' {
		return time.Time{}, false
	}
	num := func(i, n int) int {
		v := 0
		for _, c := range b[i : i+n] {
			if !isDigit(c) {
				return -1
			}
			v = v*10 + int(c-'0')
		}
		return v
	}
	year, month, day := num(0, 4), num(5, 2), num(8, 2)
	hour, minute, sec := num(11, 2), num(14, 2), num(17, 2)
	if year < 0 || month < 1 || month > 12 || day < 1 || hour < 0 || hour > 23 || minute < 0 || minute > 59 || sec < 0 || sec > 59 {
		return time.Time{}, false
	}
	if day > 28 && day > time.Date(year, time.Month(month)+1, 0, 0, 0, 0, 0, time.UTC).Day() {
		return time.Time{}, false
	}
	rest, nsec := b[19:], 0
	if len(rest) > 0 && rest[0] == '.' {
		n := 1
		for n < len(rest) && isDigit(rest[n]) {
			n++
		}
		if n == 1 || n > 10 {
			return time.Time{}, false
		}
		nsec = num(20, n-1)
		for range 10 - n {
			nsec *= 10
		}
		rest = rest[n:]
	}
	switch string(rest) {
	case "", "Z", "+00:00":
	default:
		return time.Time{}, false
	}
	return time.Date(year, time.Month(month), day, hour, minute, sec, nsec, time.UTC), true
}

// decodeInt is json.Unmarshal into a json.Number, then its Int64 or
// truncated Float64; anything else is 0.
func decodeInt(raw []byte) int64 {
	if len(raw) == 0 {
		return 0
	}
	switch c := raw[0]; {
	case c == '-' || isDigit(c):
		return numberInt(string(raw))
	case c == '"':
		if s := stringValue(raw); isNumber(s) {
			return numberInt(s)
		}
	}
	return 0
}

func numberInt(s string) int64 {
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return i
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return int64(f)
	}
	return 0
}

func decodeTags(raw []byte) []string {
	switch {
	case raw == nil:
		return nil
	case raw[0] == '"':
		return SplitTags(stringValue(raw))
	}
	var list []string
	if json.Unmarshal(raw, &list) == nil {
		return NormalizeTags(list)
	}
	return nil
}

// decodeCmd is json.Unmarshal into []string, else a non-empty string as
// a one-word command.
func decodeCmd(raw []byte) []string {
	if raw == nil {
		return nil
	}
	switch raw[0] {
	case '"':
		if s := stringValue(raw); s != "" {
			return []string{s}
		}
	case '[':
		n := 0
		scanElements(raw, func([]byte) { n++ })
		list, ok := make([]string, 0, n), true
		scanElements(raw, func(v []byte) {
			switch v[0] {
			case '"':
				list = append(list, stringValue(v))
			case 'n':
				list = append(list, "")
			default:
				ok = false
			}
		})
		if ok {
			return list
		}
	}
	return nil
}

// fileMeta is the metadata of one output file as encoding/json reads it.
type fileMeta struct {
	Path      string `json:"path"`
	Size      int64  `json:"size"`
	Mimetype  string `json:"mimetype"`
	Extension string `json:"extension"`
}

// decodeOutputFiles accepts output_files as {path: {size, mimetype, ...}}
// (0.9) or as a list of paths or {path, size} objects.
func decodeOutputFiles(raw []byte) []OutputFile {
	if raw == nil {
		return nil
	}
	if raw[0] == '{' {
		out := make([]OutputFile, 0, 2)
		scanMembers(raw, func(key, val []byte) {
			f := OutputFile{Path: keyString(key)}
			if val[0] == '{' && !fastFileMeta(val, &f) {
				var md fileMeta
				_ = json.Unmarshal(val, &md)
				f.Size, f.Mimetype, f.Extension = md.Size, md.Mimetype, md.Extension
			}
			out = append(out, f)
		})
		return out
	}
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) != nil {
		return nil
	}
	var out []OutputFile
	for _, e := range list {
		var p string
		if json.Unmarshal(e, &p) == nil {
			out = append(out, OutputFile{Path: p})
			continue
		}
		var md fileMeta
		if json.Unmarshal(e, &md) == nil && md.Path != "" {
			out = append(out, OutputFile{Path: md.Path, Size: md.Size, Mimetype: md.Mimetype, Extension: md.Extension})
		}
	}
	return out
}

// fastFileMeta reads the metadata object of one output file in the plain
// case (exact lowercase keys; integer, string and null values) and reports
// false when encoding/json has to decide (floats, other types, keys that
// differ from the field names only in case).
func fastFileMeta(raw []byte, f *OutputFile) bool {
	ok := true
	scanMembers(raw, func(key, val []byte) {
		name := key[1 : len(key)-1]
		switch string(name) {
		case "size":
			switch {
			case val[0] == 'n':
			case val[0] == '-' || isDigit(val[0]):
				n, err := strconv.ParseInt(string(val), 10, 64)
				if err != nil {
					ok = false
				}
				f.Size = n
			default:
				ok = false
			}
		case "mimetype", "extension":
			switch val[0] {
			case 'n':
				return
			case '"':
				if name[0] == 'm' {
					f.Mimetype = shortString(val)
				} else {
					f.Extension = shortString(val)
				}
			default:
				ok = false
			}
		case "path": // the key is the path
		default:
			for _, c := range name {
				if c >= utf8.RuneSelf || c == '\\' {
					ok = false
				}
			}
			for _, known := range [...]string{"size", "mimetype", "extension", "path"} {
				if strings.EqualFold(string(name), known) {
					ok = false
				}
			}
		}
	})
	return ok
}
