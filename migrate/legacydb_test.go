package migrate_test

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/gen"
	"github.com/folio-archive/folio/migrate"
)

func sha(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func dbFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, suffix := range []string{"", "-wal", "-shm"} {
		p := filepath.Join(dir, "index.sqlite3"+suffix)
		if _, err := os.Stat(p); err == nil {
			out[suffix] = sha(t, p)
		}
	}
	return out
}

func sameFiles(t *testing.T, before, after map[string]string) {
	t.Helper()
	if len(before) != len(after) {
		t.Fatalf("database files before %v, after %v", before, after)
	}
	for k, v := range before {
		if after[k] != v {
			t.Errorf("index.sqlite3%s changed", k)
		}
	}
}

// A WAL-mode database whose last rows were never checkpointed is read with
// those rows, and none of index.sqlite3, -wal, -shm changes.
func TestLegacyDBWALReadWithoutWriting(t *testing.T) {
	dir := t.TempDir()
	m, err := gen.Legacy(dir, gen.LegacyOptions{Version: gen.Legacy07, N: 16, Seed: 3, WAL: true})
	if err != nil {
		t.Fatal(err)
	}
	before := dbFiles(t, dir)
	if len(before) != 3 {
		t.Fatalf("generator left %d database files, want db, -wal and -shm", len(before))
	}
	if st, _ := os.Stat(filepath.Join(dir, "index.sqlite3-wal")); st.Size() == 0 {
		t.Fatal("WAL is empty")
	}
	inv := scan(t, dir, migrate.ScanOptions{})
	sameFiles(t, before, dbFiles(t, dir))
	checkInventory(t, m, inv)
	fromDB := 0
	for _, it := range inv.Items {
		if it.From == "db" {
			fromDB++
		}
	}
	if fromDB != 16 {
		t.Errorf("%d items from the database, want 16 (the last 4 live only in the WAL)", fromDB)
	}
}

// A database another process keeps open in WAL mode (as a running
// ArchiveBox would) is read, including uncommitted-to-main rows, without
// touching its files.
func TestLegacyDBWALWhileOpenElsewhere(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "index.sqlite3")
	db, err := sql.Open("sqlite", "file:"+p)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	for _, q := range []string{
		`PRAGMA journal_mode=WAL`, `PRAGMA wal_autocheckpoint=0`,
		`CREATE TABLE core_snapshot (id char(32) NOT NULL PRIMARY KEY, url varchar(2000) NOT NULL UNIQUE, timestamp varchar(32) NOT NULL UNIQUE, title varchar(128) NULL, tags varchar(256) NULL, added datetime NOT NULL, updated datetime NULL)`,
		`INSERT INTO core_snapshot VALUES ('0123456789abcdef0123456789abcdef', 'https://wal.example.com/', '1609459200.123456', 'In the WAL', 'a,b , a,,c', '2021-01-02 03:04:05', NULL)`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	before := dbFiles(t, dir)
	if len(before) != 3 {
		t.Fatalf("%d database files, want 3", len(before))
	}
	inv := scan(t, dir, migrate.ScanOptions{})
	sameFiles(t, before, dbFiles(t, dir))
	if inv.DBVersion != migrate.DB04 || len(inv.Items) != 1 {
		t.Fatalf("db %q, %d items", inv.DBVersion, len(inv.Items))
	}
	s := inv.Items[0].Snapshot
	if s.ID != "0123456789abcdef0123456789abcdef" || s.Title != "In the WAL" || strings.Join(s.Tags, ",") != "a,b,c" {
		t.Errorf("snapshot %+v", s)
	}
	if got := bucket(s); got != "20210101" {
		t.Errorf("bucket %s, want 20210101 (from the timestamp, not added)", got)
	}
	if !s.CreatedAt.Equal(mustTime(t, "2021-01-02T03:04:05Z")) {
		t.Errorf("created_at %s, want added", s.CreatedAt)
	}
	if inv.Items[0].User != "system" || inv.Items[0].Source != "" {
		t.Errorf("user %q source %q", inv.Items[0].User, inv.Items[0].Source)
	}
}

func TestLegacyDBCorrupt(t *testing.T) {
	for _, tc := range []struct {
		name, content, want string
	}{
		{"not a database", "this is not sqlite, just text that is long enough to be read as a header....", "file is not a database"},
		{"no snapshot table", "", "not an ArchiveBox database"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "index.sqlite3")
			if tc.content != "" {
				if err := os.WriteFile(p, []byte(tc.content), 0o644); err != nil {
					t.Fatal(err)
				}
			} else {
				db, err := sql.Open("sqlite", "file:"+p)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := db.Exec(`CREATE TABLE notes (id integer)`); err != nil {
					t.Fatal(err)
				}
				db.Close()
			}
			before := dbFiles(t, dir)
			c, err := archive.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			_, err = migrate.Scan(context.Background(), c, migrate.ScanOptions{IDs: counterIDs()})
			if err == nil || !strings.Contains(err.Error(), "index.sqlite3") || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one naming index.sqlite3 and %q", err, tc.want)
			}
			sameFiles(t, before, dbFiles(t, dir))
		})
	}
}

// An empty index.sqlite3 (0 bytes) is a database without tables: the
// collection is read from its folders.
func TestLegacyDBEmptyFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "index.sqlite3"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	inv := scan(t, dir, migrate.ScanOptions{})
	if inv.DBVersion != "" || len(inv.Items) != 0 {
		t.Errorf("db %q items %d", inv.DBVersion, len(inv.Items))
	}
}
