package watch

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/archive/catalog"
)

// Handler applies batches to a collection's catalog and, when Export is
// set, to its export.
type Handler struct {
	Coll *archive.Collection
	// Export, when set, runs the incremental export after a batch that
	// changed the catalog or a snapshot folder's outputs (see Output and
	// InOutput), and returns a line saying what it wrote. It takes the
	// collection's lock itself.
	Export func(ctx context.Context, scope ExportScope) (string, error)
	// Unwatched, when set, returns the folders the watcher misses
	// (Watcher.Unwatched): without Look, every export looks at them and
	// all they hold besides the folders changes named; when all, every
	// export looks at every folder.
	Unwatched func() (folders []string, all bool)
	// Look, when set with Export, looks at the snapshot folders at or
	// below dirs as the next export would (export.Look) and returns those
	// whose names changed since the last one, and those named before
	// whose pages must be written again (a file written inside one of
	// their folders); ok is false when it could not (no export to compare
	// with). The handler asks it of the unwatched folders each poll looks
	// at: a change found there starts an export, told of those folders
	// only, and an export looks at no other unwatched folder (each was
	// looked at by the poll after it).
	Look func(ctx context.Context, dirs []string) (changed, rewrite []string, ok bool, err error)
	P    archive.Printer

	exportDue bool            // the catalog or an output changed since the last export
	rewrite   map[string]bool // snapshot folders whose pages the next export writes again
	// changed holds the paths of every event since the last export (a
	// snapshot folder for an event inside one) and the unwatched folders
	// looked at; blind is set when events may have been lost since.
	changed  map[string]bool
	blind    bool
	exported bool            // an export ran (the first batch always exports)
	applied  bool            // a batch was applied
	reported map[string]bool // problems and hints already printed
}

// Result is what one Apply did.
type Result struct {
	Skipped  bool // nothing in the batch could change the catalog
	Reindex  catalog.ReindexStats
	Exported string // the export's line, "" when it did not run
	Took     time.Duration
}

// Changed reports whether the catalog changed.
func (r Result) Changed() bool {
	return r.Reindex.Added+r.Reindex.Updated+r.Reindex.Removed > 0
}

// Apply brings the catalog in line with the tree after the changes of b,
// then exports if the catalog changed (or an earlier export is still
// due). It fails with an error wrapping archive.ErrLocked, having changed
// nothing, while another folio process holds the collection.
func (h *Handler) Apply(ctx context.Context, b Batch) (Result, error) {
	start := time.Now()
	if h.P == nil {
		h.P = archive.Discard
	}
	if h.reported == nil {
		h.reported = map[string]bool{}
	}
	var res Result
	h.note(b)
	// An output added at the top of a snapshot folder, or written inside
	// one, changes no index, only the folder's page: the export finds the
	// first by itself and is told of the second.
	if h.Export != nil && b.outputs() {
		h.exportDue = true
		for _, dir := range b.rewrites() {
			h.noteRewrite(dir)
		}
	}
	due := h.Export != nil && (h.exportDue || !h.exported)
	if !b.relevant() && !due {
		res.Skipped = true
		return res, nil
	}
	if b.relevant() {
		st, err := h.reindex(ctx, b.Scope(), len(b.Roots) > 0 && len(b.Events) == 0)
		if err != nil {
			return res, err
		}
		res.Reindex = st
		if res.Changed() {
			h.exportDue = true
		}
		h.hints(b)
		if err := h.lookRoots(ctx, b.Roots); err != nil {
			return res, err
		}
	}
	if h.Export != nil && (h.exportDue || !h.exported) {
		// A folder the watcher misses may have changed unseen: unless
		// the polls look at them (Look), the export looks at each as at
		// one an event named.
		blind := h.blind
		if h.Unwatched != nil {
			folders, all := h.Unwatched()
			blind = blind || all
			if h.Look == nil {
				for _, dir := range folders {
					h.noteChanged(dir)
				}
			}
		}
		scope := ExportScope{Rewrite: slices.Sorted(maps.Keys(h.rewrite)),
			Watched: h.exported && !blind, Changed: slices.Sorted(maps.Keys(h.changed))}
		line, err := h.Export(ctx, scope)
		if err != nil {
			return res, err
		}
		h.exportDue, h.exported, h.rewrite, h.changed, h.blind = false, true, nil, nil, false
		res.Exported = line
	}
	res.Took = time.Since(start)
	if res.Changed() || res.Exported != "" || !h.applied {
		h.P.Infof("%s", res.line(b)) // the first says the catalog is current
	}
	h.applied = true
	return res, nil
}

// ExportScope is what the handler saw of the tree since its last export.
type ExportScope struct {
	// Rewrite names the snapshot folders whose pages must be written
	// again though nothing the export looks at changed (a file written
	// inside an output folder).
	Rewrite []string
	// Watched says the handler ran the previous export and has seen
	// every change in the tree since: only the folders in Changed (each a
	// snapshot folder, or a folder above that level whose whole subtree
	// counts as changed) need a look.
	Watched bool
	Changed []string
}

// note remembers what b changed, for the next export's scope.
func (h *Handler) note(b Batch) {
	if h.Export == nil {
		return
	}
	if b.Rescan {
		h.blind = true
	}
	for _, e := range b.Events {
		h.noteChanged(e.Path)
	}
}

// lookRoots passes what a poll of the unwatched folders roots found to the
// next export: the snapshot folders below them whose names changed, found
// by Look (which makes the export due), else the roots themselves, for
// the export to look at.
func (h *Handler) lookRoots(ctx context.Context, roots []string) error {
	if h.Export == nil || len(roots) == 0 {
		return nil
	}
	if h.Look != nil {
		dirs := make([]string, 0, len(roots))
		for _, p := range roots {
			if _, dir := Classify(p); dir != "" {
				p = dir // a folder inside a snapshot folder: that folder's names
			}
			dirs = append(dirs, p)
		}
		changed, rewrite, ok, err := h.Look(ctx, dirs)
		if err != nil {
			return err
		}
		if ok {
			for _, dir := range changed {
				h.noteChanged(dir)
			}
			for _, dir := range rewrite {
				h.noteRewrite(dir)
			}
			h.exportDue = h.exportDue || len(changed)+len(rewrite) > 0
			return nil
		}
	}
	for _, dir := range roots {
		h.noteChanged(dir)
	}
	return nil
}

// noteRewrite adds a snapshot folder whose page the next export writes
// again to its scope.
func (h *Handler) noteRewrite(dir string) {
	if h.rewrite == nil {
		h.rewrite = map[string]bool{}
	}
	h.rewrite[dir] = true
}

// noteChanged adds a changed path of the archive folder to the next
// export's scope: the snapshot folder it lies in, or the folder itself
// above the snapshots' level (which stands for all below it).
func (h *Handler) noteChanged(p string) {
	if p != archive.ArchiveDir && !strings.HasPrefix(p, archive.ArchiveDir+"/") {
		return
	}
	if h.changed == nil {
		h.changed = map[string]bool{}
	}
	if _, dir := Classify(p); dir != "" {
		h.changed[dir] = true
	} else {
		h.changed[p] = true
	}
}

// reindex runs the incremental reindex of scope (nil: the whole tree)
// under the collection's lock; polled when the scope is unwatched folders
// looked at on a timer (catalog.ReindexOptions.Polled). Problems are
// printed once each, not again on every batch.
func (h *Handler) reindex(ctx context.Context, scope []string, polled bool) (catalog.ReindexStats, error) {
	lock, err := h.Coll.Lock("watch")
	if err != nil {
		return catalog.ReindexStats{}, err
	}
	defer lock.Unlock()
	cat, err := catalog.Open(ctx, h.Coll)
	if err != nil {
		return catalog.ReindexStats{}, err
	}
	st, err := cat.Reindex(ctx, catalog.ReindexOptions{Scope: scope, Polled: polled, OnProblem: func(p catalog.Problem) {
		if msg := p.Error(); !h.reported[msg] {
			h.reported[msg] = true
			h.P.Warnf("%s", msg)
		}
	}})
	if cerr := cat.Close(); err == nil {
		err = cerr
	}
	return st, err
}

// hints points at the command that finishes what a batch started: a
// legacy folder copied into archive/ is cataloged where it is, and
// migrated by 'folio update --migrate-only'.
func (h *Handler) hints(b Batch) {
	for _, e := range b.Events {
		k, dir := Classify(e.Path)
		if k != Legacy || e.Removed || h.reported[dir] {
			continue
		}
		h.reported[dir] = true
		h.P.Infof("%s is a legacy snapshot folder: 'folio update --migrate-only' moves it into the current layout", dir)
	}
}

// line is the one line printed for an applied batch, e.g.
// "catalog: 1 added, 1 updated, 1 removed (3 snapshot, 2 index events) in 180ms; export: ...".
func (r Result) line(b Batch) string {
	var parts []string
	for _, c := range []struct {
		n    int
		what string
	}{{r.Reindex.Added, "added"}, {r.Reindex.Updated, "updated"}, {r.Reindex.Removed, "removed"}} {
		if c.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", c.n, c.what))
		}
	}
	if len(parts) == 0 {
		parts = append(parts, "unchanged")
	}
	s := "catalog: " + strings.Join(parts, ", ")
	var kinds []string
	for k, n := range b.Summary() {
		kinds = append(kinds, fmt.Sprintf("%d %s", n, k))
	}
	sort.Strings(kinds)
	switch {
	case len(kinds) > 0:
		s += " (events: " + strings.Join(kinds, ", ") + ")"
	case b.Rescan:
		s += " (a look at the whole tree)"
	case len(b.Roots) > 0:
		s += fmt.Sprintf(" (a look at %d unwatched folders)", len(b.Roots))
	}
	s += " in " + r.Took.Round(time.Millisecond).String()
	if r.Exported != "" {
		s += "; " + r.Exported
	}
	return s
}
