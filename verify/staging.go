package verify

import (
	"os"
	"path"
	"sort"
	"strings"

	"folio/archive"
	"folio/archive/catalog"
)

// stagingFolders looks beside the entries' folders (in each distinct
// parent, once) for what an interrupted copy or write left there: a
// staging folder ".<name>.folio-tmp-…" is renamed into place only when
// the copy is complete, so its source was never deleted; a temp file is a
// write that never finished.
func stagingFolders(c *archive.Collection, entries []catalog.Entry) []Problem {
	parents := map[string]bool{}
	for _, e := range entries {
		parents[path.Dir(e.Dir)] = true
	}
	sorted := make([]string, 0, len(parents))
	for p := range parents {
		sorted = append(sorted, p)
	}
	sort.Strings(sorted)
	var out []Problem
	for _, parent := range sorted {
		list, err := os.ReadDir(c.Path(parent))
		if err != nil {
			continue // the folders' own checks report what cannot be read
		}
		for _, d := range list {
			name := d.Name()
			if !archive.IsTemp(name) {
				continue
			}
			p := Problem{Kind: Temp, Path: parent + "/" + name, Detail: "temp file of a write that never finished; nothing refers to it"}
			if d.IsDir() {
				p.Kind = Staging
				p.Detail = "staging folder of a copy that never finished; the copy's source was not deleted"
				if i := strings.Index(name, archive.TempMarker); i > 1 && name[0] == '.' {
					p.Snapshot = parent + "/" + name[1:i]
					p.Detail = "staging folder of a copy of " + name[1:i] + " that never finished; the copy's source was not deleted"
				}
			}
			out = append(out, p)
		}
	}
	return out
}
