package export

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/folio-archive/folio/archive"
)

// An export writes and deletes only in folders it made: the site folder,
// the root pages and manifest, and with --out the copies of the snapshot
// folders. A symlink among them was put there by hand and would lead the
// writes (and the removal of pages it thinks stale) somewhere else, out of
// the collection or the out folder; the export stops and names it instead
// of following it. The export root itself (the collection, or the --out
// folder the user chose) may be reached through a symlink.

// ErrSymlink marks a path an export will not write through.
var ErrSymlink = errors.New("is a symlink; an export never writes through one (remove it, or replace it with a folder, and export again)")

// generatedPaths are the paths below the export root that every export
// writes into or deletes from; outPaths those of an --out export too.
var (
	generatedPaths = []string{SiteDir, SiteDir + "/search", SiteDir + "/text", RootPage, RootPage + ".gz",
		ManifestFile, ManifestFile + ".gz", ViewPage, SiteDir + "/folio.css", SiteDir + "/folio.js"}
	outPaths = []string{HeadersFile, ".nojekyll", archive.ArchiveDir}
)

// checkSymlinks refuses an export root holding a symlink where the export
// writes, before anything is written.
func (s *site) checkSymlinks() error {
	paths := generatedPaths
	if !s.inPlace {
		paths = append(append([]string(nil), paths...), outPaths...)
	}
	for _, rel := range paths {
		if err := s.realPath(rel, false); err != nil {
			return err
		}
	}
	return nil
}

// realPath checks every component of rel (slash, below the export root)
// that exists: none may be a symlink. With mkdir the missing ones are
// made, as folders.
func (s *site) realPath(rel string, mkdir bool) error {
	p := s.dst
	for _, name := range strings.Split(rel, "/") {
		p += string(filepath.Separator) + name
		fi, err := os.Lstat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist) && mkdir:
			if err := os.Mkdir(p, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
				return fmt.Errorf("export: %w", err)
			}
		case errors.Is(err, fs.ErrNotExist):
			return nil
		case err != nil:
			return fmt.Errorf("export: %w", err)
		case fi.Mode()&fs.ModeSymlink != 0:
			return fmt.Errorf("export to %s: %s %w", s.dst, p, ErrSymlink)
		}
	}
	return nil
}

// fullDisk turns an out-of-space error into one line naming the full
// file system; other errors pass unchanged.
func fullDisk(dst string, err error) error {
	d, ok := archive.NoSpace(err, dst)
	if !ok {
		return err
	}
	return fmt.Errorf("export to %s: no space left on %s; make room and export again (it goes on where it stopped): %w",
		dst, d.FileSystem(), err)
}
