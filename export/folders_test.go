package export

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/folio-archive/folio/archive"
)

// A folder whose ctime is not older than the trust window may change
// again within the same tick unseen: its ctime is not kept, so the next
// export lists it again. An older one is kept and not listed again while
// its ctime holds.
func TestFolderTrust(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "snap", "wget"), 0o755); err != nil {
		t.Fatal(err)
	}
	recent := folders{root: root, trustBefore: time.Now().Add(-time.Hour).UnixNano()}
	if f := recent.read("snap", folderSeen{}); f.ctime != 0 || f.sig == 0 {
		t.Errorf("a folder changed within the window: %+v, want its names and no ctime", f)
	}
	old := folders{root: root, trustBefore: time.Now().Add(time.Hour).UnixNano()}
	f := old.read("snap", folderSeen{})
	if f.ctime == 0 || f.sig == 0 {
		t.Fatalf("an older folder: %+v, want its names and ctime", f)
	}
	// Held: the names are not read again while the ctime holds (a sig
	// passed in is returned as it is).
	if g := old.read("snap", folderSeen{sig: 42, ctime: f.ctime}); g.sig != 42 {
		t.Errorf("a folder whose ctime holds was listed again: %+v", g)
	}
}

func TestCutPartialRune(t *testing.T) {
	for in, want := range map[string]string{
		"abc":               "abc",
		"caf\xc3":           "caf",               // é cut after its first byte
		"\xe2\x82":          "",                  // € cut after two bytes
		"x\xf0\x9f\x98":     "x",                 // an emoji cut after three
		"x\xf0\x9f\x98\x80": "x\xf0\x9f\x98\x80", // whole
		"caf\xe9 au lait":   "caf\xe9 au lait",   // Latin-1: kept, not trimmed away
		"caf\xe9":           "caf",               // a lead byte at the end reads as a character cut short
	} {
		if got := string(cutPartialRune([]byte(in))); got != want {
			t.Errorf("cutPartialRune(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestWatchedExportLooksOnlyAtChangedFolders: under folio watch the
// export is told which folders changed since the previous one, and looks
// at no other; without that it looks at every folder it exported.
func TestWatchedExportLooksOnlyAtChangedFolders(t *testing.T) {
	dir, m, c := generatedIn(t, 12, 3)
	exp := func(opts Options) {
		t.Helper()
		opts.Collection = c
		if _, err := Run(context.Background(), opts, archive.Discard); err != nil {
			t.Fatal(err)
		}
	}
	exp(Options{})
	// A text file put at the top of two snapshot folders by hand, which no
	// index names: only a look at the folder finds it.
	a, b, c3 := m.Snapshots[2].Dir, m.Snapshots[7].Dir, m.Snapshots[9].Dir
	for _, d := range []string{a, b, c3} {
		if err := os.WriteFile(filepath.Join(dir, d, "handnote.txt"), []byte("a note"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	shows := func(d string) bool {
		page, err := os.ReadFile(filepath.Join(dir, d, RootPage))
		if err != nil {
			t.Fatal(err)
		}
		return strings.Contains(string(page), "handnote.txt")
	}
	// a's domain folder stands for everything below it.
	exp(Options{Watched: true, Changed: []string{path.Dir(a), "archive/users/nobody"}})
	if !shows(a) || shows(b) || shows(c3) {
		t.Fatalf("watched export: page of the changed folder shows the note %v (want true), of the others %v, %v (want false)", shows(a), shows(b), shows(c3))
	}
	// A snapshot folder named itself is looked at; a folder inside
	// another one names no snapshot folder.
	exp(Options{Watched: true, Changed: []string{b, path.Join(c3, "wget"), b}})
	if !shows(b) || shows(c3) {
		t.Fatalf("watched export of a snapshot folder: its page shows the note %v (want true), the page of one with a changed subfolder %v (want false)", shows(b), shows(c3))
	}
	exp(Options{})
	if !shows(c3) {
		t.Errorf("an export not told what changed did not look at every folder")
	}
}

func TestUnderAny(t *testing.T) {
	under := underAny([]string{"archive/users/u/snapshots/20240101/a.com", "archive/users/u/snapshots/20240102/b.com/id1", "archive/users/v", "archive/1700000000"})
	for dir, want := range map[string]bool{
		"archive/users/u/snapshots/20240101/a.com/id9":   true,
		"archive/users/u/snapshots/20240101/a.comx/id9":  false,
		"archive/users/u/snapshots/20240102/b.com/id1":   true,
		"archive/users/u/snapshots/20240102/b.com/id10":  false,
		"archive/users/u/snapshots/20240102/b.com/id1/x": false, // not a snapshot folder; ids are exact
		"archive/users/v/snapshots/20240101/c.com/id2":   true,
		"archive/users/vw/snapshots/20240101/c.com/id2":  false,
		"archive/1700000000":                             true, // a legacy snapshot folder
		"archive/1700000000.5":                           false,
	} {
		if got := under(dir); got != want {
			t.Errorf("underAny(%s) = %v, want %v", dir, got, want)
		}
	}
}

// TestStateCache: an export given the Cache of the previous one takes its
// state from memory, and reads the file again once another export (here
// one without the cache) has written it. An export that changes nothing
// leaves the state file as it is, and the cache still holds what it does.
func TestStateCache(t *testing.T) {
	dir, m, c := generatedIn(t, 6, 4)
	reads, unchanged := 0, 0
	testEvent = func(e string) {
		switch e {
		case "read state":
			reads++
		case "state unchanged":
			unchanged++
		}
	}
	defer func() { testEvent = func(string) {} }()
	statePath := c.Path(archive.StateDir + "/export/in-place.state")
	cache := &Cache{}
	var id fileID
	for i, step := range []struct {
		cache     *Cache
		change    bool // a file put in a snapshot folder before the export
		reads     int  // state files read, in all
		unchanged int  // exports that left the state file as it was, in all
	}{{cache, false, 0, 0}, {cache, false, 0, 1}, {nil, false, 1, 2}, {cache, false, 1, 3},
		{nil, true, 2, 3}, {cache, false, 3, 4}, {cache, false, 3, 5}} {
		if step.change {
			note := filepath.Join(dir, filepath.FromSlash(m.Snapshots[0].Dir), "note.txt")
			if err := os.WriteFile(note, []byte("by hand"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := Run(context.Background(), Options{Collection: c, Cache: step.cache}, archive.Discard); err != nil {
			t.Fatal(err)
		}
		if reads != step.reads || unchanged != step.unchanged {
			t.Fatalf("export %d: %d state files read and %d left as they were in all, want %d and %d", i+1, reads, unchanged, step.reads, step.unchanged)
		}
		was := id
		if id, _ = fileIDOf(statePath); i > 0 && (id != was) != step.change {
			t.Fatalf("export %d: state file written again: %v, want %v", i+1, id != was, step.change)
		}
	}
}

// A snapshot folder of the current layout is stat'ed relative to its
// user's snapshot folder, held open: it must find what the whole path
// finds, also when that snapshot folder is a symlink to another disk or
// the folder is gone, and close what it opened.
func TestFolderReadRelative(t *testing.T) {
	root := t.TempDir()
	elsewhere := t.TempDir()
	snap := "archive/users/alice/snapshots/20240101/example.com/abc"
	moved := "archive/users/bob/snapshots/20240101/example.com/def"
	for _, d := range []string{filepath.Join(root, snap, "wget"), filepath.Join(elsewhere, "20240101/example.com/def/media"), filepath.Join(root, "archive/users/bob")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(elsewhere, filepath.Join(root, "archive/users/bob/snapshots")); err != nil {
		t.Fatal(err)
	}
	fs := folders{root: root, trustBefore: time.Now().Add(time.Hour).UnixNano()}
	for _, dir := range []string{snap, moved} {
		got := fs.read(dir, folderSeen{})
		var want uint64
		entries, err := os.ReadDir(filepath.Join(root, dir))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			want += hashString(e.Name())
		}
		if got.sig != want || got.ctime == 0 {
			t.Errorf("read(%s) = %+v, want the names' sum %d and a ctime", dir, got, want)
		}
	}
	if got := fs.read("archive/users/alice/snapshots/20240101/example.com/gone", folderSeen{}); got != (folderSeen{}) {
		t.Errorf("a folder that is not there: %+v", got)
	}
	if len(fs.bases.fds) != 2 {
		t.Errorf("open base folders: %v, want alice's and bob's", fs.bases.fds)
	}
	fs.bases.close()
	if fs.bases.fds != nil {
		t.Errorf("after close: %v", fs.bases.fds)
	}
	if got := fs.read(snap, folderSeen{}); got.sig == 0 {
		t.Errorf("read after close: %+v, want the folder seen again", got)
	}
	fs.bases.close()
}

func TestSplitBase(t *testing.T) {
	for dir, want := range map[string][2]string{
		"archive/users/alice/snapshots/20240101/example.com/abc": {"archive/users/alice/snapshots", "20240101/example.com/abc"},
		"archive/users/a/snapshots/x":                            {"archive/users/a/snapshots", "x"},
		"archive/1712345678.123":                                 {},
		"archive/users/alice/other/20240101/example.com/abc":     {},
		"archive/users//snapshots/x":                             {},
		"archive/users/alice/snapshots/":                         {},
		"archive/users/alice/snapshots":                          {},
	} {
		base, rel, ok := splitBase(dir)
		if got := [2]string{base, rel}; got != want || ok != (want != [2]string{}) {
			t.Errorf("splitBase(%q) = %q, %q, %v; want %q", dir, base, rel, ok, want)
		}
	}
}

// A look keeps only the folders it found otherwise than the last export
// saw them; of answers for the others from that export's state, and
// detach copies them out of it before it is let go.
func TestLookKeepsChangedFolders(t *testing.T) {
	root := t.TempDir()
	dirs := []string{"archive/users/a/snapshots/20240101/x.org/1", "archive/users/a/snapshots/20240101/x.org/2", "archive/users/a/snapshots/20240102/y.org/3"}
	for _, d := range dirs {
		if err := os.MkdirAll(filepath.Join(root, d, "wget"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	trusted := time.Now().Add(time.Hour).UnixNano()
	first := folders{root: root, trustBefore: trusted}
	prev := newState(0)
	for _, d := range dirs {
		f := first.read(d, folderSeen{})
		prev.Snaps[hashString(d)] = snapState{Dir: d, Folder: f.sig, CTime: f.ctime}
	}
	first.bases.close()
	if err := os.WriteFile(filepath.Join(root, dirs[1], "note.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	fs := folders{root: root, trustBefore: trusted}
	defer fs.bases.close()
	changed, err := fs.look(context.Background(), prev, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(changed) != 1 || changed[0] != dirs[1] || len(fs.m) != 1 {
		t.Fatalf("look: changed %v, kept %d folders; want only %s", changed, len(fs.m), dirs[1])
	}
	n := 0
	fs.looked(func(uint64, folderSeen) { n++ })
	if n != 1 {
		t.Errorf("looked went through %d folders, want 1", n)
	}
	for _, d := range dirs {
		want := fs.read(d, folderSeen{})
		if got := fs.of(d); got != want {
			t.Errorf("of(%s) = %+v, want %+v", d, got, want)
		}
	}
	fs.detach()
	prev.Snaps = nil
	if fs.known != nil || len(fs.m) != 3 {
		t.Fatalf("after detach: known %v, %d folders kept; want none and 3", fs.known, len(fs.m))
	}
	for _, d := range dirs {
		if got, want := fs.of(d), fs.read(d, folderSeen{}); got != want {
			t.Errorf("after detach, of(%s) = %+v, want %+v", d, got, want)
		}
	}
}

// TestLook: the look 'folio watch' asks of the folders it has no watch
// for names the snapshot folders at or below them whose names changed
// since the export kept in the cache, once each has been still for the
// trust window with the folders in it, and no other; it writes nothing,
// and keeps what it found of the others in the cached state (it does not
// list them again). A plugin folder made, named, then filled is named for
// a rewrite, until it has been still for settleFor. With no export kept
// it looks at nothing. The exports told of what it named show each step.
func TestLook(t *testing.T) {
	dir, m, c := generatedIn(t, 6, 4)
	events := countEvents(t)
	ctx := context.Background()
	cache := &Cache{}
	later := func() time.Time { return time.Now().Add(time.Minute) } // every change is still by then
	if got, ok, err := Look(ctx, Options{Collection: c, Cache: cache}, []string{archive.ArchiveDir}); ok || err != nil || got.Changed != nil {
		t.Fatalf("with no export kept: %v, %v, %v; want nothing looked at", got, ok, err)
	}
	export := func(scope Options) {
		t.Helper()
		scope.Collection, scope.Cache, scope.Watched = c, cache, true
		if _, err := Run(ctx, scope, archive.Discard); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Run(ctx, Options{Collection: c, Cache: cache}, archive.Discard); err != nil {
		t.Fatal(err)
	}
	snap, other := m.Snapshots[1].Dir, ""
	for _, s := range m.Snapshots {
		if path.Dir(s.Dir) != path.Dir(snap) {
			other = s.Dir
			break
		}
	}
	if other == "" {
		t.Fatal("every snapshot in one domain folder")
	}
	look := func(now func() time.Time, dirs ...string) Looked {
		t.Helper()
		clear(events)
		got, ok, err := Look(ctx, Options{Collection: c, Cache: cache, Now: now}, dirs)
		if err != nil || !ok {
			t.Fatalf("Look(%v): %v, %v", dirs, ok, err)
		}
		return got
	}
	nothing := func(got Looked) bool { return len(got.Changed)+len(got.Rewrite) == 0 }
	only := func(list []string) bool { return len(list) == 1 && list[0] == snap }
	// The export wrote its pages after its look: the first look lists
	// every folder again (their ctimes moved), and keeps what it saw.
	if got := look(later, archive.ArchiveDir); !nothing(got) || events["folder listed"] != len(m.Snapshots) {
		t.Errorf("first look after the export: %+v, %d folders listed; want nothing, %d", got, events["folder listed"], len(m.Snapshots))
	}
	for _, dirs := range [][]string{{archive.ArchiveDir}, {path.Dir(snap)}, {snap, other}, nil} {
		if got := look(later, dirs...); !nothing(got) || events["folder listed"] != 0 {
			t.Errorf("Look(%v) with nothing changed: %+v, %d folders listed; want nothing", dirs, got, events["folder listed"])
		}
	}
	page := func() string {
		b, _ := os.ReadFile(filepath.Join(dir, filepath.FromSlash(snap), RootPage))
		return string(b)
	}
	plugin := filepath.Join(dir, filepath.FromSlash(snap), "gallerydl")
	if err := os.MkdirAll(plugin, 0o755); err != nil {
		t.Fatal(err)
	}
	if got := look(time.Now, archive.ArchiveDir); !nothing(got) {
		t.Errorf("Look just after a plugin folder was made: %+v, want nothing until it is still", got)
	}
	for dirs, want := range map[string]bool{archive.ArchiveDir: true, path.Dir(snap): true, snap: true, other: false} {
		if got := look(later, dirs); len(got.Rewrite) != 0 || want != only(got.Changed) || !want && len(got.Changed) != 0 {
			t.Errorf("Look(%s) once the folder made in %s is still: %+v", dirs, snap, got)
		}
	}
	export(Options{Changed: []string{snap}})
	// The plugin fills its folder after a while: the page is written again.
	if err := os.WriteFile(filepath.Join(plugin, "photo.jpg"), []byte("\xff\xd8\xff"), 0o644); err != nil {
		t.Fatal(err)
	}
	got := look(later, archive.ArchiveDir)
	if len(got.Changed) != 0 || !only(got.Rewrite) {
		t.Fatalf("Look after a file was written in the plugin folder named before: %+v, want %s to write again", got, snap)
	}
	if strings.Contains(page(), "gallerydl/photo.jpg") {
		t.Fatal("the look wrote the page")
	}
	export(Options{Rewrite: got.Rewrite})
	if !strings.Contains(page(), "gallerydl/photo.jpg") {
		t.Error("the export told to write the page again does not show the plugin's file")
	}
	if got := look(later, archive.ArchiveDir); !nothing(got) {
		t.Errorf("Look after that export: %+v, want nothing", got)
	}
	// Still for settleFor, it is let go.
	past := func() time.Time { return time.Now().Add(settleFor + 2*time.Minute) }
	if got := look(past, archive.ArchiveDir); !nothing(got) || len(cache.settling) != 0 {
		t.Errorf("Look past settleFor: %+v, %d folders kept an eye on; want nothing, none", got, len(cache.settling))
	}
	// Another process exports (the refresh after 'folio add'): Look
	// compares with the state file it wrote.
	if _, err := Run(ctx, Options{Collection: c}, archive.Discard); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, filepath.FromSlash(other), "gallerydl"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := look(later, archive.ArchiveDir); len(got.Changed) != 1 || got.Changed[0] != other {
		t.Errorf("Look after another process's export and a folder made in %s: %+v", other, got)
	}
}

// TestLookChangedFirst: a folder whose names changed is looked into
// before the folders named earlier, whose mirrors could take the whole
// budget of a look (here sixteen of 260 folders each).
func TestLookChangedFirst(t *testing.T) {
	dir, m, c := generatedIn(t, 6, 4)
	ctx := context.Background()
	cache := &Cache{}
	if _, err := Run(ctx, Options{Collection: c, Cache: cache}, archive.Discard); err != nil {
		t.Fatal(err)
	}
	cache.settling = map[string]settling{}
	for i := range 16 {
		big := fmt.Sprintf("archive/users/system/snapshots/20240101/big.example/%032d", i)
		for j := range 260 {
			if err := os.MkdirAll(filepath.Join(dir, big, "wget", "big.example", fmt.Sprintf("d%03d", j)), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		cache.settling[big] = settling{stamp: 1, since: time.Now()}
	}
	snap := m.Snapshots[1].Dir
	if err := os.Mkdir(filepath.Join(dir, filepath.FromSlash(snap), "gallerydl"), 0o755); err != nil {
		t.Fatal(err)
	}
	later := func() time.Time { return time.Now().Add(time.Minute) }
	got, ok, err := Look(ctx, Options{Collection: c, Cache: cache, Now: later}, []string{archive.ArchiveDir})
	if err != nil || !ok || len(got.Changed) != 1 || got.Changed[0] != snap {
		t.Errorf("Look with sixteen big folders kept an eye on: %+v, %v, %v; want %s named", got, ok, err, snap)
	}
}

// TestInsideStamp: the latest ctime of the folders inside a snapshot
// folder takes each folder in it before any below (a wget mirror of
// hundreds of folders does not hide a plugin folder beside it), and
// says when the budget ran out before its end.
func TestInsideStamp(t *testing.T) {
	root := t.TempDir()
	snap := "archive/users/alice/snapshots/20240101/example.com/abc"
	for i := range 300 {
		if err := os.MkdirAll(filepath.Join(root, snap, "wget", "example.com", fmt.Sprintf("d%03d", i)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{"aaa", "zzz", "mmm"} {
		if err := os.Mkdir(filepath.Join(root, snap, p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(20 * time.Millisecond) // a distinct ctime on coarse clocks
	if err := os.WriteFile(filepath.Join(root, snap, "zzz", "photo.jpg"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	var st unix.Stat_t
	if err := unix.Lstat(filepath.Join(root, snap, "zzz"), &st); err != nil {
		t.Fatal(err)
	}
	fs := folders{root: root}
	defer fs.bases.close()
	budget := lookBudget
	if got, whole := fs.insideStamp(snap, &budget); got != st.Ctim.Nano() || !whole {
		t.Errorf("insideStamp = %d, %v; want zzz's ctime %d, whole", got, whole, st.Ctim.Nano())
	}
	if spent := lookBudget - budget; spent != 256 {
		t.Errorf("insideStamp looked into %d folders, want 256 (its cap)", spent)
	}
	budget = 3
	if _, whole := fs.insideStamp(snap, &budget); whole || budget != 0 {
		t.Errorf("with a budget of 3: whole %v, %d left; want not whole, 0", whole, budget)
	}
	budget = 256 // as much as the cap: the walk ends at the cap, whole
	if _, whole := fs.insideStamp(snap, &budget); !whole || budget != 0 {
		t.Errorf("with a budget of 256: whole %v, %d left; want whole, 0", whole, budget)
	}
}
