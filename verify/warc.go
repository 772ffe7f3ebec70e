package verify

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/warc"
)

// checkWARCs reads every WARC file of the snapshot folder dir (folio's
// warc/, ArchiveBox's wget/warc/) record by record and checks each
// record's WARC-Block-Digest and WARC-Payload-Digest where present: a
// truncated or corrupt file, or a digest that differs, is a WARC problem
// naming the file and the record.
func (ch *checker) checkWARCs(ctx context.Context, dir string) {
	for _, d := range warc.Dirs {
		list, err := os.ReadDir(filepath.Join(dir, filepath.FromSlash(d)))
		if err != nil {
			continue // none here (a symlinked folder is not followed)
		}
		for _, de := range list {
			if ctx.Err() != nil {
				return
			}
			name := de.Name()
			if !de.Type().IsRegular() || !warc.IsWARC(name) || archive.IsTemp(name) {
				continue
			}
			rel := d + "/" + name
			if _, err := warc.Read(filepath.Join(dir, filepath.FromSlash(rel)), true, nil); err != nil {
				// The problem names the file; its detail is the record.
				msg := strings.TrimPrefix(err.Error(), "read "+filepath.Join(dir, filepath.FromSlash(rel))+": ")
				ch.problem(WARC, rel, "%s", msg)
			}
		}
	}
}
