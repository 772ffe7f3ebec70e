package migrate

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/folio-archive/folio/archive"
)

// recover finishes or rolls back the entries an interrupted run left
// pending. Sources it cannot settle are blocked for this run.
func (x *executor) recover(pend []jrecord) {
	x.blocked = map[string]bool{}
	for _, r := range pend {
		if err := x.recoverOne(r); err != nil {
			x.blocked[r.Src] = true
			x.unfinished.Add(1)
			x.p.Warnf("%s: %v (left as it is; run again once fixed)", r.Src, err)
			x.fail(r.Src, fmt.Errorf("finish interrupted migration: %w", err))
			continue
		}
		x.add(func(st *Stats) { st.Recovered++ })
	}
}

func (x *executor) recoverOne(r jrecord) error {
	src, dst := x.c.Path(r.Src), x.c.Path(r.Dst)
	srcOK, err := lexists(src)
	if err != nil {
		return err
	}
	dstOK, err := lexists(dst)
	if err != nil {
		return err
	}
	if dstOK {
		// An index write the crash cut short leaves its temp file.
		if err := removeIndexTemps(dst); err != nil {
			return err
		}
	}
	switch {
	case r.Mode == modeRename && !srcOK && dstOK:
		// Renamed; the index (and link) may be missing.
		if r.Index != nil {
			cur, err := readOptional(filepath.Join(dst, archive.IndexFile))
			if err != nil {
				return err
			}
			if !bytes.Equal(cur, r.Index) {
				if err := archive.WriteFile(filepath.Join(dst, archive.IndexFile), r.Index, 0o644); err != nil {
					return err
				}
			}
		}
		if err := x.makeLink(r.Link, r.LinkTo); err != nil {
			return err
		}
		x.p.Infof("    Finished interrupted migration: %s", r.Src)
		return x.j.append(jrecord{Step: stepDone, Src: r.Src}, false)
	case (r.Mode == modeIndex || r.Mode == modeCreate) && dstOK && hasIndex(dst):
		// Indexed (whether or not the journal says so); the crawl link
		// may be missing, and the next scan takes the folder for current
		// and would not make it.
		if err := x.makeLink(r.Link, r.LinkTo); err != nil {
			return err
		}
		x.p.Infof("    Finished interrupted migration: %s", r.Src)
		return x.j.append(jrecord{Step: stepDone, Src: r.Src}, false)
	case r.Step == stepDeleting || r.Step == stepDeleted:
		if !dstOK {
			return fmt.Errorf("destination %s is missing", dst)
		}
		if err := x.finishDelete(r.Src, r.Dst, r.Mode, nil); err != nil {
			return err
		}
		if err := x.makeLink(r.Link, r.LinkTo); err != nil {
			return err
		}
		x.p.Infof("    Finished interrupted migration: %s", r.Src)
		return x.j.append(jrecord{Step: stepDone, Src: r.Src}, false)
	}
	// The source is intact (nothing is deleted before "deleting"): remove
	// what the interrupted copy left half-written and let this run redo it.
	if r.Dst != "" && r.Mode != modeIndex && r.Mode != modeCreate {
		if err := removeStaging(dst); err != nil {
			return err
		}
		if r.Mode != modeRename && r.Fresh && dstOK {
			if !srcOK {
				return fmt.Errorf("source %s of an unfinished copy is missing; keeping %s", src, dst)
			}
			// The copy created dst and had not finished: undo it.
			if err := os.RemoveAll(dst); err != nil {
				return fmt.Errorf("undo unfinished copy %s: %w", dst, err)
			}
		}
	}
	return x.j.append(jrecord{Step: stepFailed, Src: r.Src, Err: "interrupted; redone by the next run"}, false)
}

// removeStaging deletes the staging folders beside dst and the temp files
// inside it that an interrupted copy left.
func removeStaging(dst string) error {
	parent, base := filepath.Dir(dst), filepath.Base(dst)
	names, err := readNames(parent)
	if err != nil {
		return err
	}
	prefix := "." + base + archive.TempMarker
	for _, n := range names {
		if strings.HasPrefix(n, prefix) {
			if err := os.RemoveAll(filepath.Join(parent, n)); err != nil {
				return fmt.Errorf("remove staging folder %s: %w", filepath.Join(parent, n), err)
			}
		}
	}
	if fi, err := os.Lstat(dst); err != nil || !fi.IsDir() {
		return nil
	}
	return filepath.WalkDir(dst, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != dst && archive.IsTemp(d.Name()) && strings.Contains(d.Name(), archive.TempMarker) {
			if err := os.RemoveAll(p); err != nil {
				return fmt.Errorf("remove temp file %s: %w", p, err)
			}
			if d.IsDir() {
				return filepath.SkipDir
			}
		}
		return nil
	})
}

// removeIndexTemps deletes the temp files of index.jsonl writes in dir.
func removeIndexTemps(dir string) error {
	names, err := readNames(dir)
	if err != nil {
		return err
	}
	for _, n := range names {
		if strings.HasPrefix(n, "."+archive.IndexFile+archive.TempMarker) {
			if err := os.Remove(filepath.Join(dir, n)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("remove temp file %s: %w", filepath.Join(dir, n), err)
			}
		}
	}
	return nil
}

func readNames(dir string) ([]string, error) {
	d, err := os.Open(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.Readdirnames(-1)
}
