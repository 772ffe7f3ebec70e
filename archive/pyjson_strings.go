package archive

import (
	"bytes"
	"errors"
	"unicode/utf16"
	"unicode/utf8"
)

// keyString is the text of a raw key. The keys ArchiveBox writes are
// shared strings, so reading a record allocates nothing for them.
func keyString(raw []byte) string {
	if k, ok := known[string(raw[1:len(raw)-1])]; ok {
		return k
	}
	s, _ := unquote(raw)
	return s
}

// shortString is stringValue for the values that repeat across records
// (record types, statuses, plugin names, mime types): they come from the
// same table of shared strings as the keys.
func shortString(raw []byte) string {
	if len(raw) >= 2 && len(raw) <= 40 && raw[0] == '"' {
		if s, ok := known[string(raw[1:len(raw)-1])]; ok {
			return s
		}
	}
	return stringValue(raw)
}

// known holds the keys and the short values ArchiveBox writes over and
// over.
var known = func() map[string]string {
	m := map[string]string{}
	for _, k := range []string{
		"type", "schema_version", "id", "crawl_id", "url", "title", "tags", "bookmarked_at",
		"created_at", "timestamp", "depth", "status", "fs_version", "archive_size", "output_size",
		"notes", "snapshot_id", "plugin", "extractor", "hook_name", "output_str", "output",
		"start_ts", "end_ts", "output_files", "output_mimetypes", "cmd", "cmd_version",
		"process_id", "pwd", "output_json", "extension", "mimetype", "size", "path",
		"schema", "history", "archive_results", "TYPE", "base_url", "domain", "updated",
		"sources", "is_archived", "num_outputs", "latest", "hash", "basename",
		"bookmarked_date", "updated_date", "oldest_archive_date", "newest_archive_date",
		"canonical", "archive_path", "link_dir", "icons", "num_failures",
		// values
		"", TypeSnapshot, TypeArchiveResult, SchemaVersion, "0.9.0", "0.8.0", "0.7.0",
		"Link", "ArchiveResult", "queued", "started", "sealed", "paused", "succeeded", "failed",
		"skipped", "backoff", "noresults", "succeded", "headers", "wget", "favicon", "singlefile",
		"screenshot", "pdf", "dom", "readability", "mercury", "htmltotext", "git", "media",
		"archive_org", "archivedotorg", "warc", "html", "txt", "json", "png", "ico", "jpg",
		"text/html", "text/plain", "application/json", "application/pdf", "image/png",
		"image/jpeg", "image/vnd.microsoft.icon", "text/html,text/plain,application/json",
	} {
		m[k] = k
	}
	return m
}()

// unquote decodes a raw JSON string literal as encoding/json does: escapes
// decoded, invalid UTF-8 and unpaired surrogates replaced by U+FFFD.
// FuzzUnquote compares the two.
func unquote(raw []byte) (string, error) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", errNotString
	}
	inner := raw[1 : len(raw)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return string(inner), nil
	}
	start := 0 // the plain ASCII prefix is copied as it is
	for start < len(inner) && inner[start] != '\\' && inner[start] < utf8.RuneSelf {
		start++
	}
	b := make([]byte, start, len(inner)+8)
	copy(b, inner)
	for i := start; i < len(inner); {
		c := inner[i]
		switch {
		case c == '\\':
			if i+1 >= len(inner) {
				return "", errNotString
			}
			switch e := inner[i+1]; e {
			case '"', '\\', '/':
				b = append(b, e)
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				r := hex4(inner, i+2)
				if r < 0 {
					return "", errNotString
				}
				i += 6
				if utf16.IsSurrogate(r) {
					if i+1 < len(inner) && inner[i] == '\\' && inner[i+1] == 'u' {
						if dec := utf16.DecodeRune(r, hex4(inner, i+2)); dec != utf8.RuneError {
							b = utf8.AppendRune(b, dec)
							i += 6
							continue
						}
					}
					r = utf8.RuneError
				}
				b = utf8.AppendRune(b, r)
				continue
			default:
				return "", errNotString
			}
			i += 2
		case c == '"' || c < 0x20:
			return "", errNotString
		case c < utf8.RuneSelf:
			b = append(b, c)
			i++
		default:
			r, size := utf8.DecodeRune(inner[i:])
			b = utf8.AppendRune(b, r)
			i += size
		}
	}
	return string(b), nil
}

var errNotString = errors.New("not a JSON string")

// stringValue is the value of raw when it is a JSON string, else "".
func stringValue(raw []byte) string {
	if len(raw) == 0 || raw[0] != '"' {
		return ""
	}
	s, err := unquote(raw)
	if err != nil {
		return ""
	}
	return s
}
