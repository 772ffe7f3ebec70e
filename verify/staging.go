package verify

import (
	"path"

	"golang.org/x/sys/unix"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/internal/rawsys"
)

// SiteFolders are the folders of the collection that hold files written
// atomically, and so maybe temp files of writes a kill cut short, though
// no snapshot folder is in them: the root (its index.html and
// index.jsonl) and the export's site/.
var SiteFolders = []string{".", "site", "site/search", "site/text"}

// leftBeside looks in parent, a folder holding snapshot folders, for what
// an interrupted copy or write left there: a staging folder
// ".<name>.folio-tmp-…" is renamed into place only when the copy is
// complete, so its source was never deleted; a temp file is a write that
// never finished.
func (sc *scratch) leftBeside(c *archive.Collection, parent string) []Problem {
	fd, err := openAt(unix.AT_FDCWD, c.Path(parent), 0)
	if err != nil {
		return nil // the folders' own checks report what cannot be read
	}
	defer rawsys.Close(fd)
	entries, err := archive.ReadDirFd(fd, sc.dbuf)
	if err != nil {
		return nil
	}
	var out []Problem
	for _, e := range entries {
		name := e.Name
		if !archive.IsTemp(name) {
			continue
		}
		p := Problem{Kind: Temp, Path: path.Join(parent, name), Detail: tempDetail}
		var st unix.Stat_t
		if unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR {
			of := ""
			if archive.IsStaging(name) {
				p.Snapshot = parent + "/" + archive.StagedName(name)
				of = " of " + archive.StagedName(name)
			}
			p.Kind = Staging
			p.Detail = "staging folder of a copy" + of + " that never finished; the copy's source was not deleted"
		}
		out = append(out, p)
	}
	return out
}

// tempDetail is what a temp file is, wherever it is found.
const tempDetail = "temp file of a write that never finished; nothing refers to it"
