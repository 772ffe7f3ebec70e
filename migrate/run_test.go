package migrate

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/folio-archive/folio/archive"
)

var testNow = time.Date(2026, 9, 1, 12, 0, 0, 0, time.UTC)

// testIDs returns a deterministic id source; one source shared by the runs
// of a test keeps ids unique across them.
func testIDs() archive.IDSource {
	var mu sync.Mutex
	n := uint64(0)
	return func() string {
		mu.Lock()
		defer mu.Unlock()
		n++
		return fmt.Sprintf("01900000000070008000%012x", n)
	}
}

const (
	dashedSnap  = "0190f3c2-a1b2-7c3d-8e4f-5a6b7c8d9e0f"
	compactSnap = "0190f3c2a1b27c3d8e4f5a6b7c8d9e0f"
	dashedCrawl = "0190f3c1-0000-7000-8000-000000000001"
	currentID   = "0190aaaa000070008000000000000001"
)

// buildCollection writes a collection with one of everything the formats
// spec's worked example (§3.9) and edge cases 11-14, 22-27 name.
func buildCollection(t testing.TB, dir string) {
	t.Helper()
	if _, err := archive.Init(dir, false); err != nil {
		t.Fatal(err)
	}
	w := func(rel, data string) {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(data), 0o644))
	}
	setMtime := func(rel string, sec int64) {
		must(t, os.Chtimes(filepath.Join(dir, rel), time.Unix(sec, 0), time.Unix(sec, 0)))
	}
	// A 0.7 Link index with history, binary payloads, odd names, an empty
	// dir and relative symlinks.
	writeTree(t, filepath.Join(dir, "archive/1508259732"))
	w("archive/1508259732/index.json", `{"schema": "Link", "url": "https://example.com/", "timestamp": "1508259732", "title": "Example", "tags": "news,tech", "custom_legacy_metadata": {"must": "survive"}, "history": {"screenshot": [{"schema": "ArchiveResult", "cmd": ["chromium", "--screenshot"], "pwd": "/data/archive/1508259732", "cmd_version": "61.0", "output": "screenshot.png", "status": "succeded", "start_ts": "2017-10-17T17:02:13+00:00", "end_ts": "2017-10-17T17:02:15+00:00"}]}}`)
	setMtime("archive/1508259732", 1508259732)
	// An orphan whose index.jsonl holds only a foreign record.
	w("archive/1710000000/index.json", `{"url": "https://example.org/page", "timestamp": "1710000000", "title": "Orphan"}`)
	w("archive/1710000000/index.jsonl", `{"type":"Process","id":"incomplete"}`+"\n")
	w("archive/1710000000/singlefile.html", "<html>single</html>")
	setMtime("archive/1710000000", 1710000000)
	// Corrupt index, Wayback url in archive.org.txt.
	w("archive/1339747993/index.json", "")
	w("archive/1339747993/archive.org.txt", "https://web.archive.org/web/20170531210128/http://www.wired.com/2012/06/story/\n")
	setMtime("archive/1339747993", 1339747993)
	// Nothing recoverable: goes to invalid/, beside an earlier one.
	w("archive/1111111111/junk.bin", "\x00\xffjunk")
	w("invalid/20260901/1111111111/earlier", "earlier")
	// Left alone.
	w("archive/hello/file", "not a timestamp")
	w("archive/.DS_Store", "mac")
	// A folder holding a fifo: refused, untouched.
	w("archive/1600000000/index.json", `{"url": "https://fifo.example/", "timestamp": "1600000000"}`)
	must(t, syscall.Mkfifo(filepath.Join(dir, "archive/1600000000/pipe"), 0o644))
	// A current snapshot and a 0.9 dev compatibility symlink to it.
	cur := "archive/users/system/snapshots/20140513/example.org/" + currentID
	w(cur+"/index.jsonl", `{"type": "Snapshot", "schema_version": "0.9.4", "id": "`+currentID+`", "url": "https://example.org/", "timestamp": "1399999999", "bookmarked_at": "2014-05-13T16:53:19+00:00", "created_at": "2014-05-13T16:53:19+00:00", "status": "sealed", "fs_version": "0.9.4"}`+"\n")
	must(t, os.Symlink("users/system/snapshots/20140513/example.org/"+currentID, filepath.Join(dir, "archive/1399999999")))
	// A 0.9 dev folder named by a dashed id, and its dashed crawl folder
	// with the crawl symlink.
	dsh := "archive/users/system/snapshots/20240101/example.net/" + dashedSnap
	w(dsh+"/index.jsonl", `{"type": "Snapshot", "schema_version": "0.9.31rc1", "id": "`+dashedSnap+`", "crawl_id": "`+dashedCrawl+`", "url": "https://example.net/", "title": "Net", "tags": "", "bookmarked_at": "2024-01-01T10:00:00+00:00", "created_at": "2024-01-01T10:00:00+00:00", "timestamp": "1704103200.0", "depth": 0, "status": "sealed", "fs_version": "0.9.0", "custom_key": "kept"}`+"\n"+`{"type": "Process", "id": "p1", "cmd": ["x"]}`+"\n")
	w(dsh+"/screenshot/screenshot.png", "\x00\xffpng")
	w(dsh+"/media/stderr.log", "")
	crawl := "archive/users/system/crawls/20240101/example.net/" + dashedCrawl
	w(crawl+"/input/staticfile/stdin.txt", "https://example.net/")
	must(t, os.MkdirAll(filepath.Join(dir, crawl, "snapshots/example.net"), 0o755))
	must(t, os.Symlink("../../../../../../snapshots/20240101/example.net/"+dashedSnap, filepath.Join(dir, crawl, "snapshots/example.net", dashedSnap)))
}

// fileHashes maps every regular file under root (relative slash path) to
// its sha256.
func fileHashes(t testing.TB, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(p)
		must(t, err)
		sum := sha256.Sum256(data)
		rel, _ := filepath.Rel(root, p)
		out[filepath.ToSlash(rel)] = hex.EncodeToString(sum[:])
		return nil
	})
	return out
}

// treeState describes the whole data dir except .folio/ (which holds the
// journal and catalog): every entry with its kind, bytes or link text.
func treeState(t testing.TB, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		must(t, err)
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if rel == ".folio" {
			return filepath.SkipDir
		}
		fi, _ := os.Lstat(p)
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			tgt, _ := os.Readlink(p)
			out[rel] = "link " + tgt
		case fi.IsDir():
			out[rel] = "dir"
		case fi.Mode().IsRegular():
			data, _ := os.ReadFile(p)
			sum := sha256.Sum256(data)
			out[rel] = fmt.Sprintf("file %s %d", hex.EncodeToString(sum[:8]), fi.ModTime().UnixNano())
		default:
			out[rel] = "special " + fi.Mode().String()
		}
		return nil
	})
	return out
}

var hexID = regexp.MustCompile(`[0-9a-f]{32}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// canonical is treeState with the ids a run makes up (orphans, crawls,
// results) replaced by the snapshot's timestamp or a placeholder, and the
// invalid/ date masked: two runs over the same input that did the same
// work give the same canonical tree.
func canonical(t testing.TB, root string) map[string]string {
	t.Helper()
	names := map[string]string{}
	snaps, _ := filepath.Glob(filepath.Join(root, "archive/users/*/snapshots/*/*/*/index.jsonl"))
	for _, p := range snaps {
		data, _ := os.ReadFile(p)
		first, _, _ := bytes.Cut(data, []byte("\n"))
		var rec struct{ ID, Timestamp string }
		json.Unmarshal(first, &rec)
		names[filepath.Base(filepath.Dir(p))] = "S<" + rec.Timestamp + ">"
		names[rec.ID] = "S<" + rec.Timestamp + ">"
	}
	mask := func(s string) string {
		return hexID.ReplaceAllStringFunc(s, func(id string) string {
			if n, ok := names[id]; ok {
				return n
			}
			return "ID"
		})
	}
	invalidDate := regexp.MustCompile(`^invalid/\d{8}`)
	out := map[string]string{}
	for rel, v := range treeState(t, root) {
		key := invalidDate.ReplaceAllString(mask(rel), "invalid/DATE")
		if strings.HasSuffix(rel, "/index.jsonl") {
			data, _ := os.ReadFile(filepath.Join(root, rel))
			v = "index " + mask(string(data))
		}
		if strings.HasPrefix(v, "link ") {
			v = mask(v)
		}
		if strings.HasPrefix(v, "file ") {
			v = strings.Fields(v)[0] + " " + strings.Fields(v)[1] // the bytes, not the mtime of this build
		}
		if v == "dir" {
			// Folders named by a made-up crawl id collapse into one: a
			// rerun after a failure puts the remaining orphans into a new
			// orphan crawl (the crawl of earlier orphans lives in no
			// database), which is the same data under another made-up id.
			out[key] = "dir;"
			continue
		}
		out[key] += v + ";"
	}
	return out
}

func runOpts(ids archive.IDSource) Options {
	return Options{IDs: ids, Now: func() time.Time { return testNow }, Workers: 4}
}

func TestRunMigratesCollection(t *testing.T) {
	dir := t.TempDir()
	buildCollection(t, dir)
	c, err := archive.Open(dir)
	must(t, err)
	legacyFiles := fileHashes(t, filepath.Join(dir, "archive/1508259732"))
	legacyTree := mustTree(t, filepath.Join(dir, "archive/1508259732"), ".")
	index07, _ := os.ReadFile(filepath.Join(dir, "archive/1508259732/index.json"))
	fifoBefore := treeState(t, filepath.Join(dir, "archive/1600000000"))
	ids := testIDs()

	// --dry-run prints the plan and changes nothing.
	before := treeState(t, dir)
	var plan bytes.Buffer
	o := runOpts(ids)
	o.DryRun, o.PlanOut = true, &plan
	if _, err := Run(context.Background(), c, o); err != nil {
		t.Fatalf("dry run: %v", err)
	}
	if d := diffTrees(before, treeState(t, dir)); d != "" {
		t.Fatalf("--dry-run changed the tree:\n%s", d)
	}
	for _, want := range []string{
		"move     archive/1508259732 -> archive/users/system/snapshots/20171017/example.com/",
		"invalid  archive/1111111111 -> invalid/20260901/1111111111_1 (",
		"unlink   archive/1399999999",
		"crawl    archive/users/system/crawls/20240101/example.net/" + dashedCrawl + " -> archive/users/system/crawls/20240101/example.net/0190f3c1000070008000000000000001",
		"move     archive/users/system/snapshots/20240101/example.net/" + dashedSnap + " -> archive/users/system/snapshots/20240101/example.net/" + compactSnap,
		"skip     archive/hello (not a legacy timestamp folder)",
	} {
		if !strings.Contains(plan.String(), want) {
			t.Errorf("plan lacks %q:\n%s", want, plan.String())
		}
	}

	st, err := Run(context.Background(), c, runOpts(ids))
	if !errors.Is(err, archive.ErrPartial) {
		t.Fatalf("run: err = %v, want ErrPartial for the fifo folder", err)
	}
	if st.Failed != 1 || len(st.Failures) != 1 || !errors.Is(st.Failures[0].Err, ErrSpecialFile) || st.Failures[0].Source != "archive/1600000000" {
		t.Fatalf("failures = %+v, want the fifo folder", st.Failures)
	}
	if st.Symlinks != 1 || st.Invalid != 1 || st.Crawls != 1 || st.Migrated != 4 {
		t.Errorf("stats = %+v", st)
	}

	// Every original file is at its new path with identical bytes, and
	// index.json is byte-identical.
	dst := findSnapshot(t, dir, "1508259732")
	if !strings.HasPrefix(dst, "archive/users/system/snapshots/20171017/example.com/") {
		t.Errorf("1508259732 went to %s", dst)
	}
	hasFiles(t, filepath.Join(dir, dst), legacyFiles)
	if d := diffTrees(legacyTree, mustTree(t, filepath.Join(dir, dst), "index.jsonl", ".")); d != "" {
		t.Errorf("migrated tree differs from the legacy one (modes, links, empty dirs, mtimes):\n%s", d)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, dst, "index.json")); !bytes.Equal(got, index07) {
		t.Error("index.json was rewritten")
	}
	snap, results, lines := readIndexFile(t, filepath.Join(dir, dst, "index.jsonl"))
	if snap["fs_version"] != "0.9.4" || snap["url"] != "https://example.com/" || snap["timestamp"] != "1508259732" ||
		snap["title"] != "Example" || snap["tags"] != "news,tech" || snap["status"] != "sealed" ||
		snap["bookmarked_at"] != "2017-10-17T17:02:12+00:00" {
		t.Errorf("Snapshot record = %v", snap)
	}
	if len(results) != 1 || results[0]["plugin"] != "screenshot" || results[0]["status"] != "succeeded" || results[0]["output_str"] != "screenshot.png" {
		t.Errorf("results = %v", results)
	}
	_ = lines

	orphan := findSnapshot(t, dir, "1710000000")
	if _, _, lines := readIndexFile(t, filepath.Join(dir, orphan, "index.jsonl")); !containsLine(lines, `{"type":"Process","id":"incomplete"}`) {
		t.Errorf("foreign line lost: %q", lines)
	}
	wired := findSnapshot(t, dir, "1339747993")
	if snap, _, _ := readIndexFile(t, filepath.Join(dir, wired, "index.jsonl")); snap["url"] != "http://www.wired.com/2012/06/story/" {
		t.Errorf("wayback url not recovered: %v", snap)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "invalid/20260901/1111111111_1/junk.bin")); err != nil || string(data) != "\x00\xffjunk" {
		t.Errorf("invalid folder: %q %v", data, err)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "invalid/20260901/1111111111/earlier")); string(data) != "earlier" {
		t.Error("earlier invalid folder changed")
	}
	for _, gone := range []string{"archive/1508259732", "archive/1710000000", "archive/1339747993", "archive/1111111111", "archive/1399999999",
		"archive/users/system/snapshots/20240101/example.net/" + dashedSnap, "archive/users/system/crawls/20240101/example.net/" + dashedCrawl} {
		if _, err := os.Lstat(filepath.Join(dir, gone)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s still exists", gone)
		}
	}
	for _, kept := range []string{"archive/hello/file", "archive/.DS_Store", "archive/users/system/snapshots/20140513/example.org/" + currentID + "/index.jsonl"} {
		if _, err := os.Lstat(filepath.Join(dir, kept)); err != nil {
			t.Errorf("%s: %v", kept, err)
		}
	}
	if d := diffTrees(fifoBefore, treeState(t, filepath.Join(dir, "archive/1600000000"))); d != "" {
		t.Errorf("fifo folder touched:\n%s", d)
	}

	// The dashed folder is renamed to its compact id, its record updated
	// with unknown keys and foreign lines kept; its crawl folder renamed
	// and the crawl symlink points at the new folder.
	net := "archive/users/system/snapshots/20240101/example.net/" + compactSnap
	snap, _, lines = readIndexFile(t, filepath.Join(dir, net, "index.jsonl"))
	if snap["id"] != compactSnap || snap["fs_version"] != "0.9.4" || snap["custom_key"] != "kept" || !containsLine(lines, `{"type": "Process", "id": "p1", "cmd": ["x"]}`) {
		t.Errorf("renamed 0.9 snapshot index: %v %q", snap, lines)
	}
	link := filepath.Join(dir, "archive/users/system/crawls/20240101/example.net/0190f3c1000070008000000000000001/snapshots/example.net", compactSnap)
	if target, err := os.Readlink(link); err != nil || filepath.IsAbs(target) {
		t.Errorf("crawl link %s: %q %v", link, target, err)
	} else if real, err := filepath.EvalSymlinks(link); err != nil || real != filepath.Join(dir, net) {
		t.Errorf("crawl link resolves to %q (%v), want %s", real, err, net)
	}
	if _, err := os.Lstat(filepath.Join(filepath.Dir(link), dashedSnap)); !errors.Is(err, fs.ErrNotExist) {
		t.Error("stale dashed crawl link kept")
	}
	if j, _ := os.ReadFile(c.Path(JournalFile)); len(j) != 0 && !bytes.Contains(j, []byte(`"failed"`)) {
		t.Errorf("journal not cleared: %s", j)
	}

	// A second run does no work and changes no byte.
	after := treeState(t, dir)
	st, err = Run(context.Background(), c, runOpts(ids))
	if !errors.Is(err, archive.ErrPartial) {
		t.Fatalf("second run: %v", err)
	}
	if st.Work() != 0 || st.Migrated != 0 || st.Bytes != 0 {
		t.Errorf("second run did work: %+v", st)
	}
	if d := diffTrees(after, treeState(t, dir)); d != "" {
		t.Errorf("second run changed the tree:\n%s", d)
	}
}

func mustTree(t testing.TB, root string, drop ...string) map[string]string {
	m := snapshotTree(t, root)
	for _, d := range drop {
		delete(m, d)
	}
	return m
}

func containsLine(lines []string, want string) bool {
	for _, l := range lines {
		if l == want {
			return true
		}
	}
	return false
}

// findSnapshot returns the folder (relative) of the snapshot with the
// given legacy timestamp.
func findSnapshot(t testing.TB, dir, ts string) string {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(dir, "archive/users/*/snapshots/*/*/*/index.jsonl"))
	for _, p := range paths {
		snap, _, _ := readIndexFile(t, p)
		if snap["timestamp"] == ts {
			rel, _ := filepath.Rel(dir, filepath.Dir(p))
			return filepath.ToSlash(rel)
		}
	}
	t.Fatalf("no migrated snapshot has timestamp %s", ts)
	return ""
}

func readIndexFile(t testing.TB, p string) (snap map[string]any, results []map[string]any, lines []string) {
	t.Helper()
	data, err := os.ReadFile(p)
	must(t, err)
	for _, l := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		lines = append(lines, l)
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) != nil {
			continue
		}
		switch m["type"] {
		case "Snapshot":
			if snap == nil {
				snap = m
			}
		case "ArchiveResult":
			results = append(results, m)
		}
	}
	if snap == nil {
		t.Fatalf("%s has no Snapshot record", p)
	}
	return snap, results, lines
}

// TestRunFaultAtEveryStep fails the migration at every step of every kind
// of entry, then runs again and expects the tree of an uninterrupted run:
// nothing lost, nothing doubled.
func TestRunFaultAtEveryStep(t *testing.T) {
	ref := t.TempDir()
	buildCollection(t, ref)
	rc, _ := archive.Open(ref)
	if _, err := Run(context.Background(), rc, runOpts(testIDs())); !errors.Is(err, archive.ErrPartial) {
		t.Fatal(err)
	}
	want := canonical(t, ref)
	steps := []string{"planned", "copied", "verified", "indexed", "deleting", "deleted", "done", "write", "remove"}
	for _, forceCopy := range []bool{false, true} {
		for _, step := range steps {
			for _, nth := range []int64{1, 3} {
				t.Run(fmt.Sprintf("copy=%v/%s:%d", forceCopy, step, nth), func(t *testing.T) {
					dir := t.TempDir()
					buildCollection(t, dir)
					c, _ := archive.Open(dir)
					ids := testIDs()
					var n atomic.Int64
					injected := errors.New("injected fault")
					o := runOpts(ids)
					o.Workers = 1
					o.ForceCopy = forceCopy
					o.Fault = func(s, src string) error {
						if s == step && n.Add(1) == nth {
							return injected
						}
						return nil
					}
					_, err := Run(context.Background(), c, o)
					if err == nil {
						t.Fatal("no error although a fault was injected (and a fifo is present)")
					}
					o2 := runOpts(ids)
					o2.ForceCopy = forceCopy
					if _, err := Run(context.Background(), c, o2); !errors.Is(err, archive.ErrPartial) {
						t.Fatalf("rerun: %v", err)
					}
					if d := diffTrees(want, canonical(t, dir)); d != "" {
						t.Errorf("after fault and rerun the tree differs from an uninterrupted run:\n%s", d)
					}
				})
			}
		}
	}
}

func TestPlanInvalidSuffixesMergesAndLeaves(t *testing.T) {
	dir := t.TempDir()
	if _, err := archive.Init(dir, false); err != nil {
		t.Fatal(err)
	}
	must(t, os.MkdirAll(filepath.Join(dir, "invalid/20260901/123"), 0o755))
	must(t, os.MkdirAll(filepath.Join(dir, "invalid/20260901/123_1"), 0o755))
	c, _ := archive.Open(dir)
	snap := archive.Snapshot{ID: "0190f3c2a1b27c3d8e4f5a6b7c8d9e0f", URL: "https://example.com/", BookmarkedAt: time.Date(2017, 10, 17, 0, 0, 0, 0, time.UTC)}
	inv := &Inventory{
		Items: []Item{
			{Snapshot: snap, User: "system", Source: "archive/1508259732"},
			{Snapshot: snap, User: "system", Source: "archive/1508259732.0"},
			{Snapshot: archive.Snapshot{ID: "0190f3c2a1b27c3d8e4f5a6b7c8d9e01", URL: "https://example.org/"}, User: "admin"},
			{Snapshot: archive.Snapshot{ID: "not-an-id", URL: "https://example.org/"}, User: "admin", Source: "archive/1600000000"},
		},
		Invalid:  []Invalid{{Source: "archive/123", Reason: "no url"}, {Source: "archive/other/123", Reason: "no url"}},
		Skipped:  []Skipped{{Source: "archive/hello", Reason: "not a legacy timestamp folder"}},
		Stranded: []Skipped{{Source: "archive/20240101120000.000000", Reason: "holds a snapshot nobody claims"}},
	}
	p, err := NewPlan(c, inv, testNow)
	must(t, err)
	var out bytes.Buffer
	must(t, p.Format(&out))
	for _, want := range []string{
		"move     archive/1508259732 -> archive/users/system/snapshots/20171017/example.com/0190f3c2a1b27c3d8e4f5a6b7c8d9e0f\n",
		"merge    archive/1508259732.0 -> archive/users/system/snapshots/20171017/example.com/0190f3c2a1b27c3d8e4f5a6b7c8d9e0f (a second folder of snapshot 0190f3c2a1b27c3d8e4f5a6b7c8d9e0f)\n",
		"create   archive/users/admin/snapshots/unknown/example.org/0190f3c2a1b27c3d8e4f5a6b7c8d9e01/index.jsonl (no folder on disk)\n",
		"skip     archive/1600000000 (snapshot dir: id \"not-an-id\" is not 32 lowercase hex digits)\n",
		"invalid  archive/123 -> invalid/20260901/123_2 (no url)\n",
		"invalid  archive/other/123 -> invalid/20260901/123_3 (no url)\n",
		"skip     archive/hello (not a legacy timestamp folder)\n",
		"leave    archive/20240101120000.000000 (holds a snapshot nobody claims)\n",
		"1 to move, 1 to merge, 0 to index, 1 to create, 2 invalid, 0 symlinks to remove, 0 crawl folders to rename, 2 skipped, 1 left behind, 0 already current\n",
		"1 folders hold snapshots the migration cannot take; the run will report them as failed\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("plan lacks %q:\n%s", want, out.String())
		}
	}
}

// TestRunCompactsResultIDsOfDashedFolder: a 0.9 development folder's
// results name themselves and their snapshot with dashed ids; once the
// folder takes its compact name they say the compact ids 0.9.4 matches
// by, while every other key, the writer's schema_version and the Process
// lines they point to stay as they were.
func TestRunCompactsResultIDsOfDashedFolder(t *testing.T) {
	dir := t.TempDir()
	buildCollection(t, dir)
	idx := filepath.Join(dir, "archive/users/system/snapshots/20240101/example.net", dashedSnap, "index.jsonl")
	f, err := os.OpenFile(idx, os.O_APPEND|os.O_WRONLY, 0)
	must(t, err)
	_, err = f.WriteString(`{"type": "ArchiveResult", "schema_version": "0.9.31rc1", "id": "0190f3c5-1111-7000-8000-00000000000a", "snapshot_id": "` + dashedSnap + `", "plugin": "screenshot", "hook_name": "on_Snapshot__50_screenshot.js", "status": "succeeded", "output_str": "screenshot.png", "start_ts": "2024-01-01T10:00:01+00:00", "end_ts": "2024-01-01T10:00:02+00:00", "process_id": "0190f3c6-2222-7000-8000-00000000000b", "custom": {"kept":  true}}` + "\n")
	must(t, err)
	must(t, f.Close())
	c, _ := archive.Open(dir)
	if _, err := Run(context.Background(), c, runOpts(testIDs())); !errors.Is(err, archive.ErrPartial) {
		t.Fatal(err)
	}
	_, _, lines := readIndexFile(t, filepath.Join(dir, "archive/users/system/snapshots/20240101/example.net", compactSnap, "index.jsonl"))
	// The keys the file had keep their place and bytes; the files found
	// on disk are added after them, once.
	want := `{"type": "ArchiveResult", "schema_version": "0.9.31rc1", "id": "0190f3c511117000800000000000000a", "snapshot_id": "` + compactSnap + `", "plugin": "screenshot", "hook_name": "on_Snapshot__50_screenshot.js", "status": "succeeded", "output_str": "screenshot.png", "start_ts": "2024-01-01T10:00:01+00:00", "end_ts": "2024-01-01T10:00:02+00:00", "process_id": "0190f3c6-2222-7000-8000-00000000000b", "custom": {"kept":  true}, "output_files": {`
	n := 0
	for _, l := range lines {
		if strings.Contains(l, `"ArchiveResult"`) {
			n++
			if !strings.HasPrefix(l, want) {
				t.Errorf("result line\n%s\ndoes not start with\n%s", l, want)
			}
		}
	}
	if n != 1 {
		t.Errorf("index holds %d results, want 1:\n%s", n, strings.Join(lines, "\n"))
	}
}

// TestBuildIndexMatchesDashedResultToCompactRow: a 0.9 development
// folder's file names a result dashed while the database names the same
// result compactly; the migrated index holds it once, compact, with the
// file's unknown keys kept and the database's values merged in.
func TestBuildIndexMatchesDashedResultToCompactRow(t *testing.T) {
	existing := `{"type": "Snapshot", "id": "` + dashedSnap + `", "url": "https://example.net/"}
{"type": "ArchiveResult", "id": "0190f3c5-1111-7000-8000-00000000000a", "snapshot_id": "` + dashedSnap + `", "plugin": "screenshot", "status": "started", "custom": {"kept":  true}}
`
	it := &Item{
		Snapshot: archive.Snapshot{ID: compactSnap, URL: "https://example.net/"},
		Results: []archive.Result{{ID: "0190f3c511117000800000000000000a", SnapshotID: compactSnap,
			Plugin: "screenshot", Status: "succeeded", OutputStr: "screenshot.png"}},
	}
	out, err := buildIndex([]byte(existing), it, nil)
	if err != nil {
		t.Fatal(err)
	}
	ix, bad := archive.ParseIndex(out)
	if len(bad) > 0 {
		t.Fatal(bad)
	}
	rs := ix.Results()
	if len(rs) != 1 {
		t.Fatalf("index holds %d results, want 1:\n%s", len(rs), out)
	}
	if rs[0].ID != "0190f3c511117000800000000000000a" || rs[0].SnapshotID != compactSnap || rs[0].Status != "succeeded" {
		t.Errorf("result %+v, want the compact ids and the database's status", rs[0])
	}
	if !strings.Contains(string(out), `"custom": {"kept":  true}`) {
		t.Errorf("the file's unknown key is gone:\n%s", out)
	}
}
