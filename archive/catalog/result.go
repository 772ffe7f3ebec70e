package catalog

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"folio/archive"
)

// decodeResults decodes ArchiveResult lines (one per line) exactly as
// archive's Index.Results does: the common case straight from the raw
// values, anything unusual through archive. FuzzDecodeResult compares both.
func decodeResults(lines []byte) []archive.Result {
	var out []archive.Result
	for len(lines) > 0 {
		line := lines
		if i := bytes.IndexByte(lines, '\n'); i >= 0 {
			line, lines = lines[:i], lines[i+1:]
		} else {
			lines = nil
		}
		if r, ok := fastResult(line); ok {
			out = append(out, r)
			continue
		}
		ix, _ := archive.ParseIndex(line)
		out = append(out, ix.Results()...)
	}
	return out
}

type resultKeys struct {
	id, snapshotID, plugin, extractor, hookName, status, outputStr, output []byte
	startTS, endTS, outputFiles, outputSize, outputMimetypes, cmd, cmdVer  []byte
	processID, pwd, outputJSON, schemaVersion                              []byte
}

// fastResult decodes one ArchiveResult record line, or reports false when
// the line needs archive's general decoder.
func fastResult(line []byte) (archive.Result, bool) {
	var k resultKeys
	simple := true
	ok := scanMembers(line, func(key, val []byte) {
		if bytes.IndexByte(key, '\\') >= 0 {
			simple = false
			return
		}
		switch string(key[1 : len(key)-1]) {
		case "id":
			k.id = val
		case "snapshot_id":
			k.snapshotID = val
		case "plugin":
			k.plugin = val
		case "extractor":
			k.extractor = val
		case "hook_name":
			k.hookName = val
		case "status":
			k.status = val
		case "output_str":
			k.outputStr = val
		case "output":
			k.output = val
		case "start_ts":
			k.startTS = val
		case "end_ts":
			k.endTS = val
		case "output_files":
			k.outputFiles = val
		case "output_size":
			k.outputSize = val
		case "output_mimetypes":
			k.outputMimetypes = val
		case "cmd":
			k.cmd = val
		case "cmd_version":
			k.cmdVer = val
		case "process_id":
			k.processID = val
		case "pwd":
			k.pwd = val
		case "output_json":
			k.outputJSON = val
		case "schema_version":
			k.schemaVersion = val
		}
	})
	if !ok || !simple {
		return archive.Result{}, false
	}
	d := fastDecoder{ok: true}
	r := archive.Result{
		ID:              d.str(k.id),
		SnapshotID:      compactID(d.str(k.snapshotID)),
		Plugin:          d.str(k.plugin),
		HookName:        d.str(k.hookName),
		Status:          d.str(k.status),
		OutputStr:       d.str(k.outputStr),
		StartTS:         d.time(k.startTS),
		EndTS:           d.time(k.endTS),
		OutputFiles:     d.outputFiles(k.outputFiles),
		OutputSize:      d.int(k.outputSize),
		OutputMimetypes: d.str(k.outputMimetypes),
		Cmd:             decodeCmd(k.cmd),
		CmdVersion:      d.str(k.cmdVer),
		ProcessID:       d.str(k.processID),
		Pwd:             d.str(k.pwd),
		SchemaVersion:   d.str(k.schemaVersion),
	}
	if k.outputJSON != nil && string(k.outputJSON) != "null" {
		r.OutputJSON = append(json.RawMessage(nil), k.outputJSON...)
	}
	if r.Plugin == "" {
		r.Plugin = d.str(k.extractor)
	}
	if r.OutputStr == "" {
		r.OutputStr = d.str(k.output)
	}
	if !d.ok {
		return archive.Result{}, false
	}
	return r, true
}

// decodeCmd is archive's: a list of strings, or one non-empty string.
func decodeCmd(raw []byte) []string {
	if raw == nil {
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

// outputFiles decodes the {path: {size, mimetype, extension}} form; the
// list form goes through archive.
func (d *fastDecoder) outputFiles(raw []byte) []archive.OutputFile {
	if raw == nil {
		return nil
	}
	if raw[0] != '{' {
		d.ok = false
		return nil
	}
	out := []archive.OutputFile{}
	scanMembers(raw, func(key, val []byte) {
		body := key[1 : len(key)-1]
		if bytes.IndexByte(body, '\\') >= 0 || !utf8.Valid(body) {
			d.ok = false
			return
		}
		f := archive.OutputFile{Path: string(body)}
		if len(val) > 0 && val[0] == '{' {
			d.fileMeta(val, &f)
		}
		out = append(out, f)
	})
	return out
}

// fileMeta is json.Unmarshal into {Size int64; Mimetype, Extension string}
// for the plain cases: exact lowercase keys, strings, integers, nulls.
func (d *fastDecoder) fileMeta(raw []byte, f *archive.OutputFile) {
	scanMembers(raw, func(key, val []byte) {
		name := string(key[1 : len(key)-1])
		switch name {
		case "size":
			switch {
			case string(val) == "null":
			case val[0] == '-' || val[0] >= '0' && val[0] <= '9':
				if n, err := strconv.ParseInt(string(val), 10, 64); err == nil {
					f.Size = n
				} else {
					d.ok = false // floats and overflows: archive decides
				}
			default:
				d.ok = false
			}
		case "mimetype", "extension":
			var s string
			switch {
			case string(val) == "null":
				return
			case val[0] == '"':
				s = d.str(val)
			default:
				d.ok = false
				return
			}
			if name == "mimetype" {
				f.Mimetype = s
			} else {
				f.Extension = s
			}
		case "path":
		default:
			// encoding/json matches field names without regard to case.
			for _, known := range []string{"size", "mimetype", "extension", "path"} {
				if strings.EqualFold(name, known) {
					d.ok = false
				}
			}
			for i := 0; i < len(name); i++ {
				if name[i] >= utf8.RuneSelf || name[i] == '\\' {
					d.ok = false
				}
			}
		}
	})
}
