package export

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/layout"
)

// Display rules of ArchiveBox's static export (formats spec §5.3-§5.5 and
// the plugins spec §6): which file stands for a result, which outputs get
// a card, which one is previewed.

// previewPriority is the order in which outputs are preferred for the
// detail page's preview frame.
var previewPriority = []string{"singlefile", "screenshot", "wget", "dom", "pdf", "readability"}

// hiddenCards are plugins whose outputs get no card on the detail page.
var hiddenCards = map[string]bool{"archivedotorg": true, "favicon": true, "title": true}

// mediaPlugins are the yt-dlp family whose files are listed as media.
var mediaPlugins = map[string]bool{"ytdlp": true, "yt-dlp": true, "youtube-dl": true, "media": true}

// iconNames name the shape (a class ic-NAME of folio.css) of each plugin in
// the root list's Files column; a plugin that is not listed gets the
// folder, plugins mapped to "" get no icon.
var iconNames = map[string]string{
	"singlefile": "page", "wget": "globe", "dom": "code", "pdf": "pdf", "screenshot": "image",
	"media": "film", "ytdlp": "film", "git": "branch", "archivedotorg": "bank", "readability": "article",
	"mercury": "article", "warc": "box", "headers": "list", "htmltotext": "text", "favicon": "", "title": "",
	"hashes": "", "chrome": "",
}

// preferredNames are the file names chosen first when a result names no
// file itself.
var preferredNames = []string{"index.html", "index.htm", "output.html", "content.html", "article.html",
	"snapshot.mhtml", "snapshot.mht", "output.pdf", "index.pdf", "content.txt", "output.txt",
	"index.txt", "index.md", "index.json", "article.json"}

// extGroups are tried in order; the largest file of the first group with
// a file is chosen.
var extGroups = [][]string{
	{"html", "htm", "pdf", "mhtml", "mht"},
	{"png", "jpg", "jpeg", "gif", "webp", "svg", "ico"},
	{"json", "jsonl", "txt", "md", "csv", "tsv"},
	{"mp4", "webm", "mp3", "opus", "ogg", "wav", "m4a", "mkv", "mov"},
}

var (
	videoExts    = setOf("mp4 webm mkv mov avi m4v flv wmv mpg mpeg 3gp 3g2 ogv")
	audioExts    = setOf("mp3 m4a aac ogg oga opus wav flac wma alac aiff dts")
	playVideo    = setOf("mp4 webm m4v ogv")
	playAudio    = setOf("mp3 m4a aac ogg oga opus wav flac")
	imageExts    = setOf("png jpg jpeg gif webp svg ico bmp avif")
	htmlExts     = setOf("html htm xhtml")
	compactExts  = setOf("json jsonl txt csv tsv xml yml yaml md log")
	embeddable   = setOf("html htm pdf txt md json jsonl csv tsv png jpg jpeg gif webp svg ico mp4 webm mp3 opus ogg wav")
	skippedRoots = setOf("index.html index.json index.jsonl favicon.ico warc hashes")
)

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

func setOf(s string) map[string]bool {
	m := map[string]bool{}
	for _, f := range strings.Fields(s) {
		m[f] = true
	}
	return m
}

func ext(p string) string { return strings.ToLower(strings.TrimPrefix(path.Ext(p), ".")) }

// ignoredFile reports runner artifacts that never stand for a result.
func ignoredFile(name string) bool {
	base := path.Base(name)
	switch base {
	case "stdout.log", "stderr.log", "hook.pid", "listener.pid", "process.pid", "cmd.sh":
		return true
	}
	switch ext(base) {
	case "log", "pid", "sh":
		return true
	}
	return archive.IsTemp(base)
}

// output is one linkable file of a snapshot.
type output struct {
	Plugin string
	Ref    Ref
	// Recorded: a succeeded result stands for it (not only the folder's
	// contents), which is what earns it an icon in the root list.
	Recorded bool
}

func (o output) compact() bool { return compactExts[ext(o.Ref.Rel)] }

// files resolves the paths of one snapshot, remembering what it found so
// a page and a row never stat the same file twice.
type files struct {
	root, dir string // collection root; snapshot folder relative to it
	abs       string // the snapshot folder's absolute path; "" when unsafe
	seen      map[string]*Ref
	// entries is the listing of the folder, read once when a path is
	// first looked up: a path whose first component is not listed does
	// not exist, which answers most lookups (records name many files of
	// plugins that never ran or whose output is gone) without a stat.
	entries []fs.DirEntry
	listed  bool // entries is read (nil: the folder could not be listed)
	// host is the snapshot URL's host (and host:port), set by discover:
	// a top-level folder of that name is an older version's wget mirror.
	host, hostPort string
}

func newFiles(root, dir string) *files {
	f := &files{root: root, dir: dir, seen: map[string]*Ref{}}
	if abs, err := layout.JoinNoSymlinks(root, dir); err == nil {
		f.abs = abs
	}
	return f
}

// list reads the folder's entries once.
func (f *files) list() []fs.DirEntry {
	if !f.listed {
		f.listed = true
		if f.abs != "" {
			f.entries, _ = readDir(f.abs)
		}
	}
	return f.entries
}

// readDir lists a folder, never through a symlink, without the network
// poller registration os.Open attempts for every file.
func readDir(path string) ([]fs.DirEntry, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	d := os.NewFile(uintptr(fd), path)
	defer d.Close()
	return d.ReadDir(-1)
}

// readFile is os.ReadFile with raw system calls, without the poller
// registration os.Open attempts, for a regular file only: a symlink, a
// fifo or a file of more than limit bytes (limit < 0: any size) is not
// read.
func readFile(path string, limit int64) ([]byte, error) {
	fd, st, err := archive.OpenRegular(path, true)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	if limit >= 0 && st.Size > limit {
		return nil, &os.PathError{Op: "read", Path: path, Err: fmt.Errorf("larger than %s", fileSize(limit))}
	}
	data, err := archive.ReadFd(fd, st.Size)
	if err != nil {
		return nil, &os.PathError{Op: "read", Path: path, Err: err}
	}
	return data, nil
}

// get resolves rel (relative to the snapshot folder) with Resolve, links
// computed from the export root; nil when it is not linkable.
func (f *files) get(rel string) *Ref {
	if r, ok := f.seen[rel]; ok {
		return r
	}
	var out *Ref
	if f.abs != "" && !f.absent(rel) {
		if r, err := resolveIn(f.abs, f.dir, rel, ""); err == nil {
			out = &r
		}
	}
	f.seen[rel] = out
	return out
}

// absent reports whether the folder's listing shows that rel does not
// exist: its first component is not there, nor any name that a
// case-insensitive filesystem could take for it.
func (f *files) absent(rel string) bool {
	top, _, _ := strings.Cut(strings.TrimPrefix(rel, "./"), "/")
	if top == "" || top == "." || top == ".." || strings.Contains(rel, "?") {
		return false // ("?": resolveIn may link the part before it)
	}
	entries := f.list()
	if entries == nil {
		return false
	}
	for _, e := range entries {
		if strings.EqualFold(e.Name(), top) {
			return false
		}
	}
	return true
}

// files returns the files of the snapshot folder dir, as newFiles does,
// but checking the folder two levels up (a date folder, which holds many
// snapshots) for symlinks once per export, then the two below it with an
// lstat each.
func (s *site) files(dir string) *files {
	parent := path.Dir(dir)
	grand := path.Dir(parent)
	if grand == "." || !layout.Component(path.Base(dir)) || !layout.Component(path.Base(parent)) {
		return newFiles(s.src, dir)
	}
	v, ok := s.parents.Load(grand)
	if !ok {
		abs, err := layout.JoinNoSymlinks(s.src, grand)
		if err != nil {
			abs = ""
		}
		v, _ = s.parents.LoadOrStore(grand, abs)
	}
	f := &files{root: s.src, dir: dir, seen: map[string]*Ref{}}
	if v.(string) == "" {
		return f
	}
	abs := v.(string)
	for _, name := range []string{path.Base(parent), path.Base(dir)} {
		abs += string(filepath.Separator) + name
		fi, err := os.Lstat(abs)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			f.abs = filepath.Join(s.src, filepath.FromSlash(dir))
			return f
		case err != nil || !fi.IsDir(): // a symlink, or something odd: the full check
			return newFiles(s.src, dir)
		}
	}
	f.abs = abs
	return f
}

// resultFile returns the file that stands for r: the path its output_str
// names, else the best of its output_files (ArchiveResult.embed_path).
func (f *files) resultFile(r *archive.Result) *Ref {
	s := strings.TrimSpace(r.OutputStr)
	if s != "" && !strings.HasPrefix(s, "/") && (path.Ext(s) != "" || strings.HasPrefix(s, r.Plugin+"/")) {
		cands := []string{s}
		if !strings.HasPrefix(s, r.Plugin+"/") {
			cands = []string{r.Plugin + "/" + s, s}
		}
		for _, c := range cands {
			if ref := f.get(c); ref != nil {
				return ref
			}
		}
	}
	if len(r.OutputFiles) == 0 {
		return nil
	}
	rel := func(p string) string {
		if strings.HasPrefix(p, r.Plugin+"/") {
			return p
		}
		return r.Plugin + "/" + p
	}
	var list []archive.OutputFile
	for _, of := range r.OutputFiles {
		if of.Path != "" && !ignoredFile(of.Path) {
			list = append(list, of)
		}
	}
	for _, name := range preferredNames {
		for _, of := range list {
			if path.Base(of.Path) == name {
				if ref := f.get(rel(of.Path)); ref != nil {
					return ref
				}
			}
		}
	}
	for _, group := range extGroups {
		var best *Ref
		for _, of := range list {
			if !contains(group, ext(of.Path)) {
				continue
			}
			if ref := f.get(rel(of.Path)); ref != nil && (best == nil || ref.Size > best.Size) {
				best = ref
			}
		}
		if best != nil {
			return best
		}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

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
		if skippedRoots[name] || strings.HasPrefix(name, ".") || archive.IsTemp(name) {
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
		entries, err := readDir(filepath.Join(f.abs, filepath.FromSlash(rel)))
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
	data, err := readFile(filepath.Join(f.abs, filepath.FromSlash(archive.HashesFile)), hashesLimit)
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
		if !e.IsDir() || seen[name] || seen[f.dirPlugin(name)] || skippedRoots[name] || strings.HasPrefix(name, ".") || archive.IsTemp(name) {
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
// still gets its card. A plugin with a record of any status has said what
// it made: the folder of a failed or empty run gets no card from the
// scan, as the records give it none. rawURL is the snapshot's URL.
func (f *files) discover(rawURL string, results []archive.Result) []output {
	if u, err := url.Parse(rawURL); err == nil {
		f.host, f.hostPort = u.Hostname(), u.Host
	}
	var out []output
	at := map[string]int{}
	seen := map[string]bool{}
	for i := range results {
		r := &results[i]
		if r.Plugin == "" {
			continue
		}
		seen[r.Plugin] = true
		if archive.NormalizeStatus(r.Status) != archive.StatusSucceeded {
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
		out = append(out, output{Plugin: r.Plugin, Ref: *ref, Recorded: true})
	}
	for _, o := range out {
		// A legacy result's file may lie outside a folder of its plugin's
		// name (wget's example.com/…, a root screenshot.png).
		top, _, _ := strings.Cut(strings.TrimPrefix(o.Ref.Rel, f.dir+"/"), "/")
		seen[top] = true
	}
	if f.abs == "" {
		return out
	}
	if want := f.unaccounted(seen); want != nil {
		for _, o := range f.hashed(want) {
			out = append(out, o)
			top, _, _ := strings.Cut(strings.TrimPrefix(o.Ref.Rel, f.dir+"/"), "/")
			seen[o.Plugin], seen[top] = true, true
		}
	}
	return append(out, f.scan(seen)...)
}

// ordered sorts outputs for cards and the preview: by preview priority,
// then in discovery order, with text and metadata files last.
func ordered(outs []output) []output {
	rank := func(p string) int {
		for i, q := range previewPriority {
			if p == q {
				return i
			}
		}
		return len(previewPriority)
	}
	o := append([]output(nil), outs...)
	sort.SliceStable(o, func(a, b int) bool {
		ca, cb := o[a].compact(), o[b].compact()
		if ca != cb {
			return !ca
		}
		return rank(o[a].Plugin) < rank(o[b].Plugin)
	})
	return o
}

// preview picks the output for the preview frame.
func preview(outs []output) *output {
	for _, p := range previewPriority {
		for i := range outs {
			if outs[i].Plugin == p && outs[i].Ref.Size > 0 {
				return &outs[i]
			}
		}
	}
	o := ordered(outs)
	for i := range o {
		if o[i].Ref.Size > 0 && !hiddenCards[o[i].Plugin] {
			return &o[i]
		}
	}
	return nil
}

// fileSize formats a size the way people read it: "354 B", "4.0 KB",
// "1.2 MB" (powers of 1024, as ArchiveBox counts).
func fileSize(n int64) string {
	if n > -1024 && n < 1024 {
		return strconv.FormatInt(n, 10) + " B"
	}
	f := float64(n)
	for _, unit := range []string{"KB", "MB", "GB"} {
		f /= 1024
		if f > -1024 && f < 1024 {
			return strconv.FormatFloat(f, 'f', 1, 64) + " " + unit
		}
	}
	return strconv.FormatFloat(f/1024, 'f', 1, 64) + " TB"
}
