package export

import (
	"bytes"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"github.com/folio-archive/folio/internal/rawsys"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/warc"
)

// What a detail page shows beyond a card's thumbnail, by plugin (the
// plugins spec §2.1 and §6): the start of the text an extractor wrote, the
// file tree of a mirror, the media of the yt-dlp family, and the WARC and
// WACZ files offered for download.

// textFiles are the plugins whose card shows the start of their text, and
// the file in their folder that holds it.
var textFiles = map[string]string{"readability": "content.txt", "mercury": "content.txt", "defuddle": "content.txt",
	"trafilatura": "content.txt", "htmltotext": "htmltotext.txt"}

// treePlugins are the plugins whose card lists the files of their folder.
var treePlugins = map[string]bool{"wget": true}

// downloadDirs are where WARC and WACZ files are: warc/ of the legacy
// layout, wget's warc/, ArchiveWeb.page's folder.
var downloadDirs = []string{"warc", "wget/warc", "archivewebpage"}

const (
	excerptBytes = 2048 // read of a text output for its card
	excerptRunes = 400  // shown of it
	treeFiles    = 40   // files of a mirror listed on its card
	treeLimit    = 500  // files of a mirror looked at
)

// cardText returns the start of o's text for its card, whitespace folded:
// the plugin's text file when it is an extractor, else o itself when it is
// a text file; "" for any other output.
func (f *files) cardText(o output) string {
	ref := &o.Ref
	if name, ok := textFiles[o.Plugin]; ok {
		if r := f.get(o.Plugin + "/" + name); r != nil {
			ref = r
		}
	}
	if e := ext(ref.Rel); e != "txt" && e != "md" {
		return ""
	}
	dirfd, p := unix.AT_FDCWD, ref.Disk
	if rel, ok := strings.CutPrefix(p, f.abs+string(filepath.Separator)); ok && f.held {
		dirfd, p = f.dirfd, rel
	}
	data, err := readHead(dirfd, p, excerptBytes, ref.Size)
	if err != nil {
		return ""
	}
	if len(data) == excerptBytes {
		data = cutPartialRune(data)
	}
	text := strings.Join(strings.Fields(strings.ToValidUTF8(string(data), "\uFFFD")), " ")
	return archive.Shorten(text, excerptRunes)
}

// cutPartialRune drops the bytes of a UTF-8 character that a read cut
// short at the end of data (at most three); the rest is left as it is,
// valid or not.
func cutPartialRune(data []byte) []byte {
	for k := 1; k < utf8.UTFMax && k <= len(data); k++ {
		if utf8.RuneStart(data[len(data)-k]) {
			if !utf8.FullRune(data[len(data)-k:]) {
				return data[:len(data)-k]
			}
			break
		}
	}
	return data
}

// readHead reads at most n bytes from the start of the regular file p
// (below the open folder dirfd) of size bytes (its stat's), never through
// a symlink.
func readHead(dirfd int, p string, n int, size int64) ([]byte, error) {
	fd, err := rawsys.Openat(dirfd, p, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK)
	if err != nil {
		return nil, err
	}
	defer rawsys.Close(fd)
	if size >= 0 && size < int64(n) {
		n = int(size) + 1 // one more: a file grown since its stat is read on
	}
	buf := make([]byte, n)
	got := 0
	for got < n {
		k, err := rawsys.Read(fd, buf[got:])
		if err != nil {
			return nil, err
		}
		if k == 0 {
			break
		}
		got += k
		if got < n && int64(got) >= size {
			break // a short read of a regular file at its size: the end (see archive.ReadFd)
		}
	}
	return bytes.Clone(buf[:got]), nil
}

// cardTree lists the files of a mirror's folder for its card, linked from
// a page in the folder page: the folder o's file is in (wget/, or a legacy
// mirror's example.com/), its warc/ left to the downloads, cut after
// treeFiles files.
func (f *files) cardTree(o output, page string) (list []fileView, more string) {
	if !treePlugins[o.Plugin] {
		return nil, ""
	}
	top := f.top(o)
	names := f.walk(top, treeLimit)
	n := 0
	for _, rel := range names {
		inner := strings.TrimPrefix(rel, top+"/")
		if strings.HasPrefix(inner, "warc/") {
			continue
		}
		n++
		if len(list) == treeFiles {
			continue
		}
		dir := path.Dir(inner)
		if dir == "." {
			dir = ""
		} else {
			dir += "/"
		}
		list = append(list, fileView{Dir: dir, Name: path.Base(inner), Href: openHref(page, f.dir, Ref{Rel: f.dir + "/" + rel})})
	}
	switch {
	case len(names) == treeLimit:
		more = "and more files"
	case n > len(list):
		more = "and " + strconv.Itoa(n-len(list)) + " more files"
	}
	return list, more
}

// downloads lists the snapshot's WARC and WACZ files, a WARC's with its
// record count from counts.
func (f *files) downloads(page string, counts *warcCounts) []fileView {
	if f.abs == "" {
		return nil
	}
	var out []fileView
	for _, d := range downloadDirs {
		if !f.listsDir(d) {
			continue // (walk opens the last part of d without following a link)
		}
		for _, rel := range f.walk(d, 100) {
			name := path.Base(rel)
			if !strings.Contains(name, ".warc") && !strings.HasSuffix(name, ".wacz") {
				continue
			}
			if ref := f.get(rel); ref != nil {
				out = append(out, fileView{Name: rel, Href: ref.From(page), Size: fileSize(ref.Size), Records: warcRecords(counts, f.dir+"/"+rel, ref)})
			}
		}
	}
	return out
}

// withoutDownloads drops from outs (of the snapshot folder dir) the
// files listed under Downloads: a WARC or WACZ, the warc plugin's output
// among them, is offered there with its record count and a download link,
// never previewed in a frame or given a second card.
func withoutDownloads(outs []output, dir string, downloads []fileView) []output {
	if len(downloads) == 0 {
		return outs
	}
	listed := make(map[string]bool, len(downloads))
	for _, d := range downloads {
		listed[dir+"/"+d.Name] = true
	}
	kept := make([]output, 0, len(outs))
	for _, o := range outs {
		if !listed[o.Ref.Rel] {
			kept = append(kept, o)
		}
	}
	return kept
}

// warcRecords says how many records the WARC file ref (rel in the
// collection) holds, for its line on the page; "" for a file that is not
// a WARC. A file is counted (read whole) once, when a page showing it is
// first written; counts keeps the number for later exports.
func warcRecords(counts *warcCounts, rel string, ref *Ref) string {
	if !warc.IsWARC(ref.Rel) {
		return ""
	}
	n := counts.count(rel, ref)
	switch {
	case n < 0:
		return "unreadable: run 'folio verify'"
	case n == 1:
		return "1 record"
	}
	return strconv.Itoa(n) + " records"
}

// realDir reports whether the snapshot folder lists name as a folder (not
// a symlink to one).
func (f *files) realDir(name string) bool {
	for _, e := range f.list() {
		if e.Name() == name {
			return e.IsDir()
		}
	}
	return false
}

// listsDir reports whether the folder rel (slash, relative to the
// snapshot folder) is listed as a folder by the one above it, each folder
// above it a real one too: a plugin's subfolder that is not there is not
// opened to learn so.
func (f *files) listsDir(rel string) bool {
	parent, name := path.Split(rel)
	if parent == "" {
		return f.realDir(name)
	}
	parent = strings.TrimSuffix(parent, "/")
	if !f.listsDir(parent) {
		return false
	}
	entries, err := f.listing(parent)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if e.Name() == name {
			return e.IsDir()
		}
	}
	return false
}

// mediaItem is one file of a media result.
type mediaItem struct {
	Ref              Ref
	Name             string
	Video, Audio     bool
	Playable         bool
	playVideoOrAudio int
}

// media lists the files of yt-dlp-family results that exist, playable
// video first, then playable audio, then the rest, each by size
// (largest first) and name. When no result lists one, the media files of
// the family's folders are listed.
func (f *files) media(results []archive.Result) []mediaItem {
	var out []mediaItem
	seen := map[string]bool{}
	add := func(rel string) {
		e := ext(rel)
		if seen[rel] || ignoredFile(rel) || !(videoExts[e] || audioExts[e]) {
			return
		}
		ref := f.get(rel)
		if ref == nil {
			return
		}
		seen[rel] = true
		m := mediaItem{Ref: *ref, Name: path.Base(rel), Video: videoExts[e], Audio: audioExts[e]}
		m.Playable = playVideo[e] || playAudio[e]
		switch {
		case playVideo[e]:
			m.playVideoOrAudio = 0
		case playAudio[e]:
			m.playVideoOrAudio = 1
		default:
			m.playVideoOrAudio = 2
		}
		out = append(out, m)
	}
	for i := range results {
		r := &results[i]
		if !mediaPlugins[r.Plugin] {
			continue
		}
		for _, of := range r.OutputFiles {
			rel := of.Path
			if !strings.HasPrefix(rel, r.Plugin+"/") {
				rel = r.Plugin + "/" + rel
			}
			add(rel)
		}
	}
	if len(out) == 0 && f.abs != "" {
		for _, e := range f.list() {
			if mediaPlugins[e.Name()] && e.IsDir() {
				for _, rel := range f.walk(e.Name(), 200) {
					add(rel)
				}
			}
		}
	}
	sort.SliceStable(out, func(a, b int) bool {
		x, y := out[a], out[b]
		if x.playVideoOrAudio != y.playVideoOrAudio {
			return x.playVideoOrAudio < y.playVideoOrAudio
		}
		if x.Ref.Size != y.Ref.Size {
			return x.Ref.Size > y.Ref.Size
		}
		return strings.ToLower(x.Name) < strings.ToLower(y.Name)
	})
	return out
}
