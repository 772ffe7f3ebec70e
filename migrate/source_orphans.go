package migrate

import (
	"context"
	"math"
	"time"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/layout"
)

// orphanItem is ArchiveBox's create_from_directory for a legacy folder
// without a database row (formats spec §3.5).
func (s *scanner) orphanItem(f *folder, url, from string) Item {
	ts, _ := layout.BestTimestamp(f.snap.Timestamp, f.name)
	if from == "archive.org.txt" {
		ts, _ = layout.BestTimestamp("", f.name)
	}
	snap := archive.Snapshot{URL: url, Status: "sealed", FSVersion: f.fsVersion}
	if snap.FSVersion == "" {
		snap.FSVersion = "0.7.0"
	}
	user := s.defaultUser()
	var crawl *Crawl
	if cur, ok := s.currentByTS()[ts]; ok && cur.url == url && !s.claimed[cur.id] {
		// Migrated before by an interrupted run: keep its identity.
		snap.ID, user = cur.id, cur.user
		if c := s.crawls[cur.crawlID]; c != nil {
			crawl = c
		} else if cur.crawlID != "" {
			crawl = s.addCrawl(&Crawl{ID: cur.crawlID, User: user, CreatedAt: s.now, URLs: url, New: true})
			if d, ok := s.crawlDirs[cur.crawlID]; ok {
				crawl.Dir, crawl.CreatedAt = d.rel, d.created
			}
		}
	} else {
		ts = s.unique(ts)
		if id, ok := layout.ParseID(f.snap.ID); ok && !s.claimed[id] && (s.db == nil || s.db.ByID[id] == nil) {
			if _, current := s.compact[id]; !current {
				snap.ID = id
			}
		}
		if snap.ID == "" {
			snap.ID = s.newID(timestampTime(ts), "orphan snapshot", f.rel, url)
		}
	}
	s.taken[ts] = true
	snap.Timestamp = ts
	if from != "archive.org.txt" {
		snap.Title = f.snap.Title
		snap.Tags = f.snap.Tags
		snap.Depth = f.snap.Depth
		snap.Notes = f.snap.Notes
		snap.CreatedAt = f.snap.CreatedAt
		snap.BookmarkedAt = f.snap.BookmarkedAt
	}
	if snap.BookmarkedAt.IsZero() {
		snap.BookmarkedAt = timestampTime(ts)
	}
	if snap.CreatedAt.IsZero() {
		snap.CreatedAt = s.now
	}
	if snap.BookmarkedAt.IsZero() {
		snap.BookmarkedAt = snap.CreatedAt
	}
	var idx []archive.Result
	if from != "archive.org.txt" {
		idx = f.results
	}
	results := mergeResults(snap.ID, nil, idx)
	snap.Title = bestTitle(url, snap.Title)
	if snap.Title == "" {
		snap.Title = resultTitle(url, results)
	}
	snap.Tags = archive.NormalizeTags(snap.Tags)
	if crawl == nil {
		crawl = s.orphanCrawl(url, ts, user)
	}
	snap.CrawlID = crawl.ID
	return Item{Snapshot: snap, Results: results, User: user, Source: f.rel, Foreign: f.foreign, From: from, Crawl: crawl}
}

// unique is _ensure_unique_timestamp: ts, else the first free
// ts+n/1e6 (formats spec §3.3).
func (s *scanner) unique(ts string) string {
	if !s.taken[ts] {
		if _, ok := s.currentByTS()[ts]; !ok {
			return ts
		}
	}
	for n := 1; ; n++ {
		c := layout.BumpTimestamp(ts, n)
		if c == "" {
			return ts
		}
		if _, cur := s.currentByTS()[c]; !s.taken[c] && !cur {
			return c
		}
	}
}

// currentByTS reads, once and only when an orphan needs it, the Snapshot
// record of every compact-id folder: timestamps must stay unique across the
// collection, and an orphan migrated by an interrupted run is recognised
// by its timestamp and URL.
func (s *scanner) currentByTS() map[string]currentSnap {
	if s.curByTS != nil {
		return s.curByTS
	}
	s.curByTS = map[string]currentSnap{}
	var fs []*folder
	var dirs []currentDir
	for _, d := range s.compact {
		if d.hasIndex {
			fs = append(fs, &folder{rel: d.rel, mtime: time.Unix(1, 0)})
			dirs = append(dirs, d)
		}
	}
	_ = readFolders(context.Background(), s.c.Dir, fs, s.opts.Workers, archive.Discard)
	for i, f := range fs {
		if f.hasSnap && f.snap.Timestamp != "" {
			s.curByTS[f.snap.Timestamp] = currentSnap{id: dirs[i].id, url: f.snap.URL, user: dirs[i].user, crawlID: f.snap.CrawlID}
		}
	}
	return s.curByTS
}

// timestampTime is parse_date of a legacy timestamp: Python's float() of
// it (exponents, underscores and surrounding whitespace allowed) as unix
// seconds with microseconds; zero when it is not a number.
func timestampTime(ts string) time.Time {
	f, ok := layout.PyFloat(ts)
	if !ok || f <= 0 || f >= 1e11 {
		return time.Time{}
	}
	sec := math.Floor(f)
	return time.Unix(int64(sec), int64(math.Round((f-sec)*1e6))*1000).UTC()
}
