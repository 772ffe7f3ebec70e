package export

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/gen"
)

// generatedFile is one file an export wrote, as a later export may find it.
type generatedFile struct {
	ino   uint64
	mtime time.Time
	data  []byte
}

// generatedFiles reads every file an in-place export writes: the root
// pages, manifest and site/ folder, and each snapshot's index.html.
func generatedFiles(t *testing.T, root string) map[string]generatedFile {
	t.Helper()
	out := map[string]generatedFile{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == archive.StateDir {
				return filepath.SkipDir
			}
			return nil
		}
		if rel != RootPage && rel != ManifestFile && !strings.HasPrefix(rel, SiteDir+"/") &&
			!(strings.HasPrefix(rel, archive.ArchiveDir+"/") && strings.HasSuffix(rel, "/"+RootPage)) {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out[rel] = generatedFile{ino: fi.Sys().(*syscall.Stat_t).Ino, mtime: fi.ModTime(), data: data}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// sameAsFull checks that the files an in-place export left in dir are
// what an export with opts and --full writes, byte for byte (that export
// then runs), and shows the first line that differs in each.
func sameAsFull(t *testing.T, dir string, opts Options, step string) {
	t.Helper()
	now := generatedFiles(t, dir)
	opts.Full = true
	if _, err := Run(context.Background(), opts, archive.Discard); err != nil {
		t.Fatal(err)
	}
	full := generatedFiles(t, dir)
	if len(full) != len(now) {
		t.Errorf("%s: --full wrote %d files, the re-export left %d", step, len(full), len(now))
	}
	for rel, f := range full {
		if bytes.Equal(f.data, now[rel].data) {
			continue
		}
		t.Errorf("%s: %s differs from a --full export's", step, rel)
		a, b := strings.Split(string(f.data), "\n"), strings.Split(string(now[rel].data), "\n")
		for i := range min(len(a), len(b)) {
			if a[i] != b[i] {
				t.Logf("full %.300q\ngot  %.300q", a[i], b[i])
				break
			}
		}
	}
}

// newestFirst returns m's snapshots in list order, newest first, and how
// many times each URL is captured.
func newestFirst(m *gen.Manifest) ([]gen.Entry, map[string]int) {
	order := append([]gen.Entry(nil), m.Snapshots...)
	sort.SliceStable(order, func(a, b int) bool { return order[a].BookmarkedAt.After(order[b].BookmarkedAt) })
	urls := map[string]int{}
	for _, e := range order {
		urls[e.URL]++
	}
	return order, urls
}

// pageAt returns the root page that lists the snapshot at place i
// (from 0, newest first) of total, size to a page (see pageLayout).
func pageAt(i, total, size int) int {
	_, first := pageLayout(total, size)
	if i < first {
		return 1
	}
	return (i-first)/size + 2
}

// deferredRuns returns an export of c in root pages of pageSize that
// holds back the manifest and state with a cache (as folio watch does),
// counting its events afresh, and a Flush of what the cache holds.
func deferredRuns(t *testing.T, c *archive.Collection, events map[string]int, pageSize int) (run func(*Cache) Stats, flush func(*Cache) int) {
	run = func(cache *Cache) Stats {
		t.Helper()
		clear(events)
		st, err := Run(context.Background(), Options{Collection: c, PageSize: pageSize, Cache: cache, Defer: cache != nil}, archive.Discard)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	flush = func(cache *Cache) int {
		t.Helper()
		n, err := Flush(context.Background(), Options{Collection: c, PageSize: pageSize, Cache: cache}, archive.Discard)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	return run, flush
}

// countEvents counts the export's steps (testEvent) until the test ends;
// read it between exports.
func countEvents(t *testing.T) map[string]int {
	var mu sync.Mutex
	events := map[string]int{}
	testEvent = func(e string) {
		mu.Lock()
		events[e]++
		mu.Unlock()
	}
	t.Cleanup(func() { testEvent = func(string) {} })
	return events
}

// TestReexportFromChangeFeed changes one snapshot at a time and checks
// that the re-export takes the catalog's change feed (no pass over the
// selection), rewrites exactly that snapshot's page, the root page and
// search shard that list it and the manifest, and leaves every file as a
// --full export writes it. A second change on another page checks the
// manifest offsets the first re-export recorded.
func TestReexportFromChangeFeed(t *testing.T) {
	dir, m, c := generatedIn(t, 90, 5)
	events := countEvents(t)
	const pageSize = 20
	export := func(full bool) Stats {
		t.Helper()
		clear(events)
		st, err := Run(context.Background(), Options{Collection: c, PageSize: pageSize, Full: full}, archive.Discard)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	export(false)
	if st := export(false); events["delta"] != 1 || events["pass1"] != 0 || st.Written != 0 || st.RootWritten != 0 {
		t.Fatalf("unchanged re-export: events %v, %+v", events, st)
	}

	// Snapshots whose URL is captured once, newest first as the list is.
	order, urls := newestFirst(m)
	var picks []int // places in the list, on different pages
	for i, s := range order {
		if urls[s.URL] == 1 && (len(picks) == 0 && pageAt(i, len(order), pageSize) == 2 || len(picks) == 1 && pageAt(i, len(order), pageSize) == 4) {
			picks = append(picks, i)
		}
	}
	if len(picks) != 2 {
		t.Fatalf("no single captures on pages 2 and 4: %v", picks)
	}
	for k, pos := range picks {
		target := order[pos]
		before := generatedFiles(t, dir)
		time.Sleep(10 * time.Millisecond) // a distinct mtime on coarse clocks
		title := "Retitled " + strings.Repeat("long ", 5*k) + "<b>&"
		if err := gen.RetitleIndex(filepath.Join(dir, filepath.FromSlash(target.Dir)), title); err != nil {
			t.Fatal(err)
		}
		st := export(false)
		if events["delta"] != 1 || events["pass1"] != 0 || events["pass2"] != 0 || st.Written != 1 || st.RootWritten != 1 {
			t.Fatalf("change %d: events %v, %+v", k, events, st)
		}
		after := generatedFiles(t, dir)
		n := strconv.Itoa(pageAt(pos, len(order), pageSize))
		want := map[string]bool{target.Dir + "/" + RootPage: true, SiteDir + "/page-" + n + ".html": true,
			SiteDir + "/search/" + n + ".js": true, ManifestFile: true}
		for rel, a := range after {
			b, ok := before[rel]
			if !ok {
				t.Errorf("change %d: %s appeared", k, rel)
				continue
			}
			if rewritten := a.ino != b.ino || !a.mtime.Equal(b.mtime); rewritten != want[rel] {
				t.Errorf("change %d: %s rewritten = %v, want %v", k, rel, rewritten, want[rel])
			}
		}
		if len(after) != len(before) {
			t.Errorf("change %d: %d files before, %d after", k, len(before), len(after))
		}
		if !bytes.Contains(after[ManifestFile].data, []byte("Retitled "+strings.Repeat("long ", 5*k))) {
			t.Errorf("change %d: the manifest misses the new title", k)
		}
	}

	// The site is what a full export writes, byte for byte: the second
	// splice of the manifest used the offsets the first one recorded.
	sameAsFull(t, dir, Options{Collection: c, PageSize: pageSize}, "two changes")
}

// TestDeferredReexport: re-exports with Options.Defer (folio watch) write
// the pages of changed snapshots but leave the root manifest and the
// state file as they are; Flush splices every held record (one changed
// twice, records before and after others, of new lengths) and writes the
// state, which later re-exports splice from. A re-export by another
// process while records are held (or after a watch that died) starts from
// the files, and the Flush after it writes nothing. Every step ends where
// a --full export does, byte for byte.
func TestDeferredReexport(t *testing.T) {
	dir, m, c := generatedIn(t, 90, 5)
	events := countEvents(t)
	const pageSize = 20
	cache := &Cache{}
	run, flush := deferredRuns(t, c, events, pageSize)
	statePath := c.Path(archive.StateDir + "/export/in-place.state")
	run(cache)

	order, urls := newestFirst(m)
	var picks []gen.Entry // single captures on pages 1 to 4
	for i, s := range order {
		if urls[s.URL] == 1 && i/pageSize == len(picks) && len(picks) < 4 {
			picks = append(picks, s)
		}
	}
	if len(picks) != 4 {
		t.Fatalf("no single captures on pages 1-4: %d", len(picks))
	}
	retitle := func(e gen.Entry, title string) {
		t.Helper()
		time.Sleep(10 * time.Millisecond) // a distinct mtime on coarse clocks
		if err := gen.RetitleIndex(filepath.Join(dir, filepath.FromSlash(e.Dir)), title); err != nil {
			t.Fatal(err)
		}
	}
	shows := func(e gen.Entry, title string) bool {
		page, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(e.Dir), RootPage))
		if err != nil {
			t.Fatal(err)
		}
		return bytes.Contains(page, []byte(title))
	}
	fullAgain := func(step string) {
		t.Helper()
		sameAsFull(t, dir, Options{Collection: c, PageSize: pageSize}, step)
	}

	manifest, _ := fileIDOf(filepath.Join(dir, ManifestFile))
	state, _ := fileIDOf(statePath)
	// The second page's snapshot twice, the fourth's once between.
	for _, ch := range []struct {
		e     gen.Entry
		title string
	}{{picks[1], "Held once"}, {picks[3], "Held " + strings.Repeat("longer ", 9)}, {picks[1], "Held twice, " + strings.Repeat("long ", 7)}} {
		retitle(ch.e, ch.title)
		st := run(cache)
		if events["delta"] != 1 || st.Written != 1 || !shows(ch.e, ch.title) {
			t.Fatalf("deferred re-export of %q: events %v, %+v", ch.title, events, st)
		}
		if id, _ := fileIDOf(filepath.Join(dir, ManifestFile)); id != manifest {
			t.Fatalf("deferred re-export of %q rewrote the manifest", ch.title)
		}
		if id, _ := fileIDOf(statePath); id != state || !cache.Held() {
			t.Fatalf("deferred re-export of %q wrote the state (held: %v)", ch.title, cache.Held())
		}
	}
	if n := flush(cache); n != 2 || cache.Held() {
		t.Fatalf("flush spliced %d records (want 2), held after: %v", n, cache.Held())
	}
	data, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, title := range []string{"Held twice, " + strings.Repeat("long ", 7), "Held " + strings.Repeat("longer ", 9)} {
		if !bytes.Contains(data, []byte(title)) {
			t.Errorf("the flushed manifest lacks %q", title)
		}
	}
	if n := flush(cache); n != 0 {
		t.Errorf("a second flush spliced %d records", n)
	}
	// A re-export of another process splices from the flushed state's
	// offsets: a record after the ones that grew.
	retitle(picks[2], "After the flush")
	if st := run(nil); events["delta"] != 1 || st.Written != 1 {
		t.Fatalf("re-export after the flush: events %v, %+v", events, st)
	}
	fullAgain("after the flush")

	// Held, then another process exports (or the watch died): it starts
	// from the files, and the flush after it has nothing to write.
	run(cache)
	retitle(picks[0], "Held, then exported elsewhere")
	run(cache)
	retitle(picks[3], "Exported elsewhere")
	// (The held page is rendered again and found as it is.)
	if st := run(nil); events["delta"] != 1 || st.Written != 1 || st.Same != 1 {
		t.Fatalf("re-export of another process over held records: events %v, %+v", events, st)
	}
	if n := flush(cache); n != 0 || cache.Held() {
		t.Errorf("flush after another process exported: %d records, held %v", n, cache.Held())
	}
	fullAgain("after another process")

	// Held, then a change the feed cannot carry (a URL captured twice):
	// the passes write the manifest whole, with the held record's new
	// form, and the state.
	var twice gen.Entry
	for _, s := range m.Snapshots {
		if urls[s.URL] > 1 {
			twice = s
		}
	}
	run(cache)
	retitle(picks[2], "Held, then passes")
	run(cache)
	retitle(twice, "A URL captured twice")
	if st := run(cache); events["pass1"] != 1 || cache.Held() || st.Written < 1 {
		t.Fatalf("passes over held records: events %v, held %v, %+v", events, cache.Held(), st)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, ManifestFile)); !bytes.Contains(data, []byte("Held, then passes")) {
		t.Errorf("the passes' manifest lacks the held record")
	}
	fullAgain("after the passes")

	// Held, then the manifest changed by something else (copied over
	// from a backup, here an older mtime): the flush cannot splice, and
	// an export writes the manifest whole, with the held record, at once.
	run(cache)
	retitle(picks[1], "Held, then the manifest touched")
	run(cache)
	manifestPath := filepath.Join(dir, ManifestFile)
	if err := os.Chtimes(manifestPath, time.Time{}, time.Now().Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	if n := flush(cache); n != 1 || cache.Held() || events["pass1"] != 1 {
		t.Fatalf("flush over a manifest changed by something else: %d records, held %v, events %v; want 1, the passes", n, cache.Held(), events)
	}
	if data, _ := os.ReadFile(manifestPath); !bytes.Contains(data, []byte("Held, then the manifest touched")) {
		t.Errorf("the flush left the manifest without the held record")
	}
	fullAgain("after a flush over a changed manifest")

	// Once more, with another process taking the collection between the
	// flush's state and its export: the export stays due, and the next
	// flush runs it.
	run(cache)
	retitle(picks[3], "Held, touched, then locked out")
	run(cache)
	if err := os.Chtimes(manifestPath, time.Time{}, time.Now().Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	counted := testEvent
	var other *archive.Lock
	testEvent = func(e string) {
		counted(e)
		if e == "flush export" && other == nil {
			var err error
			if other, err = c.Lock("test"); err != nil {
				t.Error(err)
			}
		}
	}
	n, err := Flush(context.Background(), Options{Collection: c, PageSize: pageSize, Cache: cache}, archive.Discard)
	testEvent = counted
	if !errors.Is(err, archive.ErrLocked) || n != 0 || !cache.Held() {
		t.Fatalf("flush locked out of its export: %d, %v, held %v; want ErrLocked and still held", n, err, cache.Held())
	}
	other.Unlock()
	clear(events)
	if flush(cache); events["pass1"] != 1 || cache.Held() {
		t.Fatalf("flush after the lock was let go: events %v, held %v; want the passes, nothing held", events, cache.Held())
	}
	if data, _ := os.ReadFile(manifestPath); !bytes.Contains(data, []byte("Held, touched, then locked out")) {
		t.Errorf("the second flush left the manifest without the held record")
	}
	clear(events)
	if n := flush(cache); n != 0 || events["pass1"] != 0 {
		t.Errorf("a third flush: %d records, events %v; want nothing done", n, events)
	}
	fullAgain("after a flush locked out once")
}

// TestDeltaAddsAndRemovesAtTheTop: a snapshot added at the newest end,
// and one gone from the first root page, are taken from the change feed
// (no pass over the selection): the first root page, its shards and the
// manifest are written again, the other root pages are not, and every
// file is what a --full export writes. Under watch (Options.Defer) the
// manifest's records added, gone and changed wait for Flush, in order.
// A snapshot gone from another page, or one added that changes the page
// count, takes the passes.
func TestDeltaAddsAndRemovesAtTheTop(t *testing.T) {
	dir, m, c := generatedIn(t, 92, 5)
	events := countEvents(t)
	const pageSize = 20
	run, flush := deferredRuns(t, c, events, pageSize)
	fullAgain := func(step string) {
		t.Helper()
		sameAsFull(t, dir, Options{Collection: c, PageSize: pageSize}, step)
	}
	// The root files written again, of those any export writes.
	rootWritten := func(before, after map[string]generatedFile) []string {
		var out []string
		for rel, a := range after {
			if b, ok := before[rel]; ok && !strings.HasPrefix(rel, archive.ArchiveDir+"/") && (a.ino != b.ino || !a.mtime.Equal(b.mtime)) {
				out = append(out, rel)
			}
		}
		sort.Strings(out)
		return out
	}
	firstOnly := []string{RootPage, ManifestFile, SiteDir + "/search/1.js", SiteDir + "/text/1.js"}

	order, urls := newestFirst(m)
	// The newest snapshots down to the second whose URL is captured once
	// are parked: those two come back at the newest end.
	var once []int
	for i := 0; len(once) < 2; i++ {
		if urls[order[i].URL] == 1 {
			once = append(once, i)
		}
	}
	newer, older := order[once[0]], order[once[1]]
	park := func(e gen.Entry) string {
		t.Helper()
		to := filepath.Join(t.TempDir(), "parked")
		if err := os.Rename(filepath.Join(dir, filepath.FromSlash(e.Dir)), to); err != nil {
			t.Fatal(err)
		}
		return to
	}
	unpark := func(e gen.Entry, from string) {
		t.Helper()
		time.Sleep(10 * time.Millisecond) // a distinct mtime on coarse clocks
		if err := os.Rename(from, filepath.Join(dir, filepath.FromSlash(e.Dir))); err != nil {
			t.Fatal(err)
		}
	}
	parked := map[string]string{}
	for _, e := range order[:once[1]+1] {
		parked[e.Dir] = park(e)
	}
	run(nil) // 91 snapshots at most, in 5 pages
	before := generatedFiles(t, dir)
	unpark(older, parked[older.Dir])
	st := run(nil)
	if events["delta"] != 1 || events["pass1"] != 0 || st.Written != 1 || st.RootWritten+st.RootSame != 1 || st.RootKept != 4 {
		t.Fatalf("a snapshot added at the newest end: events %v, %+v", events, st)
	}
	if got := rootWritten(before, generatedFiles(t, dir)); !slices.Equal(got, firstOnly) {
		t.Errorf("a snapshot added at the newest end: wrote %v, want %v", got, firstOnly)
	}
	fullAgain("added")

	// Gone from the first page again.
	run(nil)
	before = generatedFiles(t, dir)
	parked[older.Dir] = park(older)
	if st := run(nil); events["delta"] != 1 || events["pass1"] != 0 || st.RootWritten+st.RootSame != 1 || st.RootKept != 4 {
		t.Fatalf("a snapshot gone from the first page: events %v, %+v", events, st)
	}
	if got := rootWritten(before, generatedFiles(t, dir)); !slices.Equal(got, firstOnly) {
		t.Errorf("a snapshot gone from the first page: wrote %v, want %v", got, firstOnly)
	}
	fullAgain("removed")

	// Under watch the manifest waits for Flush: a retitle on the third
	// page, an addition, a retitle of it, a newer addition, and the
	// removal of the first one added (never written) are held; Flush
	// writes the manifest and the state.
	var held gen.Entry
	for _, e := range order[45:] {
		if urls[e.URL] == 1 {
			held = e
			break
		}
	}
	retitle := func(e gen.Entry, title string) {
		t.Helper()
		time.Sleep(10 * time.Millisecond)
		if err := gen.RetitleIndex(filepath.Join(dir, filepath.FromSlash(e.Dir)), title); err != nil {
			t.Fatal(err)
		}
	}
	cache := &Cache{}
	run(cache)
	manifest, _ := fileIDOf(filepath.Join(dir, ManifestFile))
	for _, step := range []struct {
		what string
		do   func()
	}{
		{"a retitle on the third page", func() { retitle(held, "Held <title>") }},
		{"an addition", func() { unpark(older, parked[older.Dir]) }},
		{"a retitle of the snapshot added", func() { retitle(older, "Added, then retitled") }},
		{"a newer addition", func() { unpark(newer, parked[newer.Dir]) }},
	} {
		step.do()
		if st := run(cache); events["delta"] != 1 || !cache.Held() || st.RootWritten+st.RootSame != 1 {
			t.Fatalf("%s under watch: events %v, held %v, %+v", step.what, events, cache.Held(), st)
		}
		if listing := step.what != "a retitle on the third page"; cache.HeldListing() != listing {
			t.Errorf("%s under watch: HeldListing %v, want %v", step.what, !listing, listing)
		}
		if id, _ := fileIDOf(filepath.Join(dir, ManifestFile)); id != manifest {
			t.Fatalf("%s under watch wrote the manifest", step.what)
		}
	}
	if n := flush(cache); n != 3 || cache.Held() { // the retitle, the two added (one retitled)
		t.Fatalf("flush spliced %d records (want 3), held after: %v", n, cache.Held())
	}
	fullAgain("added under watch, flushed")
	run(cache)
	parked[older.Dir] = park(older)
	run(cache)
	parked[newer.Dir] = park(newer)
	if st := run(cache); events["delta"] != 1 || !cache.HeldListing() || st.RootWritten+st.RootSame != 1 {
		t.Fatalf("two removals under watch: events %v, held listing %v, %+v", events, cache.HeldListing(), st)
	}
	if n := flush(cache); n != 2 || cache.Held() {
		t.Fatalf("flush spliced %d records (want the two removals), held after: %v", n, cache.Held())
	}
	run(cache)
	unpark(older, parked[older.Dir])
	run(cache)
	parked[older.Dir] = park(older) // added and gone, never written
	if st := run(cache); events["delta"] != 1 || !cache.Held() || st.RootWritten+st.RootSame != 1 {
		t.Fatalf("an addition and its removal under watch: events %v, held %v, %+v", events, cache.Held(), st)
	}
	// Gone and back before a flush: the passes write the manifest.
	unpark(newer, parked[newer.Dir])
	run(cache)
	flush(cache)
	parked[newer.Dir] = park(newer)
	run(cache)
	unpark(newer, parked[newer.Dir])
	if run(cache); events["pass1"] != 1 || cache.Held() {
		t.Fatalf("a removal held, then the folder back: events %v, held %v", events, cache.Held())
	}
	if n := flush(cache); n != 0 {
		t.Fatalf("flush after the passes spliced %d records", n)
	}
	// A retitle spliced from the offsets the flush recorded.
	retitle(held, "Retitled after the flush")
	if run(nil); events["delta"] != 1 {
		t.Fatalf("a retitle after the flush: events %v", events)
	}
	fullAgain("removed under watch, flushed")

	// Gone from a page but the first: the pages before it move.
	park(held)
	if st := run(nil); events["delta"] != 0 || events["pass1"] != 1 || st.RootWritten+st.RootSame < 2 {
		t.Fatalf("a snapshot gone from the third page: events %v, %+v", events, st)
	}
	fullAgain("removed from the third page")
}

// TestDeltaAdditionNeedsTheFirstPage: an addition is taken from the change
// feed only when it is known to be the newest: with every row of the
// first page gone in the same export (here pages of one snapshot, the
// newest gone and an old one back), the passes place it. And with a root
// template of the user's, which may show the total on every page, an
// addition or removal writes every page again. Each time the site is
// what a --full export writes.
func TestDeltaAdditionNeedsTheFirstPage(t *testing.T) {
	dir, m, c := generatedIn(t, 12, 5)
	events := countEvents(t)
	opts := Options{Collection: c, PageSize: 1}
	run := func() Stats {
		t.Helper()
		clear(events)
		st, err := Run(context.Background(), opts, archive.Discard)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	fullAgain := func(step string) {
		t.Helper()
		sameAsFull(t, dir, opts, step)
	}
	order, urls := newestFirst(m)
	var once []gen.Entry
	for _, e := range order {
		if urls[e.URL] == 1 {
			once = append(once, e)
		}
	}
	newest, oldest := once[0], once[len(once)-1]
	moveTo := func(e gen.Entry, parked string, back bool) {
		t.Helper()
		from, to := filepath.Join(dir, filepath.FromSlash(e.Dir)), parked
		if back {
			from, to = to, from
		}
		if err := os.Rename(from, to); err != nil {
			t.Fatal(err)
		}
	}
	for _, e := range order {
		if e.Dir == newest.Dir {
			break
		}
		moveTo(e, filepath.Join(t.TempDir(), "parked"), false) // newer ones captured twice
	}
	parkedOld := filepath.Join(t.TempDir(), "parked")
	moveTo(oldest, parkedOld, false)
	run()
	moveTo(newest, filepath.Join(t.TempDir(), "parked"), false)
	moveTo(oldest, parkedOld, true)
	if run(); events["delta"] != 0 || events["pass1"] != 1 {
		t.Errorf("the first page's one row gone and an old snapshot back: events %v", events)
	}
	fullAgain("the first page replaced")

	// A root template of the user's showing the total on every page.
	tpl := t.TempDir()
	root, err := os.ReadFile("../templates/root.html")
	if err != nil {
		t.Fatal(err)
	}
	everywhere := strings.Replace(string(root), `{{if eq .Page 1}} · {{.Total}} snapshots{{end}}`, ` · {{.Total}} snapshots`, 1)
	if everywhere == string(root) {
		t.Fatal("root.html no longer shows the total on the first page only")
	}
	if err := os.WriteFile(filepath.Join(tpl, "root.html"), []byte(everywhere), 0o644); err != nil {
		t.Fatal(err)
	}
	opts = Options{Collection: c, PageSize: 4, Templates: tpl}
	run()
	var present []gen.Entry
	for _, e := range order {
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(e.Dir))); err == nil {
			present = append(present, e)
		}
	}
	_, first := pageLayout(len(present), 4)
	gone := slices.IndexFunc(present, func(e gen.Entry) bool { return urls[e.URL] == 1 })
	if gone < 0 || gone >= first {
		t.Fatalf("no snapshot captured once on the first page of %d", first)
	}
	moveTo(present[gone], filepath.Join(t.TempDir(), "parked"), false)
	if st := run(); events["delta"] != 0 || st.RootWritten < 2 {
		t.Errorf("a removal from the first page with the user's root template: events %v, %+v", events, st)
	}
	fullAgain("the user's root template")
}
