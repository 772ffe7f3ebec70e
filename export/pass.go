package export

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"golang.org/x/sync/errgroup"

	"folio/archive/catalog"
)

// maxRetained bounds the snapshots pass 1 holds in memory for the pages
// it found changed; past it, pass 2 streams them again instead.
const maxRetained = 20000

// lineRef is where a snapshot's record lies in the root manifest.
type lineRef struct{ off, n int64 }

// seenRec is what pass 1 learned of a snapshot for pass 2 and the state.
type seenRec struct {
	archived bool
	line     lineRef
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
	s.groups = map[uint64]group{}
	s.seen = map[uint64]seenRec{}
	s.captures = map[uint64][]capture{}
	var spec map[uint64]group
	specTotal, specPages := 0, 0
	if s.prev != nil {
		spec = make(map[uint64]group, len(s.prev.Snaps))
		for _, ss := range s.prev.Snaps {
			g := spec[ss.URL]
			g.n++
			g.sig += ss.Sig
			spec[ss.URL] = g
		}
		specTotal = int(s.prev.Total)
		specPages = max(1, (specTotal+s.opts.PageSize-1)/s.opts.PageSize)
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
				defer old.Close()
			}
		}
	}
	stream := func(w io.Writer) error {
		mfp := newHasher()
		buf := make([]byte, 0, 1<<20)
		var written, copyOff, copyLen int64 // copy: a pending range of the old manifest
		var copyBuf []byte
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
			if copyBuf == nil {
				copyBuf = make([]byte, 1<<20)
			}
			n, err := io.CopyBuffer(w, io.NewSectionReader(old, copyOff, copyLen), copyBuf)
			if err == nil && n != copyLen {
				err = fmt.Errorf("%s changed while it was read", target)
			}
			if err != nil {
				return err
			}
			testEvent("copy manifest records")
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
			pp := plannedPage{n: n, pfp: pageFP(n, specPages, specTotal, batch)}
			dirty := n > len(s.prev.Pages) || s.prev.Pages[n-1] != pp.pfp ||
				!exists(s.abs(pagePath(n))) || !exists(s.abs(shardPath(n)))
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
		err := s.cat.Each(ctx, q, func(e catalog.Entry) error {
			it := itemOf(e)
			it.own = ownFP(&it)
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
			rec := manifestRecord{Dir: e.Dir, Snapshot: e.Snapshot, Modified: e.IndexMTime,
				NumOutputs: e.NumOutputs, NumFailures: e.NumFailures}
			rec.IsArchived = e.Snapshot.Status == "sealed" || e.NumOutputs > 0
			if !rec.IsArchived {
				if hasPrev && prev.Own == it.own {
					rec.IsArchived = prev.Archived
				} else {
					rec.IsArchived = s.hasMarker(&e)
				}
			}
			it.archived = rec.IsArchived
			archived := uint64(0)
			if it.archived {
				archived = 1
			}
			mfp.str(it.Dir).u64(it.own).u64(uint64(it.NumOutputs)).u64(uint64(it.NumFailures)).u64(archived)
			start := written + int64(len(buf)) + copyLen
			if old != nil && hasPrev && prev.Own == it.own && prev.Archived == it.archived &&
				prev.Len > 0 && prev.Off+prev.Len <= s.prev.ManifestSize {
				// The same record as last time: copied from the old manifest.
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
				buf = appendManifest(buf, &rec)
				if len(buf) > 1<<20-8192 {
					if _, err := w.Write(buf); err != nil {
						return err
					}
					written += int64(len(buf))
					buf = buf[:0]
				}
			}
			s.seen[dh] = seenRec{archived: it.archived, line: lineRef{start, written + int64(len(buf)) + copyLen - start}}
			if spec != nil {
				it.dh = dh
				it.fp = s.fingerprint(spec, &it)
				s.addCapture(&e, spec)
				batch = append(batch, it)
				if len(batch) == s.opts.PageSize {
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
		fp := mfp.u64(uint64(s.total)).sum()
		s.next.Manifest = fp
		if s.prev != nil && s.prev.Manifest == fp && exists(target) {
			return errUnchanged
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
	case merr != nil:
		return false, merr
	case s.opts.Gzip:
		testEvent("write " + ManifestFile)
		data, err := os.ReadFile(target)
		if err != nil {
			return false, fmt.Errorf("read %s: %w", target, err)
		}
		if err := s.writeGzip(target+".gz", data); err != nil {
			return false, err
		}
	default:
		testEvent("write " + ManifestFile)
		if err := os.Remove(target + ".gz"); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return false, fmt.Errorf("remove %s.gz: %w", target, err)
		}
	}
	if fi, err := os.Stat(target); err == nil {
		s.next.ManifestSize, s.next.ManifestMTime = fi.Size(), fi.ModTime().UnixNano()
	}
	s.pages = max(1, (s.total+s.opts.PageSize-1)/s.opts.PageSize)
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
