package archive

import (
	"encoding/json"
	"slices"
	"sort"
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
