package gen

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/layout"
)

// plan derives snapshot i from the Options and i alone.
func plan(o *Options, mach *machine, i int) (*snapshot, error) {
	r := rand.New(rand.NewPCG(o.Seed, uint64(i)))
	ids := rngReader{r}

	slot := max(o.Span/time.Duration(o.N), time.Microsecond)
	bookmarked := o.Base.Add(-o.Span).Add(time.Duration(i)*slot + time.Duration(r.Int64N(int64(slot)))).Truncate(time.Microsecond)
	if r.IntN(10) == 0 {
		bookmarked = bookmarked.Truncate(time.Second)
	}
	created := bookmarked.Add(time.Duration(r.Int64N(int64(3 * time.Second)))).Truncate(time.Microsecond)
	if r.IntN(5) == 0 { // imported from a bookmarks file long after it was bookmarked
		if later := created.Add(time.Duration(1+r.IntN(900)) * 24 * time.Hour); later.Before(o.Base) {
			created = later
		}
	}

	url := urlFor(o.Seed, i)
	if i > 0 && r.IntN(100) < 3 { // another capture of an earlier URL
		url = urlFor(o.Seed, r.IntN(i))
	}
	user := o.Users[0]
	if len(o.Users) > 1 && r.IntN(2) == 0 {
		user = o.Users[1+r.IntN(len(o.Users)-1)]
	}
	snap := archive.Snapshot{
		ID:        archive.NewID(created, ids),
		URL:       url,
		Timestamp: layout.Timestamp(bookmarked),
		Title:     titleFor(r, i),
		Tags:      tagsFor(r),
		Depth:     0,
		Status:    pickStatus(r),
		FSVersion: layout.Current,

		BookmarkedAt: bookmarked,
		CreatedAt:    created,
	}
	if o.Plain { // after the draws above, so the rest is as without it
		p := plainPageFor(i)
		url, snap.Title, snap.Tags = p.url, p.title, p.tags
		snap.URL = url // its folder is under its own host
	}
	snap.CrawlID = archive.NewID(created.Add(-time.Second), ids)
	if r.IntN(30) == 0 {
		snap.Notes = notes[r.IntN(len(notes))]
	}
	dir, err := layout.SnapshotDir(user, bookmarked, url, snap.ID)
	if err != nil {
		return nil, fmt.Errorf("generate snapshot %d: %w", i, err)
	}
	s := &snapshot{entry: Entry{
		Dir: dir, ID: snap.ID, URL: url, Title: snap.Title, Tags: snap.Tags,
		User: user, Status: snap.Status, BookmarkedAt: bookmarked,
	}}

	g := &snapGen{r: r, ids: ids, o: o, mach: mach, snap: &snap, dir: dir, i: i, tracked: r.IntN(4) == 0}
	results := g.results()
	for _, res := range results {
		snap.ArchiveSize += res.OutputSize
	}

	// The Snapshot record first, then per result its Binary (once) and
	// Process records and the ArchiveResult, as ArchiveBox orders them. Each
	// canonical record is encoded by archive.Index; the lines are joined
	// here because Index.Append re-parses every line it is given.
	ix, _ := archive.ParseIndex(nil)
	if r.IntN(50) == 0 {
		// A Snapshot record carrying a key folio does not model.
		var w pyWriter
		w.str("type", archive.TypeSnapshot)
		w.str("url", url)
		w.str("archived_by", "bookmarklet")
		ix.Append(w.bytes())
	}
	ix.SetSnapshot(snap)
	buf := ix.Bytes()
	if r.IntN(20) == 0 {
		buf = append(append(buf, g.crawlRecord(user)...), '\n')
	}
	seen := map[string]bool{}
	for _, res := range results {
		if g.tracked && res.ProcessID != "" {
			bin := mach.binaries[pluginByName[res.Plugin].bin]
			if !seen[bin.id] {
				seen[bin.id] = true
				buf = append(append(buf, bin.line...), '\n')
			}
			buf = append(append(buf, g.processRecord(res, bin)...), '\n')
		}
		rx, _ := archive.ParseIndex(nil)
		rx.AddResult(res.Result)
		buf = append(buf, rx.Bytes()...)
	}
	s.index = buf
	s.entry.Results = len(results)
	for _, res := range results {
		for _, f := range res.files {
			if !o.Minimal || o.Text && (f.rel == "readability/content.txt" || f.rel == "htmltotext/htmltotext.txt") {
				s.files = append(s.files, f)
				s.entry.Files++
			}
		}
	}
	for _, res := range results {
		s.entry.Missing += len(res.OutputFiles)
	}
	s.entry.Missing -= s.entry.Files
	return s, nil
}

// result is a planned ArchiveResult and the files written for it.
type result struct {
	archive.Result
	files []file
}

// snapGen holds the state of planning one snapshot.
type snapGen struct {
	r       *rand.Rand
	ids     rngReader
	o       *Options
	mach    *machine
	snap    *archive.Snapshot
	dir     string
	i       int
	tracked bool // captured with process tracking: Binary and Process records, cmd, pwd
}

func pickStatus(r *rand.Rand) string {
	switch roll := r.IntN(100); {
	case roll < 88:
		return "sealed"
	case roll < 96:
		return "queued"
	case roll < 98:
		return "started"
	}
	return "paused"
}

// rngReader turns a seeded generator into the io.Reader archive.NewID takes.
type rngReader struct{ r *rand.Rand }

func (x rngReader) Read(p []byte) (int, error) {
	var buf [8]byte
	for i := 0; i < len(p); i += 8 {
		binary.LittleEndian.PutUint64(buf[:], x.r.Uint64())
		copy(p[i:], buf[:])
	}
	return len(p), nil
}
