package export

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/internal/rawsys"
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
	// dirs are the listings of folders below it that were read (see
	// listing), by path relative to it.
	dirs map[string][]fs.DirEntry
	// host is the snapshot URL's host, hostPort its host+port as wget
	// names a mirror's folder with --restrict-file-names=windows, set by
	// discover: a top-level folder of either name is 0.7's wget mirror.
	host, hostPort string
	// dirfd is the snapshot folder, held open (held) from its listing
	// until close while its page and row are made: the files in it are
	// looked up relative to it, one or two components where the absolute
	// path has a dozen (a dozen lookups a snapshot in an export).
	dirfd int
	held  bool
}

// at returns what rel (slash, relative to the snapshot folder, its
// components checked by the caller) is looked up by: the folder held
// open and rel, else the current directory and the absolute path.
func (f *files) at(rel string) (int, string) {
	if f.held {
		return f.dirfd, filepath.FromSlash(rel)
	}
	return unix.AT_FDCWD, filepath.Join(f.abs, filepath.FromSlash(rel))
}

// close lets go of the folder held open.
func (f *files) close() {
	if f.held {
		f.held = false
		rawsys.Close(f.dirfd)
	}
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

// readFileAt is os.ReadFile of path below the open folder dirfd (or
// unix.AT_FDCWD) with raw system calls, without the poller registration
// os.Open attempts, for a regular file only: a symlink, a fifo or a file
// of more than limit bytes (limit < 0: any size) is not read.
func readFileAt(dirfd int, path string, limit int64) ([]byte, error) {
	fd, st, err := archive.OpenRegularAt(dirfd, path, true)
	if err != nil {
		return nil, err
	}
	defer rawsys.Close(fd)
	if limit >= 0 && st.Size > limit {
		return nil, &os.PathError{Op: "read", Path: path, Err: fmt.Errorf("larger than %s", fileSize(limit))}
	}
	data, err := archive.ReadFd(fd, st.Size)
	if err != nil {
		return nil, &os.PathError{Op: "read", Path: path, Err: err}
	}
	return data, nil
}

// read reads the file rel (slash, relative to the snapshot folder) as
// readFileAt does.
func (f *files) read(rel string, limit int64) ([]byte, error) {
	if f.abs == "" {
		return nil, fs.ErrNotExist
	}
	dirfd, p := f.at(rel)
	return readFileAt(dirfd, p, limit)
}

// get resolves rel (relative to the snapshot folder) with Resolve, links
// computed from the export root; nil when it is not linkable.
func (f *files) get(rel string) *Ref {
	if r, ok := f.seen[rel]; ok {
		return r
	}
	var out *Ref
	if f.abs != "" && !f.absent(rel) {
		if r, ok := f.inFolder(rel); ok {
			out = r
		} else if r, err := resolveIn(f.abs, f.dir, rel, ""); err == nil {
			out = &r
		}
	}
	f.seen[rel] = out
	return out
}

// inFolder resolves a path inside a top-level folder ("plugin/name",
// "wget/host/index.html") that the folder's listing shows is a real
// folder, with one lstat per component below it instead of resolveIn's
// walk of them all. It is not ok, and resolveIn decides, for any other
// path and when a component is not a real folder or the file not a
// regular one (a symlink, which may stay inside the snapshot folder).
func (f *files) inFolder(rel string) (*Ref, bool) {
	top, rest, ok := strings.Cut(rel, "/")
	if !ok || strings.Contains(rel, "?") || !layout.Component(top) || !f.realDir(top) {
		return nil, false
	}
	dirfd, disk := f.at(top)
	for {
		name, more, deeper := strings.Cut(rest, "/")
		if !layout.Component(name) {
			return nil, false
		}
		disk += string(filepath.Separator) + name
		var st unix.Stat_t
		switch err := rawsys.Lstatat(dirfd, disk, &st); {
		case err == unix.ENOENT:
			return nil, true
		case err != nil:
			return nil, false
		case deeper && st.Mode&unix.S_IFMT == unix.S_IFDIR:
			rest = more
			continue
		case deeper || st.Mode&unix.S_IFMT != unix.S_IFREG:
			return nil, false
		}
		full := path.Clean(f.dir + "/" + rel)
		return &Ref{Disk: filepath.Join(f.abs, rel), Rel: full, Href: relHref("", full), Size: st.Size}, true
	}
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
// but checking the folders above it for symlinks once per export (each
// folder down to the date folder, which holds many snapshots, is looked
// at once), then the one below with an lstat; the snapshot folder itself
// is opened without following a link and listed, which checks it too,
// and held open until the caller closes the files.
func (s *site) files(dir string) *files {
	parent := path.Dir(dir)
	grand := path.Dir(parent)
	if grand == "." || !layout.Component(path.Base(dir)) || !layout.Component(path.Base(parent)) {
		return newFiles(s.src, dir)
	}
	f := &files{root: s.src, dir: dir, seen: map[string]*Ref{}}
	abs := s.checkedDir(grand)
	if abs == "" {
		return f
	}
	abs += string(filepath.Separator) + path.Base(parent)
	fi, err := os.Lstat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		f.abs = filepath.Join(s.src, filepath.FromSlash(dir))
		return f
	case err != nil || !fi.IsDir(): // a symlink, or something odd: the full check
		return newFiles(s.src, dir)
	}
	abs += string(filepath.Separator) + path.Base(dir)
	fd, entries, err := openListed(unix.AT_FDCWD, abs, abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		f.abs = filepath.Join(s.src, filepath.FromSlash(dir))
		return f
	case err != nil: // a symlink (ELOOP), not a folder, or something odd: the full check
		return newFiles(s.src, dir)
	}
	f.abs, f.entries, f.listed = abs, entries, true
	f.dirfd, f.held = fd, true
	return f
}

// checkedDir returns the absolute path of the folder rel (slash, relative
// to the collection) as layout.JoinNoSymlinks gives it, "" when that
// refuses it, remembering the answer for rel and each folder above it:
// one lstat per folder per export.
func (s *site) checkedDir(rel string) string {
	if v, ok := s.parents.Load(rel); ok {
		return v.(string)
	}
	above := s.src
	if up := path.Dir(rel); up != "." {
		above = s.checkedDir(up)
	}
	var abs string // "": a folder above is refused, and so is rel
	switch base := path.Base(rel); {
	case above == "":
	case !layout.Component(base):
		abs = s.joinChecked(rel)
	default:
		fi, err := os.Lstat(above + string(filepath.Separator) + base)
		if err == nil && fi.IsDir() || errors.Is(err, fs.ErrNotExist) {
			abs = above + string(filepath.Separator) + base
		} else { // a symlink, which may stay inside the collection
			abs = s.joinChecked(rel)
		}
	}
	v, _ := s.parents.LoadOrStore(rel, abs)
	return v.(string)
}

func (s *site) joinChecked(rel string) string {
	abs, err := layout.JoinNoSymlinks(s.src, rel)
	if err != nil {
		return ""
	}
	return abs
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
		if o[i].Ref.Size > 0 && !hiddenCards[o[i].Plugin] && !archive.Bookkeeping(o[i].Plugin) {
			return &o[i]
		}
	}
	return nil
}

// fileSize formats a size the way people read it: "354 B", "4.0 KiB",
// "1.2 MiB" (powers of 1024, as ArchiveBox counts, with the units the CLI
// prints: archive.HumanBytes, without its fmt.Sprintf).
func fileSize(n int64) string {
	if n > -1024 && n < 1024 {
		return strconv.FormatInt(n, 10) + " B"
	}
	f := float64(n)
	for _, unit := range []string{"KiB", "MiB", "GiB"} {
		f /= 1024
		if f > -1024 && f < 1024 {
			return strconv.FormatFloat(f, 'f', 1, 64) + " " + unit
		}
	}
	return strconv.FormatFloat(f/1024, 'f', 1, 64) + " TiB"
}
