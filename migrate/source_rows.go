package migrate

import (
	"strings"
	"time"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/layout"
)

// legacyFolder decides one archive/<timestamp> folder: its database row
// (load_from_directory), else an orphan import (create_from_directory),
// else invalid.
func (s *scanner) legacyFolder(f *folder) {
	if f.err != nil {
		s.fail(f, f.err)
		return
	}
	if r := s.matchRow(f); r != nil {
		if len(f.problems) > 0 && s.opts.Printer != nil {
			s.opts.Printer.Warnf("%s: %s; its metadata comes from the database row", f.rel, strings.Join(f.problems, "; "))
		}
		if u := f.snapshotURL(); f.rowNamed && u != "" && u != r.URL && s.opts.Printer != nil {
			s.opts.Printer.Warnf("%s: its %s names %s, database row %s with its timestamp names %s; it migrates with the row",
				f.rel, f.urlFrom(), u, r.ID, r.URL)
		}
		s.addItem(s.rowItem(r, f, f.rel))
		return
	}
	if f.rowNamed {
		// Its row went to another folder; without a timestamp of its own
		// it can be neither imported nor judged invalid.
		s.inv.Stranded = append(s.inv.Stranded, Skipped{Source: f.rel,
			Reason: "named by the timestamp of database row " + s.db.ByTS[f.name][0].ID + ", which another folder already holds"})
		return
	}
	url, from := f.snapshotURL(), f.urlFrom()
	if url == "" {
		reason := "no url in index.jsonl, index.json or archive.org.txt"
		if len(f.problems) > 0 {
			reason += " (" + strings.Join(f.problems, "; ") + ")"
		}
		if s.db != nil {
			reason += ", and no database row has timestamp " + f.name
		}
		s.inv.Invalid = append(s.inv.Invalid, Invalid{Source: f.rel, Reason: reason})
		return
	}
	s.addItem(s.orphanItem(f, url, from))
}

// matchRow is ArchiveBox's load_from_directory (formats spec §3.4).
func (s *scanner) matchRow(f *folder) *dbRow {
	if s.db == nil {
		return nil
	}
	free := func(rs []*dbRow, ok func(*dbRow) bool) *dbRow {
		for _, r := range rs {
			if !s.claimed[r.ID] && ok(r) {
				return r
			}
		}
		return nil
	}
	if f.rowNamed || !f.hasSnap || f.snap.URL == "" {
		return free(s.db.ByTS[f.name], func(*dbRow) bool { return true })
	}
	ts, ok := layout.BestTimestamp(f.snap.Timestamp, f.name)
	if !ok {
		return nil
	}
	url := f.snap.URL
	if r := free(s.db.ByTS[ts], func(r *dbRow) bool { return r.URL == url }); r != nil {
		return r
	}
	if ts != f.name {
		// A truncated timestamp: only when the folder name itself is not
		// the timestamp that was selected.
		return free(s.db.ByURL[url], func(r *dbRow) bool { return strings.HasPrefix(r.Timestamp, ts) })
	}
	return nil
}

// users

// legacyUser owns rows that have no crawl: ArchiveBox attaches them to an
// automatic crawl created by auth_user id 1 ("system" when there is none).
func (s *scanner) legacyUser() string {
	if s.db != nil {
		if u := s.db.Users[1]; u != "" {
			return u
		}
	}
	return "system"
}

// defaultUser owns folders without a row: the only superuser, else system.
func (s *scanner) defaultUser() string {
	if s.db != nil && len(s.db.Superusers) == 1 && s.db.Superusers[0] != "" {
		return s.db.Superusers[0]
	}
	return "system"
}

// rowItem builds the item of a database row, merging what its folder f
// (nil when none) holds.
func (s *scanner) rowItem(r *dbRow, f *folder, source string) Item {
	snap := archive.Snapshot{
		ID:        r.ID,
		URL:       r.URL,
		Timestamp: r.Timestamp,
		Depth:     r.Depth,
		Notes:     r.Notes,
		// ArchiveBox's migration of a 0.4-0.8 database seals every row,
		// whatever status a 0.8 row had (formats spec §4.6, §7.29; its
		// test_migration_preserves_08_timestamp_meanings asserts sealed).
		Status: "sealed",
	}
	switch s.db.Version {
	case DB08, DB09:
		snap.BookmarkedAt = r.BookmarkedAt
		if snap.BookmarkedAt.IsZero() {
			snap.BookmarkedAt = legacyBookmarkedAt(r.Timestamp, r.CreatedAt, s.now)
		}
		snap.CreatedAt = firstTime(r.CreatedAt, r.Added, snap.BookmarkedAt)
		if s.db.Version == DB09 {
			// A 0.9 row keeps its lifecycle (formats spec §7.29).
			snap.Status = snapshotStatus(r.Status)
		}
	default:
		snap.BookmarkedAt = legacyBookmarkedAt(r.Timestamp, r.Added, s.now)
		snap.CreatedAt = firstTime(r.Added, snap.BookmarkedAt)
	}
	switch {
	case r.FSVersion != "":
		snap.FSVersion = r.FSVersion
	case f != nil && f.hasSnap:
		snap.FSVersion = f.fsVersion
	case s.db.Version == DB08:
		snap.FSVersion = "0.8.0"
	default:
		snap.FSVersion = "0.7.0"
	}
	var idx []archive.Result
	var foreign [][]byte
	indexTitle := ""
	tags := r.Tags
	if f != nil {
		foreign = f.foreign
		if f.hasSnap {
			idx = f.results
			indexTitle = f.snap.Title
			tags = append(append([]string(nil), tags...), f.snap.Tags...)
		}
	}
	snap.Tags = archive.NormalizeTags(tags)
	results := mergeResults(r.ID, r.Results, idx)
	snap.Title = bestTitle(r.URL, r.Title, indexTitle)
	if snap.Title == "" {
		snap.Title = resultTitle(r.URL, results)
	}
	it := Item{Snapshot: snap, Results: results, Source: source, Foreign: foreign, From: "db"}
	if c := s.rowCrawl(r); c != nil {
		it.Crawl = c
		it.User = c.User
		it.Snapshot.CrawlID = c.ID
	}
	return it
}

func firstTime(ts ...time.Time) time.Time {
	for _, t := range ts {
		if !t.IsZero() {
			return t
		}
	}
	return time.Time{}
}
