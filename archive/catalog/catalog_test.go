package catalog_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/archive/catalog"
	"github.com/folio-archive/folio/gen"
)

var ctx = context.Background()

// newCollection creates an empty collection in a temp dir.
func newCollection(t testing.TB) *archive.Collection {
	t.Helper()
	res, err := archive.Init(t.TempDir(), false)
	if err != nil {
		t.Fatal(err)
	}
	return res.Collection
}

func openCatalog(t testing.TB, c *archive.Collection) *catalog.Catalog {
	t.Helper()
	cat, err := catalog.Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cat.Close() })
	return cat
}

// reindex runs Reindex and collects its problems.
func reindex(t testing.TB, cat *catalog.Catalog, full bool) (catalog.ReindexStats, []string) {
	t.Helper()
	var problems []string
	st, err := cat.Reindex(ctx, catalog.ReindexOptions{Full: full, Workers: 3, BatchSize: 7, OnProblem: func(p catalog.Problem) {
		problems = append(problems, p.Error())
	}})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(problems)
	return st, problems
}

func entries(t testing.TB, cat *catalog.Catalog, q catalog.Query) []catalog.Entry {
	t.Helper()
	var out []catalog.Entry
	if err := cat.Each(ctx, q, func(e catalog.Entry) error {
		out = append(out, e)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

func byDir(es []catalog.Entry) map[string]catalog.Entry {
	m := make(map[string]catalog.Entry, len(es))
	for _, e := range es {
		m[e.Dir] = e
	}
	return m
}

var t0 = time.Date(2024, 7, 20, 10, 0, 0, 123456000, time.UTC)

// writeSnapshot writes a current-layout snapshot folder with results
// through archive.WriteIndex and returns its folder relative to the data dir.
func writeSnapshot(t testing.TB, c *archive.Collection, user string, s archive.Snapshot, results ...archive.Result) string {
	t.Helper()
	rel := fmt.Sprintf("archive/users/%s/snapshots/%s/%s/%s", user, s.BookmarkedAt.Format("20060102"), "example.com", s.ID)
	dir := c.Path(rel)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ix, _ := archive.ParseIndex(nil)
	ix.SetSnapshot(s)
	for _, r := range results {
		ix.AddResult(r)
	}
	if err := archive.WriteIndex(dir, ix); err != nil {
		t.Fatal(err)
	}
	return rel
}

func writeFile(t testing.TB, c *archive.Collection, rel string, data string) {
	t.Helper()
	p := c.Path(rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func snapshot(i int, title string, tags ...string) archive.Snapshot {
	return archive.Snapshot{
		ID:           fmt.Sprintf("0190f3c2a1b27c3d8e4f5a6b7c8d%04x", i),
		CrawlID:      "0190f3c1a1b27c3d8e4f5a6b7c8d9e0f",
		URL:          fmt.Sprintf("https://example.com/page/%d", i),
		Title:        title,
		Tags:         tags,
		BookmarkedAt: t0.Add(time.Duration(i) * time.Hour),
		CreatedAt:    t0.Add(time.Duration(i)*time.Hour + time.Second),
		Timestamp:    fmt.Sprintf("%d.123456", t0.Add(time.Duration(i)*time.Hour).Unix()),
		Status:       "sealed",
		FSVersion:    "0.9.4",
		ArchiveSize:  int64(100 * i),
	}
}

const legacyLink = `{"schema": "Link", "url": "https://example.com/page1", "timestamp": "1609459200.0",
 "title": "Example Page 1", "tags": "news,tech", "sources": ["sources/legacy-import.txt"],
 "custom_legacy_metadata": {"must": "survive"},
 "history": {"title": [{"cmd": ["curl", "https://example.com/page1"], "pwd": "/data/archive/1609459200",
   "cmd_version": "7.68", "output": "Example Page 1", "status": "succeded",
   "start_ts": "2021-01-01T00:00:01+00:00", "end_ts": "2021-01-01T00:00:02+00:00", "schema": "ArchiveResult"}],
   "screenshot": [{"output": "screenshot.png", "status": "failed", "start_ts": "2021-01-01T00:00:03+00:00"}]}}`

// smallTree writes a mixed tree and returns the folders it expects in the
// catalog.
func smallTree(t testing.TB, c *archive.Collection) []string {
	var dirs []string
	res := func(id, plugin, status string) archive.Result {
		return archive.Result{ID: id, SnapshotID: "x", Plugin: plugin, HookName: "on_Snapshot__50_" + plugin + ".js",
			Status: status, OutputStr: plugin + "/out", StartTS: t0, EndTS: t0.Add(time.Second),
			OutputFiles: []archive.OutputFile{{Path: "out", Size: 12, Mimetype: "text/plain", Extension: ""}},
			OutputSize:  12, Cmd: []string{"chromium", "--x"}}
	}
	dirs = append(dirs, writeSnapshot(t, c, "system", snapshot(1, "Plain title", "b-tag", "a-tag"), res("r1", "screenshot", "succeeded"), res("r2", "pdf", "failed")))
	dirs = append(dirs, writeSnapshot(t, c, "system", snapshot(2, "Ünïcødé 文件 \"quoted\" <b>", "news")))
	dirs = append(dirs, writeSnapshot(t, c, "alice", snapshot(3, "", "news", "tech"), res("r3", "dom", "succeeded")))
	s4 := snapshot(4, "Queued one")
	s4.Status = "queued"
	dirs = append(dirs, writeSnapshot(t, c, "alice", s4))
	// A foreign record before the Snapshot and an unknown key survive.
	writeFile(t, c, "archive/users/bob/snapshots/20240101/example.org/0190f3c2a1b27c3d8e4f5a6b7c8d9999/index.jsonl",
		`{"type": "Process", "id": "incomplete"}`+"\n"+
			`{"type": "Snapshot", "id": "0190f3c2-a1b2-7c3d-8e4f-5a6b7c8d9999", "url": "https://example.org/", "title": "Bob", "tags": ["z", "a"], "bookmarked_at": "2024-01-01T00:00:00Z", "timestamp": 1704067200.5, "status": "sealed", "extra": {"k": [1, 2]}}`+"\n")
	dirs = append(dirs, "archive/users/bob/snapshots/20240101/example.org/0190f3c2a1b27c3d8e4f5a6b7c8d9999")
	// Legacy folders: index.json (Link), index.jsonl, no index at all.
	writeFile(t, c, "archive/1609459200/index.json", legacyLink)
	dirs = append(dirs, "archive/1609459200")
	writeFile(t, c, "archive/1609459300.5/index.jsonl", `{"type": "Snapshot", "url": "https://legacy.example/", "timestamp": "1609459300.5", "title": "Legacy JSONL"}`+"\n")
	dirs = append(dirs, "archive/1609459300.5")
	if err := os.MkdirAll(c.Path("archive/1609459400"), 0o755); err != nil {
		t.Fatal(err)
	}
	dirs = append(dirs, "archive/1609459400")
	sort.Strings(dirs)
	return dirs
}

// fromTree decodes a folder the way the catalog must: the first Snapshot
// record of index.jsonl, else index.json.
func fromTree(t testing.TB, c *archive.Collection, dir string) (archive.Snapshot, []archive.Result) {
	t.Helper()
	abs := c.Path(dir)
	if ix, _, err := archive.ReadIndex(abs); err == nil {
		if s, ok := ix.Snapshot(); ok {
			return s, ix.Results()
		}
	}
	li, err := archive.ReadLegacyIndex(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return archive.Snapshot{}, nil
	}
	if err != nil {
		t.Fatal(err)
	}
	if li.Snapshot.FSVersion == "" {
		li.Snapshot.FSVersion = li.FSVersion
	}
	return li.Snapshot, li.Results
}

// norm makes empty and nil tag lists equal: the catalog stores tags as
// a string, so it cannot tell an absent tags key from an empty one.
func norm(s archive.Snapshot) archive.Snapshot {
	if len(s.Tags) == 0 {
		s.Tags = nil
	}
	return s
}

func normResults(r []archive.Result) []archive.Result {
	if len(r) == 0 {
		return nil
	}
	return r
}

func TestReindexEqualsTree(t *testing.T) {
	c := newCollection(t)
	dirs := smallTree(t, c)
	cat := openCatalog(t, c)
	if !cat.Rebuilt {
		t.Error("a new catalog should report Rebuilt")
	}
	if empty, err := cat.Empty(context.Background()); err != nil || !empty {
		t.Errorf("new catalog: Empty %v, %v; want true", empty, err)
	}
	st, problems := reindex(t, cat, false)
	if empty, err := cat.Empty(context.Background()); err != nil || empty {
		t.Errorf("after reindex: Empty %v, %v; want false", empty, err)
	}
	if len(problems) > 0 {
		t.Fatalf("problems: %q", problems)
	}
	want := catalog.ReindexStats{Scanned: len(dirs), Added: len(dirs), TextRead: len(dirs)}
	if st != want {
		t.Fatalf("stats %+v, want %+v", st, want)
	}
	got := entries(t, cat, catalog.Query{WithResults: true, Sort: "dir"})
	var gotDirs []string
	for _, e := range got {
		gotDirs = append(gotDirs, e.Dir)
	}
	if !reflect.DeepEqual(gotDirs, dirs) {
		t.Fatalf("dirs\n got %q\nwant %q", gotDirs, dirs)
	}
	for _, e := range got {
		s, results := fromTree(t, c, e.Dir)
		if e.Layout == catalog.LayoutLegacy {
			s.Timestamp = filepath.Base(e.Dir) // the folder name is the identity
		}
		if !reflect.DeepEqual(norm(e.Snapshot), norm(s)) {
			t.Errorf("%s: snapshot\n got %+v\nwant %+v", e.Dir, e.Snapshot, s)
		}
		if !reflect.DeepEqual(normResults(e.Results), normResults(results)) {
			t.Errorf("%s: results\n got %+v\nwant %+v", e.Dir, e.Results, results)
		}
		// The record is the canonical encoding of the snapshot.
		ix, _ := archive.ParseIndex(nil)
		ix.SetSnapshot(s)
		if want := strings.TrimSuffix(string(ix.Bytes()), "\n"); string(e.Record) != want {
			t.Errorf("%s: record\n got %s\nwant %s", e.Dir, e.Record, want)
		}
	}
	m := byDir(got)
	legacy := m["archive/1609459200"]
	if legacy.Layout != catalog.LayoutLegacy || legacy.Snapshot.Title != "Example Page 1" || legacy.Snapshot.Timestamp != "1609459200" ||
		legacy.NumOutputs != 1 || legacy.NumFailures != 1 || legacy.Snapshot.FSVersion != "0.7.0" || legacy.IndexFile != "index.json" {
		t.Errorf("legacy Link folder: %+v", legacy)
	}
	if e := m["archive/1609459400"]; e.IndexFile != "" || e.Snapshot.Timestamp != "1609459400" {
		t.Errorf("legacy folder without index: %+v", e)
	}
	bob := m["archive/users/bob/snapshots/20240101/example.org/0190f3c2a1b27c3d8e4f5a6b7c8d9999"]
	if bob.User != "bob" || bob.Snapshot.ID != "0190f3c2a1b27c3d8e4f5a6b7c8d9999" || !reflect.DeepEqual(bob.Snapshot.Tags, []string{"a", "z"}) || bob.Snapshot.Timestamp != "1704067200.5" {
		t.Errorf("bob: %+v", bob)
	}
	info, err := os.Stat(c.Path(bob.Dir + "/index.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if bob.IndexSize != info.Size() || !bob.IndexMTime.Equal(info.ModTime()) {
		t.Errorf("bob index stat %d %v, want %d %v", bob.IndexSize, bob.IndexMTime, info.Size(), info.ModTime())
	}

	stats, err := cat.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if stats.Snapshots != len(dirs) || stats.ByLayout[catalog.LayoutLegacy] != 3 || stats.ByLayout[catalog.LayoutCurrent] != 5 ||
		stats.ByStatus["sealed"] != 4 || stats.ByStatus["queued"] != 1 || stats.LegacyNoIndex != 1 || stats.Results != 5 ||
		stats.Succeeded != 3 || stats.Failed != 2 || stats.ArchiveSize != 1000 || stats.BuiltAt.IsZero() || stats.ByUser["alice"] != 2 {
		t.Errorf("stats %+v", stats)
	}

	// Nothing changed: nothing is read again.
	st, problems = reindex(t, cat, false)
	if want := (catalog.ReindexStats{Scanned: len(dirs), Unchanged: len(dirs)}); st != want || len(problems) > 0 {
		t.Errorf("second reindex: %+v %q, want %+v", st, problems, want)
	}
	if d, err := cat.Drift(ctx, 2); err != nil || d.Stale() || d.Scanned != len(dirs) {
		t.Errorf("drift %+v %v", d, err)
	}
}

// TestReindexGen checks a generated tree snapshot by snapshot.
func TestReindexGen(t *testing.T) {
	c := newCollection(t)
	m, err := gen.Current(c.Dir, gen.Options{N: 400, Seed: 7, Minimal: true, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	cat := openCatalog(t, c)
	st, problems := reindex(t, cat, false)
	if st.Added != len(m.Snapshots) || len(problems) > 0 {
		t.Fatalf("stats %+v problems %q", st, problems)
	}
	got := byDir(entries(t, cat, catalog.Query{WithResults: true}))
	if len(got) != len(m.Snapshots) {
		t.Fatalf("%d entries, want %d", len(got), len(m.Snapshots))
	}
	for _, w := range m.Snapshots {
		e, ok := got[w.Dir]
		if !ok {
			t.Errorf("%s missing", w.Dir)
			continue
		}
		s := norm(e.Snapshot)
		tags := w.Tags
		if len(tags) == 0 {
			tags = nil
		}
		if s.ID != w.ID || s.URL != w.URL || s.Title != w.Title || !reflect.DeepEqual(s.Tags, tags) || e.User != w.User ||
			s.Status != w.Status || !s.BookmarkedAt.Equal(w.BookmarkedAt) || len(e.Results) != w.Results {
			t.Errorf("%s:\n got %+v %q (%d results)\nwant %+v", w.Dir, s, e.User, len(e.Results), w)
		}
		fs, fr := fromTree(t, c, w.Dir)
		if !reflect.DeepEqual(norm(fs), s) {
			t.Errorf("%s: snapshot differs from the tree\n got %+v\nwant %+v", w.Dir, s, fs)
		}
		if !reflect.DeepEqual(normResults(fr), normResults(e.Results)) {
			t.Errorf("%s: results differ from the tree", w.Dir)
		}
	}
}

func TestReindexAfterHandEdits(t *testing.T) {
	c := newCollection(t)
	m, err := gen.Current(c.Dir, gen.Options{N: 50, Seed: 3, Minimal: true, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	cat := openCatalog(t, c)
	reindex(t, cat, false)

	gone := m.Snapshots[0].Dir
	if err := os.RemoveAll(c.Path(gone)); err != nil {
		t.Fatal(err)
	}
	edited := m.Snapshots[1].Dir
	if err := gen.RetitleIndex(c.Path(edited), "Edited by hand"); err != nil {
		t.Fatal(err)
	}
	added := writeSnapshot(t, c, "carol", snapshot(9, "Dropped in"))
	writeFile(t, c, "archive/1609459200/index.json", legacyLink)
	// An edit the catalog must see even when size and mtime stay the
	// same: a new file (new inode) renamed over the index.
	renamed := m.Snapshots[2].Dir
	old, err := os.ReadFile(c.Path(renamed + "/index.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	info, _ := os.Stat(c.Path(renamed + "/index.jsonl"))
	swapped := bytes.Replace(old, []byte(`"status": "sealed"`), []byte(`"status": "paused"`), 1)
	if len(swapped) != len(old) || bytes.Equal(swapped, old) {
		t.Fatalf("test setup: status edit changed the length or nothing")
	}
	tmp := c.Path(renamed + "/index.jsonl.new")
	if err := os.WriteFile(tmp, swapped, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(tmp, info.ModTime(), info.ModTime()); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, c.Path(renamed+"/index.jsonl")); err != nil {
		t.Fatal(err)
	}

	st, problems := reindex(t, cat, false)
	// Text is read for the new folders only: the edited ones keep theirs.
	want := catalog.ReindexStats{Scanned: 51, Added: 2, Updated: 2, Removed: 1, Unchanged: 47, TextRead: 2}
	if st != want || len(problems) > 0 {
		t.Fatalf("stats %+v problems %q, want %+v", st, problems, want)
	}
	got := byDir(entries(t, cat, catalog.Query{}))
	if _, ok := got[gone]; ok {
		t.Errorf("deleted folder %s still cataloged", gone)
	}
	if got[edited].Snapshot.Title != "Edited by hand" {
		t.Errorf("edited title: %q", got[edited].Snapshot.Title)
	}
	if got[renamed].Snapshot.Status != "paused" {
		t.Errorf("renamed-over index: status %q", got[renamed].Snapshot.Status)
	}
	if got[added].Snapshot.Title != "Dropped in" || got[added].User != "carol" {
		t.Errorf("new folder: %+v", got[added])
	}
	if got["archive/1609459200"].Snapshot.URL != "https://example.com/page1" {
		t.Errorf("new legacy folder: %+v", got["archive/1609459200"])
	}
	if n, _ := cat.Count(ctx, catalog.Query{}); n != 51 {
		t.Errorf("count %d, want 51", n)
	}

	// --full gives the same catalog.
	before := listBytes(t, cat, catalog.Query{})
	st, _ = reindex(t, cat, true)
	if st.Updated != 51 || st.Unchanged != 0 {
		t.Errorf("full: %+v", st)
	}
	if after := listBytes(t, cat, catalog.Query{}); !bytes.Equal(before, after) {
		t.Errorf("full reindex changed the listing")
	}
}

func listBytes(t testing.TB, cat *catalog.Catalog, q catalog.Query) []byte {
	t.Helper()
	var b bytes.Buffer
	w, err := catalog.NewWriter(&b, catalog.FormatJSONL, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := cat.Each(ctx, q, w.Write); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestDeleteCatalogGivesSameList(t *testing.T) {
	c := newCollection(t)
	smallTree(t, c)
	if _, err := gen.Current(c.Dir, gen.Options{N: 60, Seed: 5, Minimal: true, NoSync: true}); err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	reindex(t, cat, false)
	before := listBytes(t, cat, catalog.Query{})
	if n := bytes.Count(before, []byte("\n")); n != 68 {
		t.Fatalf("%d lines, want 68", n)
	}
	cat.Close()
	if err := os.RemoveAll(c.Path(archive.StateDir)); err != nil {
		t.Fatal(err)
	}
	if _, err := archive.Open(c.Dir); err != nil {
		t.Fatal(err)
	}
	cat = openCatalog(t, c)
	reindex(t, cat, false)
	if after := listBytes(t, cat, catalog.Query{}); !bytes.Equal(before, after) {
		t.Errorf("list after deleting .folio differs:\n%s\n---\n%s", before, after)
	}
}

// treeHash hashes every file and link under the data dir except .folio/.
func treeHash(t testing.TB, root string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if rel == archive.StateDir {
			return filepath.SkipDir
		}
		fmt.Fprintf(h, "%s %v\n", rel, d.Type())
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			fmt.Fprintf(h, "-> %s\n", target)
		case d.Type().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h.Write(data)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func TestReindexBadInputs(t *testing.T) {
	c := newCollection(t)
	good := writeSnapshot(t, c, "system", snapshot(1, "Good"))
	base := "archive/users/system/snapshots/20240101/example.com/"
	truncated := base + "0190f3c2a1b27c3d8e4f5a6b7c8d0001"
	writeFile(t, c, truncated+"/index.jsonl", `{"type": "Snapshot", "id": "0190f3c2a1b27c3d8e4f5a6b7c8d0001", "url": "https://example.com/t"}`+"\n"+`{"type": "ArchiveResult", "plugin": "dom", "status": "succeeded"}`+"\n"+`{"type": "ArchiveResult", "plugin": "x`)
	garbage := base + "0190f3c2a1b27c3d8e4f5a6b7c8d0002"
	writeFile(t, c, garbage+"/index.jsonl", "\x00\x01\xff\xfe binary\n\x89PNG\r\n")
	empty := base + "0190f3c2a1b27c3d8e4f5a6b7c8d0003"
	writeFile(t, c, empty+"/index.json", "")
	missing := base + "0190f3c2a1b27c3d8e4f5a6b7c8d0004"
	writeFile(t, c, missing+"/screenshot.png", "png")
	writeFile(t, c, "archive/1609459200/index.json", "")                   // legacy, 0-byte index.json
	writeFile(t, c, "archive/1609459201/index.json", `{"url": "https://x`) // legacy, corrupt
	writeFile(t, c, "archive/hello/index.json", legacyLink)                // not a timestamp: ignored
	writeFile(t, c, "archive/users/system/snapshots/20240101/example.com/.index.jsonl.folio-tmp-abc", "{")
	links := map[string]string{
		base + "loop":                             ".",                                // symlink loop
		base + "selfloop":                         "selfloop",                         // dangling self loop
		"archive/1609459300":                      "users/system/snapshots",           // legacy-named symlink
		"archive/users/system/snapshots/20240102": "20240101",                         // symlinked date folder
		base + "0190f3c2a1b27c3d8e4f5a6b7c8d0005": "0190f3c2a1b27c3d8e4f5a6b7c8d0001", // symlinked snapshot folder
		"archive/users/mallory":                   "system",                           // symlinked user
		"archive/users/eve/snapshots":             "../system/snapshots",              // symlinked snapshots root
		truncated + "/sub/index.jsonl":            "../index.jsonl",                   // below the id level: never read
	}
	for rel, target := range links {
		if err := os.MkdirAll(filepath.Dir(c.Path(rel)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, c.Path(rel)); err != nil {
			t.Fatal(err)
		}
	}
	// An index.jsonl that is itself a symlink is not followed.
	linked := base + "0190f3c2a1b27c3d8e4f5a6b7c8d0006"
	if err := os.MkdirAll(c.Path(linked), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../../../../../../../../etc/passwd", c.Path(linked+"/index.jsonl")); err != nil {
		t.Fatal(err)
	}

	before := treeHash(t, c.Dir)
	cat := openCatalog(t, c)
	st, problems := reindex(t, cat, false)
	want := []string{
		base + "0190f3c2a1b27c3d8e4f5a6b7c8d0001/index.jsonl: line 3: invalid JSON: unexpected end of JSON input",
		base + "0190f3c2a1b27c3d8e4f5a6b7c8d0002/index.jsonl: no Snapshot record (line 1: binary data; line 2: not a JSON record, URL or id)",
		base + "0190f3c2a1b27c3d8e4f5a6b7c8d0003/index.json: file is empty",
		base + "0190f3c2a1b27c3d8e4f5a6b7c8d0004/index.jsonl: " + catalog.ErrNoIndex.Error(),
		base + "0190f3c2a1b27c3d8e4f5a6b7c8d0006/index.jsonl: not a regular file",
		"archive/1609459200/index.json: file is empty",
		"archive/1609459201/index.json: invalid JSON: unexpected end of JSON input",
	}
	sort.Strings(want)
	if !reflect.DeepEqual(problems, want) {
		t.Errorf("problems\n got %q\nwant %q", problems, want)
	}
	if st.Scanned != 8 || st.Added != 4 || st.Unreadable != 4 || st.Problems != 7 {
		t.Errorf("stats %+v", st)
	}
	got := byDir(entries(t, cat, catalog.Query{}))
	for _, dir := range []string{good, truncated, "archive/1609459200", "archive/1609459201"} {
		if _, ok := got[dir]; !ok {
			t.Errorf("%s not cataloged", dir)
		}
	}
	if len(got) != 4 {
		t.Errorf("%d entries: %v", len(got), got)
	}
	if after := treeHash(t, c.Dir); after != before {
		t.Error("reindex changed the tree")
	}

	// Unchanged bad folders are reported again without being read;
	// problems inside cataloged folders are reported when they are read.
	st, problems2 := reindex(t, cat, false)
	var wantAgain []string
	for _, p := range want {
		if strings.Contains(p, "/0190f3c2a1b27c3d8e4f5a6b7c8d000") && !strings.Contains(p, "0001/") {
			wantAgain = append(wantAgain, p)
		}
	}
	if !reflect.DeepEqual(problems2, wantAgain) || st.Unreadable != 4 || st.Unchanged != 4 {
		t.Errorf("second run: %+v %q\nwant %q", st, problems2, wantAgain)
	}
	d, err := cat.Drift(ctx, 0)
	if err != nil || d.Stale() || d.Unreadable != 4 {
		t.Errorf("drift %+v %v", d, err)
	}
	// Fixing a bad folder catalogs it.
	if err := os.Remove(c.Path(garbage + "/index.jsonl")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, c, garbage+"/index.jsonl", `{"type": "Snapshot", "url": "https://example.com/fixed"}`+"\n")
	st, _ = reindex(t, cat, false)
	if st.Added != 1 || st.Unreadable != 3 {
		t.Errorf("after fix: %+v", st)
	}
	if e := byDir(entries(t, cat, catalog.Query{}))[garbage]; e.Snapshot.ID != "0190f3c2a1b27c3d8e4f5a6b7c8d0002" {
		t.Errorf("fixed folder: %+v", e)
	}
}

func TestOpenRebuildsUnusableCatalog(t *testing.T) {
	for name, damage := range map[string]func(t *testing.T, path string){
		"garbage": func(t *testing.T, path string) {
			if err := os.WriteFile(path, bytes.Repeat([]byte("not a database "), 1000), 0o644); err != nil {
				t.Fatal(err)
			}
		},
		"truncated": func(t *testing.T, path string) {
			if err := os.Truncate(path, 100); err != nil {
				t.Fatal(err)
			}
		},
		"schema version": func(t *testing.T, path string) {
			// Byte 60 of the header is user_version (big endian).
			f, err := os.OpenFile(path, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := f.WriteAt([]byte{0, 0, 0, 99}, 60); err != nil {
				t.Fatal(err)
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			c := newCollection(t)
			smallTree(t, c)
			cat, err := catalog.Open(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			reindex(t, cat, false)
			want := listBytes(t, cat, catalog.Query{})
			cat.Close()
			path := c.Path(archive.CatalogFile)
			os.Remove(path + "-wal")
			os.Remove(path + "-shm")
			damage(t, path)
			cat = openCatalog(t, c)
			if !cat.Rebuilt {
				t.Fatal("damaged catalog not rebuilt")
			}
			if n, err := cat.Count(ctx, catalog.Query{}); err != nil || n != 0 {
				t.Fatalf("rebuilt catalog holds %d rows (%v)", n, err)
			}
			if err := cat.Check(ctx); err != nil {
				t.Fatal(err)
			}
			reindex(t, cat, false)
			if got := listBytes(t, cat, catalog.Query{}); !bytes.Equal(got, want) {
				t.Errorf("listing after rebuild differs")
			}
		})
	}
}

func TestQuery(t *testing.T) {
	c := newCollection(t)
	smallTree(t, c)
	cat := openCatalog(t, c)
	reindex(t, cat, false)
	urls := func(q catalog.Query) []string {
		t.Helper()
		var out []string
		for _, e := range entries(t, cat, q) {
			out = append(out, e.Snapshot.URL)
		}
		n, err := cat.Count(ctx, q)
		if err != nil || n != len(out) {
			t.Errorf("Count(%+v) = %d, %v; Each gave %d", q, n, err, len(out))
		}
		return out
	}
	cases := []struct {
		q    catalog.Query
		want []string
	}{
		{catalog.Query{Patterns: []string{"https://example.com/page/2"}, FilterType: "exact"}, []string{"https://example.com/page/2"}},
		{catalog.Query{Patterns: []string{"PAGE/3", "org"}}, []string{"https://example.com/page/3", "https://example.org/"}},
		{catalog.Query{Patterns: []string{`page/[12]$`}, FilterType: "regex", Sort: "url"}, []string{"https://example.com/page/1", "https://example.com/page/2"}},
		{catalog.Query{Patterns: []string{"example.org"}, FilterType: "domain"}, []string{"https://example.org/"}},
		{catalog.Query{Patterns: []string{"news"}, FilterType: "tag", Sort: "url"}, []string{"https://example.com/page/2", "https://example.com/page/3", "https://example.com/page1"}},
		{catalog.Query{Patterns: []string{"1609459200"}, FilterType: "timestamp"}, []string{"https://example.com/page1"}},
		{catalog.Query{Tags: []string{"news", "tech"}, Sort: "url"}, []string{"https://example.com/page/3", "https://example.com/page1"}},
		{catalog.Query{Status: "queued"}, []string{"https://example.com/page/4"}},
		{catalog.Query{After: t0.Add(2 * time.Hour), Before: t0.Add(4 * time.Hour)}, []string{"https://example.com/page/3"}},
		{catalog.Query{Patterns: []string{"example.com/page/"}, Sort: "-url", Limit: 2}, []string{"https://example.com/page/4", "https://example.com/page/3"}},
		{catalog.Query{Patterns: []string{"page"}, FilterType: "regex", Sort: "url", Limit: 1}, []string{"https://example.com/page/1"}},
		{catalog.Query{Patterns: []string{"_"}}, nil}, // LIKE wildcards are literal
		{catalog.Query{Sort: "-bookmarked_at", Limit: 3}, []string{"https://example.com/page/4", "https://example.com/page/3", "https://example.com/page/2"}},
		{catalog.Query{Layout: catalog.LayoutLegacy, Sort: "dir"}, []string{"https://example.com/page1", "https://legacy.example/", ""}},
		{catalog.Query{Layout: catalog.LayoutCurrent, Patterns: []string{"legacy"}}, nil},
	}
	for _, tc := range cases {
		if got := urls(tc.q); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%+v:\n got %q\nwant %q", tc.q, got, tc.want)
		}
	}
	for _, q := range []catalog.Query{
		{Patterns: []string{"("}, FilterType: "regex"},
		{FilterType: "fuzzy"},
		{Sort: "color"},
		{Limit: -1},
		{Layout: "flat"},
	} {
		if err := cat.Each(ctx, q, func(catalog.Entry) error { return nil }); !errors.Is(err, catalog.ErrQuery) {
			t.Errorf("%+v: err %v, want ErrQuery", q, err)
		}
	}
	// An error from fn stops the iteration.
	stop := errors.New("stop")
	n := 0
	if err := cat.Each(ctx, catalog.Query{}, func(catalog.Entry) error { n++; return stop }); err != stop || n != 1 {
		t.Errorf("Each returned %v after %d calls", err, n)
	}
}

func TestWriters(t *testing.T) {
	c := newCollection(t)
	writeSnapshot(t, c, "system", snapshot(1, "Tïtle, \"quoted\"", "b", "a"))
	writeSnapshot(t, c, "system", snapshot(2, ""))
	cat := openCatalog(t, c)
	reindex(t, cat, false)
	out := func(format string, fields ...string) string {
		var b bytes.Buffer
		w, err := catalog.NewWriter(&b, format, fields)
		if err != nil {
			t.Fatal(err)
		}
		if err := cat.Each(ctx, catalog.Query{Sort: "url"}, w.Write); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	jsonl := out(catalog.FormatJSONL)
	want1 := `{"type": "Snapshot", "schema_version": "0.9.4", "id": "0190f3c2a1b27c3d8e4f5a6b7c8d0001", "crawl_id": "0190f3c1a1b27c3d8e4f5a6b7c8d9e0f", "url": "https://example.com/page/1", "title": "T\u00eftle, \"quoted\"", "tags": "a,b", "bookmarked_at": "2024-07-20T11:00:00.123456+00:00", "created_at": "2024-07-20T11:00:01.123456+00:00", "timestamp": "1721473200.123456", "depth": 0, "status": "sealed", "fs_version": "0.9.4", "archive_size": 100, "output_size": 100}`
	if lines := strings.Split(jsonl, "\n"); len(lines) != 3 || lines[0] != want1 || lines[2] != "" {
		t.Errorf("jsonl:\n%s\nwant first line\n%s", jsonl, want1)
	}
	js := out(catalog.FormatJSON)
	if !strings.HasPrefix(js, "[\n    {\n        \"archive_size\": 100,\n        \"bookmarked_at\": \"2024-07-20T11:00:00.123456+00:00\",\n") ||
		!strings.Contains(js, "\n        \"url\": \"https://example.com/page/1\"\n    },\n    {\n") || !strings.HasSuffix(js, "\"\n    }\n]\n") ||
		!strings.Contains(js, `"title": "T\u00eftle, \"quoted\""`) || !strings.Contains(js, `"title": null`) {
		t.Errorf("json:\n%s", js)
	}
	csv := out(catalog.FormatCSV, "url", "title", "tags", "depth", "dir", "num_outputs", "notes")
	wantCSV := "url,title,tags,depth,dir,num_outputs,notes\r\n" +
		`https://example.com/page/1,"Tïtle, ""quoted""","a,b",0,archive/users/system/snapshots/20240720/example.com/0190f3c2a1b27c3d8e4f5a6b7c8d0001,0,` + "\r\n" +
		`https://example.com/page/2,,,0,archive/users/system/snapshots/20240720/example.com/0190f3c2a1b27c3d8e4f5a6b7c8d0002,0,` + "\r\n"
	if csv != wantCSV {
		t.Errorf("csv:\n%s\nwant\n%s", csv, wantCSV)
	}
	var b bytes.Buffer
	w, _ := catalog.NewWriter(&b, catalog.FormatJSON, nil)
	w.Close()
	if b.String() != "[]\n" {
		t.Errorf("empty json: %q", b.String())
	}
	if _, err := catalog.NewWriter(&b, catalog.FormatCSV, []string{"url", "colour"}); !errors.Is(err, catalog.ErrQuery) {
		t.Errorf("unknown csv field: %v", err)
	}
}

// TestConcurrentReadersAndWriter runs listings while reindexes rewrite
// the catalog (run with -race).
func TestConcurrentReadersAndWriter(t *testing.T) {
	c := newCollection(t)
	m, err := gen.Current(c.Dir, gen.Options{N: 120, Seed: 11, Minimal: true, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	cat := openCatalog(t, c)
	reindex(t, cat, false)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			other, err := catalog.Open(ctx, c)
			if err != nil {
				errs <- err
				return
			}
			defer other.Close()
			for range 5 {
				n := 0
				if err := other.Each(ctx, catalog.Query{WithResults: true}, func(e catalog.Entry) error { n++; return nil }); err != nil {
					errs <- err
					return
				}
				if n == 0 {
					errs <- fmt.Errorf("empty listing")
				}
			}
		}()
	}
	for i := range 4 {
		if err := gen.RetitleIndex(c.Path(m.Snapshots[i].Dir), fmt.Sprintf("title %d", i)); err != nil {
			t.Fatal(err)
		}
		if _, err := cat.Reindex(ctx, catalog.ReindexOptions{Full: i == 2, Workers: 4}); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestReindexCancelled(t *testing.T) {
	c := newCollection(t)
	if _, err := gen.Current(c.Dir, gen.Options{N: 30, Seed: 2, Minimal: true, NoSync: true}); err != nil {
		t.Fatal(err)
	}
	cat := openCatalog(t, c)
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := cat.Reindex(cctx, catalog.ReindexOptions{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled reindex: %v", err)
	}
	st, _ := reindex(t, cat, false)
	if st.Scanned != 30 || st.Added+st.Unchanged != 30 {
		t.Errorf("after cancel: %+v", st)
	}
}

func TestCountInvalid(t *testing.T) {
	c := newCollection(t)
	writeFile(t, c, "invalid/20240101/1234/index.json", "{}")
	writeFile(t, c, "invalid/20240101/1234_1/x", "")
	writeFile(t, c, "invalid/20240102/abc/x", "")
	if n, err := catalog.CountInvalid(c); err != nil || n != 3 {
		t.Errorf("CountInvalid = %d, %v", n, err)
	}
}

// TestWithResultsReadsTheTree checks that results come from the index
// files, in catalog order, and that a folder gone since the reindex is
// reported on its entry instead of stopping the listing.
func TestWithResultsReadsTheTree(t *testing.T) {
	c := newCollection(t)
	m, err := gen.Current(c.Dir, gen.Options{N: 80, Seed: 9, Minimal: true, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	cat := openCatalog(t, c)
	reindex(t, cat, false)
	gone := m.Snapshots[5].Dir
	if err := os.RemoveAll(c.Path(gone)); err != nil {
		t.Fatal(err)
	}
	plain := entries(t, cat, catalog.Query{Sort: "url"})
	with := entries(t, cat, catalog.Query{Sort: "url", WithResults: true})
	if len(plain) != len(with) || len(with) != 80 {
		t.Fatalf("%d and %d entries", len(plain), len(with))
	}
	for i, e := range with {
		if e.Dir != plain[i].Dir {
			t.Fatalf("entry %d: %s, want %s (order)", i, e.Dir, plain[i].Dir)
		}
		if e.Dir == gone {
			if e.ResultsErr == nil || !strings.Contains(e.ResultsErr.Error(), gone+"/index.jsonl") {
				t.Errorf("gone folder: ResultsErr %v", e.ResultsErr)
			}
			continue
		}
		if e.ResultsErr != nil || len(e.Results) != e.NumOutputs+e.NumFailures+countOther(e.Results) {
			t.Errorf("%s: %d results, err %v", e.Dir, len(e.Results), e.ResultsErr)
		}
	}
	// Stopping early is clean.
	n := 0
	stop := errors.New("stop")
	if err := cat.Each(ctx, catalog.Query{WithResults: true}, func(catalog.Entry) error {
		if n++; n == 3 {
			return stop
		}
		return nil
	}); err != stop || n != 3 {
		t.Errorf("stop: %v after %d", err, n)
	}
}

func countOther(rs []archive.Result) int {
	n := 0
	for _, r := range rs {
		if s := archive.NormalizeStatus(r.Status); s != archive.StatusSucceeded && s != archive.StatusFailed {
			n++
		}
	}
	return n
}

// archive/ and archive/users/ may be symlinks (users put them on another
// disk that way): the walk follows those two, and only those.
func TestReindexSymlinkedRoots(t *testing.T) {
	for _, root := range []string{archive.ArchiveDir, archive.UsersDir} {
		t.Run(root, func(t *testing.T) {
			c := newCollection(t)
			m, err := gen.Current(c.Dir, gen.Options{N: 20, Seed: 7, Minimal: true, NoSync: true})
			if err != nil {
				t.Fatal(err)
			}
			elsewhere := filepath.Join(t.TempDir(), "other-disk")
			if err := os.Rename(c.Path(root), elsewhere); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(elsewhere, c.Path(root)); err != nil {
				t.Fatal(err)
			}
			st, problems := reindex(t, openCatalog(t, c), false)
			if st.Added != len(m.Snapshots) || len(problems) > 0 {
				t.Fatalf("stats %+v problems %q; want %d added", st, problems, len(m.Snapshots))
			}
		})
	}
}

// TestWalkInCatalogOrder checks the walk that reads the catalog as it goes,
// in the order of folder paths, where that order is not the order of the
// folders' names: users "bob-x" and "bob.x" sort before "bob" once a
// slash follows ("-" and "." come before "/"), and "bob0" after. A walk
// that met their rows out of order would drop rows as gone and add them
// again as new on every reindex.
func TestWalkInCatalogOrder(t *testing.T) {
	c := newCollection(t)
	var dirs []string
	for i, user := range []string{"bob", "bob-x", "bob.x", "bob0", "a"} {
		dirs = append(dirs, writeSnapshot(t, c, user, snapshot(i, "Snapshot of "+user)))
		// A second snapshot of the same day, and one of another day.
		dirs = append(dirs, writeSnapshot(t, c, user, snapshot(i+10, "Same day of "+user)))
		dirs = append(dirs, writeSnapshot(t, c, user, snapshot(i+100, "Later of "+user)))
	}
	// A date folder whose name extends another's: its rows sort before
	// those of the shorter one.
	moved := strings.Replace(dirs[1], "/20240720/", "/20240720-old/", 1)
	if err := os.MkdirAll(c.Path(path.Dir(moved)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(c.Path(dirs[1]), c.Path(moved)); err != nil {
		t.Fatal(err)
	}
	dirs[1] = moved
	writeFile(t, c, "archive/1609459200/index.json", legacyLink)
	writeFile(t, c, "archive/1609459200.5/index.json", strings.Replace(legacyLink, `"1609459200.0"`, `"1609459200.5"`, 1))
	cat := openCatalog(t, c)
	st, problems := reindex(t, cat, false)
	if len(problems) > 0 || st.Added != len(dirs)+2 {
		t.Fatalf("first reindex: %+v, problems %q; want %d added", st, problems, len(dirs)+2)
	}
	for range 2 {
		st, _ = reindex(t, cat, false)
		if st.Added+st.Updated+st.Removed != 0 || st.Unchanged != len(dirs)+2 {
			t.Fatalf("reindex with nothing changed: %+v", st)
		}
		d, err := cat.Drift(ctx, 2)
		if err != nil || d.Stale() || d.Scanned != len(dirs)+2 {
			t.Fatalf("drift with nothing changed: %+v, %v", d, err)
		}
	}

	// Folders gone: one in the middle of the order, a whole user, a
	// legacy folder, and the last date folder of all.
	for _, rel := range []string{dirs[0], "archive/users/bob.x", "archive/1609459200.5", path.Dir(path.Dir(dirs[len(dirs)-1]))} {
		if err := os.RemoveAll(c.Path(rel)); err != nil {
			t.Fatal(err)
		}
	}
	const gone = 1 + 3 + 1 + 1
	d, err := cat.Drift(ctx, 2)
	if err != nil || d.Gone != gone || d.New != 0 || d.Changed != 0 {
		t.Fatalf("drift after removals: %+v, %v; want %d gone", d, err, gone)
	}
	st, _ = reindex(t, cat, false)
	if st.Removed != gone || st.Added != 0 || st.Unchanged != len(dirs)+2-gone {
		t.Fatalf("reindex after removals: %+v; want %d removed", st, gone)
	}
	if n, _ := cat.Count(ctx, catalog.Query{}); n != len(dirs)+2-gone {
		t.Errorf("count %d, want %d", n, len(dirs)+2-gone)
	}
}
