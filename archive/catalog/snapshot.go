package catalog

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"folio/archive"
)

// decodeSnapshot decodes a Snapshot record line exactly as archive's
// Index.Snapshot does. The common case (plain strings, numbers, nulls) is
// decoded here straight from the raw values; anything else (escapes,
// numbers in strings, escaped keys) goes through archive,
// so the result is the same either way. FuzzDecodeSnapshot compares both.
func decodeSnapshot(line []byte) (archive.Snapshot, bool) {
	if s, ok := fastSnapshot(line); ok {
		return s, true
	}
	ix, _ := archive.ParseIndex(line)
	return ix.Snapshot()
}

// snapshotKeys are the raw values of the keys a Snapshot record is read
// from (last occurrence wins).
type snapshotKeys struct {
	id, crawlID, url, timestamp, title, tags, bookmarked, created []byte
	depth, status, fsVersion, archiveSize, outputSize, notes      []byte
	schemaVersion                                                 []byte
}

// fastSnapshot decodes the simple case and reports false when the line
// needs archive's general decoder.
func fastSnapshot(line []byte) (archive.Snapshot, bool) {
	var k snapshotKeys
	simple := true
	ok := scanMembers(line, func(key, val []byte) {
		if bytes.IndexByte(key, '\\') >= 0 {
			simple = false
			return
		}
		switch string(key[1 : len(key)-1]) {
		case "id":
			k.id = val
		case "crawl_id":
			k.crawlID = val
		case "url":
			k.url = val
		case "timestamp":
			k.timestamp = val
		case "title":
			k.title = val
		case "tags":
			k.tags = val
		case "bookmarked_at":
			k.bookmarked = val
		case "created_at":
			k.created = val
		case "depth":
			k.depth = val
		case "status":
			k.status = val
		case "fs_version":
			k.fsVersion = val
		case "archive_size":
			k.archiveSize = val
		case "output_size":
			k.outputSize = val
		case "notes":
			k.notes = val
		case "schema_version":
			k.schemaVersion = val
		}
	})
	if !ok || !simple {
		return archive.Snapshot{}, false
	}
	d := fastDecoder{ok: true}
	s := archive.Snapshot{
		ID:            compactID(d.str(k.id)),
		CrawlID:       compactID(d.str(k.crawlID)),
		URL:           d.str(k.url),
		Timestamp:     d.scalar(k.timestamp),
		Title:         d.str(k.title),
		BookmarkedAt:  d.time(k.bookmarked),
		CreatedAt:     d.time(k.created),
		Depth:         int(d.int(k.depth)),
		Status:        d.str(k.status),
		FSVersion:     d.str(k.fsVersion),
		ArchiveSize:   d.int(k.archiveSize),
		Notes:         d.str(k.notes),
		SchemaVersion: d.str(k.schemaVersion),
	}
	if s.ArchiveSize == 0 {
		s.ArchiveSize = d.int(k.outputSize)
	}
	switch {
	case k.tags == nil || string(k.tags) == "null":
	case k.tags[0] == '"':
		s.Tags = archive.SplitTags(d.str(k.tags))
	case k.tags[0] == '[':
		var list []string
		if json.Unmarshal(k.tags, &list) == nil {
			s.Tags = archive.NormalizeTags(list)
		}
	}
	if !d.ok {
		return archive.Snapshot{}, false
	}
	return s, true
}

// fastDecoder converts raw values; ok turns false at the first value it
// cannot convert the way encoding/json would.
type fastDecoder struct{ ok bool }

// str is archive.Object.String: the value when it is a JSON string, else "".
func (d *fastDecoder) str(raw []byte) string {
	if len(raw) == 0 || raw[0] != '"' {
		return ""
	}
	body := raw[1 : len(raw)-1]
	if bytes.IndexByte(body, '\\') >= 0 || !utf8.Valid(body) {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			d.ok = false
		}
		return s
	}
	return string(body)
}

// scalar is a string's text or a number's literal, else "".
func (d *fastDecoder) scalar(raw []byte) string {
	switch {
	case len(raw) == 0:
		return ""
	case raw[0] == '"':
		return d.str(raw)
	case raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9':
		return string(raw)
	}
	return ""
}

func (d *fastDecoder) time(raw []byte) time.Time {
	v, _ := archive.ParseTime(d.scalar(raw))
	return v
}

// int is archive's decodeInt for numbers, null and absent values.
func (d *fastDecoder) int(raw []byte) int64 {
	switch {
	case len(raw) == 0 || string(raw) == "null":
		return 0
	case raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9':
		if i, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
			return i
		}
		if f, err := strconv.ParseFloat(string(raw), 64); err == nil {
			return int64(f)
		}
		return 0
	case raw[0] == 't' || raw[0] == 'f' || raw[0] == '[' || raw[0] == '{':
		return 0
	}
	d.ok = false // numbers in strings go through archive
	return 0
}

// compactID writes dashed UUIDs in the 32-hex form, as archive does.
func compactID(s string) string {
	if len(s) == 36 && strings.Count(s, "-") == 4 {
		return strings.ToLower(strings.ReplaceAll(s, "-", ""))
	}
	return s
}
