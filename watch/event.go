// Package watch keeps a collection's catalog, and optionally its export,
// in line with the tree while people and other programs change it: a
// snapshot folder dropped in or synced from another machine, an
// index.jsonl edited by hand, a folder moved or deleted, a legacy folder
// copied into archive/.
//
// A Watcher turns file system notifications (inotify through fsnotify,
// or polling where inotify is unavailable or out of watches) into
// batches: the events of one quiet moment. A Handler applies a batch: it
// takes the collection's writer lock, runs the catalog's incremental
// reindex scoped to the folders the events name (which reads only those
// whose index or text changed) and, when something changed, the
// incremental export. The two halves meet only in
// Batch, so tests hand batches to a Handler directly.
package watch

import (
	"maps"
	"slices"
	"strings"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/layout"
)

// Kind says what an event is about, from its path alone.
type Kind int

// Kinds of events, by where in the tree they happen.
const (
	Other    Kind = iota // a folder above the snapshot level (user, date, domain)
	Snapshot             // a snapshot folder itself appeared, moved or vanished
	Index                // a snapshot's index.jsonl or index.json changed
	Legacy               // a legacy archive/<timestamp> folder appeared, moved or vanished
	Payload              // a file or folder inside a snapshot folder (an output)
)

var kindNames = [...]string{"folder", "snapshot", "index", "legacy folder", "output"}

func (k Kind) String() string { return kindNames[k] }

// Event is one change under archive/, as a slash path relative to the
// data directory.
type Event struct {
	Path    string
	Removed bool // removed or renamed away (else created, written or renamed here)
}

// Batch is the events of one quiet moment. Rescan is set when events may
// have been lost (the kernel's queue overflowed, or the watcher polls):
// the handler then looks at the whole tree. Roots are folders nobody
// watches (inotify ran out of watches there) to look at whole.
type Batch struct {
	Events []Event
	Rescan bool
	Roots  []string
}

// Scope is what the batch asks the catalog to look at (see
// catalog.ReindexOptions.Scope): the snapshot folders its events lie in,
// the folders above the snapshot level that appeared or vanished, and
// Roots; nil, the whole tree, for a rescan.
func (b Batch) Scope() []string {
	if b.Rescan {
		return nil
	}
	scope := append([]string{}, b.Roots...)
	for _, e := range b.Events {
		if !Relevant(e.Path) {
			continue
		}
		if _, dir := Classify(e.Path); dir != "" {
			scope = append(scope, dir)
		} else {
			scope = append(scope, e.Path)
		}
	}
	return scope
}

// Relevant reports whether an event can change what the catalog holds.
// folio's own temp files, dot files, files inside snapshot folders other
// than the index and the text search indexes (outputs, the detail page an
// export writes) and anything outside archive/ are not.
func Relevant(rel string) bool {
	if rel != archive.ArchiveDir && !strings.HasPrefix(rel, archive.ArchiveDir+"/") {
		return false
	}
	for _, part := range strings.Split(rel, "/") {
		if archive.IsTemp(part) || part == "" || part[0] == '.' {
			return false
		}
	}
	// Outputs inside a snapshot folder (and the detail page an export
	// writes there) are listed by its index, which the catalog follows.
	k, dir := Classify(rel)
	return k != Payload || isText(strings.TrimPrefix(rel, dir+"/"))
}

// isText reports whether a path inside a snapshot folder is (or holds)
// text that search indexes: readability's and htmltotext's folders and
// files, and htmltotext.txt of legacy folders.
func isText(inside string) bool {
	top, _, _ := strings.Cut(inside, "/")
	return top == "readability" || top == "htmltotext" || top == "htmltotext.txt"
}

// Classify says what rel is about and names the snapshot (or legacy)
// folder it lies in, "" when it lies above that level.
func Classify(rel string) (Kind, string) {
	parts := strings.Split(rel, "/")
	if len(parts) < 2 || parts[0] != archive.ArchiveDir {
		return Other, ""
	}
	if parts[1] != "users" {
		if _, ok := layout.LegacyTimestamp(parts[1]); !ok {
			return Other, ""
		}
		dir := strings.Join(parts[:2], "/")
		switch {
		case len(parts) == 2:
			return Legacy, dir
		case len(parts) == 3 && isIndex(parts[2]):
			return Index, dir
		}
		return Payload, dir
	}
	// archive/users/<user>/snapshots/<date>/<domain>/<id>/...
	const snapDepth = 7
	if len(parts) < snapDepth || parts[3] != "snapshots" {
		return Other, ""
	}
	dir := strings.Join(parts[:snapDepth], "/")
	switch {
	case len(parts) == snapDepth:
		return Snapshot, dir
	case len(parts) == snapDepth+1 && isIndex(parts[snapDepth]):
		return Index, dir
	}
	return Payload, dir
}

// detailPage is the page an in-place export writes into each snapshot
// folder (export.RootPage), and the prefix of its compressed sibling.
const detailPage = "index.html"

// Output reports whether rel is an entry at the top of a snapshot (or
// legacy) folder that the folder's exported page depends on: a plugin
// folder or file, not an index, the page an export writes, a temp or dot
// name. Such an entry added by hand changes no index, so the catalog
// does not see it, but the page lists it (export/folders.go).
func Output(rel string) bool {
	_, name, ok := output(rel)
	return ok && !strings.Contains(name, "/")
}

// InOutput returns the snapshot folder of rel when rel lies inside an
// output folder (see Output): a file written into a plugin folder, which
// the folder's page may show, though neither an index nor the snapshot
// folder's names change.
func InOutput(rel string) (string, bool) {
	dir, name, ok := output(rel)
	return dir, ok && strings.Contains(name, "/")
}

// output splits rel, a path inside a snapshot (or legacy) folder, into
// that folder and the rest, unless it is an index, the page an export
// writes, or lies in or under a temp or dot name.
func output(rel string) (dir, name string, ok bool) {
	k, dir := Classify(rel)
	if k != Payload || !Relevant(dir) {
		return "", "", false
	}
	name = strings.TrimPrefix(rel, dir+"/")
	if name == "" || strings.HasPrefix(name, detailPage) {
		return "", "", false
	}
	for part := range strings.SplitSeq(name, "/") {
		if part == "" || strings.HasPrefix(part, ".") || archive.IsTemp(part) {
			return "", "", false
		}
	}
	return dir, name, true
}

func isIndex(name string) bool {
	return name == archive.IndexFile || name == archive.LegacyIndexFile
}

// Summary counts a batch's relevant events by kind, for the log line.
func (b Batch) Summary() map[Kind]int {
	n := map[Kind]int{}
	for _, e := range b.Events {
		if Relevant(e.Path) {
			k, _ := Classify(e.Path)
			n[k]++
		}
	}
	return n
}

// outputs reports whether the batch adds, removes or renames an output
// at the top of a snapshot folder (see Output) or writes inside one (see
// InOutput).
func (b Batch) outputs() bool {
	for _, e := range b.Events {
		if _, _, ok := output(e.Path); ok {
			return true
		}
	}
	return false
}

// rewrites returns the snapshot folders whose output folders the batch
// writes inside (see InOutput): their pages are to be written again.
func (b Batch) rewrites() []string {
	dirs := map[string]bool{}
	for _, e := range b.Events {
		if dir, ok := InOutput(e.Path); ok {
			dirs[dir] = true
		}
	}
	return slices.Sorted(maps.Keys(dirs))
}

// relevant reports whether the batch holds anything worth a reindex.
func (b Batch) relevant() bool {
	if b.Rescan || len(b.Roots) > 0 {
		return true
	}
	for _, e := range b.Events {
		if Relevant(e.Path) {
			return true
		}
	}
	return false
}
