package export

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/templates"
)

func (s *site) writeAssets() error {
	for _, name := range templates.Assets {
		if err := s.writeChanged(SiteDir+"/"+name, s.tpl.Asset(name)); err != nil {
			return err
		}
	}
	return nil
}

// writeChanged writes a generated file unless it is there as it would be
// written with a .gz sibling exactly when asked for one (writeGenerated
// alone would write the sibling again), so that a sync of the site
// copies only what changed.
func (s *site) writeChanged(rel string, data []byte) error {
	p := s.abs(rel)
	if exists(p+".gz") == s.opts.Gzip && archive.SameContent(p, data) {
		return nil
	}
	_, err := s.writeGenerated(rel, data)
	return err
}

// writeGenerated writes one generated file (atomically, so a hard link
// into the collection is replaced, never written through) with its .gz
// sibling when asked; without --gzip a stale sibling is removed. A file
// holding the same bytes already is left as it is, so a --full export of
// a site that changed little writes little (its .gz sibling is written
// again all the same: it may be older than the file).
func (s *site) writeGenerated(rel string, data []byte) (wrote bool, err error) {
	p := s.abs(rel)
	same, err := s.batch.WriteFileUnlessSame(p, data, 0o644)
	if err != nil {
		return false, err
	}
	if same {
		testEvent("same " + rel)
	} else {
		testEvent("write " + rel)
	}
	if s.opts.Gzip {
		return !same, s.writeGzip(p+".gz", data)
	}
	return !same, s.removeGzip(p)
}

// removeGzip removes a stale .gz sibling of p, unless the previous export
// to this folder ran with the same options (so without --gzip either),
// when there is none.
func (s *site) removeGzip(p string) error {
	if s.last != nil && s.last.Key == s.key {
		return nil
	}
	if err := unix.Unlink(p + ".gz"); err != nil && err != unix.ENOENT {
		return fmt.Errorf("remove %s.gz: %w", p, err)
	}
	return nil
}

// removeStalePages deletes root pages and shards past the last page.
func (s *site) removeStalePages() error {
	for _, d := range []struct{ dir, prefix, suffix string }{
		{SiteDir, "page-", ".html"}, {SiteDir + "/search", "", ".js"}, {SiteDir + "/text", "", ".js"},
	} {
		entries, err := os.ReadDir(s.abs(d.dir))
		if err != nil {
			continue
		}
		for _, e := range entries {
			name := strings.TrimSuffix(e.Name(), ".gz")
			if !strings.HasPrefix(name, d.prefix) || !strings.HasSuffix(name, d.suffix) {
				continue
			}
			k, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(name, d.prefix), d.suffix))
			if err != nil || k <= s.pages || k < 1 {
				continue
			}
			if err := os.Remove(s.abs(d.dir + "/" + e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("remove stale page %s: %w", e.Name(), err)
			}
		}
	}
	return nil
}
