package migrate

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
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
	Status      string
	MaxDepth    int
	TagsStr     string
}

// readLegacyDB copies path (and its -wal) into a temporary folder and reads
// the copy, so the WAL's content is seen and the original files stay byte
// identical: SQLite may write even to a database opened read-only (the -shm
// index, a WAL checkpoint on close). The -shm file is not copied: it is a
// cache of the WAL's index that SQLite rebuilds from the WAL when the first
// connection opens the copy, which is more reliable than a stale copy.
// Both files must be regular files, not symlinks (legacyFile). A missing
// file returns nil, nil.
func readLegacyDB(ctx context.Context, path string, now time.Time) (*legacyDB, error) {
	if err := legacyFile(path); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("read legacy database %s: %w", path, err)
	}
	tmp, release, err := newCopyDir()
	if err != nil {
		return nil, fmt.Errorf("read legacy database %s: %w", path, err)
	}
	defer release()
	cp := filepath.Join(tmp, "index.sqlite3")
	if err := copyRegular(path, cp); err != nil {
		return nil, fmt.Errorf("read legacy database %s: %w", path, err)
	}
	if err := copyRegular(path+"-wal", cp+"-wal"); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read legacy database %s: %s-wal: %w", path, path, err)
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
		s.text(t, "urls", "") + `, ` + s.text(t, "label", "") + `, ` + s.text(t, "status", "") + `, ` +
		s.text(t, "max_depth", "") + `, ` + s.text(t, "tags_str", "") + ` FROM crawls_crawl`
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return fmt.Errorf("read crawls_crawl: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, created, by, urls, label, status, depth, tags sql.NullString
		if err := rows.Scan(&id, &created, &by, &urls, &label, &status, &depth, &tags); err != nil {
			return fmt.Errorf("read crawls_crawl: %w", err)
		}
		cid, ok := layout.ParseID(strings.TrimSpace(id.String))
		if !ok {
			continue // a crawl id folio cannot name a folder with
		}
		c := &dbCrawl{ID: cid, URLs: urls.String, Label: label.String, CreatedByID: parseInt(by.String),
			Status: status.String, MaxDepth: int(parseInt(depth.String)), TagsStr: tags.String}
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
