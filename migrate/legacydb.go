package migrate

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver (pure Go, no cgo)

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/layout"
)

// Legacy database schemas, as Inventory.DBVersion names them.
const (
	DB04   = "0.4"    // core_snapshot.tags string column, no tag tables
	DB0424 = "0.4.24" // core_tag tables, no core_archiveresult
	DB07   = "0.7"    // 0.5-0.7: added/updated, core_archiveresult.extractor
	DB08   = "0.8"    // bookmarked_at, crawls, uuid/abid churn
	DB09   = "0.9"    // fs_version, plugin/output_str, machine_process
)

// legacyDB is everything folio reads from an ArchiveBox index.sqlite3.
type legacyDB struct {
	Version    string
	Rows       []*dbRow            // ordered by compact id
	ByID       map[string]*dbRow   // compact id -> row
	ByTS       map[string][]*dbRow // timestamp (verbatim) -> rows
	Users      map[int64]string    // auth_user id -> username
	Superusers []string            // usernames with is_superuser
	Crawls     map[string]*dbCrawl // compact id -> crawl
	ByURL      map[string][]*dbRow // url -> rows
}

// dbRow is one core_snapshot row with its tags and results.
type dbRow struct {
	ID           string // compact
	URL          string
	Timestamp    string // verbatim
	Title        string
	Tags         []string
	Added        time.Time // 0.4-0.7 "added"
	Updated      time.Time
	BookmarkedAt time.Time // 0.8/0.9 column
	CreatedAt    time.Time
	CrawlID      string // compact, "" when NULL
	CreatedByID  int64  // 0.8 core_snapshot.created_by_id, 0 when absent
	Status       string
	FSVersion    string
	Depth        int
	Notes        string
	Results      []archive.Result
}

// dbCrawl is one crawls_crawl row.
type dbCrawl struct {
	ID          string // compact
	CreatedAt   time.Time
	CreatedByID int64
	URLs        string
	Label       string
}

// readLegacyDB copies path (and its -wal) into a temporary folder and reads
// the copy, so the WAL's content is seen and the original files stay byte
// identical: SQLite may write even to a database opened read-only (the -shm
// index, a WAL checkpoint on close). The -shm file is not copied: it is a
// cache of the WAL's index that SQLite rebuilds from the WAL when the first
// connection opens the copy, which is more reliable than a stale copy.
// A missing file returns nil, nil.
func readLegacyDB(ctx context.Context, path string, now time.Time) (*legacyDB, error) {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("read legacy database %s: %w", path, err)
	}
	tmp, err := os.MkdirTemp("", "folio-legacydb-")
	if err != nil {
		return nil, fmt.Errorf("read legacy database %s: %w", path, err)
	}
	defer os.RemoveAll(tmp)
	cp := filepath.Join(tmp, "index.sqlite3")
	if err := copyFile(path, cp); err != nil {
		return nil, fmt.Errorf("read legacy database %s: %w", path, err)
	}
	if err := copyFile(path+"-wal", cp+"-wal"); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read legacy database %s: %w", path, err)
	}
	db, err := sql.Open("sqlite", "file:"+cp+"?_pragma=busy_timeout(5000)")
	if err != nil {
		return nil, fmt.Errorf("read legacy database %s: %w", path, err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	ldb, err := loadLegacyDB(ctx, db, now)
	if err != nil {
		return nil, fmt.Errorf("read legacy database %s: %w", path, err)
	}
	return ldb, nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// schema holds the tables of a database and the columns of each.
type schema map[string]map[string]bool

func (s schema) has(table string, cols ...string) bool {
	t, ok := s[table]
	if !ok {
		return false
	}
	for _, c := range cols {
		if !t[c] {
			return false
		}
	}
	return true
}

// text is the SQL for a column read as text, or NULL when the table lacks
// it. CAST keeps REAL timestamps as SQLite prints them ("1508259732.0") and
// stops the driver from turning DATETIME columns into time values.
func (s schema) text(table, col, alias string) string {
	if alias != "" {
		alias += "."
	}
	if !s.has(table, col) {
		return "NULL"
	}
	return "CAST(" + alias + `"` + col + `" AS TEXT)`
}

func readSchema(ctx context.Context, db *sql.DB) (schema, error) {
	rows, err := db.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table'`)
	if err != nil {
		return nil, err
	}
	var tables []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return nil, err
		}
		tables = append(tables, name)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	s := schema{}
	for _, t := range tables {
		cols := map[string]bool{}
		r, err := db.QueryContext(ctx, `SELECT name FROM pragma_table_info(?)`, t)
		if err != nil {
			return nil, err
		}
		for r.Next() {
			var c string
			if err := r.Scan(&c); err != nil {
				r.Close()
				return nil, err
			}
			cols[c] = true
		}
		r.Close()
		if err := r.Err(); err != nil {
			return nil, err
		}
		s[t] = cols
	}
	return s, nil
}

// detectVersion applies the column probes of ArchiveBox's own 0.9 upgrade
// migration (formats spec §4.0).
func detectVersion(s schema) (string, error) {
	if len(s) == 0 {
		return "", nil // an empty file: SQLite reads it as a database without tables
	}
	if !s.has("core_snapshot", "id", "url", "timestamp") {
		return "", errors.New("no core_snapshot table with id, url and timestamp: not an ArchiveBox database")
	}
	switch {
	case s.has("core_snapshot", "fs_version") && s.has("core_archiveresult", "plugin"):
		return DB09, nil
	case s.has("core_snapshot", "bookmarked_at"):
		return DB08, nil
	case s.has("core_snapshot", "tags") && !s.has("core_tag"):
		return DB04, nil
	case s.has("core_tag") && !s.has("core_archiveresult"):
		return DB0424, nil
	case s.has("core_snapshot", "added"):
		return DB07, nil
	}
	return "", errors.New("core_snapshot has neither added nor bookmarked_at: unknown ArchiveBox schema")
}

func loadLegacyDB(ctx context.Context, db *sql.DB, now time.Time) (*legacyDB, error) {
	s, err := readSchema(ctx, db)
	if err != nil {
		return nil, err
	}
	v, err := detectVersion(s)
	if err != nil {
		return nil, err
	}
	ldb := &legacyDB{
		Version: v,
		ByID:    map[string]*dbRow{},
		ByTS:    map[string][]*dbRow{},
		Users:   map[int64]string{},
		Crawls:  map[string]*dbCrawl{},
	}
	if v == "" {
		return ldb, nil
	}
	if err := readUsers(ctx, db, s, ldb); err != nil {
		return nil, err
	}
	if err := readCrawls(ctx, db, s, ldb); err != nil {
		return nil, err
	}
	if err := readSnapshots(ctx, db, s, ldb); err != nil {
		return nil, err
	}
	if v != DB04 {
		if err := readTags(ctx, db, s, ldb); err != nil {
			return nil, err
		}
	}
	if s.has("core_archiveresult") {
		if err := readResults(ctx, db, s, ldb, now); err != nil {
			return nil, err
		}
	}
	for _, r := range ldb.Rows {
		r.Tags = archive.NormalizeTags(r.Tags)
		sortResults(r.Results)
	}
	return ldb, nil
}

func readUsers(ctx context.Context, db *sql.DB, s schema, ldb *legacyDB) error {
	if !s.has("auth_user", "id", "username") {
		return nil
	}
	q := `SELECT id, CAST(username AS TEXT), ` + s.text("auth_user", "is_superuser", "") + ` FROM auth_user ORDER BY id`
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return fmt.Errorf("read auth_user: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var name, super sql.NullString
		if err := rows.Scan(&id, &name, &super); err != nil {
			return fmt.Errorf("read auth_user: %w", err)
		}
		ldb.Users[id] = name.String
		if super.String == "1" || strings.EqualFold(super.String, "true") {
			ldb.Superusers = append(ldb.Superusers, name.String)
		}
	}
	return rows.Err()
}

func readCrawls(ctx context.Context, db *sql.DB, s schema, ldb *legacyDB) error {
	if !s.has("crawls_crawl", "id") {
		return nil
	}
	t := "crawls_crawl"
	q := `SELECT CAST(id AS TEXT), ` + s.text(t, "created_at", "") + `, ` + s.text(t, "created_by_id", "") + `, ` +
		s.text(t, "urls", "") + `, ` + s.text(t, "label", "") + ` FROM crawls_crawl`
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return fmt.Errorf("read crawls_crawl: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, created, by, urls, label sql.NullString
		if err := rows.Scan(&id, &created, &by, &urls, &label); err != nil {
			return fmt.Errorf("read crawls_crawl: %w", err)
		}
		cid, ok := layout.ParseID(strings.TrimSpace(id.String))
		if !ok {
			continue // a crawl id folio cannot name a folder with
		}
		c := &dbCrawl{ID: cid, URLs: urls.String, Label: label.String, CreatedByID: parseInt(by.String)}
		c.CreatedAt, _ = parseDBTime(created.String)
		ldb.Crawls[cid] = c
	}
	return rows.Err()
}

func readSnapshots(ctx context.Context, db *sql.DB, s schema, ldb *legacyDB) error {
	t := "core_snapshot"
	cols := []string{"id", "url", "timestamp", "title", "tags", "added", "updated", "bookmarked_at",
		"created_at", "crawl_id", "created_by_id", "status", "fs_version", "depth", "notes"}
	sel := make([]string, len(cols))
	for i, c := range cols {
		sel[i] = s.text(t, c, "")
	}
	rows, err := db.QueryContext(ctx, `SELECT `+strings.Join(sel, ", ")+` FROM core_snapshot`)
	if err != nil {
		return fmt.Errorf("read core_snapshot: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		v := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range v {
			ptrs[i] = &v[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return fmt.Errorf("read core_snapshot: %w", err)
		}
		r, err := decodeRow(ldb.Version, v)
		if err != nil {
			return fmt.Errorf("read core_snapshot: %w", err)
		}
		if _, dup := ldb.ByID[r.ID]; dup {
			return fmt.Errorf("read core_snapshot: id %s appears twice", r.ID)
		}
		ldb.Rows = append(ldb.Rows, r)
		ldb.ByID[r.ID] = r
		ldb.ByTS[r.Timestamp] = append(ldb.ByTS[r.Timestamp], r)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read core_snapshot: %w", err)
	}
	sort.Slice(ldb.Rows, func(i, j int) bool { return ldb.Rows[i].ID < ldb.Rows[j].ID })
	return nil
}

// decodeRow turns the text columns of one core_snapshot row (in the order
// readSnapshots selects them) into a dbRow.
func decodeRow(version string, v []sql.NullString) (*dbRow, error) {
	id, ok := layout.ParseID(strings.TrimSpace(v[0].String))
	if !ok {
		return nil, fmt.Errorf("snapshot id %q is not a UUID", v[0].String)
	}
	r := &dbRow{
		ID:          id,
		URL:         v[1].String,
		Timestamp:   v[2].String,
		Title:       v[3].String,
		CreatedByID: parseInt(v[10].String),
		Status:      v[11].String,
		FSVersion:   v[12].String,
		Depth:       int(parseInt(v[13].String)),
		Notes:       v[14].String,
	}
	if version == DB04 {
		r.Tags = archive.SplitTags(v[4].String)
	}
	r.Added, _ = parseDBTime(v[5].String)
	r.Updated, _ = parseDBTime(v[6].String)
	r.BookmarkedAt, _ = parseDBTime(v[7].String)
	r.CreatedAt, _ = parseDBTime(v[8].String)
	if c := strings.TrimSpace(v[9].String); c != "" {
		if cid, ok := layout.ParseID(c); ok {
			r.CrawlID = cid
		}
	}
	return r, nil
}

func parseInt(s string) int64 {
	var n int64
	s = strings.TrimSpace(s)
	if s == "" {
		return 0
	}
	if _, err := fmt.Sscan(s, &n); err != nil {
		var f float64
		if _, err := fmt.Sscan(s, &f); err == nil {
			return int64(f)
		}
	}
	return n
}

// readTags reads core_tag and core_snapshot_tags in Go rather than with a
// join, because 0.8 betas key tags by UUIDs written with or without dashes.
func readTags(ctx context.Context, db *sql.DB, s schema, ldb *legacyDB) error {
	if !s.has("core_tag", "id", "name") || !s.has("core_snapshot_tags", "snapshot_id", "tag_id") {
		return nil
	}
	names := map[string]string{}
	rows, err := db.QueryContext(ctx, `SELECT CAST(id AS TEXT), CAST(name AS TEXT) FROM core_tag`)
	if err != nil {
		return fmt.Errorf("read core_tag: %w", err)
	}
	for rows.Next() {
		var id, name sql.NullString
		if err := rows.Scan(&id, &name); err != nil {
			rows.Close()
			return fmt.Errorf("read core_tag: %w", err)
		}
		names[tagKey(id.String)] = name.String
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read core_tag: %w", err)
	}
	rows, err = db.QueryContext(ctx, `SELECT CAST(snapshot_id AS TEXT), CAST(tag_id AS TEXT) FROM core_snapshot_tags`)
	if err != nil {
		return fmt.Errorf("read core_snapshot_tags: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var sid, tid sql.NullString
		if err := rows.Scan(&sid, &tid); err != nil {
			return fmt.Errorf("read core_snapshot_tags: %w", err)
		}
		id, ok := layout.ParseID(strings.TrimSpace(sid.String))
		if !ok {
			continue
		}
		if r := ldb.ByID[id]; r != nil {
			if name, ok := names[tagKey(tid.String)]; ok {
				r.Tags = append(r.Tags, name)
			}
		}
	}
	return rows.Err()
}

func tagKey(id string) string {
	id = strings.TrimSpace(id)
	if c, ok := layout.ParseID(id); ok {
		return c
	}
	return id
}

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

// parseDBTime reads a datetime column. Django writes "YYYY-MM-DD
// HH:MM:SS[.ffffff]" in UTC, which is parsed here without allocating;
// every other form goes to archive.ParseTime.
func parseDBTime(s string) (time.Time, bool) {
	if len(s) == 19 || (len(s) > 20 && len(s) <= 26 && s[19] == '.') {
		if t, ok := djangoTime(s); ok {
			return t, true
		}
	}
	return archive.ParseTime(s)
}

func djangoTime(s string) (time.Time, bool) {
	num := func(i, n int) (int, bool) {
		v := 0
		for j := i; j < i+n; j++ {
			c := s[j]
			if c < '0' || c > '9' {
				return 0, false
			}
			v = v*10 + int(c-'0')
		}
		return v, true
	}
	if s[4] != '-' || s[7] != '-' || (s[10] != ' ' && s[10] != 'T') || s[13] != ':' || s[16] != ':' {
		return time.Time{}, false
	}
	var f [6]int
	for i, pos := range [6][2]int{{0, 4}, {5, 2}, {8, 2}, {11, 2}, {14, 2}, {17, 2}} {
		v, ok := num(pos[0], pos[1])
		if !ok {
			return time.Time{}, false
		}
		f[i] = v
	}
	micro := 0
	if len(s) > 20 {
		frac := s[20:]
		v, ok := num(20, len(frac))
		if !ok {
			return time.Time{}, false
		}
		for k := len(frac); k < 6; k++ {
			v *= 10
		}
		micro = v
	}
	if f[1] < 1 || f[1] > 12 || f[2] < 1 || f[2] > 31 || f[3] > 23 || f[4] > 59 || f[5] > 59 {
		return time.Time{}, false
	}
	t := time.Date(f[0], time.Month(f[1]), f[2], f[3], f[4], f[5], micro*1000, time.UTC)
	if t.Day() != f[2] {
		return time.Time{}, false // Feb 30 and the like
	}
	return t, true
}
