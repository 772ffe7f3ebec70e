package export

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/archive/catalog"
	"github.com/folio-archive/folio/gen"
)

// TestRowsFromCache: a snapshot added at the top of the list lengthens
// the first root page only, which is written again with its kept rows
// made from the row cache; one that changes the page count moves every
// row to another page, and every root page is written again, the rows of
// the snapshots whose pages are kept made from the row cache, not from
// their folders. Each time the site is what a --full export writes, byte
// for byte. A row cache that does not match the state (here overwritten)
// costs only the folders' reads.
func TestRowsFromCache(t *testing.T) {
	dir, m, c := generatedIn(t, 90, 5)
	events := countEvents(t)
	export := func(full bool) Stats {
		t.Helper()
		clear(events)
		st, err := Run(context.Background(), Options{Collection: c, PageSize: 20, Full: full}, archive.Discard)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	fullAgain := func(step string) {
		t.Helper()
		sameAsFull(t, dir, Options{Collection: c, PageSize: 20}, step)
	}
	order, urls := newestFirst(m)
	// The two newest snapshots whose URL is captured once (another
	// capture's page would show them too).
	var once []string
	for _, s := range order {
		if urls[s.URL] == 1 && len(once) < 2 {
			once = append(once, filepath.Join(dir, filepath.FromSlash(s.Dir)))
		}
	}
	newest, second := once[0], once[1]
	parked, parked2 := filepath.Join(t.TempDir(), "parked"), filepath.Join(t.TempDir(), "parked2")
	move := func(from, to string) {
		t.Helper()
		if err := os.Rename(from, to); err != nil {
			t.Fatal(err)
		}
	}

	move(newest, parked)
	move(second, parked2)
	export(false) // 88 snapshots: 4 pages, the first of 28
	move(parked2, second)
	st := export(false) // 89: the first page of 29 (the one added among them), the others as they were
	if st.Written != 1 || st.RootWritten+st.RootSame != 1 || st.RootKept != 3 || events["row from cache"] != 28 {
		t.Fatalf("with a snapshot added: %d rows from the cache, want 28; %+v", events["row from cache"], st)
	}
	fullAgain("one added")
	move(parked, newest)
	st = export(false) // 90: 5 pages, the first of 10, each written again
	if st.Written != 1 || st.RootWritten+st.RootSame != 5 || events["row from cache"] != 89 {
		t.Fatalf("with a snapshot added and a page more: %d rows from the cache, want 89; %+v", events["row from cache"], st)
	}
	// The rows of a root page lie near each other in the cache (written
	// as the pages' workers finished): read a page at a time, a few reads
	// a page at most, not one a row.
	if n := events["row cache span read"]; n < 5 || n > 35 || events["row from span"] != 89 {
		t.Fatalf("with a snapshot added: %d reads of the row cache for 5 root pages of 9 to 20 kept rows, want 5 to 35; %d rows from them, want 89", n, events["row from span"])
	}
	fullAgain("added")

	// A --full export uses no record: it writes the cache anew.
	rows := c.Path(archive.StateDir + "/export/in-place.state.rows")
	data, err := os.ReadFile(rows)
	if err != nil {
		t.Fatal(err)
	}
	export(true)
	if again, err := os.ReadFile(rows); err != nil || len(again) != len(data) { // (in the order rows were made)
		t.Fatalf("a second --full export left a row cache of %d bytes, the first %d (%v)", len(again), len(data), err)
	}
	if err := os.WriteFile(rows, bytes.Repeat([]byte{'x'}, len(data)), 0o644); err != nil {
		t.Fatal(err)
	}
	// 89 snapshots: 4 pages again, each written.
	move(newest, parked)
	gone := filepath.Join(dir, filepath.FromSlash(order[50].Dir), RootPage) // deleted by hand: written again
	if err := os.Remove(gone); err != nil {
		t.Fatal(err)
	}
	st = export(false)
	if st.RootWritten+st.RootSame != 4 || events["row from cache"] != 0 || st.Written != 1 {
		t.Fatalf("with the row cache overwritten: %d rows from it, want 0; %+v", events["row from cache"], st)
	}
	fullAgain("removed, cache overwritten")
}

// TestRowCacheRewrite: compacting the row cache keeps the records the
// state refers to, each found at its new offset, and drops the others.
func TestRowCacheRewrite(t *testing.T) {
	statePath := filepath.Join(t.TempDir(), "x.state")
	c := openRowCache(statePath, 7, false)
	snaps := map[uint64]snapState{}
	for gen := range 3 { // three exports' records of the same folders
		for i := range 50 {
			d := "archive/users/u/snapshots/20200101/example.com/" + strconv.Itoa(i)
			f := &files{dir: d, seen: map[string]*Ref{"favicon.ico": {Rel: d + "/favicon.ico", Size: 3}}}
			in := rowInputs{f: f, outs: []output{{Plugin: "wget", Ref: Ref{Rel: d + "/wget/" + strconv.Itoa(gen) + ".html"}, Recorded: true}}}
			snaps[hashString(d)] = snapState{Dir: d, Own: uint64(gen), Row: c.put(d, uint64(gen), in)}
		}
	}
	c.sync()
	full := c.size
	base, err := c.rewrite(snaps, 0)
	if err != nil {
		t.Fatal(err)
	}
	c.close()
	if fi, err := os.Stat(statePath + ".rows"); err != nil || fi.Size() != base || 3*base != full {
		t.Fatalf("compacted to %d bytes (stat %v), from %d: want a third", base, err, full)
	}
	c = openRowCache(statePath, 7, false)
	defer c.close()
	for _, ss := range snaps {
		in, ok := c.get(ss.Row, ss.Dir, 2)
		if !ok || len(in.outs) != 1 || in.outs[0].Ref.Rel != ss.Dir+"/wget/2.html" || in.f.get("favicon.ico") == nil || in.f.get("favicon.ico").Rel != ss.Dir+"/favicon.ico" {
			t.Fatalf("%s after compaction: %v %+v", ss.Dir, ok, in.outs)
		}
		if _, ok := c.get(ss.Row, ss.Dir, 1); ok {
			t.Fatalf("%s: a record found for another ownFP", ss.Dir)
		}
	}
}

// TestGonePageWrittenAgain: a snapshot page deleted by hand is written
// again by the next export that goes over its root page, whether that
// root page is written again or stays (a second pass, here because a URL
// captured twice changed, goes over every root page).
func TestGonePageWrittenAgain(t *testing.T) {
	dir, m, c := generatedIn(t, 90, 5)
	events := countEvents(t)
	export := func() {
		t.Helper()
		clear(events)
		if _, err := Run(context.Background(), Options{Collection: c, PageSize: 20}, archive.Discard); err != nil {
			t.Fatal(err)
		}
	}
	export()
	order, _ := newestFirst(m)
	urls := map[string][]int{}
	for i, s := range order {
		urls[s.URL] = append(urls[s.URL], i)
	}
	twice, gone := -1, -1
	for i, s := range order {
		if len(urls[s.URL]) == 2 && twice < 0 {
			twice = i
		}
	}
	if twice < 0 {
		t.Fatal("no URL captured twice")
	}
	onPage := func(i int) int { return i / 20 }
	for i, s := range order {
		if len(urls[s.URL]) == 1 && onPage(i) != onPage(urls[order[twice].URL][0]) && onPage(i) != onPage(urls[order[twice].URL][1]) {
			gone = i
			break
		}
	}
	if gone < 0 {
		t.Fatal("no snapshot on a root page of its own")
	}
	page := filepath.Join(dir, filepath.FromSlash(order[gone].Dir), RootPage)
	if err := os.Remove(page); err != nil {
		t.Fatal(err)
	}
	if err := gen.RetitleIndex(filepath.Join(dir, filepath.FromSlash(order[twice].Dir)), "Captured twice, retitled"); err != nil {
		t.Fatal(err)
	}
	export()
	if events["pass2"] != 1 {
		t.Fatalf("a URL captured twice retitled: events %v, want a second pass", events)
	}
	if _, err := os.Stat(page); err != nil {
		t.Errorf("the page deleted on a root page that stays: %v", err)
	}
}

// TestRowCacheTempRemoved: the temp file of a compaction a kill cut short
// is removed by the next export, as the state's is.
func TestRowCacheTempRemoved(t *testing.T) {
	_, _, c := generatedIn(t, 5, 5)
	run := func() {
		t.Helper()
		if _, err := Run(context.Background(), Options{Collection: c}, archive.Discard); err != nil {
			t.Fatal(err)
		}
	}
	run()
	temp := c.Path(archive.StateDir + "/export/.in-place.state" + rowsSuffix + archive.TempMarker + "0a1b")
	if err := os.WriteFile(temp, []byte("half"), 0o644); err != nil {
		t.Fatal(err)
	}
	run()
	if _, err := os.Lstat(temp); !os.IsNotExist(err) {
		t.Errorf("%s left behind (%v)", temp, err)
	}
}

// TestKeptPagesNotLookedFor: when every root page is written again (a
// snapshot gone from the top of the list changes the page count), the pages of the snapshots
// kept are not looked for on disk when their folders' ctimes have not
// moved since their pages were seen there; a page deleted by hand moves
// its folder's ctime, is looked for, and is written again, also by a
// watched export, which looks only at the folders the watcher named.
func TestKeptPagesNotLookedFor(t *testing.T) {
	dir, m, c := generatedIn(t, 50, 5) // 3 pages; 49 make 2
	events := countEvents(t)
	export := func() Stats {
		t.Helper()
		clear(events)
		st, err := Run(context.Background(), Options{Collection: c, PageSize: 20}, archive.Discard)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	export()
	// The pages written moved their folders' ctimes: once those are older
	// than the trust window, an export lists the folders and sees the
	// pages in them.
	time.Sleep(catalog.ListingAge + 100*time.Millisecond)
	export()

	order, _ := newestFirst(m)
	if err := os.Rename(filepath.Join(dir, filepath.FromSlash(order[0].Dir)), filepath.Join(t.TempDir(), "parked")); err != nil {
		t.Fatal(err)
	}
	st := export()
	if st.RootWritten+st.RootSame != 2 || events["pass2"] != 1 || events["page looked for"] != 0 {
		t.Fatalf("with the newest snapshot gone: %d pages looked for, want none; events %v, %+v", events["page looked for"], events, st)
	}

	gone := filepath.Join(dir, filepath.FromSlash(order[20].Dir), RootPage) // on the first page, written again
	if err := os.Remove(gone); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(dir, filepath.FromSlash(order[1].Dir)), filepath.Join(t.TempDir(), "parked")); err != nil {
		t.Fatal(err)
	}
	st = export()
	if events["page looked for"] != 1 || st.Written != 1 {
		t.Fatalf("a page deleted by hand: %d pages looked for, want 1; %+v", events["page looked for"], st)
	}
	if _, err := os.Stat(gone); err != nil {
		t.Fatalf("the page deleted by hand: %v", err)
	}

	// A watched export looks only at the folders the watcher names, and
	// the watcher does not name one whose page was deleted: that page is
	// looked for all the same.
	gone = filepath.Join(dir, filepath.FromSlash(order[10].Dir), RootPage) // on the first page, written again
	if err := os.Remove(gone); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(dir, filepath.FromSlash(order[2].Dir)), filepath.Join(t.TempDir(), "parked")); err != nil {
		t.Fatal(err)
	}
	clear(events)
	st, err := Run(context.Background(), Options{Collection: c, PageSize: 20, Watched: true, Changed: []string{order[2].Dir}}, archive.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(gone); err != nil || st.Written != 1 {
		t.Fatalf("a page deleted by hand, under watch: %v; %+v", err, st)
	}
}

// TestRowSpans: the records read a page at a time are those a read of
// each finds, a record the spans hold only in part or not at all is read
// on its own, and records far apart are read apart.
func TestRowSpans(t *testing.T) {
	statePath := filepath.Join(t.TempDir(), "x.state")
	c := openRowCache(statePath, 7, false)
	var offs []int64
	dirOf := func(i int) string { return "archive/users/u/snapshots/20200101/example.com/" + strconv.Itoa(i) }
	for i := range 40 {
		d := dirOf(i)
		f := &files{dir: d, seen: map[string]*Ref{"favicon.ico": {Rel: d + "/favicon.ico", Size: 3}}}
		name := strings.Repeat("x", 1+i%7*300) // records of 40 to 2,000 bytes
		in := rowInputs{f: f, outs: []output{{Plugin: "wget", Ref: Ref{Rel: d + "/wget/" + name + ".html"}, Recorded: true}}}
		offs = append(offs, c.put(d, 1, in))
	}
	c.sync()
	c.close()
	c = openRowCache(statePath, 7, false)
	defer c.close()
	events := countEvents(t)
	// Every other record, and one far past the end of the file.
	var want []int64
	for i := 0; i < len(offs); i += 2 {
		want = append(want, offs[i])
	}
	spans := c.readSpans(append(want, c.size+1<<20))
	if n := events["row cache span read"]; n < 1 || n > 3 {
		t.Fatalf("%d reads for %d records side by side, want 1 to 3", n, len(want))
	}

	for i, off := range offs {
		got, ok := c.getIn(spans, off, dirOf(i), 1)
		each, eok := c.get(off, dirOf(i), 1)
		if !ok || !eok || !reflect.DeepEqual(got.outs, each.outs) || !reflect.DeepEqual(got.f.seen, each.f.seen) {
			t.Fatalf("record %d from the spans: %v %+v, read alone: %v %+v", i, ok, got.outs, eok, each.outs)
		}
		clear(events)
		if _, ok := c.getIn(spans, off, dirOf(i), 2); ok {
			t.Fatalf("record %d found for another ownFP", i)
		}
		if n := events["row cache record read"]; i%2 == 0 && n != 0 {
			t.Fatalf("record %d, refused in the spans, read again %d times", i, n)
		}
	}
	clear(events)
	for i, off := range want {
		if _, ok := c.getIn(spans, off, dirOf(2*i), 1); !ok {
			t.Fatalf("record %d not found", 2*i)
		}
	}
	if n := events["row from span"]; n != len(want) {
		t.Errorf("%d records decoded from the spans, want the %d read", n, len(want))
	}
	// Two records a megabyte apart are two reads.
	clear(events)
	if spans := c.readSpans([]int64{offs[0], offs[0] + 2<<20}); len(spans) != 2 || events["row cache span read"] != 2 {
		t.Fatalf("records far apart: %d spans, %d reads", len(spans), events["row cache span read"])
	}
}
