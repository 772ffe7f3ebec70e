package archive

import (
	"encoding/json"
	"sort"
	"strconv"
	"strings"
	"time"
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

// OutputFile is one entry of a result's output_files, relative to the
// snapshot folder.
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
	seen := make(map[string]bool, len(tags))
	out := make([]string, 0, len(tags))
	for _, t := range tags {
		t = strings.TrimSpace(t)
		if t == "" || seen[t] {
			continue
		}
		seen[t] = true
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// SplitTags parses a comma-separated tag string.
func SplitTags(s string) []string {
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

// decodeSnapshot reads a Snapshot record, tolerating every shape ArchiveBox
// wrote: tags as a string or a list, ids dashed or compact, times in any
// ISO form or unix seconds.
func decodeSnapshot(o Object) Snapshot {
	s := Snapshot{
		ID:            compactID(o.String("id")),
		CrawlID:       compactID(o.String("crawl_id")),
		URL:           o.String("url"),
		Timestamp:     scalarString(o, "timestamp"),
		Title:         o.String("title"),
		Tags:          decodeTags(o),
		BookmarkedAt:  decodeTime(o, "bookmarked_at"),
		CreatedAt:     decodeTime(o, "created_at"),
		Depth:         int(decodeInt(o, "depth")),
		Status:        o.String("status"),
		FSVersion:     o.String("fs_version"),
		ArchiveSize:   decodeInt(o, "archive_size"),
		Notes:         o.String("notes"),
		SchemaVersion: o.String("schema_version"),
	}
	if s.ArchiveSize == 0 {
		s.ArchiveSize = decodeInt(o, "output_size")
	}
	return s
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

func decodeResult(o Object) Result {
	r := Result{
		ID:              o.String("id"),
		SnapshotID:      compactID(o.String("snapshot_id")),
		Plugin:          o.String("plugin"),
		HookName:        o.String("hook_name"),
		Status:          o.String("status"),
		OutputStr:       o.String("output_str"),
		StartTS:         decodeTime(o, "start_ts"),
		EndTS:           decodeTime(o, "end_ts"),
		OutputFiles:     decodeOutputFiles(o),
		OutputSize:      decodeInt(o, "output_size"),
		OutputMimetypes: o.String("output_mimetypes"),
		Cmd:             decodeCmd(o),
		CmdVersion:      o.String("cmd_version"),
		ProcessID:       o.String("process_id"),
		Pwd:             o.String("pwd"),
		SchemaVersion:   o.String("schema_version"),
	}
	if raw, ok := o.Get("output_json"); ok && string(raw) != "null" {
		r.OutputJSON = raw
	}
	if r.Plugin == "" {
		r.Plugin = o.String("extractor")
	}
	if r.OutputStr == "" {
		r.OutputStr = o.String("output")
	}
	return r
}

// compactID writes dashed UUIDs as the 32-hex form ArchiveBox 0.9.4 uses.
func compactID(s string) string {
	if len(s) == 36 && strings.Count(s, "-") == 4 {
		return strings.ToLower(strings.ReplaceAll(s, "-", ""))
	}
	return s
}

func scalarString(o Object, key string) string {
	raw, ok := o.Get(key)
	if !ok {
		return ""
	}
	if len(raw) > 0 && raw[0] == '"' {
		s, _ := unquote(raw)
		return s
	}
	if n, err := strconv.ParseFloat(string(raw), 64); err == nil && len(raw) > 0 && raw[0] != 'N' && raw[0] != 'I' {
		_ = n
		return string(raw)
	}
	var v any
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	if dec.Decode(&v) != nil {
		return ""
	}
	switch v := v.(type) {
	case string:
		return v
	case json.Number:
		return v.String()
	}
	return ""
}

func decodeTime(o Object, key string) time.Time {
	t, _ := ParseTime(scalarString(o, key))
	return t
}

func decodeInt(o Object, key string) int64 {
	raw, ok := o.Get(key)
	if !ok {
		return 0
	}
	if i, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
		return i
	}
	var n json.Number
	if json.Unmarshal(raw, &n) != nil {
		return 0
	}
	if i, err := n.Int64(); err == nil {
		return i
	}
	if f, err := n.Float64(); err == nil {
		return int64(f)
	}
	return 0
}

func decodeTags(o Object) []string {
	raw, ok := o.Get("tags")
	if !ok {
		return nil
	}
	if len(raw) > 0 && raw[0] == '"' {
		if s, err := unquote(raw); err == nil {
			return SplitTags(s)
		}
	}
	var list []string
	if json.Unmarshal(raw, &list) == nil {
		return NormalizeTags(list)
	}
	return nil
}

func decodeCmd(o Object) []string {
	raw, ok := o.Get("cmd")
	if !ok {
		return nil
	}
	var list []string
	if json.Unmarshal(raw, &list) == nil {
		return list
	}
	var s string
	if json.Unmarshal(raw, &s) == nil && s != "" {
		return []string{s}
	}
	return nil
}

// decodeOutputFiles accepts output_files as {path: {size, mimetype, ...}}
// (0.9) or as a list of paths or {path, size} objects.
func decodeOutputFiles(o Object) []OutputFile {
	raw, ok := o.Get("output_files")
	if !ok {
		return nil
	}
	type meta struct {
		Path      string `json:"path"`
		Size      int64  `json:"size"`
		Mimetype  string `json:"mimetype"`
		Extension string `json:"extension"`
	}
	if files, err := parseObject(raw); err == nil {
		out := make([]OutputFile, 0, len(files))
		for _, m := range files {
			var md meta
			_ = json.Unmarshal(m.Value, &md)
			out = append(out, OutputFile{Path: m.Key, Size: md.Size, Mimetype: md.Mimetype, Extension: md.Extension})
		}
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
		var md meta
		if json.Unmarshal(e, &md) == nil && md.Path != "" {
			out = append(out, OutputFile{Path: md.Path, Size: md.Size, Mimetype: md.Mimetype, Extension: md.Extension})
		}
	}
	return out
}
