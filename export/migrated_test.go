package export_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/export"
	"github.com/folio-archive/folio/gen"
	"github.com/folio-archive/folio/migrate"
)

// TestLinkCheckMigrated exports collections written by every legacy
// ArchiveBox version (with the edge cases of the formats spec §7: flat
// 0.7 outputs, folders without index, Wayback recoveries, compatibility
// symlinks) after 'update --migrate-only', and follows every link.
func TestLinkCheckMigrated(t *testing.T) {
	for _, v := range gen.LegacyVersions {
		t.Run(v, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data")
			m, err := gen.Legacy(dir, gen.LegacyOptions{Version: v, N: 12, Seed: 4, Edges: gen.AllEdges})
			if err != nil {
				t.Fatal(err)
			}
			c, err := archive.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			lock, err := c.Lock("test migrate")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := migrate.Run(context.Background(), c, migrate.Options{}); err != nil {
				t.Fatal(err)
			}
			lock.Unlock()
			st := run(t, export.Options{Collection: c, PageSize: 7})
			if want := len(m.Snapshots) + m.Current; st.Snapshots != want {
				t.Errorf("exported %d snapshots, the migration expects %d", st.Snapshots, want)
			}
			pages, links := linkCheck(t, c.Dir)
			t.Logf("%s: %d snapshots, %d pages, %d links", v, st.Snapshots, pages, links)
			linkCheck(t, c.Dir)
			out := filepath.Join(t.TempDir(), "public")
			run(t, export.Options{Collection: c, Out: out, PageSize: 7})
			linkCheck(t, out, c.Dir)
		})
	}
}
