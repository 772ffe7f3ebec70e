package migrate

import (
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/layout"
)

// rowCrawl is the crawl of a database row: its own crawl (0.8/0.9), else
// the automatic crawl ArchiveBox creates for rows without one, owned by
// auth_user id 1.
func (s *scanner) rowCrawl(r *dbRow) *Crawl {
	if dc, ok := s.db.Crawls[r.CrawlID]; ok && r.CrawlID != "" {
		if c := s.crawls[dc.ID]; c != nil {
			return c
		}
		user := s.db.Users[dc.CreatedByID]
		if user == "" {
			user = s.legacyUser()
		}
		c := &Crawl{ID: dc.ID, User: user, CreatedAt: dc.CreatedAt, URLs: dc.URLs, Label: dc.Label,
			Known: true, Status: dc.Status, MaxDepth: dc.MaxDepth, Tags: dc.TagsStr, All: "crawls_crawl in " + archive.LegacyDB}
		if d, ok := s.crawlDirs[dc.ID]; ok {
			c.Dir = d.rel
		}
		return s.addCrawl(c)
	}
	if s.auto == nil {
		// ArchiveBox's migration: one new sealed crawl for every row
		// without one (formats spec §4.6, core/migrations/0024).
		label := "Migrated from v" + s.db.Version
		id, earlier := s.reuseAutoCrawl(r)
		s.auto = s.addCrawl(&Crawl{ID: id, User: s.legacyUser(), CreatedAt: s.now,
			Label: label, New: true, Known: true, Status: "sealed", All: "the rows without a crawl in " + archive.LegacyDB})
		if d, ok := s.crawlDirs[s.auto.ID]; ok {
			s.auto.Dir = d.rel
			s.auto.CreatedAt = d.created
		}
		if earlier != nil && !earlier.CreatedAt.IsZero() {
			s.auto.CreatedAt = earlier.CreatedAt
		}
	}
	return s.auto
}

// reuseAutoCrawl returns the crawl id an earlier, interrupted migration
// gave the automatic crawl (read from a migrated snapshot of a row without
// crawl), so a rerun keeps one crawl, with the Crawl record it wrote (nil
// when none); else a new id for the collection whose first crawl-less row
// is first (see autoCrawlID).
func (s *scanner) reuseAutoCrawl(first *dbRow) (string, *archive.Crawl) {
	for _, r := range s.db.Rows {
		if r.CrawlID != "" {
			continue
		}
		d, ok := s.compact[r.ID]
		if !ok || !d.hasIndex {
			continue
		}
		ix, _, err := archive.ReadIndex(s.c.Path(d.rel))
		if err != nil {
			continue
		}
		if snap, ok := ix.Snapshot(); ok {
			if id, ok := layout.ParseID(snap.CrawlID); ok {
				if cr, ok := ix.Crawl(); ok {
					return id, &cr
				}
				return id, nil
			}
		}
	}
	return s.autoCrawlID(first), nil
}

// autoCrawlID derives the id of the automatic crawl. ArchiveBox's own
// migration (0024_assign_default_crawl) gives its automatic crawl a new
// random UUIDv7 when it runs (formats spec §1.4, §4.6), which folio cannot
// know and must not reuse; folio's id is derived instead from what
// identifies this collection's crawl-less rows — the first row's id (a
// random UUID ArchiveBox gave it), timestamp and url — and the owner, so
// that it is the same in a dry run and the run after it, differs between
// collections, and names no crawl of the database (crawls_crawl ids are
// checked: a clash, as unlikely as two random UUIDs meeting, takes the
// next derivation).
func (s *scanner) autoCrawlID(first *dbRow) string {
	at := timestampTime(first.Timestamp)
	for n := 0; ; n++ {
		id := s.newID(at, "auto crawl", s.legacyUser(), first.ID, first.Timestamp, first.URL, strconv.Itoa(n))
		if s.db.Crawls[id] == nil && s.db.ByID[id] == nil {
			return id
		}
	}
}

// newID makes the id of a snapshot or crawl that has none: from
// ScanOptions.IDs when set (tests), else derived from what identifies it
// (archive.DerivedID), so that a dry run and the run that follows, or a
// run redone after an interruption, name the same ids.
func (s *scanner) newID(at time.Time, parts ...string) string {
	if s.opts.IDs != nil {
		return s.opts.IDs()
	}
	return archive.DerivedID(at, parts...)
}

// record is the Crawl record of c that each of its snapshots carries
// (formats spec §2.4, §3.8): created_by is the owner of its folders.
func (c *Crawl) record() archive.Crawl {
	status := strings.ToLower(strings.TrimSpace(c.Status))
	if status == "" {
		status = "sealed"
	}
	return archive.Crawl{ID: c.ID, URLs: archive.BoundURLs(c.URLs, c.All), Status: status, MaxDepth: c.MaxDepth,
		Tags: archive.SplitTags(c.Tags), Label: c.Label, CreatedAt: c.CreatedAt.UTC(), CreatedBy: c.User,
		SchemaVersion: archive.SchemaVersion}
}

func (s *scanner) addCrawl(c *Crawl) *Crawl {
	s.crawls[c.ID] = c
	s.crawlOrder = append(s.crawlOrder, c)
	return c
}

// orphanCrawl is the "[migration] orphaned snapshots" crawl; a URL it
// already holds gets a crawl of its own, as URLs are unique per crawl.
func (s *scanner) orphanCrawl(url, ts, user string) *Crawl {
	if s.orphanURLs[url] {
		return s.addCrawl(&Crawl{ID: s.newID(timestampTime(ts), "orphan crawl", user, url, ts), User: user, CreatedAt: s.now, URLs: url,
			Label: "[migration] orphaned snapshot " + ts, New: true, Known: true, Status: "sealed"})
	}
	if s.orphan == nil {
		const label = "[migration] orphaned snapshots"
		if d, ok := s.reuseOrphanCrawl(user); ok {
			// The crawl of an earlier run, interrupted or not: get, not
			// create, as ArchiveBox does by its label.
			if s.orphan = s.crawls[d.id]; s.orphan == nil {
				s.orphan = s.addCrawl(&Crawl{ID: d.id, User: user, New: true})
			}
			s.orphan.Label, s.orphan.Dir, s.orphan.CreatedAt = label, d.rel, d.created
			if earlier := s.crawlRecordIn(d.rel, d.id); earlier != nil {
				// Its record as the earlier run wrote it: the same
				// created_at, and its urls before the ones found now.
				s.orphan.CreatedAt = earlier.CreatedAt
				s.orphanEarlier = strings.Split(earlier.URLs, "\n")
			}
		} else {
			s.orphan = s.addCrawl(&Crawl{ID: s.newID(timestampTime(ts), "orphan crawl", user), User: user, CreatedAt: s.now, Label: label, New: true})
		}
		s.orphan.Known, s.orphan.Status, s.orphan.All = true, "sealed", "the folders of its snapshots"
	}
	s.orphanURLs[url] = true
	s.orphanLines = append(s.orphanLines, "# Orphaned snapshot: "+url)
	return s.orphan
}

// reuseOrphanCrawl finds the folder of the "[migration] orphaned
// snapshots" crawl an earlier migration made for user. Its URLs are all
// "# Orphaned snapshot: …" comments, so the path rule puts it under the
// domain "unknown"; a crawl the database knows is not it. The newest such
// folder wins (ids are time-ordered).
func (s *scanner) reuseOrphanCrawl(user string) (crawlDir, bool) {
	var best crawlDir
	found := false
	for id, d := range s.crawlDirs {
		if d.user != user || path.Base(path.Dir(d.rel)) != "unknown" {
			continue
		}
		if s.db != nil && s.db.Crawls[id] != nil {
			continue
		}
		if !found || id > best.id {
			best, found = d, true
		}
	}
	return best, found
}

// crawlRecordIn returns the Crawl record with id that a snapshot of the
// crawl folder rel carries (read through the folder's first snapshot
// link), nil when there is none.
func (s *scanner) crawlRecordIn(rel, id string) *archive.Crawl {
	links, _ := filepath.Glob(filepath.Join(s.c.Path(rel), "snapshots", "*", "*"))
	for _, l := range links {
		ix, _, err := archive.ReadIndex(l)
		if err != nil {
			continue
		}
		if cr, ok := ix.Crawl(); ok && cr.ID == id {
			return &cr
		}
	}
	return nil
}

// finishCrawls fills the url lists of the crawls folio creates and lists
// every crawl plus the dashed crawl folders no item refers to.
func (s *scanner) finishCrawls(dirs []crawlDir) {
	if s.auto != nil {
		// Every row without a crawl, not only those this run migrates:
		// a rerun writes the list the first run wrote.
		var rows []*dbRow
		for _, r := range s.db.Rows {
			if _, ok := s.db.Crawls[r.CrawlID]; !ok || r.CrawlID == "" {
				rows = append(rows, r)
			}
		}
		sort.SliceStable(rows, func(i, j int) bool {
			a := legacyBookmarkedAt(rows[i].Timestamp, rows[i].Added, s.now)
			b := legacyBookmarkedAt(rows[j].Timestamp, rows[j].Added, s.now)
			if !a.Equal(b) {
				return a.Before(b)
			}
			return rows[i].Timestamp < rows[j].Timestamp
		})
		urls := make([]string, 0, len(rows))
		seen := map[string]bool{}
		for _, r := range rows {
			if !seen[r.URL] {
				seen[r.URL] = true
				urls = append(urls, r.URL)
			}
		}
		s.auto.URLs = strings.Join(urls, "\n")
	}
	if s.orphan != nil {
		lines := s.orphanEarlier
		have := map[string]bool{}
		for _, l := range lines {
			have[l] = true
		}
		for _, l := range s.orphanLines {
			if !have[l] {
				have[l] = true
				lines = append(lines, l)
			}
		}
		s.orphan.URLs = strings.Join(lines, "\n")
	}
	for _, d := range dirs {
		if d.dashed && s.crawls[d.id] == nil {
			s.addCrawl(&Crawl{ID: d.id, User: d.user, CreatedAt: d.created, Dir: d.rel})
		}
	}
	s.inv.Crawls = s.crawlOrder
}
