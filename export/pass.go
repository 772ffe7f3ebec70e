package export

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"golang.org/x/sync/errgroup"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/archive/catalog"
)

// maxRetained bounds the snapshots pass 1 holds in memory for the pages
// it found changed; past it, pass 2 streams them again instead.
const maxRetained = 20000

// seenRec is what pass 1 learned of a snapshot for pass 2 and the state:
// where its record lies in the root manifest, and its is_archived.
type seenRec struct {
	dh       uint64 // hashString of its folder
	off      int64
	n        uint32
	archived bool
}

// seenRecs holds a seenRec per snapshot of the selection, sorted by folder
// hash once pass 1 has ended: 24 bytes a snapshot, where a map took 110.
type seenRecs []seenRec

func (l seenRecs) sort() {
	slices.SortFunc(l, func(a, b seenRec) int { return cmp.Compare(a.dh, b.dh) })
}

// get returns the seenRec of the folder with hash dh (the zero one when
// pass 1 did not see it).
func (l seenRecs) get(dh uint64) seenRec {
	i, ok := slices.BinarySearchFunc(l, dh, func(r seenRec, h uint64) int { return cmp.Compare(r.dh, h) })
	if !ok {
		return seenRec{}
	}
	return l[i]
}

// plannedPage is a root page as pass 1 found it.
type plannedPage struct {
	n      int
	pfp    uint64
	items  []item   // the page's snapshots when something on it changed
	hashes []uint64 // else the folder hashes of its snapshots, all unchanged
}

// pass1 streams the selection once: it counts it and the captures of
// each URL, writes the root index.jsonl (kept as it is when no record
// changed), and after an earlier export finds the root pages and
// snapshot pages that changed. It fingerprints them against the
// previous export's captures and page count; when the stream confirms
// both, it writes what changed and reports true, and no second pass is
// needed.
func (s *site) pass1(ctx context.Context, q catalog.Query) (bool, error) {
	testEvent("pass1")
	s.groups = map[uint64]group{}
	hint := 1024
	if last := cmp.Or(s.prev, s.last); last != nil {
		hint += int(min(last.Total, 1<<24)) // about as many as last time
	}
	s.seen = make(seenRecs, 0, hint)
	defer func() { s.seen.sort() }()
	s.captures = map[uint64][]capture{}
	var spec map[uint64]group
	specTotal, specPages, specFirst := 0, 0, 0
	if s.prev != nil {
		spec = make(map[uint64]group, len(s.prev.Snaps))
		for _, ss := range s.prev.Snaps {
			g := spec[ss.URL]
			g.n++
			g.sig += ss.Sig
			spec[ss.URL] = g
		}
		specTotal = int(s.prev.Total)
		specPages, specFirst = pageLayout(specTotal, s.opts.PageSize)
	}
	var plan []plannedPage
	retained := 0
	target := s.abs(ManifestFile)
	// The previous manifest, when it is the one the state describes: the
	// records of unchanged snapshots are copied from it, not encoded.
	var old *os.File
	if s.prev != nil && s.prev.ManifestSize > 0 {
		if fi, err := os.Stat(target); err == nil && fi.Mode().IsRegular() && fi.Size() == s.prev.ManifestSize && fi.ModTime().UnixNano() == s.prev.ManifestMTime {
			if old, err = os.Open(target); err != nil {
				old = nil
			} else {
				defer closeLater(old)
			}
		}
	}
	stream := func(w io.Writer) error {
		buf := make([]byte, 0, 1<<20)
		var written, copyOff, copyLen int64 // copy: a pending range of the old manifest
		encoded, copies := false, 0
		flushCopy := func() error {
			if copyLen == 0 {
				return nil
			}
			if len(buf) > 0 {
				if _, err := w.Write(buf); err != nil {
					return err
				}
				written += int64(len(buf))
				buf = buf[:0]
			}
			if err := copyRange(w, old, copyOff, copyLen); err != nil {
				return err
			}
			copies++
			written += copyLen
			copyLen = 0
			return nil
		}
		batch := make([]item, 0, s.opts.PageSize)
		flush := func() {
			if spec == nil {
				batch = batch[:0]
				return
			}
			n := len(plan) + 1
			pp := plannedPage{n: n, pfp: pageFP(n, specPages, s.shownTotal(n, specTotal), batch)}
			dirty := n > len(s.prev.Pages) || s.prev.Pages[n-1] != pp.pfp ||
				!s.pageWritten(n)
			// The state is written only after the pages it claims are
			// durable, so a snapshot page is not looked for on disk here
			// (100k lookups); one deleted by hand comes back with --full
			// or when its page changes.
			for i := 0; i < len(batch) && !dirty; i++ {
				old, ok := s.prev.Snaps[batch[i].dh]
				dirty = !ok || old.FP != batch[i].fp
			}
			if !dirty {
				pp.hashes = make([]uint64, len(batch))
				for i := range batch {
					pp.hashes[i] = batch[i].dh
				}
				batch = batch[:0]
			} else {
				pp.items = batch
				retained += len(batch)
				batch = make([]item, 0, s.opts.PageSize)
			}
			plan = append(plan, pp)
			if retained > maxRetained {
				spec, plan = nil, nil // too much changed: pass 2 streams it again
			}
		}
		err := s.eachAhead(ctx, q, func(e *catalog.Entry) error {
			it := itemOf(*e)
			it.own = s.ownFP(&it)
			dh := hashString(it.Dir)
			prev, hasPrev := snapState{}, false
			if s.prev != nil {
				prev, hasPrev = s.prev.Snaps[dh]
			}
			h := hashString(e.Snapshot.URL)
			g := s.groups[h]
			g.n++
			g.sig += memberSig(&it)
			s.groups[h] = g
			s.total++
			it.archived = s.isArchived(e, it.own, prev, hasPrev)
			start := written + int64(len(buf)) + copyLen
			if old != nil && hasPrev && prev.Own == it.own && prev.Archived == it.archived &&
				prev.Len > 0 && prev.Off+prev.Len <= s.prev.ManifestSize && !s.prev.held(dh) {
				// The same record as last time: copied from the old manifest
				// (unless a deferred export left it there in its old form).
				if copyLen == 0 || copyOff+copyLen != prev.Off {
					if err := flushCopy(); err != nil {
						return err
					}
					copyOff = prev.Off
				}
				copyLen += prev.Len
			} else {
				if err := flushCopy(); err != nil {
					return err
				}
				encoded = true
				buf = appendManifest(buf, recordOf(e, it.archived))
				if len(buf) > 1<<20-8192 {
					if _, err := w.Write(buf); err != nil {
						return err
					}
					written += int64(len(buf))
					buf = buf[:0]
				}
			}
			s.seen = append(s.seen, seenRec{dh: dh, archived: it.archived, off: start, n: uint32(written + int64(len(buf)) + copyLen - start)})
			if spec != nil {
				it.dh = dh
				it.fp = s.fingerprint(spec, &it)
				s.addCapture(e, spec)
				batch = append(batch, it)
				if len(batch) == pageRows(len(plan)+1, max(specFirst, 1), s.opts.PageSize) {
					flush()
				}
			}
			return ctx.Err()
		})
		if err == nil && spec != nil && (len(batch) > 0 || len(plan) == 0) {
			flush()
		}
		if err != nil {
			return err
		}
		if old != nil && !encoded && copies == 0 && copyOff == 0 && copyLen == s.prev.ManifestSize {
			return errUnchanged // every record copied from where it was: the same file
		}
		if err := flushCopy(); err != nil {
			return err
		}
		_, err = w.Write(buf)
		return err
	}
	merr := s.batch.WriteFileWith(target, 0o644, stream)
	switch {
	case errors.Is(merr, errUnchanged):
		s.noteManifest(target)
	case merr != nil:
		return false, merr
	default:
		if err := s.manifestWritten(target); err != nil {
			return false, err
		}
	}
	s.pages, s.first = pageLayout(s.total, s.opts.PageSize)
	s.next.Total = uint64(s.total)
	if spec == nil || s.total != specTotal || !sameGroups(spec, s.groups) {
		return false, nil
	}

	// The previous export's captures and page count were right: write
	// the pages that changed.
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(s.opts.Workers)
	for _, pp := range plan {
		if pp.items == nil {
			s.next.Pages = append(s.next.Pages, pp.pfp)
			for _, h := range pp.hashes {
				s.setSnap(h, s.prev.Snaps[h])
			}
			s.kept.Add(int64(len(pp.hashes)))
			s.rootKept.Add(1)
			continue
		}
		s.page(gctx, g, pp.n, pp.items)
	}
	if err := g.Wait(); err != nil {
		return false, err
	}
	s.p.Progress("export", int64(s.total), int64(s.total))
	return true, s.writeDeferred(ctx)
}

// isArchived is the manifest's is_archived of e: true in the archived
// and partial states, false in the failed one (ArchiveBox would say true
// for any sealed snapshot; folio does not call a capture that kept
// nothing archived); otherwise with outputs, or with one of
// archivedMarkers in its folder, which is looked for only when its index
// changed since the previous export (prev).
func (s *site) isArchived(e *catalog.Entry, own uint64, prev snapState, hasPrev bool) bool {
	switch {
	case e.State == archive.StateArchived || e.State == archive.StatePartial:
		return true
	case e.State == archive.StateFailed:
		return false
	case e.NumOutputs > 0:
		return true
	case hasPrev && prev.Own == own:
		return prev.Archived
	}
	return s.hasMarker(e)
}

func recordOf(e *catalog.Entry, archived bool) *manifestRecord {
	return &manifestRecord{Dir: e.Dir, Snapshot: e.Snapshot, Modified: e.IndexMTime,
		NumOutputs: e.NumOutputs, NumFailures: e.NumFailures, IsArchived: archived}
}

// copyRange copies n bytes of the file old from offset off to w; into
// the temp file of an atomic write that copy happens in the kernel.
func copyRange(w io.Writer, old *os.File, off, n int64) error {
	if n == 0 {
		return nil
	}
	if _, err := old.Seek(off, io.SeekStart); err != nil {
		return err
	}
	got, err := io.Copy(w, io.LimitReader(old, n))
	if err == nil && got != n {
		err = fmt.Errorf("%s changed while it was read", old.Name())
	}
	if err == nil {
		testEvent("copy manifest records")
	}
	return err
}

// manifestWritten follows a new root manifest: its .gz sibling with
// --gzip (a stale one removed without), and its size and mtime for the
// state.
func (s *site) manifestWritten(target string) error {
	testEvent("write " + ManifestFile)
	if s.opts.Gzip {
		data, err := os.ReadFile(target)
		if err != nil {
			return fmt.Errorf("read %s: %w", target, err)
		}
		if err := s.writeGzip(target+".gz", data); err != nil {
			return err
		}
	} else if err := s.removeGzip(target); err != nil {
		return err
	}
	s.noteManifest(target)
	return nil
}

// noteManifest records the root manifest's size and mtime in the state.
func (s *site) noteManifest(target string) {
	if fi, err := os.Stat(target); err == nil {
		s.next.ManifestSize, s.next.ManifestMTime = fi.Size(), fi.ModTime().UnixNano()
	}
}

// sameGroups reports whether two exports saw the same captures of every
// URL, as far as pages show them: the same count for each URL and, for
// URLs captured more than once, the same captures.
func sameGroups(a, b map[uint64]group) bool {
	if len(a) != len(b) {
		return false
	}
	for h, g := range a {
		o, ok := b[h]
		if !ok || o.n != g.n || g.n > 1 && o.sig != g.sig {
			return false
		}
	}
	return true
}

// aheadBatch is how many catalog rows eachAhead hands over at a time.
const aheadBatch = 256

// eachAhead calls fn for each entry of the selection, in order, as
// cat.Each does, but with the catalog's rows read a batch ahead in a
// goroutine of their own: a pass that works on every row (pass 1 encodes
// the root manifest) then takes about the time of the slower of the two,
// not their sum, on a machine with a core to spare.
func (s *site) eachAhead(ctx context.Context, q catalog.Query, fn func(*catalog.Entry) error) error {
	g, gctx := errgroup.WithContext(ctx)
	batches := make(chan []catalog.Entry, 2)
	g.Go(func() error {
		defer close(batches)
		batch := make([]catalog.Entry, 0, aheadBatch)
		send := func() error {
			select {
			case batches <- batch:
				batch = make([]catalog.Entry, 0, aheadBatch)
				return nil
			case <-gctx.Done():
				return gctx.Err()
			}
		}
		err := s.cat.Each(gctx, q, func(e catalog.Entry) error {
			if batch = append(batch, e); len(batch) == aheadBatch {
				return send()
			}
			return nil
		})
		if err == nil && len(batch) > 0 {
			err = send()
		}
		return err
	})
	g.Go(func() error {
		for batch := range batches {
			for i := range batch {
				if err := fn(&batch[i]); err != nil {
					return err
				}
			}
		}
		return nil
	})
	return g.Wait()
}
