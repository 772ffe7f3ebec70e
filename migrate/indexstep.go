package migrate

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/layout"
)

// indexOnly writes the index.jsonl of a snapshot whose folder is (or is to
// be created) at its destination. It reports whether anything changed.
func (x *executor) indexOnly(s *Step) (bool, error) {
	it := s.Item
	dst := x.c.Path(s.Dest)
	link, linkTo := x.crawlLink(it, s.Dest)
	if err := x.realFolders(s.Dest, link); err != nil {
		return false, err
	}
	existing, err := readOptional(filepath.Join(dst, archive.IndexFile))
	if err != nil {
		return false, err
	}
	var tree []treeEntry
	if s.Action == ActionIndex {
		if tree, err = walkTree(dst); err != nil {
			return false, fmt.Errorf("read %s: %w", dst, err)
		}
	}
	ix, err := buildIndex(existing, it, tree)
	if err != nil {
		return false, err
	}
	linkOK := link == "" || x.linkPresent(link, linkTo)
	if existing != nil && bytes.Equal(ix, existing) && linkOK {
		return false, nil
	}
	label := s.Dest
	mode := modeIndex
	if s.Action == ActionCreate {
		mode = modeCreate
	}
	if err := x.mark(jrecord{Step: stepPlanned, Src: label, Dst: s.Dest, Mode: mode, Link: link, LinkTo: linkTo}, false); err != nil {
		return false, x.abandon(&Step{Source: label}, err)
	}
	if err := x.dirs.mkdirAll(dst); err != nil {
		return false, x.abandon(&Step{Source: label}, fmt.Errorf("create %s: %w", dst, err))
	}
	if !bytes.Equal(ix, existing) {
		if err := writeIndex(dst, ix, existing != nil); err != nil {
			return false, x.abandon(&Step{Source: label}, err)
		}
	}
	if err := x.mark(jrecord{Step: stepIndexed, Src: label}, false); err != nil {
		return false, x.abandon(&Step{Source: label}, err)
	}
	if err := x.makeLink(link, linkTo); err != nil {
		return false, x.abandon(&Step{Source: label}, err)
	}
	return true, x.mark(jrecord{Step: stepDone, Src: label}, false)
}

// syncAll makes everything this run wrote durable: one syncfs per
// filesystem (the data dir's, and those the copies went to).
func (x *executor) syncAll() error {
	dirs := []string{x.c.Dir, x.c.Path(archive.UsersDir), x.c.Path(archive.InvalidDir)}
	seen := map[uint64]bool{}
	for _, d := range dirs {
		fi, err := os.Stat(d)
		if err != nil {
			continue
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			if seen[uint64(st.Dev)] {
				continue
			}
			seen[uint64(st.Dev)] = true
		}
		if err := syncFS(d); err != nil {
			return err
		}
	}
	return nil
}

// writeIndex writes dir/index.jsonl. Replacing an existing file (the only
// copy of its foreign lines and unknown keys) goes through
// archive.WriteFile and its fsyncs; a new file, which the journal or the
// source folder can give again, through writeIndexFast.
func writeIndex(dir string, data []byte, replacing bool) error {
	if replacing {
		return archive.WriteFile(filepath.Join(dir, archive.IndexFile), data, 0o644)
	}
	return writeIndexFast(dir, data)
}

// writeIndexFast writes dir/index.jsonl atomically through an
// archive.Batch — a temp file renamed over it — without archive.WriteFile's
// two fsyncs, which would make a migration of 10k snapshots spend most of
// its time waiting for the disk. Durability comes in batches instead: the
// journal holds what a crash could lose (a rename's index bytes; for copies
// the source is deleted only after a syncfs), and the journal is cleared
// only after the run's final syncfs (syncAll).
func writeIndexFast(dir string, data []byte) error {
	return archive.NewBatch(dir).WriteFile(filepath.Join(dir, archive.IndexFile), data, 0o644)
}

// hasIndex reports whether the folder dir holds an index.jsonl.
func hasIndex(dir string) bool {
	_, err := os.Lstat(filepath.Join(dir, archive.IndexFile))
	return err == nil
}

// readOptional reads a file that may be absent (nil, nil).
func readOptional(p string) ([]byte, error) {
	data, err := archive.ReadRegular(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", p, err)
	}
	return data, nil
}

// buildIndex returns the index.jsonl of a migrated snapshot: the existing
// file (if any) with the Snapshot record merged (unknown keys survive),
// the item's foreign lines kept verbatim, and its results added (a result
// already present, by id or by plugin, hook and start time, is not
// repeated), and the dashed ids of its results made compact, as the
// folder's name is (see archive.Index.CompactResultIDs). The payload's
// size is used as archive_size when the item has none.
func buildIndex(existing []byte, it *Item, tree []treeEntry) ([]byte, error) {
	ix, _ := archive.ParseIndex(existing)
	size := payloadBytes(tree)
	snap := it.Snapshot
	snap.FSVersion = layout.Current
	if snap.Status == "" {
		snap.Status = "sealed"
	}
	if snap.ArchiveSize == 0 && size > 0 {
		if old, ok := ix.Snapshot(); ok && old.ArchiveSize != 0 {
			snap.ArchiveSize = old.ArchiveSize
		} else {
			snap.ArchiveSize = size
		}
	}
	ix.SetSnapshot(snap)
	if cr := it.Crawl; cr != nil && cr.Known && cr.ID == snap.CrawlID && layout.IsCompactID(cr.ID) {
		ix.SetCrawl(cr.record())
	}
	have := map[string]bool{}
	for _, l := range ix.Foreign() {
		have[string(l)] = true
	}
	for _, l := range it.Foreign {
		if len(bytes.TrimSpace(l)) == 0 || have[string(l)] {
			continue
		}
		have[string(l)] = true
		ix.Append(l)
	}
	// Ids are made compact before the item's results are matched against
	// the file's, so a result the database names compactly and the file
	// names dashed is one result, not two with one id.
	ix.CompactResultIDs(snap.ID)
	old := ix.Results()
	for _, r := range hydrateOutputs(it.Results, tree) {
		if id, ok := layout.Undash(r.ID); ok {
			r.ID = id
		}
		if id, ok := layout.Undash(r.SnapshotID); ok && id == snap.ID { // as CompactResultIDs does
			r.SnapshotID = id
		}
		if r.SnapshotID == "" {
			r.SnapshotID = snap.ID
		}
		if dupResult(old, r) {
			continue
		}
		ix.AddResult(r)
	}
	return ix.Bytes(), nil
}

// dupResult reports whether r is already among rs under another id (or
// none): same plugin, hook, start time and output.
func dupResult(rs []archive.Result, r archive.Result) bool {
	for i := range rs {
		o := &rs[i]
		if r.ID != "" && o.ID == r.ID {
			return false // AddResult merges it in place
		}
	}
	for i := range rs {
		o := &rs[i]
		if o.Plugin == r.Plugin && o.HookName == r.HookName && o.StartTS.Equal(r.StartTS) && o.OutputStr == r.OutputStr {
			return true
		}
	}
	return false
}
