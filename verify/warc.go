package verify

import (
	"context"
	"path/filepath"
	"strings"

	"github.com/folio-archive/folio/warc"
)

// checkWARCs reads every WARC file scan found in the snapshot folder dir
// (folio's warc/, ArchiveBox's wget/warc/; a symlinked folder is not
// followed) record by record and checks each record's WARC-Block-Digest
// and WARC-Payload-Digest where present: a truncated or corrupt file, or
// a digest that differs, is a WARC problem naming the file and the
// record.
func (ch *checker) checkWARCs(ctx context.Context, dir string) {
	for _, rel := range ch.warcs {
		if ctx.Err() != nil {
			return
		}
		if _, err := warc.Read(filepath.Join(dir, filepath.FromSlash(rel)), true, nil); err != nil {
			// The problem names the file; its detail is the record.
			msg := strings.TrimPrefix(err.Error(), "read "+filepath.Join(dir, filepath.FromSlash(rel))+": ")
			ch.problem(WARC, rel, "%s", msg)
		}
	}
}
