package export

import (
	"bytes"
	"errors"
	"fmt"
	"html"
	"html/template"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/folio-archive/folio/archive"
)

// snapshot reads one snapshot's records from its folder, writes its page
// when dirty (copying the folder first for --out), and fills its row. The
// row of a snapshot whose page is kept is made from the row cache when
// cached (its snapState.Row) finds it there (in spans, the page's records
// read at once, or by a read of its own).
func (s *site) snapshot(it *item, dirty bool, cached int64, spans rowSpans, from string, rv *rowView, sr *shardRow) (snapState, error) {
	ss := s.snapStateOf(it)
	snap := it.Snapshot
	var results []archive.Result
	in, ok := rowInputs{}, false
	if !dirty {
		in, ok = s.rows.getIn(spans, cached, it.Dir, it.own)
	}
	row := cached
	if ok {
		testEvent("row from cache")
	} else {
		f := s.files(it.Dir)
		defer f.close()
		snap, results = s.records(it, f)
		in = rowInputs{outs: f.discover(snap.URL, results), f: f}
		row = s.rows.put(it.Dir, it.own, in)
	}
	f, outs := in.f, in.outs
	switch {
	case dirty && s.groups[hashString(it.Snapshot.URL)].n > 1:
		// Its other captures are known once the stream has ended.
		cp := *it // not it: a pointer would keep the whole page's batch alive
		s.mu.Lock()
		s.deferred = append(s.deferred, &cp)
		s.mu.Unlock()
		dirty = false
	case dirty:
		var err error
		if ss, err = s.writeSnapshot(it, &snap, results, f, outs); err != nil {
			return ss, err
		}
	default:
		s.kept.Add(1)
	}
	*rv = s.row(it, &snap, f, outs, from)
	*sr = s.shardRowOf(it, rv, &snap, f, outs, from)
	ss.Row = row
	return ss, nil
}

// writeSnapshot writes a snapshot's page, copying its folder first for
// --out.
func (s *site) writeSnapshot(it *item, snap *archive.Snapshot, results []archive.Result, f *files, outs []output) (snapState, error) {
	ss := s.snapStateOf(it)
	if !it.noted {
		if err := s.touched.Note(it.Dir); err != nil {
			return ss, err
		}
	}
	if !s.inPlace {
		n, b, err := s.copySnapshot(it.Dir)
		if err != nil {
			return ss, err
		}
		ss.Files, ss.Bytes = n, b
	}
	wrote, err := s.writeDetail(it, snap, results, f, outs, s.related(it))
	if err != nil {
		return ss, err
	}
	if wrote {
		s.written.Add(1)
	} else {
		s.same.Add(1)
	}
	return ss, s.fault("page", it.Dir)
}

// detail writes the page of a deferred snapshot.
func (s *site) detail(it *item) (snapState, error) {
	f := s.files(it.Dir)
	defer f.close()
	snap, results := s.records(it, f)
	return s.writeSnapshot(it, &snap, results, f, f.discover(snap.URL, results))
}

// records returns the snapshot's record (from the catalog, which the
// export brought up to date with the tree) and its results, read from the
// folder itself (f's): the tree is the truth, and a catalog row does not
// carry every field of output_files.
func (s *site) records(it *item, f *files) (archive.Snapshot, []archive.Result) {
	dir := filepath.Join(s.src, filepath.FromSlash(it.Dir))
	switch it.IndexFile {
	case archive.IndexFile:
		var data []byte
		var err error
		if f.abs != "" {
			data, err = f.read(archive.IndexFile, -1)
		} else { // no outputs are linked from it, but its records are shown
			data, err = readFileAt(unix.AT_FDCWD, filepath.Join(dir, archive.IndexFile), -1)
		}
		if err == nil {
			return it.Snapshot, parseResults(data)
		}
	case archive.LegacyIndexFile:
		if li, err := archive.ReadLegacyIndex(dir); err == nil {
			return it.Snapshot, li.Results
		}
	}
	return it.Snapshot, nil
}

var resultMarker = []byte(`"ArchiveResult"`)

// parseResults decodes what the ArchiveResult records of an index.jsonl
// made (archive.DecodeResultOutputs), as Index.Results would, looking
// only at the lines that can be results (Process and Binary lines are
// skipped unread).
func parseResults(data []byte) []archive.Result {
	// As many as the lines that can be results, at most: one allocation
	// where appending one at a time made five for ten results (a Result
	// is 300 bytes; 9 KB a snapshot page).
	out := make([]archive.Result, 0, bytes.Count(data, resultMarker))
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if !bytes.Contains(line, resultMarker) {
			continue
		}
		r, ok := archive.DecodeResultOutputs(line)
		if !ok {
			continue
		}
		if !sort.SliceIsSorted(r.OutputFiles, func(a, b int) bool { return r.OutputFiles[a].Path < r.OutputFiles[b].Path }) {
			sort.SliceStable(r.OutputFiles, func(a, b int) bool { return r.OutputFiles[a].Path < r.OutputFiles[b].Path })
		}
		out = append(out, r)
	}
	return out
}

type relatedItem struct {
	Href, Title, Saved string
	year               int
}

type relatedYear struct {
	Year  int
	Items []relatedItem
}

// maxRelated is how many other captures a page lists.
const maxRelated = 25

// related lists up to maxRelated other exported captures of the same URL,
// newest first, grouped by year.
func (s *site) related(it *item) []relatedYear {
	h := hashString(it.Snapshot.URL)
	if s.groups[h].n < 2 {
		return nil // and captures, still being filled, is not touched
	}
	var out []relatedYear
	n := 0
	for _, c := range s.captures[h] {
		if c.dir == it.Dir || c.url != it.Snapshot.URL || n >= maxRelated {
			continue
		}
		n++
		title := c.title
		if title == "" {
			title = c.url
		}
		r := relatedItem{Href: relHref(it.Dir, c.dir+"/"+RootPage), Title: cutTitle(html.UnescapeString(cutTitle(title, 4*rowTitle)), rowTitle),
			Saved: c.saved.Format("2006-01-02 15:04"), year: c.saved.Year()}
		if len(out) == 0 || out[len(out)-1].Year != r.year {
			out = append(out, relatedYear{Year: r.year})
		}
		out[len(out)-1].Items = append(out[len(out)-1].Items, r)
	}
	return out
}

type previewView struct {
	Plugin, Href, Kind, Sandbox string
	Open                        string // the link that opens the file: Href, or the viewer's (see openHref)
}

type cardView struct {
	Plugin, Href, Path, Size, Kind, Ext, Sandbox string
	Open                                         string // as previewView's
	Previewable                                  bool
	Text                                         string     // the start of a text output, shown instead of a thumbnail
	Files                                        []fileView // the files of a mirror (wget), as a tree
	More                                         string     // "and N more files" when Files is cut
}

// fileView is one file of a list: a mirror's file tree or a download.
type fileView struct {
	Dir, Name, Href, Size string
	Records               string // of a WARC file: "12 records", or why they could not be counted
}

type mediaView struct {
	Type, Href, Name, Size string
	Playable               bool
}

type detailView struct {
	CSP, Site, RootHref, ManifestHref, SiteTitle, Version string
	Title, TabTitle                                       string // the page's heading and its <title>, cut
	URL, Saved, Status, StatusLabel, Size                 string
	State                                                 string // the state the pill shows (see stateOf)
	Empty                                                 string // what the page says in place of a preview
	Linkable                                              bool   // URL is http(s): a link, else plain text
	Tags                                                  []string
	Favicon, FaviconFallbacks                             string
	Preview                                               *previewView
	Cards                                                 []cardView
	Media                                                 []mediaView
	Downloads                                             []fileView // WARC and WACZ files
	Failed                                                []failedView
	Notes                                                 template.HTML
	Related                                               []relatedYear
}

func kindOf(p string) string {
	e := ext(p)
	switch {
	case imageExts[e]:
		return "image"
	case htmlExts[e]:
		return "html"
	case e == "pdf":
		return "pdf" // shown in a frame without sandbox, which would block the browser's PDF viewer
	}
	return "file"
}

// sandboxed reports whether a page shows a file of kind k in a sandboxed
// frame: all but images (an <img>) and PDFs (a frame without sandbox, the
// only one a browser shows a PDF in). A card's link loads its file into
// the preview frame only when both are sandboxed frames.
func sandboxed(k string) bool { return k != "image" && k != "pdf" }

// failedView is a failed capture method and why it failed (its result's
// output_str).
type failedView struct{ Plugin, Reason string }

// String is the plugin: what a template written for the plain list of
// names prints.
func (f failedView) String() string { return f.Plugin }

// maxReason is how much of a failure's reason a page shows.
const maxReason = 500

// failures lists the results that stand failed (a failure a later retry
// replaced is gone), once per plugin and reason.
func failures(results []archive.Result) []failedView {
	var out []failedView
	seen := map[failedView]bool{}
	for _, r := range archive.Standing(results) {
		if archive.NormalizeStatus(r.Status) != archive.StatusFailed || r.Plugin == "" {
			continue
		}
		f := failedView{Plugin: r.Plugin, Reason: cutTitle(strings.TrimSpace(r.OutputStr), maxReason)}
		if !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	return out
}

// stateOf is the state a page shows for a snapshot, as a class name and
// the word of its pill: the catalog's state (the status read with the
// results: archived, partial, failed, queued...); for a record with
// neither status nor results (an old index.json), archived when outputs
// were found in its folder, as ArchiveBox decides. The word is the one
// the CLI uses for it ('folio status' counts by it, 'folio list --status
// WORD' selects by it): the site and the CLI speak one vocabulary, and
// the filter box also finds a snapshot by its record's status (sealed).
func stateOf(state string, hasOutputs bool) (class, label string) {
	switch state {
	case archive.StateArchived, archive.StatePartial, archive.StateFailed, "queued", "started", "paused", "backoff":
		return state, state
	}
	if hasOutputs {
		return archive.StateArchived, archive.StateArchived
	}
	if state == "" {
		state = "unknown"
	}
	return state, state
}

// emptyPreview is what a page without a preview says in its place.
func emptyPreview(state, label string) string {
	if state == archive.StateFailed {
		return "failed: nothing was archived; why each capture method failed is listed under Failed."
	}
	return label + ": nothing captured yet."
}

func (s *site) writeDetail(it *item, snap *archive.Snapshot, results []archive.Result, f *files, outs []output, related []relatedYear) (wrote bool, err error) {
	dir := it.Dir
	t := savedTime(snap)
	title := html.UnescapeString(cutTitle(snap.Title, 4*headingTitle))
	if title == "" {
		title = snap.URL
		if len(outs) == 0 {
			title = "Not yet archived..."
		}
	}
	v := detailView{
		CSP: CSP, Site: strings.TrimSuffix(relHref(dir, SiteDir+"/x"), "x"), RootHref: relHref(dir, RootPage),
		ManifestHref: "./" + archive.IndexFile, SiteTitle: s.opts.Title, Version: s.opts.Version,
		Title: cutTitle(title, headingTitle), TabTitle: cutTitle(title, tooltipTitle), URL: snap.URL, Linkable: webURL(snap.URL), Saved: t.Format("2006-01-02 15:04:05") + " UTC",
		Status: snap.Status, Size: "—", Tags: archive.NormalizeTags(snap.Tags),
	}
	v.State, v.StatusLabel = stateOf(it.State, len(outs) > 0)
	v.Empty = emptyPreview(v.State, v.StatusLabel)
	if v.Status == "" {
		v.Status = "unknown"
	}
	if snap.ArchiveSize > 0 {
		v.Size = fileSize(snap.ArchiveSize)
	}
	v.Favicon, v.FaviconFallbacks = candidates(f, dir, faviconFiles...)
	v.Downloads = f.downloads(dir, s.warcs)
	outs = withoutDownloads(outs, dir, v.Downloads)
	if pv := preview(outs); pv != nil {
		kind := kindOf(pv.Ref.Rel)
		v.Preview = &previewView{Plugin: pv.Plugin, Href: pv.Ref.From(dir), Open: openHref(dir, dir, pv.Ref), Kind: kind, Sandbox: s.sandbox}
	}
	for _, o := range ordered(outs) {
		if hiddenCards[o.Plugin] || o.Ref.Size <= 0 {
			continue
		}
		k := kindOf(o.Ref.Rel)
		c := cardView{Plugin: o.Plugin, Href: o.Ref.From(dir), Open: openHref(dir, dir, o.Ref), Path: strings.TrimPrefix(o.Ref.Rel, dir+"/"),
			Size: fileSize(o.Ref.Size), Kind: k, Ext: ext(o.Ref.Rel), Sandbox: s.sandbox,
			Previewable: v.Preview != nil && sandboxed(v.Preview.Kind) && sandboxed(k), Text: f.cardText(o)}
		c.Files, c.More = f.cardTree(o, dir)
		v.Cards = append(v.Cards, c)
	}
	for _, m := range f.media(results) {
		typ := "file"
		if m.Video {
			typ = "video"
		} else if m.Audio {
			typ = "audio"
		}
		v.Media = append(v.Media, mediaView{Type: typ, Href: m.Ref.From(dir), Name: m.Name, Size: fileSize(m.Ref.Size), Playable: m.Playable})
	}
	v.Failed = failures(results)
	if snap.Notes != "" {
		var b bytes.Buffer
		if err := s.md.Convert([]byte(snap.Notes), &b); err == nil {
			v.Notes = template.HTML(b.String()) // goldmark without WithUnsafe drops raw HTML and unsafe links
		}
	}
	v.Related = related
	b := getBuffer()
	defer putBuffer(b)
	if s.tpl.SnapshotBuiltin {
		renderSnapshot(b, &v)
	} else if err := s.tpl.Snapshot.Execute(b, &v); err != nil {
		return false, fmt.Errorf("render page of %s: %w", dir, err)
	}
	wrote, err = s.writeGenerated(dir+"/"+RootPage, b.Bytes())
	if errors.Is(err, fs.ErrNotExist) { // a snapshot never captured: its folder is made
		if err := os.MkdirAll(s.abs(dir), 0o755); err != nil {
			return false, fmt.Errorf("export %s: %w", dir, err)
		}
		wrote, err = s.writeGenerated(dir+"/"+RootPage, b.Bytes())
	}
	return wrote, err
}
