package export

import (
	"io/fs"
	"net/url"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/folio-archive/folio/archive"
)

// How a snapshot's outputs are found, as ArchiveBox's discover_outputs
// finds them (the plugins spec §6): the records first, then the folders
// hashes/hashes.json lists, then a scan of the snapshot folder for what
// neither names.

// legacyRoots are the files ArchiveBox 0.7 wrote at the top of a snapshot
// folder, by the plugin that wrote them (the plugins spec §2.4): a
// migrated folder's archive.org.txt is the archivedotorg output (which
// gets no card), its output.html the dom's.
var legacyRoots = map[string]string{
	"archive.org.txt": "archivedotorg", "screenshot.png": "screenshot", "output.pdf": "pdf",
	"output.html": "dom", "singlefile.html": "singlefile", "headers.json": "headers",
	"htmltotext.txt": "htmltotext",
}

const (
	// hashesLimit is the largest hashes.json read for candidates: a
	// manifest of a very large mirror is passed over, and the scan finds
	// its folder's output instead.
	hashesLimit = 32 << 20
	// folderCandidates is how many files of one folder are looked at to
	// choose the file standing for it, as ArchiveBox's fallback does.
	folderCandidates = 500
)

// scan finds outputs on disk that neither the records nor hashes.json
// account for (a migrated legacy folder, a plugin folder written without a
// record, a file put there by hand): one per top-level folder (its best
// file) and one per embeddable top-level file, named by its stem. seen
// holds the plugins and the top-level names already accounted for.
func (f *files) scan(seen map[string]bool) []output {
	if f.abs == "" {
		return nil
	}
	var out []output
	for _, e := range f.list() {
		name := e.Name()
		if !mayHold(name) {
			continue
		}
		if e.IsDir() {
			plugin := f.dirPlugin(name)
			if seen[name] || seen[plugin] {
				continue
			}
			if ref := f.bestInDir(name); ref != nil {
				out = append(out, output{Plugin: plugin, Ref: *ref})
				seen[name], seen[plugin] = true, true
			}
			continue
		}
		plugin, legacy := legacyRoots[name]
		if !legacy {
			plugin = strings.TrimSuffix(name, path.Ext(name))
		}
		if !e.Type().IsRegular() || !embeddable[ext(name)] || seen[plugin] || seen[name] {
			continue
		}
		if ref := f.get(name); ref != nil {
			out = append(out, output{Plugin: plugin, Ref: *ref})
			seen[plugin] = true
		}
	}
	return out
}

// mayHold reports whether the top-level entry name may be an output: not
// an index, the page, favicon, warc/ or hashes/ (shown apart), a dot or a
// temp name.
func mayHold(name string) bool {
	return !skippedRoots[name] && !strings.HasPrefix(name, ".") && !archive.IsTemp(name)
}

// top returns the top-level entry of the snapshot folder that o lies in
// (a plugin's folder, a legacy mirror's example.com, a root file).
func (f *files) top(o output) string {
	top, _, _ := strings.Cut(strings.TrimPrefix(o.Ref.Rel, f.dir+"/"), "/")
	return top
}

// dirPlugin names the plugin of the top-level folder name: the folder
// named for the snapshot's host is wget's mirror as ArchiveBox 0.7 laid it
// out (the plugins spec §2.4); any other folder is named for itself.
func (f *files) dirPlugin(name string) string {
	if f.host != "" && (strings.EqualFold(name, f.host) || strings.EqualFold(name, f.hostPort)) {
		return "wget"
	}
	return name
}

// bestInDir picks the file standing for a folder: a preferred name, else
// the largest file of the first extension group, looking at most 500
// files deep.
func (f *files) bestInDir(dir string) *Ref {
	return f.best(f.walk(dir, folderCandidates))
}

// walk lists the regular files below the folder dir (relative to the
// snapshot folder), at most limit of them, five levels deep, in name
// order. Symlinks and dot entries are left out: a listed file is a real
// file inside the snapshot folder.
func (f *files) walk(dir string, limit int) []string {
	var names []string
	var walk func(rel string, depth int)
	walk = func(rel string, depth int) {
		if depth > 4 || len(names) >= limit {
			return
		}
		entries, err := f.listing(rel)
		if err != nil {
			return
		}
		for _, e := range entries {
			if len(names) >= limit || strings.HasPrefix(e.Name(), ".") {
				continue
			}
			p := rel + "/" + e.Name()
			if e.IsDir() {
				walk(p, depth+1)
			} else if e.Type().IsRegular() && !ignoredFile(p) {
				names = append(names, p)
			}
		}
	}
	walk(dir, 0)
	sort.Strings(names)
	return names
}

// listing returns the entries of the folder rel (slash, relative to the
// snapshot folder, its components checked by the caller), read once: a
// mirror's folder is looked into for its WARC files and listed again for
// its card's tree.
func (f *files) listing(rel string) ([]fs.DirEntry, error) {
	if entries, ok := f.dirs[rel]; ok {
		return entries, nil
	}
	dirfd, p := f.at(rel)
	entries, err := readDirAt(dirfd, p, filepath.Join(f.abs, filepath.FromSlash(rel)))
	if err != nil {
		return nil, err
	}
	if f.dirs == nil {
		f.dirs = map[string][]fs.DirEntry{}
	}
	f.dirs[rel] = entries
	return entries, nil
}

// best picks among candidate files (relative to the snapshot folder) the
// one standing for them: a preferred name, else the largest file of the
// first extension group. Each candidate is looked up on disk.
func (f *files) best(names []string) *Ref {
	for _, want := range preferredNames {
		for _, n := range names {
			if path.Base(n) == want {
				if ref := f.get(n); ref != nil && ref.Size > 0 {
					return ref
				}
			}
		}
	}
	for _, group := range extGroups {
		var best *Ref
		for _, n := range names {
			if contains(group, ext(n)) {
				if ref := f.get(n); ref != nil && (best == nil || ref.Size > best.Size) {
					best = ref
				}
			}
		}
		if best != nil {
			return best
		}
	}
	return nil
}

// hashed finds outputs from hashes/hashes.json, as ArchiveBox's
// discover_outputs does after the records, for the top-level folders in
// want: the files it lists are grouped by folder, and each folder gets
// the best of its first folderCandidates files. The manifest is an index
// of candidates, never proof: each file is looked up on disk, and a file
// added after it was written is found by scan instead.
func (f *files) hashed(want map[string]bool) []output {
	if f.absent(archive.HashesFile) {
		return nil
	}
	data, err := f.read(archive.HashesFile, hashesLimit)
	if err != nil {
		return nil
	}
	m, err := archive.ParseHashes(data)
	if err != nil {
		return nil
	}
	var order []string
	byDir := map[string][]string{}
	for _, p := range m.Order {
		top, rest, ok := strings.Cut(p, "/")
		if !ok || rest == "" || !want[top] || len(byDir[top]) == folderCandidates || ignoredFile(p) {
			continue
		}
		if _, ok := byDir[top]; !ok {
			order = append(order, top)
		}
		byDir[top] = append(byDir[top], p)
	}
	var out []output
	for _, top := range order {
		if ref := f.best(byDir[top]); ref != nil {
			out = append(out, output{Plugin: f.dirPlugin(top), Ref: *ref})
		}
	}
	return out
}

// unaccounted returns the top-level folders of the snapshot folder that
// no name in seen accounts for and that may hold an output: the folders
// hashes.json is read for.
func (f *files) unaccounted(seen map[string]bool) map[string]bool {
	var out map[string]bool
	for _, e := range f.list() {
		name := e.Name()
		if !e.IsDir() || !mayHold(name) || seen[name] || seen[f.dirPlugin(name)] {
			continue
		}
		if out == nil {
			out = map[string]bool{}
		}
		out[name] = true
	}
	return out
}

// discover lists the outputs of a snapshot as ArchiveBox's
// discover_outputs does: one per plugin from the records (the largest when
// a plugin has several succeeded results), in record order; then the
// folders hashes.json lists that no record accounts for; then what a scan
// of the folder finds beyond those. So an output written without a record
// still gets its card. A plugin whose runs all ended without output
// (failed, noresults, skipped) has said what it made: its folder's
// leftovers get no card. A plugin with a succeeded run whose record names
// no file (0.7's media/, git/, readability/) gets its folder's best file,
// and its icon. rawURL is the snapshot's URL.
func (f *files) discover(rawURL string, results []archive.Result) []output {
	if u, err := url.Parse(rawURL); err == nil {
		f.host, f.hostPort = u.Hostname(), strings.ReplaceAll(u.Host, ":", "+")
	}
	var out []output
	at := map[string]int{}
	succeeded := map[string]bool{}
	ended := map[string]bool{} // without output
	for i := range results {
		r := &results[i]
		if r.Plugin == "" {
			continue
		}
		switch archive.NormalizeStatus(r.Status) {
		case archive.StatusSucceeded:
			succeeded[r.Plugin] = true
		case archive.StatusFailed, archive.StatusSkipped, "noresults":
			ended[r.Plugin] = true
			continue
		default: // queued or started: a run cut short may have left its output
			continue
		}
		ref := f.resultFile(r)
		if ref == nil {
			continue
		}
		if j, ok := at[r.Plugin]; ok {
			if ref.Size > out[j].Ref.Size {
				out[j].Ref = *ref
			}
			continue
		}
		at[r.Plugin] = len(out)
		out = append(out, output{Plugin: r.Plugin, Ref: *ref})
	}
	seen := map[string]bool{}
	for p := range ended {
		seen[p] = !succeeded[p]
	}
	for _, o := range out {
		// A legacy result's file may lie outside a folder of its plugin's
		// name (wget's example.com/…, a root screenshot.png).
		seen[o.Plugin], seen[f.top(o)] = true, true
	}
	if f.abs == "" {
		return out
	}
	if want := f.unaccounted(seen); want != nil {
		for _, o := range f.hashed(want) {
			if seen[o.Plugin] {
				continue // (a 0.7 mirror and a wget/ folder: the first is kept)
			}
			out = append(out, o)
			seen[o.Plugin], seen[f.top(o)] = true, true
		}
	}
	out = append(out, f.scan(seen)...)
	for i := range out { // also those found for a record that names no file
		out[i].Recorded = succeeded[out[i].Plugin]
	}
	return out
}
