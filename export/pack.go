package export

import (
	"archive/tar"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/layout"
)

// writeGzip writes the gzip sibling of a generated file.
func (s *site) writeGzip(path string, data []byte) error {
	return s.batch.WriteFileWith(path, 0o644, func(w io.Writer) error {
		zw, err := gzip.NewWriterLevel(w, gzip.BestCompression)
		if err != nil {
			return err
		}
		if _, err := zw.Write(data); err != nil {
			return err
		}
		return zw.Close()
	})
}

// bundle writes the site as one zstd-compressed tarball: for --out the
// whole export folder, in place the generated files and the exported
// snapshot folders (never the catalog, databases, config, sources or
// logs). Symlinks are stored only when they stay inside the site.
func (s *site) bundle(ctx context.Context, dest string) error {
	dest, err := filepath.Abs(dest)
	if err != nil {
		return fmt.Errorf("bundle %s: %w", dest, err)
	}
	var roots []string
	if s.inPlace {
		roots = []string{RootPage, ManifestFile, SiteDir}
		for _, ss := range s.next.Snaps {
			roots = append(roots, ss.Dir)
		}
		sort.Strings(roots)
	} else {
		roots = []string{"."}
	}
	return archive.WriteFileWith(dest, 0o644, func(w io.Writer) error {
		zw, err := zstd.NewWriter(w)
		if err != nil {
			return err
		}
		tw := tar.NewWriter(zw)
		for _, r := range roots {
			if err := s.tarTree(ctx, tw, r, dest); err != nil {
				zw.Close()
				return err
			}
		}
		if err := tw.Close(); err != nil {
			return err
		}
		return zw.Close()
	})
}

func (s *site) tarTree(ctx context.Context, tw *tar.Writer, root, dest string) error {
	start := filepath.Join(s.dst, filepath.FromSlash(root))
	return filepath.WalkDir(start, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) {
				return nil
			}
			return fmt.Errorf("bundle %s: %w", p, err)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rel, _ := filepath.Rel(s.dst, p)
		rel = filepath.ToSlash(rel)
		if rel == "." {
			return nil
		}
		name := d.Name()
		if p == dest || archive.IsTemp(name) || s.inPlace && strings.HasPrefix(name, ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return fmt.Errorf("bundle %s: %w", p, err)
		}
		var link string
		if fi.Mode()&fs.ModeSymlink != 0 {
			if _, err := layout.JoinNoSymlinks(s.dst, rel); err != nil {
				return nil // leaves the site
			}
			if link, err = os.Readlink(p); err != nil {
				return fmt.Errorf("bundle %s: %w", p, err)
			}
		} else if !fi.IsDir() && !fi.Mode().IsRegular() {
			return nil
		}
		hdr, err := tar.FileInfoHeader(fi, link)
		if err != nil {
			return fmt.Errorf("bundle %s: %w", p, err)
		}
		hdr.Name = rel
		if fi.IsDir() {
			hdr.Name += "/"
		}
		hdr.Uid, hdr.Gid, hdr.Uname, hdr.Gname = 0, 0, "", ""
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if fi.Mode().IsRegular() {
			f, err := os.Open(p)
			if err != nil {
				return fmt.Errorf("bundle %s: %w", p, err)
			}
			_, err = io.Copy(tw, f)
			f.Close()
			if err != nil {
				return fmt.Errorf("bundle %s: %w", p, err)
			}
		}
		return nil
	})
}
