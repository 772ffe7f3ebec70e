package migrate

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/layout"
)

// Scan reads the collection c — its legacy index.sqlite3 if any, every
// archive/<timestamp> folder, every folder of the users/ tree — and decides
// the identity of every snapshot as ArchiveBox's update does (formats spec
// §3.3-3.5, §4.6, §7). It writes nothing. A database that cannot be read is
// an error naming the file; a folder that cannot be read is reported to
// OnError and listed in Skipped.
func Scan(ctx context.Context, c *archive.Collection, opts ScanOptions) (*Inventory, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Printer == nil {
		opts.Printer = archive.Discard
	}
	if opts.Workers <= 0 {
		opts.Workers = 16
	}
	s := &scanner{c: c, opts: opts, now: opts.Now().UTC(), inv: &Inventory{},
		claimed: map[string]bool{}, itemOf: map[string]int{}, taken: map[string]bool{}, crawls: map[string]*Crawl{},
		orphanURLs: map[string]bool{}, skippedTS: map[string]bool{}, linkedTS: map[string]error{}}
	// The database is read while the folders are: both are I/O and the
	// decisions below need both.
	var ldb *legacyDB
	var dbErr error
	dbDone := make(chan struct{})
	go func() {
		defer close(dbDone)
		ldb, dbErr = readLegacyDB(ctx, c.Path(archive.LegacyDB), s.now)
	}()
	defer func() { <-dbDone }()
	legacy, err := s.listArchive()
	if err != nil {
		return nil, err
	}
	cur, crawlDirs, staging, err := walkCurrent(ctx, c.Dir, opts.Workers)
	if err != nil {
		return nil, err
	}
	s.inv.Staging = staging
	s.crawlDirs = map[string]crawlDir{}
	for _, cd := range crawlDirs {
		if old, ok := s.crawlDirs[cd.id]; !ok || (old.dashed && !cd.dashed) {
			s.crawlDirs[cd.id] = cd
		}
	}
	s.compact = map[string]currentDir{}
	var dashed []*folder
	var indexed []currentDir
	dashedDirs := map[string]currentDir{}
	bare := map[string]*folder{} // compact folders without index.jsonl, by id
	for _, d := range cur {
		if d.dashed {
			dashed = append(dashed, &folder{name: path.Base(d.rel), rel: d.rel})
			dashedDirs[d.rel] = d
		} else {
			s.compact[d.id] = d
			if d.hasIndex {
				indexed = append(indexed, d)
			} else {
				bare[d.id] = &folder{name: path.Base(d.rel), rel: d.rel}
			}
		}
	}
	compact, err := staleCompact(ctx, c.Dir, indexed, opts.Workers)
	if err != nil {
		return nil, err
	}
	toRead := append(append(append(legacy, dashed...), compact...), s.unnamed...)
	for _, f := range bare {
		toRead = append(toRead, f)
	}
	if err := readFolders(ctx, c.Dir, toRead, opts.Workers, opts.Printer); err != nil {
		return nil, err
	}
	<-dbDone
	if dbErr != nil {
		return nil, dbErr
	}
	s.db = ldb
	if ldb != nil {
		s.inv.DBVersion = ldb.Version
		ldb.ByURL = map[string][]*dbRow{}
		for _, r := range ldb.Rows {
			ldb.ByURL[r.URL] = append(ldb.ByURL[r.URL], r)
			s.taken[r.Timestamp] = true
		}
	}
	legacy = append(legacy, s.rowNamed()...)
	// Phase 1 order: newest mtime first.
	sort.SliceStable(legacy, func(i, j int) bool {
		if !legacy[i].mtime.Equal(legacy[j].mtime) {
			return legacy[i].mtime.After(legacy[j].mtime)
		}
		return legacy[i].name < legacy[j].name
	})
	for _, f := range legacy {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		s.legacyFolder(f)
	}
	sort.Slice(dashed, func(i, j int) bool { return dashed[i].rel < dashed[j].rel })
	for _, f := range dashed {
		s.dashedFolder(f, dashedDirs[f.rel])
	}
	// A compact folder whose record declares an older layout version
	// (0.9.0-0.9.3 of ArchiveBox) is at its place but not current: its
	// index.jsonl is rewritten (formats spec §3.1, §7.31).
	sort.Slice(compact, func(i, j int) bool { return compact[i].rel < compact[j].rel })
	for _, f := range compact {
		if f.err == nil && f.hasSnap && f.snap.URL != "" && staleVersion(f.snap.FSVersion) {
			s.dashedFolder(f, s.compact[path.Base(f.rel)])
		}
	}
	if ldb != nil {
		for _, r := range ldb.Rows {
			if s.claimed[r.ID] || (opts.Resume != "" && r.Timestamp > opts.Resume) || s.skippedTS[r.Timestamp] {
				continue
			}
			if err, ok := s.linkedTS[r.Timestamp]; ok {
				if opts.OnError != nil {
					opts.OnError("archive/"+r.Timestamp, err)
				}
				continue
			}
			if d, ok := s.compact[r.ID]; ok {
				if d.hasIndex {
					continue // already current
				}
				s.addItem(s.rowItem(r, nil, d.rel))
				continue
			}
			s.addItem(s.rowItem(r, nil, ""))
		}
	}
	var unindexed []*folder
	for id, d := range s.compact {
		switch {
		case s.claimed[id]:
		case d.hasIndex:
			s.inv.Current++
		default:
			unindexed = append(unindexed, bare[id])
		}
	}
	// A folder at its place with only an index.json (written by a 0.9
	// version that kept no index.jsonl, or by hand) keeps its identity
	// from that index, as a dashed folder does.
	sort.Slice(unindexed, func(i, j int) bool { return unindexed[i].rel < unindexed[j].rel })
	for _, f := range unindexed {
		if f.err == nil && (!f.hasSnap || f.snap.URL == "") {
			s.skip(f.rel, "no index.jsonl, no index.json with a url and no database row")
			continue
		}
		s.dashedFolder(f, s.compact[path.Base(f.rel)])
	}
	sort.SliceStable(s.inv.Skipped, func(i, j int) bool { return s.inv.Skipped[i].Source < s.inv.Skipped[j].Source })
	s.finishCrawls(crawlDirs)
	if ldb != nil {
		s.inv.rows = ldb.ByTS
	}
	s.inv.deferred = s.skippedTS
	return s.inv, nil
}

type scanner struct {
	c    *archive.Collection
	opts ScanOptions
	now  time.Time
	db   *legacyDB
	inv  *Inventory

	claimed   map[string]bool // snapshot ids that have an item
	itemOf    map[string]int  // snapshot id -> index of its first item
	taken     map[string]bool // timestamps in use
	skippedTS map[string]bool // legacy folder names left out by Resume
	// linkedTS: legacy timestamps whose archive/<timestamp> is a symlink
	// that does not resolve into archive/users, and why. The symlink is
	// kept; a database row with the timestamp fails, as in ArchiveBox
	// ("Legacy output symlink does not point to the expected target",
	// formats spec §3.6): an empty new folder would hide its files.
	linkedTS map[string]error

	// unnamed are the folders under archive/ whose names are not legacy
	// timestamps (rowNamed sorts them out).
	unnamed []*folder

	compact   map[string]currentDir // compact-id snapshot folders by id
	crawlDirs map[string]crawlDir   // crawl folders by compact id (compact preferred)
	curByTS   map[string]currentSnap

	crawls      map[string]*Crawl
	crawlOrder  []*Crawl
	auto        *Crawl
	autoRows    []*dbRow
	orphan      *Crawl
	orphanURLs  map[string]bool
	orphanLines []string
}

// currentSnap is the identity of a snapshot already in the current layout.
type currentSnap struct {
	id, url, user, crawlID string
}

// listArchive sorts the entries of archive/ into legacy folders (returned),
// compatibility symlinks and skipped entries.
func (s *scanner) listArchive() ([]*folder, error) {
	dir := s.c.Path(archive.ArchiveDir)
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", dir, err)
	}
	usersReal, _ := filepath.EvalSymlinks(s.c.Path(archive.UsersDir))
	var out []*folder
	for _, e := range entries {
		name := e.Name()
		rel := archive.ArchiveDir + "/" + name
		if layout.Reserved(name) || strings.HasPrefix(name, ".") {
			continue
		}
		_, legacy := layout.LegacyTimestamp(name)
		switch {
		case e.Type()&fs.ModeSymlink != 0:
			if !legacy {
				s.skip(rel, "symlink whose name is not a legacy timestamp")
				continue
			}
			target, err := filepath.EvalSymlinks(filepath.Join(dir, name))
			switch {
			case err == nil && usersReal != "" && strings.HasPrefix(target, usersReal+string(filepath.Separator)):
				s.inv.Symlinks = append(s.inv.Symlinks, rel)
			case err != nil:
				// Perhaps a folder on a disk that is not mounted now.
				s.skip(rel, "broken symlink")
				s.linkedTS[name] = fmt.Errorf("%w: %s is a broken symlink (%v); is the disk it points to mounted?", ErrLegacySymlink, rel, err)
			default:
				s.skip(rel, "symlink pointing outside archive/users")
				s.linkedTS[name] = fmt.Errorf("%w: %s is a symlink to %s, outside archive/users; move that folder into archive/ to migrate it", ErrLegacySymlink, rel, target)
			}
		case !e.IsDir():
			s.skip(rel, "not a directory")
		case !legacy:
			// Kept for the decision once the database is read: a folder
			// named exactly by a row's timestamp belongs to that row.
			s.unnamed = append(s.unnamed, &folder{name: name, rel: rel})
		case s.opts.Resume != "" && name > s.opts.Resume:
			s.skippedTS[name] = true
		default:
			out = append(out, &folder{name: name, rel: rel})
		}
	}
	return out, nil
}

// rowNamed sorts the folders under archive/ whose names are not legacy
// timestamps. A folder named exactly by a database row's timestamp (the
// 20240101120000.000000 of ArchiveBox's own test seeds and of some imports)
// is that row's legacy folder and is returned to migrate with it: ArchiveBox
// finds it as the row's archive/<timestamp> output directory. A folder that
// holds a snapshot record no row claims is left behind, which the run
// reports as a failure (never "complete" while a snapshot stays behind);
// anything else is not ArchiveBox's and stays as it is (formats spec
// §7.10a, §3.9).
func (s *scanner) rowNamed() []*folder {
	var out []*folder
	for _, f := range s.unnamed {
		switch {
		case s.db != nil && len(s.db.ByTS[f.name]) > 0:
			if s.opts.Resume != "" && f.name > s.opts.Resume {
				s.skippedTS[f.name] = true
				continue
			}
			f.rowNamed = true
			out = append(out, f)
		case f.err == nil && f.snapshotURL() != "":
			reason := fmt.Sprintf("holds a snapshot of %s (%s), but its name is not a timestamp", f.snapshotURL(), f.urlFrom())
			if s.db != nil {
				reason += " and no database row has it"
			}
			s.inv.Stranded = append(s.inv.Stranded, Skipped{Source: f.rel,
				Reason: reason + "; rename it to archive/<unix timestamp> to migrate it"})
		default:
			s.skip(f.rel, "not a legacy timestamp folder")
		}
	}
	return out
}

func (s *scanner) skip(rel, reason string) {
	s.inv.Skipped = append(s.inv.Skipped, Skipped{Source: rel, Reason: reason})
}

// fail reports a legacy folder that cannot be read. Its database row, if
// any, is left for a later run: a new empty folder would hide the files.
func (s *scanner) fail(f *folder, err error) {
	s.skippedTS[f.name] = true
	s.skip(f.rel, "unreadable: "+err.Error())
	if s.opts.OnError != nil {
		s.opts.OnError(f.rel, err)
	}
}

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
		Status:    "sealed",
	}
	switch s.db.Version {
	case DB08, DB09:
		snap.BookmarkedAt = r.BookmarkedAt
		if snap.BookmarkedAt.IsZero() {
			snap.BookmarkedAt = legacyBookmarkedAt(r.Timestamp, r.CreatedAt, s.now)
		}
		snap.CreatedAt = firstTime(r.CreatedAt, r.Added, snap.BookmarkedAt)
		snap.Status = snapshotStatus(r.Status)
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
		c := &Crawl{ID: dc.ID, User: user, CreatedAt: dc.CreatedAt, URLs: dc.URLs, Label: dc.Label}
		if d, ok := s.crawlDirs[dc.ID]; ok {
			c.Dir = d.rel
		}
		return s.addCrawl(c)
	}
	if s.auto == nil {
		label := "Migrated from v" + s.db.Version
		s.auto = s.addCrawl(&Crawl{ID: s.reuseAutoCrawl(timestampTime(r.Timestamp)), User: s.legacyUser(), CreatedAt: s.now,
			Label: label, New: true})
		if d, ok := s.crawlDirs[s.auto.ID]; ok {
			s.auto.Dir = d.rel
			s.auto.CreatedAt = d.created
		}
	}
	s.autoRows = append(s.autoRows, r)
	return s.auto
}

// reuseAutoCrawl returns the crawl id an earlier, interrupted migration
// gave the automatic crawl (read from a migrated snapshot of a row without
// crawl), so a rerun keeps one crawl; else a new id, dated at.
func (s *scanner) reuseAutoCrawl(at time.Time) string {
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
				return id
			}
		}
	}
	return s.newID(at, "auto crawl", s.legacyUser())
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

func (s *scanner) addCrawl(c *Crawl) *Crawl {
	s.crawls[c.ID] = c
	s.crawlOrder = append(s.crawlOrder, c)
	return c
}

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

// orphanCrawl is the "[migration] orphaned snapshots" crawl; a URL it
// already holds gets a crawl of its own, as URLs are unique per crawl.
func (s *scanner) orphanCrawl(url, ts, user string) *Crawl {
	if s.orphanURLs[url] {
		return s.addCrawl(&Crawl{ID: s.newID(timestampTime(ts), "orphan crawl", user, url, ts), User: user, CreatedAt: s.now, URLs: url,
			Label: "[migration] orphaned snapshot " + ts, New: true})
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
		} else {
			s.orphan = s.addCrawl(&Crawl{ID: s.newID(timestampTime(ts), "orphan crawl", user), User: user, CreatedAt: s.now, Label: label, New: true})
		}
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

// dashedFolder handles a 0.9 folder named by a dashed id: it is renamed to
// the compact id, keeping its identity (database row, else its index).
func (s *scanner) dashedFolder(f *folder, d currentDir) {
	if f.err != nil {
		s.fail(f, f.err)
		s.claimed[d.id] = true // no new folder for its row beside it
		return
	}
	if s.db != nil {
		if r := s.db.ByID[d.id]; r != nil {
			s.addItem(s.rowItem(r, f, f.rel))
			return
		}
	}
	if !f.hasSnap || f.snap.URL == "" {
		s.skip(f.rel, "no snapshot record with a url in index.jsonl or index.json")
		return
	}
	snap := f.snap
	snap.ID = d.id
	snap.Status = snapshotStatus(snap.Status)
	if snap.FSVersion == "" {
		snap.FSVersion = f.fsVersion
	}
	if snap.Timestamp == "" && !snap.BookmarkedAt.IsZero() {
		snap.Timestamp = s.unique(layout.Timestamp(snap.BookmarkedAt))
	}
	s.taken[snap.Timestamp] = true
	if snap.CreatedAt.IsZero() {
		snap.CreatedAt = s.now
	}
	if snap.BookmarkedAt.IsZero() {
		snap.BookmarkedAt = snap.CreatedAt
	}
	snap.Title = bestTitle(snap.URL, snap.Title)
	results := mergeResults(snap.ID, nil, f.results)
	if snap.Title == "" {
		snap.Title = resultTitle(snap.URL, results)
	}
	it := Item{Snapshot: snap, Results: results, User: d.user, Source: f.rel, Foreign: f.foreign, From: f.from}
	if id, ok := layout.ParseID(snap.CrawlID); ok {
		snap.CrawlID = id
		it.Snapshot.CrawlID = id
		c := s.crawls[id]
		if c == nil {
			c = &Crawl{ID: id, User: d.user, CreatedAt: snap.CreatedAt, URLs: snap.URL}
			if cd, ok := s.crawlDirs[id]; ok {
				c.Dir, c.User, c.CreatedAt = cd.rel, cd.user, cd.created
			}
			s.addCrawl(c)
		}
		it.Crawl = c
	}
	s.addItem(it)
}

func (s *scanner) addItem(it Item) {
	if it.User == "" {
		it.User = s.legacyUser()
	}
	if !layout.Component(it.User) {
		s.skip(it.Source, fmt.Sprintf("user name %q cannot name a folder", it.User))
		return
	}
	if i, ok := s.itemOf[it.Snapshot.ID]; ok {
		// A second folder of the snapshot (merged into the first's
		// destination after it moves): its record carries what both
		// folders know.
		first := s.inv.Items[i].Snapshot
		it.Snapshot.Tags = archive.NormalizeTags(append(append([]string(nil), first.Tags...), it.Snapshot.Tags...))
		if t := bestTitle(it.Snapshot.URL, it.Snapshot.Title, first.Title); t != "" {
			it.Snapshot.Title = t
		}
	} else {
		s.itemOf[it.Snapshot.ID] = len(s.inv.Items)
	}
	s.claimed[it.Snapshot.ID] = true
	s.inv.Items = append(s.inv.Items, it)
}

// finishCrawls fills the url lists of the crawls folio creates and lists
// every crawl plus the dashed crawl folders no item refers to.
func (s *scanner) finishCrawls(dirs []crawlDir) {
	if s.auto != nil {
		rows := s.autoRows
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
		s.orphan.URLs = strings.Join(s.orphanLines, "\n")
	}
	for _, d := range dirs {
		if d.dashed && s.crawls[d.id] == nil {
			s.addCrawl(&Crawl{ID: d.id, User: d.user, CreatedAt: d.created, Dir: d.rel})
		}
	}
	s.inv.Crawls = s.crawlOrder
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

// staleVersion reports whether a record's fs_version is a declared
// version with a migration hop to the current one; "" (no key) and
// unknown values are left as they are.
func staleVersion(v string) bool {
	_, ok := layout.NextFSVersion(v)
	return v != "" && ok
}
