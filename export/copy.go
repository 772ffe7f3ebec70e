package export

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/layout"
)

// copySnapshot mirrors a snapshot folder into the --out export: every file
// hard-linked where the file system allows, copied otherwise. The folder's
// own index.html is skipped (the export writes a fresh one), temp files of
// unfinished writes are skipped, and a symlink is followed only when it
// stays inside the snapshot folder, as for links (its target is copied as a
// plain file or folder). Files the copy holds from an earlier export that the folder no
// longer has are removed. It returns the files and bytes of the copy.
func (s *site) copySnapshot(dir string) (files, bytes int64, err error) {
	src, err := layout.JoinNoSymlinks(s.src, dir)
	if err != nil {
		return 0, 0, fmt.Errorf("export %s: %w", dir, err)
	}
	dst := s.abs(dir)
	if err := s.realPath(dir, true); err != nil { // (a symlink there would take the copy elsewhere)
		return 0, 0, err
	}
	keep := map[string]bool{RootPage: true, RootPage + ".gz": true}
	visited := map[string]bool{}
	var walk func(srcDir, rel string) error
	walk = func(srcDir, rel string) error {
		real, err := filepath.EvalSymlinks(srcDir)
		if err != nil {
			return nil
		}
		if visited[real] {
			return nil // a symlink loop inside the collection
		}
		visited[real] = true
		defer delete(visited, real)
		entries, err := os.ReadDir(srcDir)
		if err != nil {
			return fmt.Errorf("export %s: %w", srcDir, err)
		}
		for _, e := range entries {
			name := e.Name()
			r := name
			if rel != "" {
				r = rel + "/" + name
			}
			if archive.IsTemp(name) || rel == "" && (name == RootPage || name == RootPage+".gz") {
				continue
			}
			sp := filepath.Join(srcDir, name)
			fi, err := os.Lstat(sp)
			if err != nil {
				return fmt.Errorf("export %s: %w", sp, err)
			}
			if fi.Mode()&fs.ModeSymlink != 0 {
				target, err := layout.JoinNoSymlinks(src, r)
				if err != nil {
					continue // leaves the snapshot folder: never followed
				}
				if fi, err = os.Stat(target); err != nil {
					continue
				}
				sp = target
			}
			dp := filepath.Join(dst, filepath.FromSlash(r))
			switch {
			case fi.IsDir():
				if err := s.realPath(dir+"/"+r, true); err != nil {
					return err
				}
				keep[r] = true
				if err := walk(sp, r); err != nil {
					return err
				}
			case fi.Mode().IsRegular():
				if err := s.linkOrCopy(sp, dp, fi); err != nil {
					return err
				}
				keep[r] = true
				files++
				bytes += fi.Size()
			}
		}
		return nil
	}
	if err := walk(src, ""); err != nil {
		return 0, 0, err
	}
	// Drop what an earlier export copied and the folder no longer holds.
	var extra []string
	filepath.WalkDir(dst, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dst {
			return nil
		}
		r, _ := filepath.Rel(dst, p)
		r = filepath.ToSlash(r)
		if !keep[r] {
			extra = append(extra, p)
			if d.IsDir() {
				return filepath.SkipDir
			}
		}
		return nil
	})
	for _, p := range extra {
		if err := os.RemoveAll(p); err != nil {
			return 0, 0, fmt.Errorf("export: remove %s: %w", p, err)
		}
	}
	return files + 1, bytes, nil // + the page written next
}

// linkOrCopy makes dst the same file as src: nothing to do when it already
// is, else a hard link, else an atomic copy.
func (s *site) linkOrCopy(src, dst string, fi os.FileInfo) error {
	if di, err := os.Lstat(dst); err == nil {
		if os.SameFile(fi, di) {
			return nil
		}
		if di.Mode().IsRegular() && di.Size() == fi.Size() && !di.ModTime().Before(fi.ModTime()) && !isLinkedCopy(di) {
			return nil // an earlier copy, not older than the source
		}
		if err := os.RemoveAll(dst); err != nil {
			return fmt.Errorf("export: replace %s: %w", dst, err)
		}
	}
	if err := os.Link(src, dst); err == nil {
		s.linked.Add(1)
		return nil
	}
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("export: copy %s: %w", src, err)
	}
	defer in.Close()
	if err := s.batch.WriteFileWith(dst, fi.Mode().Perm()|0o200, func(w io.Writer) error {
		_, err := io.Copy(w, in)
		return err
	}); err != nil {
		return err
	}
	s.copied.Add(1)
	return nil
}

// isLinkedCopy reports a destination that is a hard link to some other
// file: it may be a stale link to an older version of the source.
func isLinkedCopy(fi os.FileInfo) bool { return linkCount(fi) > 1 }

// removeUnselected deletes the copies of snapshots an earlier export to
// the same folder held and this one does not.
func (s *site) removeUnselected() (int, error) {
	if s.last == nil {
		return 0, nil
	}
	n := 0
	for h, old := range s.last.Snaps {
		if _, ok := s.next.Snaps[h]; ok || !strings.HasPrefix(old.Dir, archive.ArchiveDir+"/") {
			continue
		}
		p, err := layout.Join(s.dst, old.Dir)
		if err != nil {
			continue
		}
		if err := s.realPath(old.Dir, false); err != nil {
			return n, err
		}
		if err := os.RemoveAll(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return n, fmt.Errorf("export: remove %s: %w", p, err)
		}
		n++
	}
	return n, nil
}

// writeHeaders writes _headers for hosts that read one (Netlify,
// Cloudflare Pages): no MIME sniffing, no referrers, and a CSP sandbox for
// everything under archive/.
func (s *site) writeHeaders() error {
	sb := "sandbox"
	if s.sandbox != "" {
		sb += " " + s.sandbox
	}
	content := "/*\n  X-Content-Type-Options: nosniff\n  Referrer-Policy: no-referrer\n" +
		"/archive/*\n  Content-Security-Policy: " + sb + "\n"
	if old, err := os.ReadFile(s.abs(HeadersFile)); err == nil && string(old) == content {
		return nil
	}
	if err := s.batch.WriteFile(s.abs(HeadersFile), []byte(content), 0o644); err != nil {
		return err
	}
	return s.batch.WriteFile(s.abs(".nojekyll"), nil, 0o644)
}

// siteSize totals the files of the --out export: the snapshot copies as
// recorded, plus the generated files at the top.
func (s *site) siteSize() (files, bytes int64) {
	for _, ss := range s.next.Snaps {
		files += ss.Files
		bytes += ss.Bytes
	}
	filepath.WalkDir(s.dst, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && p == filepath.Join(s.dst, archive.ArchiveDir) {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				files++
				bytes += fi.Size()
			}
		}
		return nil
	})
	return files, bytes
}
