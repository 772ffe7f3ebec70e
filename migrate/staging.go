package migrate

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/folio-archive/folio/archive"
)

// A copy across filesystems builds the folder in a staging folder beside
// its destination, ".<name>.folio-tmp-…", and renames it into place only
// when it is complete; the source is deleted only after that. So a staging
// folder is never the only copy of its files. Its journal record says so
// and recovery removes it, but the record of a move the database can redo
// is not made durable (mustSurvivePowerLoss), and a power loss can take
// it: then the staging folder is known only by its name.

// stagingTarget is the folder a staging folder at rel was to become.
func stagingTarget(rel string) string {
	return path.Join(path.Dir(rel), archive.StagedName(path.Base(rel)))
}

// settleStaging deals with each staging folder the scan found that
// recovery did not remove. Every entry of it must be held by the folder it
// was to become or by the plan's source of that folder: a regular file
// with the same bytes (or a prefix of them, a copy cut short), a symlink
// with the same target, a folder. Then it is removed, entry by entry.
// Otherwise it is kept as it is and the run is partial, so no byte is
// lost to a guess. It is never moved into place, even when neither folder
// is there: its source may be a folder this run does not take (--resume,
// a skipped or unreadable folder), and a copy cut short would then stand
// in the way of the real one.
func (x *executor) settleStaging(stages []string, plan *Plan) {
	if len(stages) == 0 {
		return
	}
	// Only a move to a folder that does not exist yet copies through a
	// staging folder (a merge copies into the folder itself).
	sourceOf := map[string]string{}
	for i := range plan.Steps {
		s := &plan.Steps[i]
		switch s.Action {
		case ActionMove, ActionInvalid, ActionCrawl:
			if _, ok := sourceOf[s.Dest]; !ok && s.Source != "" {
				sourceOf[s.Dest] = s.Source
			}
		}
	}
	for _, rel := range stages {
		if ok, err := lexists(x.c.Path(rel)); err != nil || !ok {
			continue // recovery removed it
		}
		target := stagingTarget(rel)
		err := x.settleOne(rel, target, sourceOf[target])
		if err != nil {
			x.unfinished.Add(1)
			x.p.Warnf("%s: %v; kept as it is", rel, err)
			x.fail(rel, fmt.Errorf("staging folder of an interrupted copy: %w", err))
			continue
		}
		x.add(func(st *Stats) { st.Recovered++ })
	}
}

func (x *executor) settleOne(rel, target, source string) error {
	abs := x.c.Path(rel)
	tree, err := walkTree(abs)
	if err != nil {
		return fmt.Errorf("read: %w", err)
	}
	var origins []string
	for _, o := range []string{target, source} {
		if o == "" {
			continue
		}
		if fi, err := os.Lstat(x.c.Path(o)); err == nil && fi.IsDir() {
			origins = append(origins, x.c.Path(o))
		} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	if len(origins) == 0 {
		return fmt.Errorf("neither %s nor a source this run moves there exists to hold its files; if it is the only copy left, move it there by hand", target)
	}
	for i := range tree {
		e := &tree[i]
		if e.rel == "" || e.isDir() {
			continue
		}
		held, err := heldBy(e, abs, origins)
		if err != nil {
			return err
		}
		if !held {
			return fmt.Errorf("its %s is not in %s", e.rel, strings.Join(relAll(x.c, origins), " or "))
		}
	}
	if err := removeTree(abs, tree, nil, rel); err != nil {
		return err
	}
	x.p.Infof("    Removed the staging folder of an interrupted copy: %s (every file of it is in %s)", rel, relAll(x.c, origins)[0])
	return nil
}

// heldBy reports whether some origin holds entry e of the staging folder
// at stage: the same symlink, or a regular file whose bytes begin with
// all of e's.
func heldBy(e *treeEntry, stage string, origins []string) (bool, error) {
	for _, o := range origins {
		p := under(o, e.rel)
		switch {
		case e.isLink():
			if t, err := os.Readlink(p); err == nil && t == e.target {
				return true, nil
			}
		case e.isRegular():
			ok, err := isPrefixOf(under(stage, e.rel), p)
			if err != nil || ok {
				return ok, err
			}
		}
	}
	return false, nil
}

// isPrefixOf reports whether the regular file a is as long as or shorter
// than the regular file b and all its bytes begin b.
func isPrefixOf(a, b string) (bool, error) {
	fb, stb, ok, err := openRegular(b)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	case err != nil:
		return false, err
	case !ok:
		return false, nil
	}
	defer unix.Close(fb)
	fa, sta, ok, err := openRegular(a)
	if err != nil {
		return false, err
	}
	defer unix.Close(fa)
	if !ok {
		return false, nil
	}
	if sta.Size > stb.Size || sta.Dev == stb.Dev && sta.Ino == stb.Ino {
		return false, nil // (the same file, reached through a symlinked folder, holds nothing twice)
	}
	return sameBytes(fa, fb, sta.Size, a, b)
}

func relAll(c *archive.Collection, abs []string) []string {
	out := make([]string, len(abs))
	for i, a := range abs {
		out[i] = strings.TrimPrefix(strings.TrimPrefix(a, c.Dir), "/")
	}
	return out
}
