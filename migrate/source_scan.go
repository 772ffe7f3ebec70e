package migrate

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
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
	compact, open, err := staleCompact(ctx, c.Dir, indexed, opts.Workers)
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
	var reseal []*dbRow
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
				if d.hasIndex && open[r.ID] && ldb.Version != DB09 {
					reseal = append(reseal, r)
					continue
				}
				if d.hasIndex {
					continue // already current
				}
				s.addItem(s.rowItem(r, nil, d.rel))
				continue
			}
			s.addItem(s.rowItem(r, nil, ""))
		}
	}
	if err := s.resealRows(ctx, reseal); err != nil {
		return nil, err
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
	orphan      *Crawl
	orphanURLs  map[string]bool
	orphanLines []string
	// orphanEarlier: the urls lines of the orphan crawl's record as an
	// earlier run wrote it.
	orphanEarlier []string
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

// resealRows gives an item to each row of a 0.4-0.8 database whose
// current folder says it is open: migrated by a folio that kept the
// database's queued status, which ArchiveBox's migration replaces with
// sealed (formats spec §4.6). The item rewrites the folder's index.jsonl
// from the row and the folder's own records, sealed, as the migration
// would have written it; nothing else in the folder changes. The legacy
// database is what tells such a snapshot from one a folio add left
// queued: its id is a row's.
func (s *scanner) resealRows(ctx context.Context, rows []*dbRow) error {
	fs := make([]*folder, len(rows))
	for i, r := range rows {
		d := s.compact[r.ID]
		fs[i] = &folder{name: path.Base(d.rel), rel: d.rel}
	}
	if err := readFolders(ctx, s.c.Dir, fs, s.opts.Workers, archive.Discard); err != nil {
		return err
	}
	for i, r := range rows {
		if fs[i].err != nil || !fs[i].hasSnap {
			continue // current as it is; reindex and verify report it
		}
		s.addItem(s.rowItem(r, fs[i], fs[i].rel))
	}
	return nil
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

// staleVersion reports whether a record's fs_version is a declared
// version with a migration hop to the current one; "" (no key) and
// unknown values are left as they are.
func staleVersion(v string) bool {
	_, ok := layout.NextFSVersion(v)
	return v != "" && ok
}
