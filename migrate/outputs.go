package migrate

import (
	"path"
	"slices"
	"strings"

	"github.com/folio-archive/folio/archive"
)

// runnerFiles are the files a capture runner leaves in a plugin folder
// that are not outputs; ArchiveBox leaves them out of output_files.
var runnerFiles = map[string]bool{
	"stdout.log": true, "stderr.log": true, "process.pid": true, "hook.pid": true, "listener.pid": true,
}

// hydrateOutputs returns rs with output_files, output_size and
// output_mimetypes filled from the files of each result's plugin folder in
// tree, for the results that list no files, as ArchiveBox does after it
// moves a snapshot (formats spec §3.6 step 7): the regular files below
// <plugin>/, keyed by their path in it, without the runner's logs and pid
// files and without unfinished temp files. The title plugin is left as it
// is, and so are legacy outputs at the snapshot root, which belong to no
// plugin folder. rs itself is not modified.
func hydrateOutputs(rs []archive.Result, tree []treeEntry) []archive.Result {
	out := slices.Clone(rs)
	for i := range out {
		r := &out[i]
		if len(r.OutputFiles) > 0 || r.Plugin == "" || r.Plugin == "title" || strings.ContainsAny(r.Plugin, "/\\") {
			continue
		}
		prefix := r.Plugin + "/"
		var files []archive.OutputFile
		var size int64
		for j := range tree {
			e := &tree[j]
			name := path.Base(e.rel)
			if !e.isRegular() || !strings.HasPrefix(e.rel, prefix) || runnerFiles[name] || archive.IsTemp(name) {
				continue
			}
			files = append(files, archive.NewOutputFile(strings.TrimPrefix(e.rel, prefix), e.size))
			size += e.size
		}
		if len(files) == 0 {
			continue
		}
		slices.SortFunc(files, func(a, b archive.OutputFile) int { return strings.Compare(a.Path, b.Path) })
		r.OutputFiles = files
		if r.OutputSize == 0 {
			r.OutputSize = size
		}
		if r.OutputMimetypes == "" {
			r.OutputMimetypes = archive.MimetypesBySize(files)
		}
	}
	return out
}
