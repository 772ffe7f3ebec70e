package migrate

import (
	"context"
	"time"

	"github.com/folio-archive/folio/archive"
)

// LegacyRows returns the ids (compact) of the snapshots of the collection's
// legacy index.sqlite3, nil when there is none. These are ArchiveBox's
// snapshots, which the migration brings over and no folio add created: a
// queued one among them is not an unfinished capture (a folio before this
// one kept a 0.8 row's queued status when it migrated it), so `folio add
// --resume` leaves them alone. The database is the one place that says a
// snapshot came from a legacy row, whichever folio migrated it.
func LegacyRows(ctx context.Context, c *archive.Collection) (map[string]bool, error) {
	ldb, err := readLegacyDB(ctx, c.Path(archive.LegacyDB), time.Time{})
	if err != nil || ldb == nil {
		return nil, err
	}
	ids := make(map[string]bool, len(ldb.ByID))
	for id := range ldb.ByID {
		ids[id] = true
	}
	return ids, nil
}
