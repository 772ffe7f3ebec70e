package gen_test

import (
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/folio-archive/folio/gen"
)

// The same options give the same bytes, database included.
func TestLegacyDeterministic(t *testing.T) {
	for _, v := range gen.LegacyVersions {
		t.Run(v, func(t *testing.T) {
			var trees []gen.Tree
			for i := 0; i < 2; i++ {
				dir := t.TempDir()
				if _, err := gen.Legacy(dir, gen.LegacyOptions{Version: v, N: 5, Seed: 9, Edges: gen.AllEdges}); err != nil {
					t.Fatal(err)
				}
				tree, err := gen.ReadTree(dir)
				if err != nil {
					t.Fatal(err)
				}
				trees = append(trees, tree)
			}
			if d := trees[0].Diff(trees[1]); d != nil {
				t.Errorf("two runs differ: %v", d)
			}
		})
	}
}

// The manifest's trees are what is on disk, with the awkward entries the
// migration must carry: binary payloads, unicode and '%' names, nested and
// empty dirs, relative symlinks.
func TestLegacyManifestTrees(t *testing.T) {
	for _, v := range gen.LegacyVersions {
		t.Run(v, func(t *testing.T) {
			dir := t.TempDir()
			m, err := gen.Legacy(dir, gen.LegacyOptions{Version: v, N: 4, Files: 12, Seed: 2, Edges: gen.AllEdges})
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range m.Snapshots {
				if s.Source == "" {
					continue
				}
				tree, err := gen.ReadTree(filepath.Join(dir, filepath.FromSlash(s.Source)))
				if err != nil {
					t.Fatal(err)
				}
				if d := s.Tree.Diff(tree); d != nil {
					t.Errorf("%s: %v", s.Source, d)
				}
				if s.Edge != "" {
					continue
				}
				if s.Tree.Symlinks["payload-link"] != "payload.bin" {
					t.Errorf("%s: no relative payload-link", s.Source)
				}
				if _, ok := s.Tree.Files["media/vidéo 100% ünï.bin"]; !ok {
					t.Errorf("%s: no unicode/percent file in %v", s.Source, s.Tree.Files)
				}
				if len(s.Tree.Files) < 10 {
					t.Errorf("%s: %d files, want at least 10", s.Source, len(s.Tree.Files))
				}
				b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(s.Source), "payload.bin"))
				if err != nil || len(b) < 2 || b[0] != 0x00 || b[1] != 0xff {
					t.Errorf("%s: payload.bin does not start with \\x00\\xff", s.Source)
				}
				found := false
				for _, d := range s.Tree.Dirs {
					found = found || d == "git/objects/empty"
				}
				if !found {
					t.Errorf("%s: no empty dir", s.Source)
				}
			}
			for _, f := range m.Invalid {
				if len(f.Tree.Files) == 0 {
					t.Errorf("invalid %s recorded without files", f.Path)
				}
			}
		})
	}
}

// Each version's database has the columns ArchiveBox's own upgrade
// migration probes for (formats spec §4.0).
func TestLegacySchemas(t *testing.T) {
	probes := map[string]struct{ has, lacks []string }{
		gen.Legacy04:     {[]string{"core_snapshot.tags", "core_snapshot.added", "auth_user.username"}, []string{"core_tag.id", "core_archiveresult.id"}},
		gen.Legacy0424:   {[]string{"core_tag.slug", "core_snapshot_tags.tag_id"}, []string{"core_snapshot.tags", "core_archiveresult.id"}},
		gen.Legacy07:     {[]string{"core_snapshot.added", "core_archiveresult.extractor", "core_archiveresult.cmd_version", "core_archiveresult.uuid"}, []string{"core_snapshot.bookmarked_at"}},
		gen.Legacy08:     {[]string{"core_snapshot.bookmarked_at", "core_snapshot.crawl_id", "crawls_crawl.urls", "core_tag.created_by_id"}, []string{"core_snapshot.fs_version", "core_archiveresult.plugin"}},
		gen.Legacy09Dash: {[]string{"core_snapshot.fs_version", "core_archiveresult.plugin", "core_archiveresult.hook_name", "machine_process.cmd", "machine_binary.version"}, []string{"core_tag.slug", "core_archiveresult.extractor"}},
	}
	for v, p := range probes {
		t.Run(v, func(t *testing.T) {
			dir := t.TempDir()
			if _, err := gen.Legacy(dir, gen.LegacyOptions{Version: v, N: 3, Seed: 1}); err != nil {
				t.Fatal(err)
			}
			db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "index.sqlite3")+"?mode=ro")
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			has := func(tc string) bool {
				table, col, _ := strings.Cut(tc, ".")
				var n int
				if err := db.QueryRow(`SELECT count(*) FROM pragma_table_info(?) WHERE name = ?`, table, col).Scan(&n); err != nil {
					t.Fatal(err)
				}
				return n == 1
			}
			for _, c := range p.has {
				if !has(c) {
					t.Errorf("missing %s", c)
				}
			}
			for _, c := range p.lacks {
				if has(c) {
					t.Errorf("unexpected %s", c)
				}
			}
			var ok string
			if err := db.QueryRow(`PRAGMA integrity_check`).Scan(&ok); err != nil || ok != "ok" {
				t.Errorf("integrity_check %q %v", ok, err)
			}
		})
	}
}

func TestLegacyRejectsUnknownVersion(t *testing.T) {
	if _, err := gen.Legacy(t.TempDir(), gen.LegacyOptions{Version: "0.6"}); err == nil || !strings.Contains(err.Error(), "unknown version") {
		t.Errorf("error %v", err)
	}
}
