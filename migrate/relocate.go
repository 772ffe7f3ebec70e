package migrate

import (
	"bytes"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"syscall"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/layout"
)

// relocate moves the folder of step s to its destination: rename when
// possible, else copy, verify, index, sync, re-verify and delete. With an
// item, the destination's index.jsonl is written and the crawl symlink
// made.
func (x *executor) relocate(s *Step, copyMode string, it *Item) (err error) {
	label := s.Source
	src, dst := x.c.Path(s.Source), x.c.Path(s.Dest)
	link, linkTo := x.crawlLink(it, s.Dest)
	if err := x.realFolders(s.Dest, link); err != nil {
		return err
	}
	tree, err := walkTree(src)
	if err != nil {
		return fmt.Errorf("read %s: %w", src, err)
	}
	files, size := treeBytes(tree)
	dstExists, err := lexists(dst)
	if err != nil {
		return err
	}
	cp := &copier{fault: x.opts.Fault, label: label, dirs: &x.dirs}
	if !dstExists && !x.opts.ForceCopy {
		var ix []byte
		hadIndex := false
		if it != nil {
			existing, err := readOptional(filepath.Join(src, archive.IndexFile))
			if err != nil {
				return err
			}
			hadIndex = existing != nil
			if ix, err = buildIndex(existing, it, tree); err != nil {
				return err
			}
		}
		if err := x.mark(jrecord{Step: stepPlanned, Src: s.Source, Dst: s.Dest, Mode: modeRename, Index: ix, Link: link, LinkTo: linkTo}, mustSurvivePowerLoss(it)); err != nil {
			return x.abandon(s, err)
		}
		renamed, _, err := cp.moveTree(src, dst, tree, false)
		if err != nil {
			return x.abandon(s, err)
		}
		if renamed {
			x.moved(s, files, size, false)
			// From here on the journal owns the entry: an error leaves it
			// pending and the next run writes the index it recorded.
			if err := x.renamed(s, dst, it, ix, hadIndex, link, linkTo); err != nil {
				x.unfinished.Add(1)
				return err
			}
			if copyMode == modeCrawl {
				return tidyCrawlLinks(dst)
			}
			return nil
		}
		// Another filesystem: moveTree copied into place instead. Record
		// the copy mode and continue with verification.
		if err := x.j.append(jrecord{Step: stepPlanned, Src: s.Source, Dst: s.Dest, Mode: copyMode, Fresh: true, Link: link, LinkTo: linkTo}, true); err != nil {
			cp.undo(dst)
			return x.abandon(s, err)
		}
	} else {
		if err := x.mark(jrecord{Step: stepPlanned, Src: s.Source, Dst: s.Dest, Mode: copyMode, Fresh: !dstExists, Link: link, LinkTo: linkTo}, mustSurvivePowerLoss(it)); err != nil {
			return x.abandon(s, err)
		}
		if _, _, err := cp.moveTree(src, dst, tree, true); err != nil {
			return x.abandon(s, err)
		}
	}
	// Until the deletion starts, a failure undoes the copy: the source is
	// intact and the destination gets back what it held.
	undo := func(err error) error {
		if uerr := cp.undo(dst); uerr != nil {
			err = fmt.Errorf("%w (and undoing the copy into %s failed: %v)", err, dst, uerr)
			x.unfinished.Add(1)
			return err
		}
		return x.abandon(s, err)
	}
	if err := x.mark(jrecord{Step: stepCopied, Src: s.Source}, false); err != nil {
		return undo(err)
	}
	if err := verifyCopy(src, dst, tree, projections(copyMode)); err != nil {
		return undo(err)
	}
	verified := tree
	if err := x.mark(jrecord{Step: stepVerified, Src: s.Source}, false); err != nil {
		return undo(err)
	}
	if it != nil {
		existing, err := readOptional(filepath.Join(dst, archive.IndexFile))
		if err != nil {
			return undo(err)
		}
		ix, err := buildIndex(existing, it, tree)
		if err != nil {
			return undo(err)
		}
		if !bytes.Equal(ix, existing) {
			if err := writeIndex(dst, ix, existing != nil); err != nil {
				return undo(err)
			}
		}
		if err := x.mark(jrecord{Step: stepIndexed, Src: s.Source}, false); err != nil {
			return undo(err)
		}
	}
	if copyMode == modeCrawl {
		if err := tidyCrawlLinks(dst); err != nil {
			return undo(err)
		}
	}
	return &deletion{s: s, src: src, dst: dst, mode: copyMode, verified: verified, files: files, size: size, link: link, linkTo: linkTo, undo: undo}
}

// realFolders refuses a destination folder, and the folder of its crawl
// link, below a symlinked folder of archive/users/ (layout.RealFolders):
// readers do not follow those, so what is written there is lost to them.
// Nothing has been written when it fails.
func (x *executor) realFolders(dest, link string) error {
	if err := layout.RealFolders(x.c.Dir, dest); err != nil {
		return err
	}
	if link != "" {
		return layout.RealFolders(x.c.Dir, path.Dir(link))
	}
	return nil
}

// deletion is a copied and verified snapshot whose source waits for the
// next batch to be deleted. It is returned as an error by relocate so the
// step is completed when the batch is done.
type deletion struct {
	s            *Step
	src, dst     string
	mode         string
	verified     []treeEntry
	files, size  int64
	link, linkTo string
	undo         func(error) error // before "deleting": undo the copy, record the failure
	complete     func(error)
}

// devOf returns the device of the filesystem holding p (0 if unknown).
func devOf(p string) uint64 {
	if fi, err := os.Stat(p); err == nil {
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			return uint64(st.Dev)
		}
	}
	return 0
}

func (d *deletion) Error() string { return "deletion of " + d.src + " pending" }

// finishDeletion deletes the source of one batched deletion and finishes
// its snapshot.
func (x *executor) finishDeletion(d *deletion) error {
	if err := x.fault(stepDeleting, d.s.Source); err != nil {
		x.unfinished.Add(1)
		return err
	}
	// From here on the journal owns the source: an error leaves it at
	// "deleting" and the next run finishes the deletion after verifying
	// again what is left.
	if err := x.finishDelete(d.s.Source, d.s.Dest, d.mode, d.verified); err != nil {
		x.unfinished.Add(1)
		return err
	}
	x.moved(d.s, d.files, d.size, true)
	if err := x.makeLink(d.link, d.linkTo); err != nil {
		x.unfinished.Add(1)
		return err
	}
	if err := x.mark(jrecord{Step: stepDone, Src: d.s.Source}, false); err != nil {
		x.unfinished.Add(1)
		return err
	}
	return nil
}

// renamed finishes a snapshot whose folder was renamed into place.
func (x *executor) renamed(s *Step, dst string, it *Item, ix []byte, replacing bool, link, linkTo string) error {
	if err := x.mark(jrecord{Step: stepCopied, Src: s.Source}, false); err != nil {
		return err
	}
	if it != nil {
		if err := writeIndex(dst, ix, replacing); err != nil {
			return err
		}
		if err := x.mark(jrecord{Step: stepIndexed, Src: s.Source}, false); err != nil {
			return err
		}
	}
	if err := x.makeLink(link, linkTo); err != nil {
		return err
	}
	return x.mark(jrecord{Step: stepDone, Src: s.Source}, false)
}

// mustSurvivePowerLoss reports whether the planned record of a move must
// be on disk before the move starts. A snapshot with a database row is
// found again by its id after a power loss (a renamed or half-copied
// folder at its destination is picked up from there), so an unsynced
// record suffices; other snapshots (orphans, dashed 0.9 folders, invalid
// and crawl folders) are known after the move only through the journal.
func mustSurvivePowerLoss(it *Item) bool {
	return it == nil || it.From != "db"
}

// abandon records that a step failed with its source intact and returns
// err. A failed journal write leaves the entry pending, which the next run
// rolls back the same way.
func (x *executor) abandon(s *Step, err error) error {
	if jerr := x.j.append(jrecord{Step: stepFailed, Src: s.Source, Err: err.Error()}, false); jerr != nil {
		x.unfinished.Add(1)
	}
	return err
}

// projections returns what verification may excuse for a mode: crawl
// links replaced by their compact-named successors, in crawl folders.
func projections(mode string) func(dst, rel string) bool {
	if mode == modeCrawl {
		return replacedCrawlLink
	}
	return nil
}

// finishDelete verifies what is left of src against dst and deletes it.
// With the tree this run just verified byte for byte, the check is a
// recheck of the entries' metadata; without (finishing an earlier run's
// deletion) every remaining byte is compared again.
func (x *executor) finishDelete(srcRel, dstRel, mode string, verified []treeEntry) error {
	src, dst := x.c.Path(srcRel), x.c.Path(dstRel)
	if ok, err := lexists(src); err != nil || !ok {
		return err
	}
	var tree []treeEntry
	var err error
	if verified != nil {
		tree, err = recheck(src, dst, verified, projections(mode))
	} else {
		tree, err = verifyTreeWith(src, dst, projections(mode))
	}
	if err != nil {
		return fmt.Errorf("verify %s again before deleting it: %w", src, err)
	}
	if err := removeTree(src, tree, x.opts.Fault, srcRel); err != nil {
		return err
	}
	// The unlinks become durable with the next journal fsync (which
	// commits the filesystem's earlier metadata) or the final syncfs; until
	// then the journal's durable "deleting" lets a run after a power loss
	// finish what is left.
	return x.mark(jrecord{Step: stepDeleted, Src: srcRel}, false)
}
