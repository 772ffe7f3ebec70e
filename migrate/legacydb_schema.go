package migrate

import (
	"context"
	"database/sql"
	"errors"
)

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
