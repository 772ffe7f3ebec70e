package archive

// The decoder folio used before the byte scanner: encoding/json for
// validation, for every escaped string and for every unusual value. The
// fuzz targets in fuzz_test.go hold the fast decoder to it.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

func refStr(o Object, key string) string {
	raw, ok := o.Get(key)
	if !ok {
		return ""
	}
	s, err := refUnquote(raw)
	if err != nil {
		return ""
	}
	return s
}

func refParseObject(data []byte) (Object, error) {
	if !json.Valid(data) {
		var v any
		err := json.Unmarshal(data, &v)
		if err == nil {
			err = fmt.Errorf("invalid JSON")
		}
		return nil, err
	}
	i := refSkipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return nil, fmt.Errorf("not a JSON object")
	}
	obj := make(Object, 0, 16)
	i = refSkipSpace(data, i+1)
	if data[i] == '}' {
		return obj, nil
	}
	for {
		end := refStringEnd(data, i)
		key, err := refUnquote(data[i:end])
		if err != nil {
			return nil, err
		}
		i = refSkipSpace(data, end)
		i = refSkipSpace(data, i+1) // the ':'
		vend := refValueEnd(data, i)
		obj = append(obj, Member{key, data[i:vend:vend]})
		i = refSkipSpace(data, vend)
		if data[i] == '}' {
			return obj, nil
		}
		i = refSkipSpace(data, i+1) // the ','
	}
}

func refSkipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// stringEnd returns the index after the closing quote of the string that
// starts at b[i] (valid JSON assumed).
func refStringEnd(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(b)
}

// valueEnd returns the index after the JSON value that starts at b[i]
// (valid JSON assumed).
func refValueEnd(b []byte, i int) int {
	switch b[i] {
	case '"':
		return refStringEnd(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				i = refStringEnd(b, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return len(b)
	}
	for ; i < len(b); i++ {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
	}
	return i
}

// unquote decodes a JSON string literal, without reflection for the common
// case of a plain string.
func refUnquote(raw []byte) (string, error) {
	if len(raw) >= 2 && raw[0] == '"' && raw[len(raw)-1] == '"' {
		inner := raw[1 : len(raw)-1]
		if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
			return string(inner), nil
		}
	}
	var s string
	err := json.Unmarshal(raw, &s)
	return s, err
}

// NormalizeTags trims, drops empties, dedupes and sorts tag names.
func refNormalizeTags(tags []string) []string {
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
func refSplitTags(s string) []string {
	return refNormalizeTags(strings.Split(s, ","))
}

func refDecodeSnapshot(o Object) Snapshot {
	s := Snapshot{
		ID:            compactID(refStr(o, "id")),
		CrawlID:       compactID(refStr(o, "crawl_id")),
		URL:           refStr(o, "url"),
		Timestamp:     refScalarString(o, "timestamp"),
		Title:         refStr(o, "title"),
		Tags:          refDecodeTags(o),
		BookmarkedAt:  refDecodeTime(o, "bookmarked_at"),
		CreatedAt:     refDecodeTime(o, "created_at"),
		Depth:         int(refDecodeInt(o, "depth")),
		Status:        refStr(o, "status"),
		FSVersion:     refStr(o, "fs_version"),
		ArchiveSize:   refDecodeInt(o, "archive_size"),
		Notes:         refStr(o, "notes"),
		SchemaVersion: refStr(o, "schema_version"),
	}
	if s.ArchiveSize == 0 {
		s.ArchiveSize = refDecodeInt(o, "output_size")
	}
	return s
}
func refDecodeResult(o Object) Result {
	r := Result{
		ID:              refStr(o, "id"),
		SnapshotID:      compactID(refStr(o, "snapshot_id")),
		Plugin:          refStr(o, "plugin"),
		HookName:        refStr(o, "hook_name"),
		Status:          refStr(o, "status"),
		OutputStr:       refStr(o, "output_str"),
		StartTS:         refDecodeTime(o, "start_ts"),
		EndTS:           refDecodeTime(o, "end_ts"),
		OutputFiles:     refDecodeOutputFiles(o),
		OutputSize:      refDecodeInt(o, "output_size"),
		OutputMimetypes: refStr(o, "output_mimetypes"),
		Cmd:             refDecodeCmd(o),
		CmdVersion:      refStr(o, "cmd_version"),
		ProcessID:       refStr(o, "process_id"),
		Pwd:             refStr(o, "pwd"),
		SchemaVersion:   refStr(o, "schema_version"),
	}
	if raw, ok := o.Get("output_json"); ok && string(raw) != "null" {
		r.OutputJSON = raw
	}
	if r.Plugin == "" {
		r.Plugin = refStr(o, "extractor")
	}
	if r.OutputStr == "" {
		r.OutputStr = refStr(o, "output")
	}
	return r
}

func refScalarString(o Object, key string) string {
	raw, ok := o.Get(key)
	if !ok {
		return ""
	}
	if len(raw) > 0 && raw[0] == '"' {
		s, _ := refUnquote(raw)
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

func refDecodeTime(o Object, key string) time.Time {
	t, _ := ParseTime(refScalarString(o, key))
	return t
}

func refDecodeInt(o Object, key string) int64 {
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

func refDecodeTags(o Object) []string {
	raw, ok := o.Get("tags")
	if !ok {
		return nil
	}
	if len(raw) > 0 && raw[0] == '"' {
		if s, err := refUnquote(raw); err == nil {
			return refSplitTags(s)
		}
	}
	var list []string
	if json.Unmarshal(raw, &list) == nil {
		return refNormalizeTags(list)
	}
	return nil
}

func refDecodeCmd(o Object) []string {
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
func refDecodeOutputFiles(o Object) []OutputFile {
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
	if files, err := refParseObject(raw); err == nil {
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

var (
	refDashedID  = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
	refCompactID = regexp.MustCompile(`^[0-9a-fA-F]{32}$`)
)

func refClassify(t []byte) (Object, string) {
	switch {
	case len(t) == 0 || t[0] == '#':
		return nil, ""
	case t[0] == '{':
		obj, err := refParseObject(t)
		if err != nil {
			return nil, ""
		}
		kind := refStr(obj, "type")
		if _, hasURL := obj.Get("url"); kind == "" && hasURL {
			if _, hasType := obj.Get("type"); !hasType {
				kind = TypeSnapshot
			}
		}
		return obj, kind
	case bytes.HasPrefix(t, []byte("http://")), bytes.HasPrefix(t, []byte("https://")), bytes.HasPrefix(t, []byte("file://")):
		return Object{{"type", py(TypeSnapshot)}, {"url", py(string(t))}}, TypeSnapshot
	case refDashedID.Match(t), refCompactID.Match(t):
		return Object{{"type", py(TypeSnapshot)}, {"id", py(string(t))}}, TypeSnapshot
	}
	return nil, ""
}
func refLineProblem(t []byte) string {
	switch {
	case len(t) == 0 || t[0] == '#':
		return ""
	case t[0] == '{':
		if _, err := refParseObject(t); err != nil {
			return "invalid JSON: " + err.Error()
		}
		return "record has no type"
	case !isText(t):
		return "binary data"
	}
	return "not a JSON record, URL or id"
}
func refParseLegacyIndex(data []byte) (*LegacyIndex, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil, ErrEmptyIndex
	}
	obj, err := refParseObject(data)
	if err != nil {
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	li := &LegacyIndex{Snapshot: refDecodeSnapshot(obj), Object: obj}
	list, hasList := obj.Get("archive_results")
	switch {
	case refStr(obj, "fs_version") != "":
		li.FSVersion = refStr(obj, "fs_version")
	case hasList:
		li.FSVersion = "0.8.0"
	default:
		li.FSVersion = "0.7.0"
	}
	if hasList {
		var entries []json.RawMessage
		if json.Unmarshal(list, &entries) == nil {
			for _, e := range entries {
				if o, err := refParseObject(e); err == nil {
					li.Results = append(li.Results, refLegacyResult(o, ""))
				}
			}
		}
	}
	if raw, ok := obj.Get("history"); ok {
		if history, err := refParseObject(raw); err == nil {
			for _, m := range history {
				var entries []json.RawMessage
				if json.Unmarshal(m.Value, &entries) != nil {
					continue
				}
				for _, e := range entries {
					if o, err := refParseObject(e); err == nil {
						li.Results = append(li.Results, refLegacyResult(o, m.Key))
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
func refLegacyResult(o Object, key string) Result {
	r := refDecodeResult(o)
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
