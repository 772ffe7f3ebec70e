// Package migrate brings a collection written by any ArchiveBox version
// (0.4.x to 0.9.x) to the current layout (fs_version 0.9.4).
//
// The source side (this file, legacydb.go, identity.go) only reads: it finds
// every legacy snapshot folder, every row of a legacy index.sqlite3 and every
// 0.9 folder named by a dashed id, and decides each snapshot's identity
// exactly as ArchiveBox does. The result is an Inventory that the planner
// and mover turn into moves. Nothing in the data directory is written.
package migrate

import (
	"time"

	"github.com/folio-archive/folio/archive"
)

// Item is one snapshot that needs work: a legacy folder to move, a dashed
// 0.9 folder to rename, or a database row that has no folder yet. Two items
// share a Snapshot.ID only when one snapshot has two source folders (its
// archive/<timestamp> folder and a dashed 0.9 folder); both merge into the
// same target.
type Item struct {
	// Snapshot is the complete target metadata: compact id, crawl id, url,
	// timestamp (verbatim), title, tags, bookmarked_at, created_at, depth,
	// status, notes. FSVersion is the SOURCE fs version ("0.7.0", "0.8.0",
	// "0.9.0", ...); the writer sets archive.SchemaVersion's layout
	// (layout.Current) when it writes the record.
	Snapshot archive.Snapshot
	// Results are the snapshot's ArchiveResults: database rows first (in
	// start_ts order), then converted index.json / index.jsonl entries for
	// plugins the database does not know. Every result has an id and
	// SnapshotID set.
	Results []archive.Result
	// User owns the snapshot folder (archive/users/<User>/...).
	User string
	// Source is the folder to move, a slash path relative to the data dir:
	// "archive/<name>" for a legacy folder, a dashed current-layout dir
	// ("archive/users/<u>/snapshots/<date>/<domain>/<dashed id>"), a compact
	// current-layout dir that still lacks its index.jsonl, or "" when the
	// snapshot has no folder on disk (a database row never captured or
	// pruned); the writer then creates the folder with just index.jsonl.
	Source string
	// Foreign holds the lines of an existing index.jsonl in Source that are
	// neither Snapshot nor ArchiveResult records, verbatim, to be kept.
	Foreign [][]byte
	// From says where the metadata came from: "db", "index.jsonl",
	// "index.json", "archive.org.txt".
	From string
	// Crawl is the snapshot's crawl (shared by all items of that crawl), or
	// nil when none is known.
	Crawl *Crawl
}

// Crawl is what the writer needs to place a crawl folder and its snapshot
// symlinks. Items of the same crawl share one *Crawl.
type Crawl struct {
	ID        string    // compact 32-hex id
	User      string    // the crawl's creator, owner of its folder
	CreatedAt time.Time // names the crawl folder's date bucket
	URLs      string    // crawls_crawl.urls; its first URL names the domain folder
	Label     string
	// Dir is the crawl's existing folder (slash path relative to the data
	// dir), dashed or compact, or "" when it has none yet. A dashed Dir is
	// to be renamed to the compact name.
	Dir string
	// New reports a crawl that exists in no database: the automatic crawl
	// ArchiveBox creates for legacy rows without one, or the crawl for
	// orphaned folders.
	New bool
	// Known reports a crawl whose facts the migration knows (a database
	// row, or a crawl it makes): its Crawl record is written into each of
	// its snapshots' index.jsonl. Of any other crawl only the id is known,
	// and a record is left as the file has it.
	Known    bool
	Status   string // the crawl's lifecycle status; "" is written as sealed
	MaxDepth int
	Tags     string // tags_str
	// All names where the whole url list is when the Crawl record holds
	// only its head (archive.BoundURLs).
	All string
}

// Invalid is a legacy folder from which no snapshot can be recovered (no
// url in any index, no Wayback url in archive.org.txt, no database row
// with its timestamp). The writer moves it to invalid/<YYYYMMDD>/<name>.
type Invalid struct {
	Source string // "archive/<name>"
	Reason string
}

// Skipped is an entry under archive/ that the migration leaves alone, with
// the reason (not a timestamp, out of range, a symlink pointing elsewhere,
// unreadable).
type Skipped struct {
	Source string
	Reason string
}

// Inventory is everything Scan found.
type Inventory struct {
	// Items: legacy folders in mtime-descending order (Phase 1), then
	// dashed current-layout folders, then database rows without a folder.
	Items   []Item
	Invalid []Invalid
	Skipped []Skipped
	// Stranded are folders under archive/ that hold a snapshot the
	// migration cannot take (a name that is not a timestamp, and no
	// database row named by it): left as they are, and a failure of the
	// run, since their files would otherwise stay behind unnoticed.
	Stranded []Skipped
	// Symlinks are archive/<timestamp> symlinks that resolve inside
	// archive/users (compatibility links of 0.9 dev), to be removed.
	Symlinks []string
	// Crawls are all crawls items refer to, plus dashed crawl folders found
	// on disk that no item refers to (to be renamed).
	Crawls []*Crawl
	// DBVersion is the schema of index.sqlite3: "" (no database), "0.4",
	// "0.4.24", "0.7", "0.8" or "0.9".
	DBVersion string
	// Current counts snapshots already at the current layout (a compact-id
	// folder with an index.jsonl) that need no work.
	Current int
	// Staging are the staging folders of copies a crash interrupted, found
	// beside the snapshot and crawl folders (see settleStaging).
	Staging []string

	// rows are the legacy database's rows by timestamp and deferred the
	// legacy folder names this scan left for a later run (--resume, or
	// unreadable): what the check after a run needs to tell a folder left
	// behind from one left on purpose.
	rows     map[string][]*dbRow
	deferred map[string]bool
}

// ScanOptions configure Scan.
type ScanOptions struct {
	// IDs makes ids for snapshots and crawls that have none. Default: ids
	// derived from what identifies each (archive.DerivedID), the same in
	// a dry run and in the run after it.
	IDs archive.IDSource
	// Now is the clock for timestamps ArchiveBox sets to "now" (a result
	// without start_ts, an orphan's created_at). Default time.Now.
	Now func() time.Time
	// Resume skips legacy folders whose name is > Resume and database rows
	// whose timestamp is > Resume (string comparison, as ArchiveBox's
	// --resume). "" scans everything.
	Resume string
	// Printer receives progress; default archive.Discard.
	Printer archive.Printer
	// OnError is told about one folder that could not be read (the folder
	// is also listed in Skipped). Nil ignores them.
	OnError func(source string, err error)
	// Workers bounds parallel folder reads; default 16.
	Workers int
}
