package export

import (
	"context"
	"fmt"
	"html"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/folio-archive/folio/archive"
)

func pagePath(n int) string {
	if n <= 1 {
		return RootPage
	}
	return SiteDir + "/page-" + strconv.Itoa(n) + ".html"
}

func pageDir(n int) string {
	if n <= 1 {
		return ""
	}
	return SiteDir
}

// pageWritten reports whether root page n and its shards are on disk.
func (s *site) pageWritten(n int) bool {
	return exists(s.abs(pagePath(n))) && exists(s.abs(shardPath(n))) && exists(s.abs(textShardPath(n)))
}

// pageLayout returns how many root pages list total snapshots, size to
// a page, and how many of them the first page lists. The pages are cut
// from the oldest end: every page but the first lists size snapshots,
// and the first the rest, from half of size to one and a half times it
// (all of them when there are fewer). So a snapshot added at the newest
// end changes the first page only, and the others only when their count
// changes, once in size additions (at a total of size/2 past a multiple
// of size, not at a round number); cut from the newest end, every page
// would lose a row to the next, and an export at 100k snapshots would
// write all 400 again.
func pageLayout(total, size int) (pages, first int) {
	pages = max(1, (total+size/2)/size)
	return pages, total - (pages-1)*size
}

// pageRows is how many snapshots root page n lists, the first listing
// first (see pageLayout).
func pageRows(n, first, size int) int {
	if n == 1 {
		return first
	}
	return size
}

// pageFP is what root page n and its shard depend on: its place among
// the pages and the rows it lists, and the total when the page shows it
// (see shownTotal).
func pageFP(n, pages, total int, items []item) uint64 {
	ph := newHasher().u64(uint64(n)).u64(uint64(pages)).u64(uint64(total))
	for i := range items {
		ph.u64(items[i].fp)
	}
	return ph.sum()
}

// page writes root page n and its search shard, and the snapshot pages of
// its items that changed.
func (s *site) page(ctx context.Context, g *errgroup.Group, n int, items []item) {
	pfp := pageFP(n, s.pages, s.shownTotal(n, s.total), items)
	for len(s.next.Pages) < n {
		s.next.Pages = append(s.next.Pages, 0)
	}
	s.next.Pages[n-1] = pfp
	pageDirty := s.prev == nil || n > len(s.prev.Pages) || s.prev.Pages[n-1] != pfp ||
		!s.pageWritten(n)

	rows := make([]rowView, len(items))
	shard := make([]shardRow, len(items))
	from := pageDir(n)
	// The snapshots of the page run on the export's worker pool; the one
	// that finishes last renders the root page and its shard, so pages
	// overlap and no worker waits for a page to end.
	var pending atomic.Int64
	pending.Store(int64(len(items)) + 1)
	finish := func() error {
		if pending.Add(-1) != 0 {
			return nil
		}
		if !pageDirty {
			s.rootKept.Add(1)
			return nil
		}
		wrotePage, err := s.writeRootPage(n, rows)
		if err != nil {
			return err
		}
		wroteShard, err := s.writeShard(n, shard)
		if err != nil {
			return err
		}
		if err := s.writeTextShard(ctx, n, items); err != nil {
			return err
		}
		if wrotePage || wroteShard {
			s.rootWritten.Add(1)
		} else {
			s.rootSame.Add(1)
		}
		return nil
	}
	dirty := make([]bool, len(items))
	cached := make([]int64, len(items)) // where a kept page's row lies in the row cache
	var noted []string
	for i := range items {
		it := &items[i]
		it.page = n
		dirty[i] = true
		if s.prev != nil {
			h := hashString(it.Dir)
			old, ok := s.prev.Snaps[h]
			dirty[i] = !ok || old.FP != it.fp || !s.pageThere(it.Dir)
			if !dirty[i] {
				old.Page = uint32(n)
				s.setSnap(h, old)
				cached[i] = old.Row // (a record of another ownFP is refused)
			}
		}
		if dirty[i] {
			noted = append(noted, it.Dir)
			it.noted = true
		}
	}
	// The folders whose pages are written are noted in one write, before
	// any is written in.
	if err := s.touched.Note(noted...); err != nil {
		g.Go(func() error { return err })
		return
	}
	// The cached rows of the page's kept snapshots, read at once.
	var spans rowSpans
	if pageDirty {
		var offs []int64
		for i := range items {
			if !dirty[i] {
				offs = append(offs, cached[i])
			}
		}
		spans = s.rows.readSpans(offs)
	}
	for i := range items {
		it := &items[i]
		h := hashString(it.Dir)
		dirty := dirty[i]
		if !dirty && !pageDirty {
			s.kept.Add(1)
			pending.Add(-1) // never the last: the final finish below is still to come
			continue
		}
		g.Go(func() error {
			if err := ctx.Err(); err != nil {
				return err
			}
			ss, err := s.snapshot(it, dirty, cached[i], spans, from, &rows[i], &shard[i])
			if err != nil {
				return err
			}
			switch {
			case dirty:
				s.setSnap(h, ss)
			case ss.Row != cached[i]: // its row was made from the folder
				s.setRow(h, ss.Row)
			}
			return finish()
		})
	}
	g.Go(finish)
}

func (s *site) prevSnap(dir string) (snapState, bool) {
	if s.prev == nil {
		return snapState{}, false
	}
	ss, ok := s.prev.Snaps[hashString(dir)]
	return ss, ok
}

func (s *site) setSnap(h uint64, ss snapState) {
	s.mu.Lock()
	s.next.Snaps[h] = ss
	s.mu.Unlock()
}

// setRow sets where the row of the snapshot folder with hash h lies in the
// row cache.
func (s *site) setRow(h uint64, row int64) {
	s.mu.Lock()
	ss := s.next.Snaps[h]
	ss.Row = row
	s.next.Snaps[h] = ss
	s.mu.Unlock()
}

// How much of a title the pages show, in characters: a title can be
// anything a page said it was, megabytes long. The manifests (the root
// index.jsonl and each snapshot's) keep it whole.
const (
	rowTitle     = 110  // a row of the root list, a search result, another capture
	tooltipTitle = 500  // a row's tooltip, a snapshot page's <title>
	headingTitle = 2000 // a snapshot page's heading
)

// cutTitle returns s cut to n characters, the last of them an ellipsis,
// when it is longer; it looks at no more of s than it keeps.
func cutTitle(s string, n int) string {
	if len(s) <= n {
		return s // (n bytes hold at most n characters)
	}
	runes, last := 0, 0
	for i := range s {
		if runes == n {
			return s[:last] + "…"
		}
		if runes == n-1 {
			last = i
		}
		runes++
	}
	return s
}

func savedTime(s *archive.Snapshot) time.Time {
	if !s.BookmarkedAt.IsZero() {
		return s.BookmarkedAt.UTC()
	}
	if t, ok := archive.ParseTime(s.Timestamp); ok {
		return t
	}
	return s.CreatedAt.UTC()
}

func pending(status string) bool {
	switch status {
	case "queued", "started", "backoff":
		return true
	}
	return false
}

type iconView struct{ Href, Plugin, Icon string }

type rowView struct {
	Status, StatusLabel            string // the record's status, and the words the pages show for its state
	State                          string // the state the pill shows (see stateOf)
	Href, Saved, Date, Time, Epoch string
	Pending                        bool
	Preview, PreviewFallbacks      string
	Favicon, FaviconFallbacks      string
	Title, FullTitle, URL          string
	Linkable                       bool // URL is http(s): a link, else plain text
	Tags                           []string
	Icons                          []iconView
	SizeHref, Size                 string
	Outputs, Failures              int
}

func candidates(f *files, from string, rels ...string) (first, rest string) {
	var hrefs []string
	for _, r := range rels {
		if ref := f.get(r); ref != nil && ref.Size > 0 {
			hrefs = append(hrefs, ref.From(from))
		}
	}
	if len(hrefs) == 0 {
		return "", ""
	}
	return hrefs[0], strings.Join(hrefs[1:], ",")
}

func (s *site) row(it *item, snap *archive.Snapshot, f *files, outs []output, from string) rowView {
	t := savedTime(snap)
	title := snap.Title
	if title == "" {
		title = snap.URL
	}
	title = html.UnescapeString(cutTitle(title, 4*tooltipTitle)) // (an entity cut short stays as it was)
	status := snap.Status
	if status == "" {
		status = "unknown"
	}
	r := rowView{
		Status: status, Href: relHref(from, it.Dir+"/"+RootPage), Saved: archive.IsoTime(t),
		Date: t.Format("2006-01-02"), Time: t.Format("15:04"), Epoch: snap.Timestamp,
		Pending: pending(snap.Status), Title: cutTitle(title, rowTitle), URL: snap.URL,
		Linkable: webURL(snap.URL),
		Tags:     archive.NormalizeTags(snap.Tags), SizeHref: relHref(from, it.Dir+"/"+archive.IndexFile),
		Outputs: it.NumOutputs, Failures: it.NumFailures,
	}
	r.State, r.StatusLabel = stateOf(it.State, len(outs) > 0)
	if r.Title != title {
		r.FullTitle = cutTitle(title, tooltipTitle) // the tooltip of a shortened title
	}
	if r.Epoch == "" {
		r.Epoch = strconv.FormatInt(t.Unix(), 10)
	}
	if snap.ArchiveSize > 0 {
		r.Size = fileSize(snap.ArchiveSize)
	}
	if !r.Pending {
		r.Preview, r.PreviewFallbacks = candidates(f, from, previewFiles...)
	}
	r.Favicon, r.FaviconFallbacks = candidates(f, from, faviconFiles...)
	r.Icons = icons(outs, it.Dir, from)
	return r
}

// icons returns a row's icons: one per plugin, in name order, for the
// outputs a succeeded result stands for, as ArchiveBox draws them; for a
// snapshot whose records stand for none (a folder of an older version
// with no results) the outputs found on disk stand in.
func icons(outs []output, snap, from string) []iconView {
	recorded := false
	for _, o := range outs {
		recorded = recorded || o.Recorded
	}
	byPlugin := map[string]*Ref{}
	for _, o := range outs {
		if o.Recorded || !recorded {
			byPlugin[o.Plugin] = &o.Ref
		}
	}
	var plugins []string
	for p := range byPlugin {
		plugins = append(plugins, p)
	}
	sort.Strings(plugins)
	var out []iconView
	for _, p := range plugins {
		icon, known := iconNames[p]
		if !known {
			icon = "folder"
		}
		if icon == "" {
			continue
		}
		out = append(out, iconView{Href: openHref(from, snap, *byPlugin[p]), Plugin: p, Icon: icon})
	}
	return out
}

type pageLink struct {
	N            int
	Href         string
	Current, Gap bool
}

type rootView struct {
	CSP, Site, DataRoot, RootHref, ManifestHref, Title, Version string
	Total, Page, Pages                                          int
	PrevHref, NextHref                                          string
	PageLinks                                                   []pageLink
	Rows                                                        []rowView
}

// shownTotal is the total as root page n depends on it: folio's own
// template shows it on the first page only (the others say how many they
// list, and the filter box counts the rest from the search shards), so
// that an added snapshot leaves them as they are; a template of the
// user's may show it on any page.
func (s *site) shownTotal(n, total int) int {
	if n > 1 && s.tpl.RootBuiltin {
		return 0
	}
	return total
}

func (s *site) writeRootPage(n int, rows []rowView) (wrote bool, err error) {
	from := pageDir(n)
	v := rootView{CSP: CSP, Title: s.opts.Title, Version: s.opts.Version, Total: s.total, Page: n, Pages: s.pages, Rows: rows,
		RootHref: relHref(from, RootPage), ManifestHref: relHref(from, ManifestFile)}
	v.Site = strings.TrimSuffix(relHref(from, SiteDir+"/x"), "x")
	v.DataRoot = strings.TrimSuffix(relHref(from, "x"), "x")
	if n > 1 {
		v.PrevHref = relHref(from, pagePath(n-1))
	}
	if n < s.pages {
		v.NextHref = relHref(from, pagePath(n+1))
	}
	last := 0
	for k := 1; k <= s.pages; k++ {
		if k <= 2 || k > s.pages-2 || k >= n-3 && k <= n+3 {
			if last != 0 && k != last+1 {
				v.PageLinks = append(v.PageLinks, pageLink{Gap: true})
			}
			v.PageLinks = append(v.PageLinks, pageLink{N: k, Href: relHref(from, pagePath(k)), Current: k == n})
			last = k
		}
	}
	b := getBuffer()
	defer putBuffer(b)
	if s.tpl.RootBuiltin {
		renderRoot(b, &v)
	} else if err := s.tpl.Root.Execute(b, &v); err != nil {
		return false, fmt.Errorf("render root page %d: %w", n, err)
	}
	return s.writeGenerated(pagePath(n), b.Bytes())
}
