package migrate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/gen"
)

// Formats spec §7 edge cases and bad input, through Run on small
// collections: each failure names its file and leaves the tree as it was.

// edgeCollection initialises a collection in a temp dir holding files
// (slash paths relative to the data dir).
func edgeCollection(t *testing.T, files map[string]string) (string, *archive.Collection) {
	t.Helper()
	dir := t.TempDir()
	_, err := archive.Init(dir, false)
	must(t, err)
	for rel, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(data), 0o644))
	}
	c, err := archive.Open(dir)
	must(t, err)
	return dir, c
}

// plannedDest returns where a dry run with fresh testIDs moves source (a
// real run with fresh testIDs makes the same choice).
func plannedDest(t *testing.T, c *archive.Collection, source string) string {
	t.Helper()
	var plan bytes.Buffer
	o := runOpts(testIDs())
	o.DryRun, o.PlanOut = true, &plan
	_, err := Run(context.Background(), c, o)
	must(t, err)
	prefix := "move     " + source + " -> "
	for _, l := range strings.Split(plan.String(), "\n") {
		if strings.HasPrefix(l, prefix) {
			return strings.TrimPrefix(l, prefix)
		}
	}
	t.Fatalf("plan does not move %s:\n%s", source, plan.String())
	return ""
}

// oneFailure checks that a run failed on source alone with an error that
// is target and names want.
func oneFailure(t *testing.T, st *Stats, err error, source string, target error, want string) {
	t.Helper()
	if !errors.Is(err, archive.ErrPartial) {
		t.Fatalf("err = %v, want ErrPartial", err)
	}
	if st.Failed != 1 || len(st.Failures) != 1 || st.Failures[0].Source != source {
		t.Fatalf("failures = %+v, want %s alone", st.Failures, source)
	}
	if ferr := st.Failures[0].Err; !errors.Is(ferr, target) || !strings.Contains(ferr.Error(), want) {
		t.Errorf("error %q: want %v naming %s", ferr, target, want)
	}
}

// hasFiles checks that every file of want (fileHashes of the legacy
// folder) is under root with the same bytes.
func hasFiles(t *testing.T, root string, want map[string]string) {
	t.Helper()
	got := fileHashes(t, root)
	for rel, sum := range want {
		if got[rel] != sum {
			t.Errorf("%s/%s: hash %s, want %s", root, rel, got[rel], sum)
		}
	}
}

var legacyFolder = map[string]string{
	"archive/1508259732/index.json":       `{"url": "https://example.com/", "timestamp": "1508259732", "title": "Example"}`,
	"archive/1508259732/screenshot.png":   "\x00\xffpng" + strings.Repeat("\x00\xff", 4096),
	"archive/1508259732/media/stderr.log": "",
}

// §7.23 and bad input "a destination file that differs".
func TestRunNeverOverwritesADifferingDestination(t *testing.T) {
	t.Run("differing file", func(t *testing.T) {
		dir, c := edgeCollection(t, legacyFolder)
		dst := plannedDest(t, c, "archive/1508259732")
		must(t, os.MkdirAll(filepath.Join(dir, dst), 0o755))
		must(t, os.WriteFile(filepath.Join(dir, dst, "screenshot.png"), []byte("other bytes"), 0o644))
		must(t, os.WriteFile(filepath.Join(dir, dst, "existing-user-output.bin"), []byte("\x00mine"), 0o644))
		before := treeState(t, dir)
		st, err := Run(context.Background(), c, runOpts(testIDs()))
		oneFailure(t, st, err, "archive/1508259732", ErrWouldOverwrite, filepath.Join(dir, dst, "screenshot.png"))
		if d := diffTrees(before, treeState(t, dir)); d != "" {
			t.Errorf("a refused migration changed the tree:\n%s", d)
		}
	})
	t.Run("identical file and destination-only files", func(t *testing.T) {
		dir, c := edgeCollection(t, legacyFolder)
		dst := plannedDest(t, c, "archive/1508259732")
		legacy := fileHashes(t, filepath.Join(dir, "archive/1508259732"))
		mine := map[string]string{"existing-user-output.bin": "\x00mine", "preexisting-output.bin": "\xffearlier"}
		for name, data := range mine {
			must(t, os.MkdirAll(filepath.Join(dir, dst), 0o755))
			must(t, os.WriteFile(filepath.Join(dir, dst, name), []byte(data), 0o644))
		}
		copyOne(t, filepath.Join(dir, "archive/1508259732/screenshot.png"), filepath.Join(dir, dst, "screenshot.png"))
		if _, err := Run(context.Background(), c, runOpts(testIDs())); err != nil {
			t.Fatal(err)
		}
		if got := findSnapshot(t, dir, "1508259732"); got != dst {
			t.Fatalf("migrated to %s, want %s", got, dst)
		}
		hasFiles(t, filepath.Join(dir, dst), legacy)
		for name, data := range mine {
			if b, err := os.ReadFile(filepath.Join(dir, dst, name)); err != nil || string(b) != data {
				t.Errorf("destination-only %s: %q %v", name, b, err)
			}
		}
		if _, err := os.Lstat(filepath.Join(dir, "archive/1508259732")); !errors.Is(err, fs.ErrNotExist) {
			t.Error("legacy folder remains after a verified merge")
		}
	})
}

// Bad input "a full disk simulated by a write error": the copy stops in
// the middle of a file, the run stops with a NoSpaceError naming the
// folder being written (not a failure of the folder), nothing is left
// half-written, and the next run migrates the folder.
func TestRunWriteErrorMidCopyLosesNothing(t *testing.T) {
	for _, merge := range []bool{false, true} {
		name := "fresh destination"
		if merge {
			name = "merge into existing destination"
		}
		t.Run(name, func(t *testing.T) {
			dir, c := edgeCollection(t, legacyFolder)
			dst := plannedDest(t, c, "archive/1508259732")
			if merge {
				must(t, os.MkdirAll(filepath.Join(dir, dst), 0o755))
				must(t, os.WriteFile(filepath.Join(dir, dst, "existing-user-output.bin"), []byte("mine"), 0o644))
			}
			legacy := fileHashes(t, filepath.Join(dir, "archive/1508259732"))
			before := treeState(t, dir)
			o := runOpts(testIDs())
			o.ForceCopy = true
			o.Fault = func(step, src string) error {
				if step == "write" {
					return syscall.ENOSPC
				}
				return nil
			}
			st, err := Run(context.Background(), c, o)
			var full *NoSpaceError
			if !errors.As(err, &full) || !errors.Is(err, syscall.ENOSPC) || errors.Is(err, archive.ErrPartial) {
				t.Fatalf("err = %v, want a NoSpaceError", err)
			}
			if full.Path != filepath.Join(dir, dst) || full.Mount == "" || st.Failed != 0 {
				t.Errorf("NoSpaceError %+v with %d failures, want the path %s, a mount point and no failure", full, st.Failed, filepath.Join(dir, dst))
			}
			if d := diffTrees(before, treeState(t, dir)); d != "" {
				t.Errorf("a failed copy changed the tree:\n%s", d)
			}
			o = runOpts(testIDs())
			o.ForceCopy = true
			if _, err := Run(context.Background(), c, o); err != nil {
				t.Fatalf("rerun with space: %v", err)
			}
			hasFiles(t, filepath.Join(dir, dst), legacy)
		})
	}
}

// Bad input "corrupt databases": garbage bytes, a truncated file. One
// error names index.sqlite3 before anything moves.
func TestRunCorruptDatabase(t *testing.T) {
	dbBytes := func(t *testing.T) []byte {
		ref := t.TempDir()
		_, err := gen.Legacy(ref, gen.LegacyOptions{Version: gen.Legacy07, N: 12, Seed: 3})
		must(t, err)
		data, err := os.ReadFile(filepath.Join(ref, "index.sqlite3"))
		must(t, err)
		return data
	}
	good := dbBytes(t)
	for _, tc := range []struct {
		name string
		db   []byte
	}{
		{"garbage", bytes.Repeat([]byte("\x00\xffgarbage"), 512)},
		{"header only", good[:100]},
		{"truncated to half", good[:len(good)/2]},
		{"valid header, garbage pages", append(append([]byte{}, good[:100]...), bytes.Repeat([]byte{0xa5}, len(good)-100)...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data")
			_, err := gen.Legacy(dir, gen.LegacyOptions{Version: gen.Legacy07, N: 12, Seed: 3})
			must(t, err)
			must(t, os.WriteFile(filepath.Join(dir, "index.sqlite3"), tc.db, 0o644))
			c, err := archive.Open(dir)
			must(t, err)
			before := treeState(t, dir)
			_, err = Run(context.Background(), c, runOpts(testIDs()))
			if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "index.sqlite3")) {
				t.Fatalf("err = %v, want one error naming %s", err, filepath.Join(dir, "index.sqlite3"))
			}
			t.Log(err)
			if d := diffTrees(before, treeState(t, dir)); d != "" {
				t.Errorf("a run on a corrupt database changed the tree:\n%s", d)
			}
		})
	}
}

// §7.24: a migration interrupted after the copy was verified, whose legacy
// file then changed, is not finished: the rerun refuses, says why, and
// keeps both the legacy folder and the copy.
func TestRunRefusesALegacyFileChangedAfterInterruption(t *testing.T) {
	dir, c := edgeCollection(t, legacyFolder)
	dst := plannedDest(t, c, "archive/1508259732")
	ids := testIDs()
	o := runOpts(ids)
	o.ForceCopy = true
	o.Fault = func(step, _ string) error {
		if step == stepDeleting {
			return errors.New("injected crash before deleting")
		}
		return nil
	}
	if _, err := Run(context.Background(), c, o); err == nil {
		t.Fatal("no error although a fault was injected")
	}
	for _, p := range []string{"archive/1508259732/screenshot.png", dst + "/screenshot.png", dst + "/index.jsonl"} {
		if _, err := os.Lstat(filepath.Join(dir, p)); err != nil {
			t.Fatalf("after the interruption: %v", err)
		}
	}
	must(t, os.WriteFile(filepath.Join(dir, "archive/1508259732/screenshot.png"), []byte("changed since"), 0o644))
	before := treeState(t, dir)
	st, err := Run(context.Background(), c, runOpts(ids))
	oneFailure(t, st, err, "archive/1508259732", ErrMismatch, filepath.Join(dir, "archive/1508259732"))
	if d := diffTrees(before, treeState(t, dir)); d != "" {
		t.Errorf("the refused rerun changed the tree:\n%s", d)
	}
}

// §7.20: comment and invalid JSON lines of a legacy index.jsonl survive
// verbatim in the migrated one; a bare URL line gives the snapshot.
func TestRunKeepsForeignIndexLines(t *testing.T) {
	dir, c := edgeCollection(t, map[string]string{
		"archive/1500000000/index.jsonl": "# a comment\nnot json {\nhttps://bare.example.com/page\n",
		"archive/1500000000/output.html": "<html></html>",
	})
	if _, err := Run(context.Background(), c, runOpts(testIDs())); err != nil {
		t.Fatal(err)
	}
	snap, _, lines := readIndexFile(t, filepath.Join(dir, findSnapshot(t, dir, "1500000000"), "index.jsonl"))
	if snap["url"] != "https://bare.example.com/page" || !containsLine(lines, "# a comment") || !containsLine(lines, "not json {") {
		t.Errorf("snapshot %v, lines %q", snap, lines)
	}
}

// §7.5: only names whose Python float lies in the range are legacy
// folders; every other folder under archive/ stays as it is and none goes
// to invalid/. Those that hold a snapshot record are named as left behind
// and fail the run (exit 3), in every run until the user renames them;
// reserved and dot names are not looked at.
func TestRunLeavesNonTimestampFolders(t *testing.T) {
	files := map[string]string{}
	stranded := []string{"nan", "inf", "788918399", "2082758401", "123_abc", "1508259732_1", "0x5a0a0b54"}
	others := append([]string{".hidden1508259732", "snapshots", "crawls"}, stranded...)
	for _, name := range append([]string{"1.5e9", "1_508_259_732"}, others...) {
		files["archive/"+name+"/index.json"] = `{"url": "https://x.example.com/` + name + `"}`
	}
	dir, c := edgeCollection(t, files)
	before := treeState(t, dir)
	for run := 1; run <= 2; run++ {
		st, err := Run(context.Background(), c, runOpts(testIDs()))
		if !errors.Is(err, archive.ErrPartial) || st.Failed != int64(len(stranded)) {
			t.Fatalf("run %d: err %v, %d failed, want ErrPartial and %d", run, err, st.Failed, len(stranded))
		}
		for i, f := range st.Failures {
			if want := "archive/" + slices.Sorted(slices.Values(stranded))[i]; f.Source != want || !errors.Is(f.Err, ErrLeftBehind) ||
				!strings.Contains(f.Err.Error(), "https://x.example.com/") {
				t.Errorf("run %d: failure %s: %v, want %s left behind, naming its url", run, f.Source, f.Err, want)
			}
		}
	}
	after := treeState(t, dir)
	for _, name := range others {
		for _, rel := range []string{"archive/" + name, "archive/" + name + "/index.json"} {
			if after[rel] != before[rel] {
				t.Errorf("%s: %q, was %q", rel, after[rel], before[rel])
			}
		}
	}
	for _, ts := range []string{"1.5e9", "1_508_259_732"} {
		findSnapshot(t, dir, ts)
		if _, ok := after["archive/"+ts]; ok {
			t.Errorf("legacy folder archive/%s remains", ts)
		}
	}
	if _, err := os.Lstat(filepath.Join(dir, "invalid")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("invalid/ was created: %v", err)
	}
}

// §7.27 (and 7.10c): every migrated snapshot has a relative crawl symlink
// that resolves to its folder; crawl folders get no index.jsonl.
func TestRunLinksEverySnapshotFromItsCrawl(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	m, err := gen.Legacy(dir, gen.LegacyOptions{Version: gen.Legacy08, N: 9, Seed: 5, Edges: []gen.Edge{gen.EdgeOrphan, gen.EdgeRowNoFolder}})
	must(t, err)
	c, err := archive.Open(dir)
	must(t, err)
	if _, err := Run(context.Background(), c, runOpts(testIDs())); err != nil {
		t.Fatal(err)
	}
	for _, want := range m.Snapshots {
		snapDir := findSnapshot(t, dir, want.Timestamp)
		snap, _, _ := readIndexFile(t, filepath.Join(dir, snapDir, "index.jsonl"))
		crawl, _ := snap["crawl_id"].(string)
		links, _ := filepath.Glob(filepath.Join(dir, "archive/users/*/crawls/*/*", crawl, "snapshots/*", filepath.Base(snapDir)))
		if crawl == "" || len(links) != 1 {
			t.Errorf("%s (crawl %q): crawl links %v, want one", snapDir, crawl, links)
			continue
		}
		if target, err := os.Readlink(links[0]); err != nil || filepath.IsAbs(target) {
			t.Errorf("%s: link text %q %v, want a relative link", links[0], target, err)
		}
		if real, err := filepath.EvalSymlinks(links[0]); err != nil || real != filepath.Join(dir, snapDir) {
			t.Errorf("%s resolves to %q (%v), want %s", links[0], real, err, snapDir)
		}
	}
	if idx, _ := filepath.Glob(filepath.Join(dir, "archive/users/*/crawls/*/*/*/index.jsonl")); len(idx) != 0 {
		t.Errorf("crawl folders got index.jsonl: %v", idx)
	}
}

// §7.30: a log-only plugin folder (an empty stderr.log, empty nested
// dirs) survives beside duplicate empty results, and the result is kept;
// on the rename and on the copy path.
func TestRunKeepsLogOnlyPluginFolders(t *testing.T) {
	for _, forceCopy := range []bool{false, true} {
		dir, c := edgeCollection(t, map[string]string{
			"archive/1609459200/index.json": `{"url": "https://media.example.com/", "timestamp": "1609459200", "history": {"media": [` +
				`{"output": "", "status": "failed", "start_ts": "2021-01-01T00:00:01+00:00"}, ` +
				`{"output": "", "status": "failed", "start_ts": "2021-01-01T00:00:01+00:00"}]}}`,
			"archive/1609459200/media/stderr.log": "",
		})
		must(t, os.MkdirAll(filepath.Join(dir, "archive/1609459200/media/nested/empty"), 0o755))
		o := runOpts(testIDs())
		o.ForceCopy = forceCopy
		if _, err := Run(context.Background(), c, o); err != nil {
			t.Fatal(err)
		}
		dst := findSnapshot(t, dir, "1609459200")
		after := treeState(t, filepath.Join(dir, dst))
		if after["media/stderr.log"] == "" || after["media/nested/empty"] != "dir" {
			t.Errorf("copy=%v: log-only plugin folder lost: %v", forceCopy, after)
		}
		_, results, _ := readIndexFile(t, filepath.Join(dir, dst, "index.jsonl"))
		if len(results) == 0 || results[0]["plugin"] != "media" {
			t.Errorf("copy=%v: empty media result dropped: %v", forceCopy, results)
		}
	}
}

// §7.31: snapshots at the current path whose fs_version is 0.9.1-0.9.3
// reach 0.9.4 in place, with unknown plugin folders, binary payloads,
// relative symlinks and empty dirs untouched.
func TestRunBringsEveryDeclaredVersionToCurrent(t *testing.T) {
	files := map[string]string{}
	var dirs []string
	for i, v := range []string{"0.9.1", "0.9.2", "0.9.3"} {
		id := fmt.Sprintf("0190aaaa00007000800000000000000%d", i+1)
		d := "archive/users/system/snapshots/20140513/example.org/" + id
		dirs = append(dirs, d)
		files[d+"/index.jsonl"] = `{"type": "Snapshot", "id": "` + id + `", "url": "https://example.org/` + v + `", "timestamp": "139999999` + fmt.Sprint(i) +
			`", "bookmarked_at": "2014-05-13T16:53:19+00:00", "created_at": "2014-05-13T16:53:19+00:00", "status": "sealed", "fs_version": "` + v + `"}` + "\n"
		files[d+"/someplugin/out.bin"] = "\x00\xff\x00binary"
	}
	dir, c := edgeCollection(t, files)
	for _, d := range dirs {
		must(t, os.Symlink("someplugin/out.bin", filepath.Join(dir, d, "payload-link")))
		must(t, os.MkdirAll(filepath.Join(dir, d, "someplugin/empty"), 0o755))
	}
	before := map[string]map[string]string{}
	for _, d := range dirs {
		before[d] = mustTree(t, filepath.Join(dir, d), "index.jsonl", ".")
	}
	if _, err := Run(context.Background(), c, runOpts(testIDs())); err != nil {
		t.Fatal(err)
	}
	for i, d := range dirs {
		if got := findSnapshot(t, dir, fmt.Sprint(1399999990+i)); got != d {
			t.Errorf("snapshot moved from %s to %s", d, got)
			continue
		}
		if snap, _, _ := readIndexFile(t, filepath.Join(dir, d, "index.jsonl")); snap["fs_version"] != "0.9.4" {
			t.Errorf("%s: fs_version %v", d, snap["fs_version"])
		}
		if diff := diffTrees(before[d], mustTree(t, filepath.Join(dir, d), "index.jsonl", ".")); diff != "" {
			t.Errorf("%s changed:\n%s", d, diff)
		}
	}
}

// Bad input "unreadable files" as root can make them: a folder whose
// index cannot be read is left as it is and counted as failed, not only
// skipped, so the run ends partial (cmd/folio's TestUpdateUnreadableFile
// covers mode 000).
func TestRunUnreadableIndexFails(t *testing.T) {
	dir, c := edgeCollection(t, map[string]string{
		"archive/1500000000/index.json":    `{"url": "https://ok.example.com/"}`,
		"archive/1500000001/index.jsonl/x": "a directory where the index should be",
	})
	before := treeState(t, dir)
	st, err := Run(context.Background(), c, runOpts(testIDs()))
	oneFailure(t, st, err, "archive/1500000001", syscall.EISDIR, filepath.Join(dir, "archive/1500000001/index.jsonl"))
	if st.Skipped != 0 || st.Migrated != 1 {
		t.Errorf("stats %+v: want the unreadable folder failed (not also skipped), the other migrated", st)
	}
	after := treeState(t, dir)
	for rel, v := range before {
		if strings.HasPrefix(rel, "archive/1500000001") && after[rel] != v {
			t.Errorf("%s: %q, was %q", rel, after[rel], v)
		}
	}
}

// §7.4: the domain folder a migrated snapshot lands in follows the path
// rules (port suffix, IPv6 colons only with a port, scheme names, file ->
// localhost, invalid port -> unknown, unicode and a trailing dot kept).
func TestRunDomainFolders(t *testing.T) {
	want := map[string]string{
		"1500000001": "example.com_8080", "1500000002": "__1_8080", "1500000003": "::1",
		"1500000004": "ftp", "1500000005": "localhost", "1500000006": "unknown",
		"1500000007": "münchen.de", "1500000008": "example.com.", "1500000009": "example.org",
	}
	urls := map[string]string{
		"1500000001": "https://example.com:8080/a", "1500000002": "http://[::1]:8080/", "1500000003": "http://[::1]/",
		"1500000004": "ftp://x/file", "1500000005": "file:///etc/hosts", "1500000006": "http://example.com:99999/",
		"1500000007": "https://münchen.de/", "1500000008": "http://example.com./", "1500000009": "http://example.org:0/",
	}
	files := map[string]string{}
	for ts, u := range urls {
		files["archive/"+ts+"/index.json"] = `{"url": "` + u + `", "timestamp": "` + ts + `"}`
	}
	dir, c := edgeCollection(t, files)
	if _, err := Run(context.Background(), c, runOpts(testIDs())); err != nil {
		t.Fatal(err)
	}
	for ts, dom := range want {
		if got := strings.Split(findSnapshot(t, dir, ts), "/")[5]; got != dom {
			t.Errorf("%s: domain folder %q, want %q", urls[ts], got, dom)
		}
	}
}

// §7.9: two legacy folders whose names strip to the same timestamp both
// migrate, the second under the +0.000001 timestamp, into two folders.
func TestRunTimestampCollision(t *testing.T) {
	dir, c := edgeCollection(t, map[string]string{
		"archive/1500000000/index.json":   `{"url": "https://one.example.com/"}`,
		"archive/1500000000/one.html":     "one",
		"archive/1500000000\t/index.json": `{"url": "https://two.example.com/"}`,
		"archive/1500000000\t/two.html":   "two",
	})
	if _, err := Run(context.Background(), c, runOpts(testIDs())); err != nil {
		t.Fatal(err)
	}
	a, b := findSnapshot(t, dir, "1500000000"), findSnapshot(t, dir, "1500000000.000001")
	if a == b {
		t.Fatalf("both in %s", a)
	}
	for _, p := range []string{a, b} {
		snap, _, _ := readIndexFile(t, filepath.Join(dir, p, "index.jsonl"))
		name := map[string]string{"https://one.example.com/": "one.html", "https://two.example.com/": "two.html"}[snap["url"].(string)]
		if _, err := os.Stat(filepath.Join(dir, p, name)); name == "" || err != nil {
			t.Errorf("%s (%v) lacks its output %q: %v", p, snap["url"], name, err)
		}
	}
	if names, _ := os.ReadDir(filepath.Join(dir, "archive")); len(names) != 1 {
		t.Errorf("archive/ holds %v, want only users/", names)
	}
}

// TestRunAcrossFilesystems: archive/users on another filesystem (here a
// symlink into /dev/shm, as when a user points it at a new disk). Every
// legacy folder's rename fails with EXDEV, so each takes the copy path —
// copied, verified, indexed, synced, rechecked, then deleted — and the
// result is what the same migration makes on one filesystem.
func TestRunAcrossFilesystems(t *testing.T) {
	other, err := os.MkdirTemp("/dev/shm", "folio-test-")
	if err != nil {
		t.Skipf("no /dev/shm to put archive/users on: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(other) })
	one, two := t.TempDir(), t.TempDir()
	var a, b syscall.Stat_t
	must(t, syscall.Stat(other, &a))
	must(t, syscall.Stat(two, &b))
	if a.Dev == b.Dev {
		t.Skipf("/dev/shm and %s are one filesystem", two)
	}
	buildCollection(t, one)
	buildCollection(t, two)
	legacy := fileHashes(t, filepath.Join(two, "archive/1508259732"))
	users := filepath.Join(two, "archive/users")
	move := func(from, to string) {
		t.Helper()
		if out, err := exec.Command("cp", "-a", from+"/.", to).CombinedOutput(); err != nil {
			t.Fatalf("cp -a %s %s: %v %s", from, to, err, out)
		}
		must(t, os.RemoveAll(from))
	}
	move(users, other)
	must(t, os.Symlink(other, users))

	var stats [2]*Stats
	for i, dir := range []string{one, two} {
		c, err := archive.Open(dir)
		must(t, err)
		st, err := Run(context.Background(), c, runOpts(testIDs()))
		if !errors.Is(err, archive.ErrPartial) || st.Failed != 1 {
			t.Fatalf("%s: err = %v, failed %d; want only the fifo folder to fail", dir, err, st.Failed)
		}
		stats[i] = st
	}
	if stats[0].Migrated != stats[1].Migrated || stats[0].Bytes != stats[1].Bytes || stats[0].Files != stats[1].Files {
		t.Errorf("one filesystem: %+v\ntwo: %+v", stats[0], stats[1])
	}
	hasFiles(t, filepath.Join(two, findSnapshot(t, two, "1508259732")), legacy)
	if _, err := os.Lstat(filepath.Join(two, "archive/1508259732")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("legacy folder left after its copy was verified: %v", err)
	}
	// Bring archive/users home to compare the whole trees.
	must(t, os.Remove(users))
	must(t, os.Mkdir(users, 0o755))
	move(other, users)
	if d := diffTrees(canonical(t, one), canonical(t, two)); d != "" {
		t.Errorf("across filesystems differs from one filesystem:\n%s", d)
	}
}

// Bad input: a fifo where an index or archive.org.txt should be. Reading
// it must not block (a blocked open never returns, even to Ctrl-C): the
// folder fails with a message naming the file, stays untouched, and its
// database row gets no new empty folder.
func TestRunFifoIndexFailsThatFolderOnly(t *testing.T) {
	for _, name := range []string{"index.json", "index.jsonl", "archive.org.txt"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			m, err := gen.Legacy(dir, gen.LegacyOptions{Version: gen.Legacy07, N: 3, Seed: 5})
			must(t, err)
			src := m.Snapshots[0].Source
			p := filepath.Join(dir, src, name)
			os.Remove(p)
			if name == "archive.org.txt" {
				// Read only when no index names the url.
				os.Remove(filepath.Join(dir, src, "index.json"))
				os.Remove(filepath.Join(dir, src, "index.jsonl"))
			}
			must(t, syscall.Mkfifo(p, 0o644))
			before := treeState(t, filepath.Join(dir, src))
			c, err := archive.Open(dir)
			must(t, err)
			type result struct {
				st  *Stats
				err error
			}
			done := make(chan result, 1)
			go func() {
				st, err := Run(context.Background(), c, runOpts(testIDs()))
				done <- result{st, err}
			}()
			var r result
			select {
			case r = <-done:
			case <-time.After(30 * time.Second):
				t.Fatal("the migration blocked on the fifo")
			}
			oneFailure(t, r.st, r.err, src, archive.ErrNotRegular, p)
			if d := diffTrees(before, treeState(t, filepath.Join(dir, src))); d != "" {
				t.Errorf("the folder was touched:\n%s", d)
			}
			if got := countSnapshots(t, dir); got != 2 {
				t.Errorf("%d snapshot folders, want the 2 others only (no empty folder for the fifo's row)", got)
			}
		})
	}
}

// §3.6: a database row whose archive/<timestamp> is a symlink out of
// archive/users (a folder moved to another disk) or a broken one. The
// symlink is kept and the row fails; a new empty folder for it would hide
// its files. A symlink without a row is only skipped.
func TestRunRowBehindAForeignSymlinkFails(t *testing.T) {
	for _, broken := range []bool{false, true} {
		t.Run(fmt.Sprintf("broken=%v", broken), func(t *testing.T) {
			dir := t.TempDir()
			m, err := gen.Legacy(dir, gen.LegacyOptions{Version: gen.Legacy07, N: 3, Seed: 5})
			must(t, err)
			src := m.Snapshots[0].Source
			elsewhere := filepath.Join(t.TempDir(), "other-disk")
			must(t, os.Rename(filepath.Join(dir, src), elsewhere))
			if broken {
				elsewhere += "-unmounted"
			}
			must(t, os.Symlink(elsewhere, filepath.Join(dir, src)))
			must(t, os.Symlink(elsewhere, filepath.Join(dir, "archive/1234567890")))
			c, err := archive.Open(dir)
			must(t, err)
			st, err := Run(context.Background(), c, runOpts(testIDs()))
			oneFailure(t, st, err, src, ErrLegacySymlink, src)
			for _, link := range []string{src, "archive/1234567890"} {
				if tgt, err := os.Readlink(filepath.Join(dir, link)); err != nil || tgt != elsewhere {
					t.Errorf("%s: link %q, %v; want it kept", link, tgt, err)
				}
			}
			if got := countSnapshots(t, dir); got != 2 {
				t.Errorf("%d snapshot folders, want the 2 others only", got)
			}
		})
	}
}

func countSnapshots(t *testing.T, dir string) int {
	t.Helper()
	got, err := filepath.Glob(filepath.Join(dir, "archive/users/*/snapshots/*/*/*"))
	must(t, err)
	return len(got)
}

// A folder at its current place with only an index.json and no database
// row (formats spec §8: index.jsonl, else index.json) gets its index.jsonl
// from that index, keeping its id; a second run finds nothing to do.
func TestRunIndexesACurrentFolderWithOnlyIndexJSON(t *testing.T) {
	const id = "0190aaaa000070008000000000000009"
	d := "archive/users/system/snapshots/20140513/example.org/" + id
	dir, c := edgeCollection(t, map[string]string{
		d + "/index.json":          `{"id": "` + id + `", "url": "https://example.org/only-json", "timestamp": "1399999990", "title": "Only JSON", "bookmarked_at": "2014-05-13T16:53:10+00:00", "created_at": "2014-05-13T16:53:10+00:00", "status": "sealed", "fs_version": "0.9.0"}`,
		d + "/screenshot/shot.png": "\x00\xffpng",
	})
	before := mustTree(t, filepath.Join(dir, d), ".")
	if _, err := Run(context.Background(), c, runOpts(testIDs())); err != nil {
		t.Fatal(err)
	}
	snap, _, _ := readIndexFile(t, filepath.Join(dir, d, "index.jsonl"))
	if snap["id"] != id || snap["url"] != "https://example.org/only-json" || snap["title"] != "Only JSON" || snap["fs_version"] != "0.9.4" {
		t.Errorf("index.jsonl Snapshot record: %v", snap)
	}
	if diff := diffTrees(before, mustTree(t, filepath.Join(dir, d), "index.jsonl", ".")); diff != "" {
		t.Errorf("folder changed beyond its new index.jsonl:\n%s", diff)
	}
	st, err := Run(context.Background(), c, runOpts(testIDs()))
	if err != nil || st.Work() != 0 {
		t.Errorf("second run: %+v, %v; want no work", st, err)
	}
}
