package export

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"

	"golang.org/x/sync/errgroup"

	"github.com/folio-archive/folio/archive/catalog"
)

// maxDelta bounds the snapshots a re-export takes from the catalog's
// change feed; past it, the passes stream the whole selection.
const maxDelta = 1000

// errNoDelta stops a look at the change feed that found a change only the
// passes handle.
var errNoDelta = errors.New("change needs the full passes")

// changedSnap is a snapshot the catalog rewrote since the previous export,
// with its state then and its new manifest record.
type changedSnap struct {
	it   item
	prev snapState
	rec  []byte
}

// selectionKey identifies what an export selects, so that a change feed
// is only trusted for the same selection.
func selectionKey(q catalog.Query) uint64 {
	return hashString(fmt.Sprintf("%#v", q))
}

// delta re-exports from the catalog's change feed without streaming the
// selection. It applies when every snapshot whose row changed since the
// previous export was exported then, still is, keeps its place in the
// list and is its URL's only capture, and when the previous export's root
// pages and manifest are still there: it then writes the pages of those
// snapshots, the root pages and shards that list them and the manifest
// (the previous one with their records replaced), and reports true.
// In place, snapshots added at the newest end and snapshots gone from
// the first root page are taken too, each its URL's only capture, when
// the page count stays: the first page is written again, the others
// keep their rows (see pageLayout). Otherwise it reports false having
// written nothing, and the passes run.
func (s *site) delta(ctx context.Context, q catalog.Query) (bool, error) {
	prev := s.prev
	if prev == nil || prev.Select != s.next.Select || prev.ManifestSize <= 0 || len(prev.Snaps) != int(prev.Total) {
		return false, nil
	}
	target := s.abs(ManifestFile)
	fi, err := os.Stat(target)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() != prev.ManifestSize || fi.ModTime().UnixNano() != prev.ManifestMTime {
		return false, nil
	}
	pages, first := pageLayout(int(prev.Total), s.opts.PageSize)
	if len(prev.Pages) != pages {
		return false, nil
	}
	for n := 1; n <= pages; n++ {
		if !s.pageWritten(n) {
			return false, nil
		}
	}
	dirs, ok, err := s.cat.Changed(ctx, prev.Catalog)
	if err != nil || !ok {
		return false, err
	}
	touched := map[string]bool{}
	for _, d := range append(dirs, s.foldersChanged...) {
		touched[d] = true
	}
	if len(touched) > maxDelta {
		return false, nil
	}
	changed, added, removed, err := s.changedSnaps(ctx, q, touched)
	if errors.Is(err, errNoDelta) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	total := int(prev.Total) + len(added) - len(removed)
	newPages, first := pageLayout(total, s.opts.PageSize)
	// (--out removes the folders of snapshots gone, and a root template
	// of the user's may show the total on every page: the passes do.)
	if (len(added) > 0 || len(removed) > 0) && (!s.inPlace || newPages != pages || !s.tpl.RootBuiltin) {
		return false, nil
	}

	// The root pages that list a changed snapshot, each with its
	// snapshots in list order: the first with those added and without
	// those gone.
	members := map[int][]string{}
	for _, c := range changed {
		members[int(c.prev.Page)] = nil
	}
	gone := map[uint64]bool{}
	for _, r := range removed {
		gone[hashString(r.Dir)] = true
	}
	if len(added) > 0 || len(removed) > 0 {
		members[1] = nil
	}
	for h, ss := range prev.Snaps {
		if list, ok := members[int(ss.Page)]; ok && !gone[h] {
			members[int(ss.Page)] = append(list, ss.Dir)
		}
	}
	for _, a := range added {
		members[1] = append(members[1], a.it.Dir)
	}
	redo := map[int][]item{}
	for n, list := range members {
		items, err := s.pageItems(ctx, q, list)
		if err != nil {
			return false, err
		}
		if len(items) != len(list) {
			return false, nil
		}
		redo[n] = items
	}
	// At the newest end, in list order: before the first page's rows
	// kept, which are newer than the second page's (with none kept,
	// nothing says so).
	if len(added) > 0 && pages > 1 && len(redo[1]) == len(added) {
		return false, nil
	}
	for i, a := range added {
		if redo[1][i].Dir != a.it.Dir {
			return false, nil
		}
	}
	// The captures of the URLs on those pages, as pages fingerprint them
	// (the pages written look up no other URL).
	s.groups = map[uint64]group{}
	for _, items := range redo {
		for i := range items {
			s.groups[hashString(items[i].Snapshot.URL)] = group{}
		}
	}
	for _, r := range removed {
		s.groups[r.URL] = group{}
	}
	for _, ss := range prev.Snaps {
		if g, ok := s.groups[ss.URL]; ok {
			g.n++
			g.sig += ss.Sig
			s.groups[ss.URL] = g
		}
	}
	for _, a := range added {
		h := hashString(a.it.Snapshot.URL)
		g := s.groups[h]
		g.n++
		s.groups[h] = g
	}
	for _, c := range changed {
		if s.groups[c.prev.URL].n > 1 {
			return false, nil // other captures' pages show it: the passes handle that
		}
	}
	for _, a := range added {
		if s.groups[hashString(a.it.Snapshot.URL)].n > 1 {
			return false, nil
		}
		if _, ok := prev.pending[a.it.dh]; ok {
			return false, nil // its old record's removal is still held: one splice a folder
		}
	}
	for _, r := range removed {
		if s.groups[r.URL].n > 1 {
			return false, nil
		}
	}
	for _, items := range redo {
		for i := range items {
			items[i].fp = s.fingerprint(s.groups, &items[i])
		}
	}

	// From here on the export is this one.
	testEvent("delta")
	s.total, s.pages, s.first = total, pages, first
	s.next.Total = uint64(total)
	s.next.Pages = slices.Clone(prev.Pages)
	// The pages record their snapshots' states in next.Snaps, which
	// starts empty and, once they are written, is laid over the previous
	// states (copying those would cost more than the pages at 100k).
	s.next.ManifestSize, s.next.ManifestMTime = prev.ManifestSize, prev.ManifestMTime
	// The records to replace in the manifest: those earlier deferred
	// exports left (see Options.Defer) and those of this one. The
	// manifest is spliced while the pages are written, or left to Flush.
	recs := maps.Clone(prev.pending)
	if recs == nil {
		recs = map[uint64]splice{}
	}
	for _, c := range changed {
		if held, ok := recs[c.it.dh]; ok && held.ins { // added, and still held
			held.rec = c.rec
			recs[c.it.dh] = held
			continue
		}
		recs[c.it.dh] = splice{off: c.prev.Off, len: c.prev.Len, rec: c.rec}
	}
	for _, r := range removed {
		h := hashString(r.Dir)
		if held, ok := recs[h]; ok && held.ins {
			delete(recs, h) // added, and never written
			continue
		}
		recs[h] = splice{off: r.Off, len: r.Len}
	}
	// The records added go before every other (the manifest lists the
	// snapshots as the pages do, newest first), also before those added
	// earlier and still held.
	var seq int64
	for _, r := range recs {
		if r.ins {
			seq = min(seq, r.seq)
		}
	}
	for i, a := range added {
		recs[a.it.dh] = splice{rec: a.rec, ins: true, seq: seq - int64(len(added)-i)}
	}
	s.heldBack = s.opts.Defer && s.opts.Cache != nil
	var spliced errgroup.Group
	if len(recs) > 0 && !s.heldBack {
		spliced.Go(func() error { return s.spliceManifest(target, recs) })
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(s.opts.Workers)
	kept := len(prev.Snaps)
	for _, n := range slices.Sorted(maps.Keys(redo)) {
		kept -= len(redo[n])
		s.page(gctx, g, n, redo[n])
	}
	err = g.Wait()
	if serr := spliced.Wait(); err == nil {
		err = serr
	}
	if err != nil {
		return false, err
	}
	s.next.Snaps = overlay(prev.Snaps, s.next.Snaps)
	for _, r := range removed {
		delete(s.next.Snaps, hashString(r.Dir))
	}
	kept -= len(removed) - len(added) // (the added were counted in redo)
	s.kept.Add(int64(kept))
	s.rootKept.Add(int64(pages - len(redo)))
	switch {
	case s.heldBack:
		s.next.pending = recs
	case len(recs) > 0:
		moveOffsets(s.next.Snaps, recs)
	}
	s.p.Progress("export", int64(s.total), int64(s.total))
	return true, nil
}

// changedSnaps reads the selected rows among touched and checks that
// the passes are not needed for them (errNoDelta): each was exported
// before, is still selected, keeps its place in the list and its URL. It
// returns apart those not exported before (added, in list order) and
// those exported before and no longer selected (removed), which must
// have been on the first root page.
func (s *site) changedSnaps(ctx context.Context, q catalog.Query, touched map[string]bool) (changed, added []changedSnap, removed []snapState, err error) {
	if len(touched) == 0 {
		return nil, nil, nil, nil // (a nil Dirs would select every row)
	}
	q.Dirs = slices.Collect(maps.Keys(touched))
	selected := map[string]bool{}
	err = s.cat.Each(ctx, q, func(e catalog.Entry) error {
		selected[e.Dir] = true
		it := itemOf(e)
		it.own, it.dh = s.ownFP(&it), hashString(it.Dir)
		ps, ok := s.prev.Snaps[it.dh]
		switch {
		case !ok:
			it.archived = s.isArchived(&e, it.own, ps, false)
			it.page = 1
			added = append(added, changedSnap{it: it, rec: appendManifest(nil, recordOf(&e, it.archived))})
			return nil
		case ps.Sort != it.sort || ps.URL != hashString(it.Snapshot.URL):
			return errNoDelta
		case ps.Own == it.own:
			return nil // written again as it was
		}
		it.archived = s.isArchived(&e, it.own, ps, true)
		it.page = int(ps.Page)
		changed = append(changed, changedSnap{it: it, prev: ps, rec: appendManifest(nil, recordOf(&e, it.archived))})
		return nil
	})
	if err != nil {
		return nil, nil, nil, err
	}
	for d := range touched {
		if ps, ok := s.prev.Snaps[hashString(d)]; ok && !selected[d] {
			if ps.Page != 1 {
				return nil, nil, nil, errNoDelta // the pages after it would move
			}
			removed = append(removed, ps)
		}
	}
	return changed, added, removed, nil
}

// pageItems reads the snapshots of one root page, in list order (their
// fingerprints wait for the captures of their URLs).
func (s *site) pageItems(ctx context.Context, q catalog.Query, dirs []string) ([]item, error) {
	q.Dirs = dirs
	var items []item
	err := s.cat.Each(ctx, q, func(e catalog.Entry) error {
		it := itemOf(e)
		it.own, it.dh = s.ownFP(&it), hashString(it.Dir)
		ps, ok := s.prev.Snaps[it.dh]
		it.archived = s.isArchived(&e, it.own, ps, ok)
		items = append(items, it)
		return nil
	})
	return items, err
}

// spliceManifest writes the root manifest again: the previous one, copied
// in the kernel, with the records recs replaced.
func (s *site) spliceManifest(target string, recs map[uint64]splice) error {
	old, err := os.Open(target)
	if err != nil {
		return fmt.Errorf("read %s: %w", target, err)
	}
	defer closeLater(old)
	byOff := slices.SortedFunc(maps.Values(recs), spliceOrder)
	err = s.batch.WriteFileWith(target, 0o644, func(w io.Writer) error {
		var at int64
		for _, r := range byOff {
			if err := copyRange(w, old, at, r.off-at); err != nil {
				return err
			}
			if _, err := w.Write(r.rec); err != nil {
				return err
			}
			at = r.off + r.len
		}
		return copyRange(w, old, at, s.prev.ManifestSize-at)
	})
	if err != nil {
		return err
	}
	return s.manifestWritten(target)
}

// overlay writes the states of written pages over the previous ones
// (which it changes and returns): each keeps where its record lay in the
// manifest until moveOffsets moves it.
func overlay(prev, written map[uint64]snapState) map[uint64]snapState {
	for h, ss := range written {
		p := prev[h]
		ss.Off, ss.Len = p.Off, p.Len
		prev[h] = ss
	}
	return prev
}

// moveOffsets sets in snaps where each record lies in the manifest once
// recs are spliced into it: a replaced record has its new length, every
// record after one whose length changed moves by the difference, and
// every record by the length of those inserted, which lie in front in
// their order.
func moveOffsets(snaps map[uint64]snapState, recs map[uint64]splice) {
	shift := func(off int64) int64 {
		var d int64
		for _, r := range recs {
			if r.ins || r.off < off {
				d += int64(len(r.rec)) - r.len
			}
		}
		return d
	}
	for h, ss := range snaps {
		if r, ok := recs[h]; ok && r.ins {
			continue // (below)
		}
		if d := shift(ss.Off); d != 0 {
			ss.Off += d
			snaps[h] = ss
		}
	}
	for h, r := range recs {
		ss, ok := snaps[h]
		if !ok {
			continue
		}
		if r.ins {
			ss.Off = 0
			for _, q := range recs {
				if q.ins && q.seq < r.seq {
					ss.Off += int64(len(q.rec))
				}
			}
		}
		ss.Len = int64(len(r.rec))
		snaps[h] = ss
	}
}

// closeLater closes the previous root manifest off the export's path: once
// the new one is renamed over it, closing the last descriptor frees its
// blocks, which for a manifest of 100k snapshots (145 MB) took 165 ms, a
// quarter of a re-export under folio watch.
func closeLater(old *os.File) {
	go old.Close()
}
