package gen

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/folio-archive/folio/layout"
)

// Django-style schemas of ArchiveBox's index.sqlite3, per version (formats
// spec §4.2-4.5). Only the tables a migration reads or that real
// collections always hold are created; column sets and types follow the
// spec.
const lgDjangoTables = `
CREATE TABLE "django_migrations" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "app" varchar(255) NOT NULL, "name" varchar(255) NOT NULL, "applied" datetime NOT NULL);
CREATE TABLE "django_content_type" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "app_label" varchar(100) NOT NULL, "model" varchar(100) NOT NULL);
CREATE TABLE "auth_group" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "name" varchar(150) NOT NULL UNIQUE);
CREATE TABLE "auth_user" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "password" varchar(128) NOT NULL, "last_login" datetime NULL, "is_superuser" bool NOT NULL, "username" varchar(150) NOT NULL UNIQUE, "last_name" varchar(150) NOT NULL, "email" varchar(254) NOT NULL, "is_staff" bool NOT NULL, "is_active" bool NOT NULL, "date_joined" datetime NOT NULL, "first_name" varchar(150) NOT NULL);
CREATE TABLE "django_session" ("session_key" varchar(40) NOT NULL PRIMARY KEY, "session_data" text NOT NULL, "expire_date" datetime NOT NULL);
`

var lgSchemas = map[string]string{
	Legacy04: `
CREATE TABLE "core_snapshot" ("id" char(32) NOT NULL PRIMARY KEY, "url" varchar(2000) NOT NULL UNIQUE, "timestamp" varchar(32) NOT NULL UNIQUE, "title" varchar(128) NULL, "tags" varchar(256) NULL, "added" datetime NOT NULL, "updated" datetime NULL);
CREATE INDEX "core_snapshot_title_idx" ON "core_snapshot" ("title");
CREATE INDEX "core_snapshot_added_idx" ON "core_snapshot" ("added");
CREATE INDEX "core_snapshot_tags_idx" ON "core_snapshot" ("tags");
`,
	Legacy0424: `
CREATE TABLE "core_snapshot" ("id" char(32) NOT NULL PRIMARY KEY, "url" varchar(2000) NOT NULL UNIQUE, "timestamp" varchar(32) NOT NULL UNIQUE, "title" varchar(128) NULL, "added" datetime NOT NULL, "updated" datetime NULL);
CREATE TABLE "core_tag" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "name" varchar(100) NOT NULL UNIQUE, "slug" varchar(100) NOT NULL UNIQUE);
CREATE TABLE "core_snapshot_tags" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "snapshot_id" char(32) NOT NULL REFERENCES "core_snapshot" ("id") DEFERRABLE INITIALLY DEFERRED, "tag_id" integer NOT NULL REFERENCES "core_tag" ("id") DEFERRABLE INITIALLY DEFERRED);
CREATE UNIQUE INDEX "core_snapshot_tags_snapshot_id_tag_id_uniq" ON "core_snapshot_tags" ("snapshot_id", "tag_id");
`,
	Legacy07: `
CREATE TABLE "core_snapshot" ("id" char(32) NOT NULL PRIMARY KEY, "url" varchar(2000) NOT NULL UNIQUE, "timestamp" varchar(32) NOT NULL UNIQUE, "title" varchar(512) NULL, "added" datetime NOT NULL, "updated" datetime NULL);
CREATE TABLE "core_tag" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "name" varchar(100) NOT NULL UNIQUE, "slug" varchar(100) NOT NULL UNIQUE);
CREATE TABLE "core_snapshot_tags" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "snapshot_id" char(32) NOT NULL REFERENCES "core_snapshot" ("id") DEFERRABLE INITIALLY DEFERRED, "tag_id" integer NOT NULL REFERENCES "core_tag" ("id") DEFERRABLE INITIALLY DEFERRED);
CREATE UNIQUE INDEX "core_snapshot_tags_snapshot_id_tag_id_uniq" ON "core_snapshot_tags" ("snapshot_id", "tag_id");
CREATE TABLE "core_archiveresult" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "uuid" char(32) NULL, "snapshot_id" char(32) NOT NULL REFERENCES "core_snapshot" ("id") DEFERRABLE INITIALLY DEFERRED, "extractor" varchar(32) NOT NULL, "cmd" text NOT NULL, "pwd" varchar(256) NOT NULL, "cmd_version" varchar(128) NULL, "output" varchar(1024) NOT NULL, "start_ts" datetime NOT NULL, "end_ts" datetime NOT NULL, "status" varchar(16) NOT NULL);
CREATE INDEX "core_archiveresult_snapshot_id_idx" ON "core_archiveresult" ("snapshot_id");
`,
	Legacy08: `
CREATE TABLE "crawls_crawl" ("id" char(36) NOT NULL PRIMARY KEY, "created_at" datetime NOT NULL, "created_by_id" integer NOT NULL REFERENCES "auth_user" ("id") DEFERRABLE INITIALLY DEFERRED, "modified_at" datetime NOT NULL, "urls" text NOT NULL, "config" text NOT NULL, "max_depth" smallint unsigned NOT NULL, "tags_str" varchar(1024) NOT NULL, "persona_id" char(36) NULL, "label" varchar(64) NOT NULL, "notes" text NOT NULL, "schedule_id" char(36) NULL, "output_dir" varchar(256) NULL, "status" varchar(15) NOT NULL, "retry_at" datetime NULL, "num_uses_failed" integer unsigned NOT NULL, "num_uses_succeeded" integer unsigned NOT NULL);
CREATE TABLE "core_snapshot" ("id" char(36) NOT NULL PRIMARY KEY, "created_by_id" integer NOT NULL REFERENCES "auth_user" ("id") DEFERRABLE INITIALLY DEFERRED, "created_at" datetime NOT NULL, "modified_at" datetime NOT NULL, "url" varchar(2000) NOT NULL UNIQUE, "timestamp" varchar(32) NOT NULL UNIQUE, "bookmarked_at" datetime NOT NULL, "crawl_id" char(36) NULL REFERENCES "crawls_crawl" ("id") DEFERRABLE INITIALLY DEFERRED, "title" varchar(512) NULL, "downloaded_at" datetime NULL, "depth" smallint unsigned NOT NULL DEFAULT 0, "retry_at" datetime NULL, "status" varchar(15) NOT NULL DEFAULT 'queued', "config" text NOT NULL DEFAULT '{}', "notes" text NOT NULL DEFAULT '', "output_dir" varchar(256) NULL, "num_uses_failed" integer unsigned NOT NULL DEFAULT 0, "num_uses_succeeded" integer unsigned NOT NULL DEFAULT 0);
CREATE TABLE "core_tag" ("id" char(36) NOT NULL PRIMARY KEY, "name" varchar(100) NOT NULL UNIQUE, "slug" varchar(100) NOT NULL UNIQUE, "created_at" datetime NOT NULL, "modified_at" datetime NOT NULL, "created_by_id" integer NOT NULL REFERENCES "auth_user" ("id") DEFERRABLE INITIALLY DEFERRED);
CREATE TABLE "core_snapshot_tags" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "snapshot_id" char(36) NOT NULL REFERENCES "core_snapshot" ("id") DEFERRABLE INITIALLY DEFERRED, "tag_id" char(36) NOT NULL REFERENCES "core_tag" ("id") DEFERRABLE INITIALLY DEFERRED);
CREATE TABLE "core_archiveresult" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "uuid" char(36) NULL UNIQUE, "created_by_id" integer NOT NULL REFERENCES "auth_user" ("id") DEFERRABLE INITIALLY DEFERRED, "created_at" datetime NOT NULL, "modified_at" datetime NOT NULL, "snapshot_id" char(36) NOT NULL REFERENCES "core_snapshot" ("id") DEFERRABLE INITIALLY DEFERRED, "extractor" varchar(32) NOT NULL, "pwd" varchar(256) NULL, "cmd" text NULL, "cmd_version" varchar(128) NULL, "output" varchar(1024) NULL, "start_ts" datetime NULL, "end_ts" datetime NULL, "status" varchar(15) NOT NULL, "retry_at" datetime NULL, "notes" text NOT NULL DEFAULT '', "output_dir" varchar(256) NULL, "iface_id" char(36) NULL, "config" text NOT NULL DEFAULT '{}', "num_uses_failed" integer unsigned NOT NULL DEFAULT 0, "num_uses_succeeded" integer unsigned NOT NULL DEFAULT 0);
CREATE TABLE "machine_machine" ("id" char(36) NOT NULL PRIMARY KEY, "created_at" datetime NOT NULL, "modified_at" datetime NOT NULL, "guid" varchar(64) NOT NULL UNIQUE, "hostname" varchar(63) NOT NULL, "os_arch" varchar(15) NOT NULL, "os_family" varchar(15) NOT NULL, "stats" text NOT NULL);
CREATE TABLE "api_apitoken" ("id" char(36) NOT NULL PRIMARY KEY, "created_by_id" integer NOT NULL, "created_at" datetime NOT NULL, "modified_at" datetime NOT NULL, "token" varchar(32) NOT NULL UNIQUE, "expires" datetime NULL);
`,
	Legacy09Dash: `
CREATE TABLE "crawls_crawl" ("id" char(32) NOT NULL PRIMARY KEY, "created_at" datetime NOT NULL, "created_by_id" integer NOT NULL REFERENCES "auth_user" ("id") DEFERRABLE INITIALLY DEFERRED, "modified_at" datetime NOT NULL, "urls" text NOT NULL, "config" text NULL, "max_depth" smallint unsigned NOT NULL, "max_urls" integer unsigned NOT NULL DEFAULT 0, "max_size" bigint unsigned NOT NULL DEFAULT 0, "tags_str" varchar(1024) NOT NULL, "persona_id" char(32) NULL, "label" varchar(64) NOT NULL, "notes" text NOT NULL, "schedule_id" char(32) NULL, "status" varchar(15) NOT NULL, "retry_at" datetime NULL, "num_uses_failed" integer unsigned NOT NULL DEFAULT 0, "num_uses_succeeded" integer unsigned NOT NULL DEFAULT 0);
CREATE TABLE "core_snapshot" ("id" char(32) NOT NULL PRIMARY KEY, "created_at" datetime NOT NULL, "modified_at" datetime NOT NULL, "url" text NOT NULL, "timestamp" varchar(32) NOT NULL UNIQUE, "bookmarked_at" datetime NOT NULL, "crawl_id" char(32) NOT NULL REFERENCES "crawls_crawl" ("id") DEFERRABLE INITIALLY DEFERRED, "parent_snapshot_id" char(32) NULL, "title" varchar(512) NULL, "downloaded_at" datetime NULL, "depth" smallint unsigned NOT NULL DEFAULT 0, "fs_version" varchar(10) NOT NULL DEFAULT '0.9.0', "config" text NOT NULL DEFAULT '{}', "notes" text NOT NULL DEFAULT '', "num_uses_succeeded" integer unsigned NOT NULL DEFAULT 0, "num_uses_failed" integer unsigned NOT NULL DEFAULT 0, "status" varchar(15) NOT NULL DEFAULT 'queued', "retry_at" datetime NULL, "current_step" smallint unsigned NOT NULL DEFAULT 0);
CREATE UNIQUE INDEX "core_snapshot_url_crawl_uniq" ON "core_snapshot" ("url", "crawl_id");
CREATE TABLE "core_tag" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "created_at" datetime NOT NULL, "modified_at" datetime NOT NULL, "name" varchar(100) NOT NULL UNIQUE, "created_by_id" integer NOT NULL REFERENCES "auth_user" ("id") DEFERRABLE INITIALLY DEFERRED);
CREATE TABLE "core_snapshot_tags" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "snapshot_id" char(32) NOT NULL REFERENCES "core_snapshot" ("id") DEFERRABLE INITIALLY DEFERRED, "tag_id" integer NOT NULL REFERENCES "core_tag" ("id") DEFERRABLE INITIALLY DEFERRED);
CREATE TABLE "machine_machine" ("id" char(32) NOT NULL PRIMARY KEY, "created_at" datetime NOT NULL, "modified_at" datetime NOT NULL, "guid" varchar(64) NOT NULL UNIQUE, "hostname" varchar(63) NOT NULL, "os_arch" varchar(15) NOT NULL, "os_family" varchar(15) NOT NULL, "stats" text NOT NULL);
CREATE TABLE "machine_binary" ("id" char(32) NOT NULL PRIMARY KEY, "created_at" datetime NOT NULL, "modified_at" datetime NOT NULL, "machine_id" char(32) NOT NULL REFERENCES "machine_machine" ("id") DEFERRABLE INITIALLY DEFERRED, "name" varchar(63) NOT NULL, "binproviders" varchar(127) NOT NULL, "overrides" text NOT NULL, "binprovider" varchar(31) NOT NULL, "abspath" varchar(255) NOT NULL, "version" varchar(32) NOT NULL, "sha256" varchar(64) NOT NULL, "status" varchar(16) NOT NULL, "retry_at" datetime NULL, "num_uses_failed" integer unsigned NOT NULL DEFAULT 0, "num_uses_succeeded" integer unsigned NOT NULL DEFAULT 0);
CREATE TABLE "machine_process" ("id" char(32) NOT NULL PRIMARY KEY, "created_at" datetime NOT NULL, "modified_at" datetime NOT NULL, "machine_id" char(32) NOT NULL REFERENCES "machine_machine" ("id") DEFERRABLE INITIALLY DEFERRED, "parent_id" char(32) NULL, "process_type" varchar(16) NOT NULL, "worker_type" varchar(32) NOT NULL DEFAULT '', "pwd" varchar(512) NOT NULL, "cmd" text NOT NULL, "env" text NOT NULL, "timeout" integer NOT NULL, "pid" integer NULL, "exit_code" integer NULL, "stdout" text NOT NULL, "stderr" text NOT NULL, "started_at" datetime NULL, "ended_at" datetime NULL, "binary_id" char(32) NULL REFERENCES "machine_binary" ("id") DEFERRABLE INITIALLY DEFERRED, "iface_id" char(32) NULL, "url" varchar(2048) NULL, "status" varchar(16) NOT NULL, "retry_at" datetime NULL);
CREATE TABLE "core_archiveresult" ("id" char(32) NOT NULL PRIMARY KEY, "created_at" datetime NOT NULL, "modified_at" datetime NOT NULL, "snapshot_id" char(32) NOT NULL REFERENCES "core_snapshot" ("id") DEFERRABLE INITIALLY DEFERRED, "plugin" varchar(32) NOT NULL, "hook_name" varchar(255) NOT NULL DEFAULT '', "process_id" char(32) NULL UNIQUE REFERENCES "machine_process" ("id") DEFERRABLE INITIALLY DEFERRED, "output_str" text NOT NULL DEFAULT '', "output_json" text NULL, "output_files" text NOT NULL DEFAULT '{}', "output_size" bigint NOT NULL DEFAULT 0, "output_mimetypes" varchar(512) NOT NULL DEFAULT '', "start_ts" datetime NULL, "end_ts" datetime NULL, "status" varchar(16) NOT NULL, "notes" text NOT NULL DEFAULT '', "config" text NULL);
CREATE INDEX "core_archiveresult_snapshot_status_idx" ON "core_archiveresult" ("snapshot_id", "status");
`,
}

// lgMigrations are the core migrations recorded in django_migrations; only
// names the formats spec cites (§4.0) are used, the rest of the history is
// left out rather than invented.
var lgMigrations = map[string][]string{
	Legacy04:     {"0001_initial"},
	Legacy0424:   {"0001_initial"},
	Legacy07:     {"0001_initial", "0022_auto_20231023_2008"},
	Legacy08:     {"0001_initial", "0022_auto_20231023_2008", "0074_alter_snapshot_downloaded_at"},
	Legacy09Dash: {"0001_initial", "0022_auto_20231023_2008", "0023_upgrade_to_0_9_0"},
}

func lgTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format("2006-01-02 15:04:05.000000")
}

func lgSlug(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '_', r == '-', r > 0x7f:
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

// writeDB writes index.sqlite3 with the version's schema and every row.
// With WAL the last quarter of the rows is committed after WAL mode is on
// and auto-checkpoints are off, and the files are saved before the
// connection closes (closing would checkpoint): the collection then holds
// rows that exist only in index.sqlite3-wal.
func (g *legacyGen) writeDB() error {
	p := filepath.Join(g.dir, "index.sqlite3")
	db, err := sql.Open("sqlite", "file:"+p+"?_pragma=foreign_keys(0)")
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(lgDjangoTables + lgSchemas[g.o.Version]); err != nil {
		return fmt.Errorf("create schema: %w", err)
	}
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	for _, app := range []string{"contenttypes", "auth", "admin", "sessions"} {
		if _, err := tx.Exec(`INSERT INTO django_migrations (app, name, applied) VALUES (?, '0001_initial', ?)`, app, lgTime(g.now)); err != nil {
			return err
		}
	}
	for _, name := range lgMigrations[g.o.Version] {
		if _, err := tx.Exec(`INSERT INTO django_migrations (app, name, applied) VALUES ('core', ?, ?)`, name, lgTime(g.now)); err != nil {
			return err
		}
	}
	for _, u := range g.users {
		if _, err := tx.Exec(`INSERT INTO auth_user (id, password, last_login, is_superuser, username, last_name, email, is_staff, is_active, date_joined, first_name) VALUES (?, 'pbkdf2_sha256$260000$salt$hash', NULL, ?, ?, '', ?, ?, 1, ?, '')`,
			u.id, u.super, u.name, u.name+"@example.com", u.super, lgTime(g.now)); err != nil {
			return err
		}
	}
	for _, c := range g.crawl {
		if err := g.insertCrawl(tx, c); err != nil {
			return err
		}
	}
	split := len(g.rows)
	if g.o.WAL {
		split = len(g.rows) * 3 / 4
	}
	for _, r := range g.rows[:split] {
		if err := g.insertRow(tx, r); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	if !g.o.WAL {
		return db.Close()
	}
	for _, pragma := range []string{"PRAGMA journal_mode=WAL", "PRAGMA wal_autocheckpoint=0"} {
		if _, err := db.Exec(pragma); err != nil {
			return err
		}
	}
	tx, err = db.Begin()
	if err != nil {
		return err
	}
	for _, r := range g.rows[split:] {
		if err := g.insertRow(tx, r); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	saved := map[string][]byte{}
	for _, suffix := range []string{"", "-wal", "-shm"} {
		b, err := os.ReadFile(p + suffix)
		if err != nil {
			return fmt.Errorf("save WAL state: %w", err)
		}
		saved[suffix] = b
	}
	if err := db.Close(); err != nil {
		return err
	}
	for suffix, b := range saved {
		if err := os.WriteFile(p+suffix, b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func (g *legacyGen) insertCrawl(tx *sql.Tx, c *lgCrawl) error {
	urls := strings.Join(c.urls, "\n")
	if g.v(Legacy08) {
		_, err := tx.Exec(`INSERT INTO crawls_crawl (id, created_at, created_by_id, modified_at, urls, config, max_depth, tags_str, persona_id, label, notes, schedule_id, output_dir, status, retry_at, num_uses_failed, num_uses_succeeded) VALUES (?, ?, ?, ?, ?, '{}', 0, '', NULL, ?, '', NULL, NULL, 'sealed', NULL, 0, 0)`,
			c.id, lgTime(c.created), c.user, lgTime(c.created), urls, c.label)
		return err
	}
	_, err := tx.Exec(`INSERT INTO crawls_crawl (id, created_at, created_by_id, modified_at, urls, config, max_depth, tags_str, label, notes, status) VALUES (?, ?, ?, ?, ?, '{}', 0, '', ?, '', 'sealed')`,
		c.id, lgTime(c.created), c.user, lgTime(c.created), urls, c.label)
	return err
}

func (g *legacyGen) tagID(tx *sql.Tx, name string) (string, error) {
	if id, ok := g.tags[name]; ok {
		return id, nil
	}
	var id string
	switch g.o.Version {
	case Legacy08:
		id = layout.Dashed(g.uuid())
		if _, err := tx.Exec(`INSERT INTO core_tag (id, name, slug, created_at, modified_at, created_by_id) VALUES (?, ?, ?, ?, ?, 1)`,
			id, name, lgSlug(name), lgTime(g.now), lgTime(g.now)); err != nil {
			return "", err
		}
	case Legacy09Dash:
		res, err := tx.Exec(`INSERT INTO core_tag (created_at, modified_at, name, created_by_id) VALUES (?, ?, ?, 1)`, lgTime(g.now), lgTime(g.now), name)
		if err != nil {
			return "", err
		}
		n, _ := res.LastInsertId()
		id = fmt.Sprint(n)
	default:
		res, err := tx.Exec(`INSERT INTO core_tag (name, slug) VALUES (?, ?)`, name, lgSlug(name))
		if err != nil {
			return "", err
		}
		n, _ := res.LastInsertId()
		id = fmt.Sprint(n)
	}
	g.tags[name] = id
	return id, nil
}

func (g *legacyGen) insertRow(tx *sql.Tx, r *lgRow) error {
	var title any
	if r.title.Valid {
		title = r.title.String
	}
	var err error
	switch g.o.Version {
	case Legacy04:
		var tags any
		if len(r.tags) > 0 {
			tags = strings.Join(r.tags, ",")
		}
		_, err = tx.Exec(`INSERT INTO core_snapshot (id, url, timestamp, title, tags, added, updated) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			r.id, r.url, r.ts, title, tags, lgTime(r.added), lgTime(r.added.Add(time.Hour)))
	case Legacy0424, Legacy07:
		_, err = tx.Exec(`INSERT INTO core_snapshot (id, url, timestamp, title, added, updated) VALUES (?, ?, ?, ?, ?, ?)`,
			r.id, r.url, r.ts, title, lgTime(r.added), lgTime(r.added.Add(time.Hour)))
	case Legacy08:
		var crawl any
		if r.crawl != nil {
			crawl = r.crawl.id
		}
		_, err = tx.Exec(`INSERT INTO core_snapshot (id, created_by_id, created_at, modified_at, url, timestamp, bookmarked_at, crawl_id, title, downloaded_at, depth, status, config, notes) VALUES (?, 1, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, '{}', '')`,
			r.id, lgTime(r.added), lgTime(r.added), r.url, r.ts, lgTime(r.bookmark), crawl, title, lgTime(r.added), r.status)
	case Legacy09Dash:
		_, err = tx.Exec(`INSERT INTO core_snapshot (id, created_at, modified_at, url, timestamp, bookmarked_at, crawl_id, title, downloaded_at, depth, fs_version, status) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?)`,
			r.id, lgTime(r.added), lgTime(r.added), r.url, r.ts, lgTime(r.bookmark), lgCompact(r.crawl.id), title, lgTime(r.added), r.fsVersion, r.status)
	}
	if err != nil {
		return fmt.Errorf("insert snapshot %s: %w", r.ts, err)
	}
	if g.o.Version != Legacy04 {
		names := append([]string(nil), r.tags...)
		sort.Strings(names)
		for _, name := range names {
			tid, err := g.tagID(tx, name)
			if err != nil {
				return err
			}
			if _, err := tx.Exec(`INSERT INTO core_snapshot_tags (snapshot_id, tag_id) VALUES (?, ?)`, r.id, tid); err != nil {
				return err
			}
		}
	}
	for i, res := range r.results {
		if err := g.insertResult(tx, r, i, res); err != nil {
			return err
		}
	}
	return nil
}

func (g *legacyGen) insertResult(tx *sql.Tx, r *lgRow, i int, res lgResult) error {
	cmd, _ := json.Marshal(res.cmd)
	var err error
	switch g.o.Version {
	case Legacy04, Legacy0424:
		return nil // results live only in index.json
	case Legacy07:
		var uuid any
		if i%2 == 0 {
			uuid = res.id // 0.6 added the column; older rows lack a value
		}
		_, err = tx.Exec(`INSERT INTO core_archiveresult (uuid, snapshot_id, extractor, cmd, pwd, cmd_version, output, start_ts, end_ts, status) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			uuid, r.id, res.plugin, string(cmd), res.pwd, res.cmdVersion, res.output, lgTime(res.start), lgTime(res.end), res.status)
	case Legacy08:
		_, err = tx.Exec(`INSERT INTO core_archiveresult (uuid, created_by_id, created_at, modified_at, snapshot_id, extractor, pwd, cmd, cmd_version, output, start_ts, end_ts, status, notes, config) VALUES (?, 1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '', '{}')`,
			layout.Dashed(res.id), lgTime(res.start), lgTime(res.end), r.id, res.plugin, res.pwd, string(cmd), res.cmdVersion, res.output, lgTime(res.start), lgTime(res.end), res.status)
	case Legacy09Dash:
		if i == 0 {
			if _, err := tx.Exec(`INSERT OR IGNORE INTO machine_machine (id, created_at, modified_at, guid, hostname, os_arch, os_family, stats) VALUES ('0190f3c1000070008000000000000001', ?, ?, 'host_archivebox', 'archivebox', 'x86_64', 'linux', '{}')`, lgTime(g.now), lgTime(g.now)); err != nil {
				return err
			}
		}
		bin := "0190f3c1000070008000" + fmt.Sprintf("%012x", len(res.cmd[0]))
		if _, err := tx.Exec(`INSERT OR IGNORE INTO machine_binary (id, created_at, modified_at, machine_id, name, binproviders, overrides, binprovider, abspath, version, sha256, status) VALUES (?, ?, ?, '0190f3c1000070008000000000000001', ?, 'env', '{}', 'env', ?, ?, '', 'installed')`,
			bin, lgTime(g.now), lgTime(g.now), res.cmd[0], "/usr/bin/"+res.cmd[0], res.cmdVersion); err != nil {
			return err
		}
		proc := g.uuid()
		exit := 0
		if res.status == "failed" {
			exit = 1
		}
		if _, err := tx.Exec(`INSERT INTO machine_process (id, created_at, modified_at, machine_id, process_type, pwd, cmd, env, timeout, exit_code, stdout, stderr, started_at, ended_at, binary_id, status) VALUES (?, ?, ?, '0190f3c1000070008000000000000001', 'hook', ?, ?, '{}', 60, ?, '', '', ?, ?, ?, 'exited')`,
			proc, lgTime(res.start), lgTime(res.end), res.pwd, string(cmd), exit, lgTime(res.start), lgTime(res.end), bin); err != nil {
			return err
		}
		hook := "on_Snapshot__50_" + res.plugin + ".js"
		if r.fsVersion != "0.9.0" {
			hook = "" // results the 0.9 upgrade migration copied from core_archiveresult
		}
		files := "{}"
		if res.status != "failed" && res.plugin == "screenshot" {
			files = `{"screenshot/screenshot.png": {"extension": "png", "mimetype": "image/png", "size": 1032}}`
		}
		_, err = tx.Exec(`INSERT INTO core_archiveresult (id, created_at, modified_at, snapshot_id, plugin, hook_name, process_id, output_str, output_files, output_size, output_mimetypes, start_ts, end_ts, status) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0, '', ?, ?, ?)`,
			res.id, lgTime(res.start), lgTime(res.end), r.id, res.plugin, hook, proc, res.output, files, lgTime(res.start), lgTime(res.end), normalizeLgStatus(res.status))
	}
	if err != nil {
		return fmt.Errorf("insert result of %s: %w", r.ts, err)
	}
	return nil
}

func normalizeLgStatus(s string) string {
	if s == "succeded" || s == "success" {
		return "succeeded"
	}
	return s
}
