package migrate

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/layout"
)

// checkDrained is the check after a run that nothing was left behind: it
// lists archive/ once more and fails every real folder still there that
// the run should have taken — one named by a legacy timestamp (a row's
// folder, an orphan to import or an invalid folder) or named by a database
// row's timestamp — unless the run already reported it as failed or left
// it for later (--resume, unreadable). Whatever the cause, a migration
// that leaves such a folder does not end "complete". Only a listing of
// archive/ is read, never a snapshot's files.
func (x *executor) checkDrained(inv *Inventory) error {
	dir := x.c.Path(archive.ArchiveDir)
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", dir, err)
	}
	reported := map[string]bool{}
	x.mu.Lock()
	for _, f := range x.st.Failures {
		reported[f.Source] = true
	}
	for src := range x.blocked {
		reported[src] = true
	}
	x.mu.Unlock()
	for _, e := range entries {
		name := e.Name()
		rel := archive.ArchiveDir + "/" + name
		if !e.IsDir() || reported[rel] || inv.deferred[name] {
			continue // symlinks and files are never a snapshot's folder
		}
		_, legacy := layout.LegacyTimestamp(name)
		rows := inv.rows[name]
		if !legacy && len(rows) == 0 {
			continue
		}
		what := "no snapshot took its files"
		if len(rows) > 0 {
			what = fmt.Sprintf("the folder of database row %s (%s), whose files were not migrated", rows[0].ID, rows[0].URL)
		}
		err := fmt.Errorf("%s: %w: still there after the migration: %s; run 'folio update --migrate-only --dry-run' to see why", rel, ErrLeftBehind, what)
		x.p.Warnf("    Left behind: %v", err)
		x.fail(rel, err)
	}
	return nil
}
