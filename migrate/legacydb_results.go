package migrate

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/layout"
)

// readResults reads core_archiveresult: 0.5-0.8 rows (extractor, output,
// cmd, pwd, cmd_version inline) or 0.9 rows (plugin, output_str, cmd and
// pwd on machine_process, the version on machine_binary).
func readResults(ctx context.Context, db *sql.DB, s schema, ldb *legacyDB, now time.Time) error {
	t := "core_archiveresult"
	col := func(c string) string { return s.text(t, c, "r") }
	cmd, pwd, version, join := col("cmd"), col("pwd"), col("cmd_version"), ""
	if ldb.Version == DB09 && s.has("machine_process", "id") && s.has(t, "process_id") {
		cmd, pwd = s.text("machine_process", "cmd", "p"), s.text("machine_process", "pwd", "p")
		join = ` LEFT JOIN machine_process p ON p.id = r.process_id`
		if s.has("machine_binary", "id", "version") && s.has("machine_process", "binary_id") {
			version = s.text("machine_binary", "version", "b")
			join += ` LEFT JOIN machine_binary b ON b.id = p.binary_id`
		}
	}
	sel := []string{
		col("id"), col("uuid"), col("abid"), col("snapshot_id"), col("plugin"), col("extractor"),
		col("hook_name"), col("output_str"), col("output"), col("output_json"), col("output_files"),
		col("output_size"), col("output_mimetypes"), col("start_ts"), col("end_ts"), col("status"),
		col("process_id"), cmd, pwd, version,
	}
	rows, err := db.QueryContext(ctx, `SELECT `+strings.Join(sel, ", ")+` FROM core_archiveresult r`+join)
	if err != nil {
		return fmt.Errorf("read core_archiveresult: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		v := make([]sql.NullString, len(sel))
		ptrs := make([]any, len(sel))
		for i := range v {
			ptrs[i] = &v[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return fmt.Errorf("read core_archiveresult: %w", err)
		}
		sid, ok := layout.ParseID(strings.TrimSpace(v[3].String))
		if !ok {
			continue
		}
		row := ldb.ByID[sid]
		if row == nil {
			continue // a result of a deleted snapshot
		}
		row.Results = append(row.Results, decodeDBResult(ldb.Version, sid, v, now))
	}
	return rows.Err()
}

// decodeDBResult converts one core_archiveresult row (columns in readResults'
// order) as ArchiveBox's 0.9 migration does: extractor->plugin,
// output->output_str, status normalised, hook_name "", a missing start_ts is
// now and a missing end_ts is start_ts (legacy rows), uuid/abid/uuid-PK as
// the id, else one derived from the row.
func decodeDBResult(version, sid string, v []sql.NullString, now time.Time) archive.Result {
	r := archive.Result{
		SnapshotID:      sid,
		Plugin:          firstNonEmpty(v[4].String, v[5].String),
		HookName:        v[6].String,
		OutputStr:       firstNonEmpty(v[7].String, v[8].String),
		OutputMimetypes: v[12].String,
		Status:          archive.NormalizeStatus(v[15].String),
		ProcessID:       compactOr(v[16].String),
		Cmd:             normalizeCmd(v[17].String),
		Pwd:             v[18].String,
		CmdVersion:      v[19].String,
		OutputSize:      parseInt(v[11].String),
	}
	r.Plugin = truncPlugin(r.Plugin)
	for _, cand := range []string{v[1].String, v[0].String, v[2].String} {
		if id, ok := layout.ParseID(strings.TrimSpace(cand)); ok {
			r.ID = id
			break
		}
	}
	if r.ID == "" {
		// 0.5 rows (integer id, no uuid yet): an id derived from the row,
		// so every scan gives the result the same id.
		r.ID = derivedID(sid, "core_archiveresult", v[0].String, r.Plugin, v[13].String)
	}
	if js := strings.TrimSpace(v[9].String); js != "" && js != "null" && json.Valid([]byte(js)) {
		r.OutputJSON = json.RawMessage(js)
	}
	r.OutputFiles = decodeOutputFiles(v[10].String)
	r.StartTS, _ = parseDBTime(v[13].String)
	r.EndTS, _ = parseDBTime(v[14].String)
	if version != DB09 {
		if r.StartTS.IsZero() {
			r.StartTS = now
		}
		if r.EndTS.IsZero() {
			r.EndTS = r.StartTS
		}
	}
	return r
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

func compactOr(s string) string {
	s = strings.TrimSpace(s)
	if id, ok := layout.ParseID(s); ok {
		return id
	}
	return s
}

// normalizeCmd reads a cmd column as ArchiveBox's migration does: a JSON
// list of strings, else the text split on whitespace.
func normalizeCmd(s string) []string {
	s = strings.TrimSpace(s)
	if s == "" || s == "null" {
		return nil
	}
	if s[0] == '[' {
		var strs []string
		if json.Unmarshal([]byte(s), &strs) == nil {
			return strs
		}
	}
	var list []any
	if json.Unmarshal([]byte(s), &list) == nil {
		out := make([]string, 0, len(list))
		for _, e := range list {
			switch e := e.(type) {
			case string:
				out = append(out, e)
			case nil:
			default:
				b, _ := json.Marshal(e)
				out = append(out, string(b))
			}
		}
		return out
	}
	var str string
	if json.Unmarshal([]byte(s), &str) == nil {
		return strings.Fields(str)
	}
	return strings.Fields(s)
}

// decodeOutputFiles parses an output_files JSON column through the
// index.jsonl record decoder, which knows every shape ArchiveBox wrote.
func decodeOutputFiles(js string) []archive.OutputFile {
	js = strings.TrimSpace(js)
	if js == "" || js == "{}" || js == "[]" || js == "null" || !json.Valid([]byte(js)) {
		return nil
	}
	line := append([]byte(`{"type": "ArchiveResult", "output_files": `), js...)
	line = append(line, '}')
	ix, _ := archive.ParseIndex(line)
	if rs := ix.Results(); len(rs) == 1 {
		return rs[0].OutputFiles
	}
	return nil
}

// sortResults orders results by start_ts, results without one first, as
// ArchiveBox writes them into index.jsonl.
func sortResults(rs []archive.Result) {
	sort.SliceStable(rs, func(i, j int) bool {
		a, b := rs[i].StartTS, rs[j].StartTS
		if a.IsZero() != b.IsZero() {
			return a.IsZero()
		}
		return a.Before(b)
	})
}
