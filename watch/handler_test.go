package watch_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/archive/catalog"
	"github.com/folio-archive/folio/gen"
	"github.com/folio-archive/folio/watch"
)

var sprintf = fmt.Sprintf

// lines records what a Handler prints.
type lines struct{ info, warn []string }

func (l *lines) Infof(f string, a ...any)      { l.info = append(l.info, sprintf(f, a...)) }
func (l *lines) Warnf(f string, a ...any)      { l.warn = append(l.warn, sprintf(f, a...)) }
func (l *lines) Progress(string, int64, int64) {}

// collection generates n snapshots and returns the collection with its
// catalog built by a first (rescan) batch.
func collection(t *testing.T, n int) (*archive.Collection, *gen.Manifest, *watch.Handler, *lines) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "data")
	m, err := gen.Current(dir, gen.Options{N: n, Seed: 3, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	c, err := archive.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := &lines{}
	h := &watch.Handler{Coll: c, P: out}
	res, err := h.Apply(context.Background(), watch.Batch{Rescan: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Reindex.Added != n {
		t.Fatalf("first batch added %d of %d snapshots", res.Reindex.Added, n)
	}
	return c, m, h, out
}

// retitle rewrites the title in the snapshot folder's index.jsonl.
func retitle(t *testing.T, dir, title string) {
	t.Helper()
	ix, _, err := archive.ReadIndex(dir)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := ix.Snapshot()
	s.Title = title
	ix.SetSnapshot(s)
	if err := archive.WriteIndex(dir, ix); err != nil {
		t.Fatal(err)
	}
}

// search returns the folders the catalog's search finds for words.
func search(t *testing.T, c *archive.Collection, words string) []string {
	t.Helper()
	cat, err := catalog.Open(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	var out []string
	err = cat.Each(context.Background(), catalog.Query{Search: catalog.MatchWords(words)}, func(e catalog.Entry) error {
		out = append(out, e.Dir)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// dirs lists the catalog's folders.
func dirs(t *testing.T, c *archive.Collection) map[string]catalog.Entry {
	t.Helper()
	cat, err := catalog.Open(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	out := map[string]catalog.Entry{}
	if err := cat.Each(context.Background(), catalog.Query{}, func(e catalog.Entry) error {
		out[e.Dir] = e
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

func apply(t *testing.T, h *watch.Handler, events ...watch.Event) watch.Result {
	t.Helper()
	res, err := h.Apply(context.Background(), watch.Batch{Events: events})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func copyTree(t *testing.T, from, to string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cp", "-a", from, to).CombinedOutput(); err != nil {
		t.Fatalf("cp -a %s %s: %v %s", from, to, err, out)
	}
}

func TestHandlerAppliesEachKindOfChange(t *testing.T) {
	c, m, h, out := collection(t, 12)
	abs := func(rel string) string { return c.Path(rel) }

	t.Run("a snapshot folder dropped in", func(t *testing.T) {
		other := filepath.Join(t.TempDir(), "other")
		om, err := gen.Current(other, gen.Options{N: 1, Seed: 99, NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		rel := om.Snapshots[0].Dir
		copyTree(t, filepath.Join(other, filepath.FromSlash(rel)), abs(rel))
		res := apply(t, h, watch.Event{Path: rel})
		if res.Reindex.Added != 1 {
			t.Errorf("added %d, want 1", res.Reindex.Added)
		}
		if e, ok := dirs(t, c)[rel]; !ok || e.Snapshot.URL != om.Snapshots[0].URL {
			t.Errorf("the dropped-in folder %s is not cataloged (%+v)", rel, e.Snapshot.URL)
		}
	})

	t.Run("an index.jsonl edited by hand", func(t *testing.T) {
		rel := m.Snapshots[2].Dir
		ix, _, err := archive.ReadIndex(abs(rel))
		if err != nil {
			t.Fatal(err)
		}
		s, _ := ix.Snapshot()
		s.Title = "Edited by hand — Grüße"
		ix.SetSnapshot(s)
		// An editor writes in place, not by rename.
		if err := os.WriteFile(filepath.Join(abs(rel), archive.IndexFile), ix.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		res := apply(t, h, watch.Event{Path: rel + "/" + archive.IndexFile})
		if res.Reindex.Updated != 1 {
			t.Errorf("updated %d, want 1", res.Reindex.Updated)
		}
		if got := dirs(t, c)[rel].Snapshot.Title; got != s.Title {
			t.Errorf("title in the catalog %q, want %q", got, s.Title)
		}
	})

	t.Run("a folder deleted", func(t *testing.T) {
		rel := m.Snapshots[3].Dir
		if err := os.RemoveAll(abs(rel)); err != nil {
			t.Fatal(err)
		}
		res := apply(t, h, watch.Event{Path: rel, Removed: true})
		if res.Reindex.Removed != 1 {
			t.Errorf("removed %d, want 1", res.Reindex.Removed)
		}
		if _, ok := dirs(t, c)[rel]; ok {
			t.Errorf("%s is still in the catalog", rel)
		}
	})

	t.Run("a folder moved", func(t *testing.T) {
		from := m.Snapshots[4].Dir
		parts := strings.Split(from, "/")
		parts[5] = "moved.example" // another domain folder
		to := strings.Join(parts, "/")
		if err := os.MkdirAll(filepath.Dir(abs(to)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(abs(from), abs(to)); err != nil {
			t.Fatal(err)
		}
		res := apply(t, h, watch.Event{Path: from, Removed: true}, watch.Event{Path: to})
		if res.Reindex.Added != 1 || res.Reindex.Removed != 1 {
			t.Errorf("added %d removed %d, want 1 and 1", res.Reindex.Added, res.Reindex.Removed)
		}
		got := dirs(t, c)
		if _, ok := got[from]; ok {
			t.Errorf("the old place %s is still cataloged", from)
		}
		if got[to].Snapshot.URL != m.Snapshots[4].URL {
			t.Errorf("the new place %s is not cataloged", to)
		}
	})

	t.Run("a legacy folder copied into archive", func(t *testing.T) {
		rel := "archive/1700000000.5"
		if err := os.MkdirAll(abs(rel), 0o755); err != nil {
			t.Fatal(err)
		}
		index := `{"url": "https://legacy.example/page", "timestamp": "1700000000.5", "title": "An old capture", "history": {}}`
		if err := os.WriteFile(filepath.Join(abs(rel), archive.LegacyIndexFile), []byte(index), 0o644); err != nil {
			t.Fatal(err)
		}
		res := apply(t, h, watch.Event{Path: rel})
		if res.Reindex.Added != 1 {
			t.Errorf("added %d, want 1", res.Reindex.Added)
		}
		if e := dirs(t, c)[rel]; e.Layout != catalog.LayoutLegacy || e.Snapshot.URL != "https://legacy.example/page" {
			t.Errorf("the legacy folder is cataloged as %+v", e)
		}
		if !strings.Contains(strings.Join(out.info, "\n"), rel+" is a legacy snapshot folder: 'folio update --migrate-only'") {
			t.Errorf("no hint to migrate it: %q", out.info)
		}
	})

	t.Run("captured text written", func(t *testing.T) {
		rel := m.Snapshots[6].Dir
		txt := filepath.Join(abs(rel), "htmltotext", "htmltotext.txt")
		if err := os.MkdirAll(filepath.Dir(txt), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(txt, []byte("a word only here: cormorants"), 0o644); err != nil {
			t.Fatal(err)
		}
		res := apply(t, h, watch.Event{Path: rel + "/htmltotext"})
		if res.Reindex.Updated != 1 || res.Reindex.TextRead != 1 {
			t.Errorf("%+v, want the folder read again for its text", res.Reindex)
		}
		if got := search(t, c, "cormorants"); len(got) != 1 || got[0] != rel {
			t.Errorf("search finds %q", got)
		}
		// Written in a folder nobody watches, with no index change, it is
		// left to the next reindex of the whole tree, as such a reindex
		// leaves it: a look on a timer trusts the index.
		if err := os.WriteFile(txt, []byte("a word only here now: shearwaters"), 0o644); err != nil {
			t.Fatal(err)
		}
		res, err := h.Apply(context.Background(), watch.Batch{Roots: []string{rel}})
		if err != nil || res.Reindex.TextRead != 0 || res.Reindex.Unchanged != 1 {
			t.Errorf("a look at the unwatched folder: %+v %v, want its text not read", res.Reindex, err)
		}
		res = apply(t, h, watch.Event{Path: rel + "/htmltotext/htmltotext.txt"})
		if res.Reindex.TextRead != 1 {
			t.Errorf("%+v, want the text an event names read", res.Reindex)
		}
		if got := search(t, c, "shearwaters"); len(got) != 1 || got[0] != rel {
			t.Errorf("search finds %q", got)
		}
	})

	t.Run("a batch looks only at the folders it names", func(t *testing.T) {
		edited, named := m.Snapshots[7].Dir, m.Snapshots[8].Dir
		retitle(t, abs(edited), "seen later")
		retitle(t, abs(named), "seen now")
		res := apply(t, h, watch.Event{Path: named + "/" + archive.IndexFile})
		if res.Reindex.Updated != 1 || res.Reindex.Scanned != 1 {
			t.Errorf("%+v, want one folder looked at and read", res.Reindex)
		}
		got := dirs(t, c)
		if got[named].Snapshot.Title != "seen now" || got[edited].Snapshot.Title == "seen later" {
			t.Errorf("titles %q and %q", got[named].Snapshot.Title, got[edited].Snapshot.Title)
		}
		// A folder nobody watches is looked at whole when the batch
		// names it as a root.
		date := strings.Join(strings.Split(edited, "/")[:5], "/")
		res, err := h.Apply(context.Background(), watch.Batch{Roots: []string{date}})
		if err != nil || res.Reindex.Updated != 1 || dirs(t, c)[edited].Snapshot.Title != "seen later" {
			t.Errorf("a batch of the root %s: %+v %v", date, res.Reindex, err)
		}
	})

	t.Run("changes folio makes itself are ignored", func(t *testing.T) {
		rel := m.Snapshots[5].Dir
		before := dirs(t, c)
		res := apply(t, h,
			watch.Event{Path: rel + "/index.html"},
			watch.Event{Path: rel + "/screenshot/screenshot.png"},
			watch.Event{Path: rel + "/" + archive.IndexFile + archive.TempMarker + "123"},
			watch.Event{Path: ".folio/catalog.sqlite3-wal"},
			watch.Event{Path: "index.html"},
		)
		if !res.Skipped {
			t.Errorf("a batch of folio's own writes was applied: %+v", res)
		}
		if len(dirs(t, c)) != len(before) {
			t.Error("the catalog changed")
		}
	})
}

func TestHandlerWaitsForTheLock(t *testing.T) {
	c, m, h, _ := collection(t, 4)
	lock, err := c.Lock("add")
	if err != nil {
		t.Fatal(err)
	}
	rel := m.Snapshots[1].Dir
	if err := os.RemoveAll(c.Path(rel)); err != nil {
		t.Fatal(err)
	}
	_, err = h.Apply(context.Background(), watch.Batch{Events: []watch.Event{{Path: rel, Removed: true}}})
	if !errors.Is(err, archive.ErrLocked) {
		t.Fatalf("apply under another's lock: %v, want ErrLocked", err)
	}
	if _, ok := dirs(t, c)[rel]; !ok {
		t.Error("the catalog changed while another process held the lock")
	}
	lock.Unlock()
	if res := apply(t, h, watch.Event{Path: rel, Removed: true}); res.Reindex.Removed != 1 {
		t.Errorf("after the lock was released: removed %d, want 1", res.Reindex.Removed)
	}
}

func TestHandlerExportsOnlyAfterChanges(t *testing.T) {
	c, m, h, _ := collection(t, 4)
	exports := 0
	fail := false
	var rewrites []string
	h.Export = func(_ context.Context, scope watch.ExportScope) (string, error) {
		if fail {
			return "", archive.ErrLocked
		}
		exports++
		rewrites = scope.Rewrite
		return "export: done", nil
	}
	// The first batch with an exporter exports, changed or not.
	if res := apply(t, h, watch.Event{Path: "archive/users"}); res.Exported == "" || exports != 1 {
		t.Fatalf("first batch: exported %q, %d exports", res.Exported, exports)
	}
	if res := apply(t, h, watch.Event{Path: "archive/users"}); res.Exported != "" || exports != 1 {
		t.Errorf("a batch that changed nothing exported (%d exports)", exports)
	}
	// A change whose export could not run is exported by the next batch,
	// even one that changes nothing itself.
	rel := m.Snapshots[0].Dir
	if err := os.RemoveAll(c.Path(rel)); err != nil {
		t.Fatal(err)
	}
	fail = true
	if _, err := h.Apply(context.Background(), watch.Batch{Events: []watch.Event{{Path: rel, Removed: true}}}); !errors.Is(err, archive.ErrLocked) {
		t.Fatalf("export under a lock: %v", err)
	}
	fail = false
	if res, err := h.Apply(context.Background(), watch.Batch{}); err != nil || res.Exported == "" || exports != 2 {
		t.Errorf("the due export did not run: %+v %v (%d exports)", res, err, exports)
	}
	// An output added at the top of a snapshot folder changes no index
	// but the folder's page: it is exported. The page the export writes
	// there, its temp file and a file deeper down are not.
	snap := m.Snapshots[1].Dir
	for _, quiet := range []string{snap + "/index.html", snap + "/.index.html.folio-tmp-1", snap + "/wget/.more.html.folio-tmp-1"} {
		if res := apply(t, h, watch.Event{Path: quiet}); res.Exported != "" || exports != 2 {
			t.Errorf("%s: exported (%d exports)", quiet, exports)
		}
	}
	if res := apply(t, h, watch.Event{Path: snap + "/wget"}); res.Exported == "" || exports != 3 || len(rewrites) != 0 {
		t.Errorf("an output folder added by hand was not exported (%d exports, rewrites %v)", exports, rewrites)
	}
	// A file written inside an output folder: its snapshot's page is
	// written again, though the folder's names did not change.
	if res := apply(t, h, watch.Event{Path: snap + "/wget/example.com/more.html"}); res.Exported == "" || exports != 4 ||
		len(rewrites) != 1 || rewrites[0] != snap {
		t.Errorf("a file written inside an output folder: %d exports, rewrites %v", exports, rewrites)
	}
}

// scopedExports returns a collection of four snapshots and its handler,
// whose exports record the scope each was given, in order.
func scopedExports(t *testing.T) (*gen.Manifest, *watch.Handler, *[]watch.ExportScope) {
	t.Helper()
	_, m, h, _ := collection(t, 4)
	scopes := &[]watch.ExportScope{}
	h.Export = func(_ context.Context, scope watch.ExportScope) (string, error) {
		*scopes = append(*scopes, scope)
		return "export: done", nil
	}
	return m, h, scopes
}

// TestHandlerTellsTheExportWhatChanged: an export after the handler's
// first is told the folders of every event since the previous one (a
// folder above the snapshot level as it is), and is not told it watched
// after a batch that may have lost events, or when no folder is watched;
// the folders the watcher misses are looked at by every export.
func TestHandlerTellsTheExportWhatChanged(t *testing.T) {
	m, h, scopes := scopedExports(t)
	snap, other := m.Snapshots[0].Dir, m.Snapshots[1].Dir
	apply(t, h, watch.Event{Path: snap + "/index.jsonl"})
	if len(*scopes) != 1 || (*scopes)[0].Watched {
		t.Fatalf("first export: %+v, want one, not watched", *scopes)
	}
	// Events of two batches, the first exporting nothing (an export's own
	// page), reach the next export.
	apply(t, h, watch.Event{Path: other + "/index.html"})
	domain := path.Dir(other)
	apply(t, h, watch.Event{Path: snap + "/handnote.txt"}, watch.Event{Path: domain + "/new-id"}, watch.Event{Path: "sources/x.txt"})
	if len(*scopes) != 2 {
		t.Fatalf("%d exports, want 2", len(*scopes))
	}
	got := (*scopes)[1]
	want := []string{domain + "/new-id", other, snap}
	slices.Sort(want)
	if !got.Watched || !slices.Equal(got.Changed, want) {
		t.Errorf("second export: watched %v, changed %v; want true, %v", got.Watched, got.Changed, want)
	}
	if _, err := h.Apply(context.Background(), watch.Batch{Rescan: true, Events: []watch.Event{{Path: snap + "/more.txt"}}}); err != nil {
		t.Fatal(err)
	}
	if len(*scopes) != 3 || (*scopes)[2].Watched {
		t.Errorf("after a rescan: %+v, want a third export, not watched", *scopes)
	}
	apply(t, h, watch.Event{Path: snap + "/again.txt"})
	if len(*scopes) != 4 || !(*scopes)[3].Watched || !slices.Equal((*scopes)[3].Changed, []string{snap}) {
		t.Errorf("after the rescan's export: %+v, want watched again with only %s", (*scopes)[len(*scopes)-1], snap)
	}
	// The watcher ran out of watches: the folders it misses are looked at
	// by every export as if an event named them (one inside a snapshot
	// folder as that folder), and a batch's polled roots by the next.
	unwatched := []string{domain, other + "/wget"}
	h.Unwatched = func() ([]string, bool) { return unwatched, false }
	apply(t, h, watch.Event{Path: snap + "/unwatched.txt"})
	want = []string{domain, other, snap}
	slices.Sort(want)
	if last := (*scopes)[len(*scopes)-1]; len(*scopes) != 5 || !last.Watched || !slices.Equal(last.Changed, want) {
		t.Errorf("with folders unwatched: %+v, want a fifth export, watched, changed %v", last, want)
	}
	h.Unwatched = nil
	if _, err := h.Apply(context.Background(), watch.Batch{Roots: []string{domain}}); err != nil {
		t.Fatal(err)
	}
	apply(t, h, watch.Event{Path: snap + "/last.txt"})
	want = []string{domain, snap}
	slices.Sort(want)
	if last := (*scopes)[len(*scopes)-1]; !last.Watched || !slices.Equal(last.Changed, want) {
		t.Errorf("after a look at an unwatched folder: %+v, want watched, changed %v", last, want)
	}
	h.Unwatched = func() ([]string, bool) { return nil, true } // the watcher polls
	apply(t, h, watch.Event{Path: snap + "/polled.txt"})
	if last := (*scopes)[len(*scopes)-1]; last.Watched {
		t.Errorf("with no folder watched: %+v, want not watched", last)
	}
}

// TestHandlerLooksAtUnwatchedOnPolls: with Look, each poll of the
// unwatched folders asks Look of them (a folder inside a snapshot folder
// as that folder); a change it names starts an export told of that folder
// only, and an export for an event elsewhere is told of no unwatched
// folder. A poll Look cannot answer (no export to compare with) leaves
// its folders to the next export, as without Look.
func TestHandlerLooksAtUnwatchedOnPolls(t *testing.T) {
	m, h, scopes := scopedExports(t)
	snap, other := m.Snapshots[0].Dir, m.Snapshots[1].Dir
	domain := path.Dir(other)
	unwatched := []string{domain, other + "/wget"}
	h.Unwatched = func() ([]string, bool) { return unwatched, false }
	var asked [][]string
	var named, again []string
	answers := false
	h.Look = func(_ context.Context, dirs []string) ([]string, []string, bool, error) {
		asked = append(asked, dirs)
		if !answers {
			return nil, nil, false, nil
		}
		return named, again, true, nil
	}
	poll := func() {
		t.Helper()
		if _, err := h.Apply(context.Background(), watch.Batch{Roots: unwatched}); err != nil {
			t.Fatal(err)
		}
	}
	sorted := func(s ...string) []string { slices.Sort(s); return s }
	apply(t, h, watch.Event{Path: snap + "/index.jsonl"})
	if len(*scopes) != 1 || len(asked) != 0 {
		t.Fatalf("first export: %d exports, %d looks; want 1 and 0", len(*scopes), len(asked))
	}
	poll()
	if len(asked) != 1 || !slices.Equal(asked[0], []string{domain, other}) || len(*scopes) != 1 {
		t.Fatalf("a poll Look cannot answer: asked %v, %d exports; want [%s %s] asked and no export", asked, len(*scopes), domain, other)
	}
	apply(t, h, watch.Event{Path: snap + "/a.txt"})
	if last := (*scopes)[len(*scopes)-1]; len(*scopes) != 2 || !last.Watched || !slices.Equal(last.Changed, sorted(domain, other, snap)) {
		t.Fatalf("after that poll: %+v, want a second export told of the polled folders", *scopes)
	}
	answers = true
	poll()
	if len(asked) != 2 || len(*scopes) != 2 {
		t.Fatalf("a poll Look finds nothing in: %d looks, %d exports; want 2 and still 2", len(asked), len(*scopes))
	}
	apply(t, h, watch.Event{Path: snap + "/b.txt"})
	if last := (*scopes)[len(*scopes)-1]; len(*scopes) != 3 || !last.Watched || !slices.Equal(last.Changed, []string{snap}) {
		t.Fatalf("an event's export while the polls look: %+v, want one told of %s only", last, snap)
	}
	named = []string{other}
	poll()
	if last := (*scopes)[len(*scopes)-1]; len(*scopes) != 4 || !last.Watched || !slices.Equal(last.Changed, []string{other}) || len(last.Rewrite) != 0 {
		t.Fatalf("a poll whose Look named %s: %+v, want an export told of it only", other, *scopes)
	}
	named, again = nil, []string{other}
	poll()
	if last := (*scopes)[len(*scopes)-1]; len(*scopes) != 5 || !last.Watched || len(last.Changed) != 0 || !slices.Equal(last.Rewrite, []string{other}) {
		t.Errorf("a poll whose Look named %s to write again: %+v, want an export told to write its page", other, *scopes)
	}
}

func TestOutput(t *testing.T) {
	snap := "archive/users/system/snapshots/20240101/example.com/0190a1b2c3d4e5f6a7b8c9d0e1f2a3b4"
	for path, want := range map[string]bool{
		snap + "/wget":               true,
		snap + "/archive.org.txt":    true,
		"archive/1700000000.5/media": true,
		snap:                         false,
		snap + "/index.jsonl":        false,
		snap + "/index.html":         false,
		snap + "/index.html.gz":      false,
		snap + "/.DS_Store":          false,
		snap + "/x.folio-tmp-1":      false,
		snap + "/wget/example.com":   false,
		"archive/users/system/snapshots/20240101/example.com/.0190a1b2c3d4e5f6a7b8c9d0e1f2a3b4.folio-tmp-1/wget": false,
		"site/index.html": false,
	} {
		if got := watch.Output(path); got != want {
			t.Errorf("Output(%q) = %v, want %v", path, got, want)
		}
	}
	for path, want := range map[string]bool{
		snap + "/wget/example.com":          true,
		snap + "/wget/example.com/a b.html": true,
		"archive/1700000000.5/media/x.mp4":  true,
		snap + "/wget":                      false,
		snap + "/index.html":                false,
		snap + "/wget/.x.swp":               false,
		snap + "/.git/objects":              false,
		snap + "/wget/x.folio-tmp-1/y":      false,
	} {
		dir, got := watch.InOutput(path)
		if got != want || got && !strings.HasPrefix(path, dir+"/") {
			t.Errorf("InOutput(%q) = %q, %v, want %v", path, dir, got, want)
		}
	}
}

func TestRelevantAndClassify(t *testing.T) {
	snap := "archive/users/system/snapshots/20240101/example.com/0190a1b2c3d4e5f6a7b8c9d0e1f2a3b4"
	for _, c := range []struct {
		path     string
		relevant bool
		kind     watch.Kind
	}{
		{"archive", true, watch.Other},
		{"archive/users/system/snapshots/20240101", true, watch.Other},
		{snap, true, watch.Snapshot},
		{snap + "/index.jsonl", true, watch.Index},
		{snap + "/index.json", true, watch.Index},
		{snap + "/index.html", false, watch.Payload},
		{snap + "/screenshot/screenshot.png", false, watch.Payload},
		{snap + "/.index.jsonl.swp", false, watch.Payload},
		{"archive/1700000000.5", true, watch.Legacy},
		{"archive/1700000000.5/index.json", true, watch.Index},
		{"archive/1700000000.5/screenshot.png", false, watch.Payload},
		{"archive/not-a-timestamp", true, watch.Other},
		{".folio/catalog.sqlite3", false, watch.Other},
		{"index.html", false, watch.Other},
		{"site/page-2.html", false, watch.Other},
	} {
		if got := watch.Relevant(c.path); got != c.relevant {
			t.Errorf("Relevant(%q) = %v", c.path, got)
		}
		if k, _ := watch.Classify(c.path); k != c.kind {
			t.Errorf("Classify(%q) = %v, want %v", c.path, k, c.kind)
		}
	}
}
