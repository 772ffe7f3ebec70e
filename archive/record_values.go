package archive

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

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
