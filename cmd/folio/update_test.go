package main_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/gen"
)

type updResult struct {
	stdout, stderr string
	code           int
}

func updRun(t testing.TB, dir string, env []string, args ...string) updResult {
	t.Helper()
	cmd := exec.Command(folioBin(t), append([]string{"--data-dir", dir}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	return updExec(t, cmd)
}

// updExec runs a prepared folio command and returns its output and exit
// code.
func updExec(t testing.TB, cmd *exec.Cmd) updResult {
	t.Helper()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return updResult{out.String(), errb.String(), code}
}

const (
	updDashedSnap  = "0190f3c2-a1b2-7c3d-8e4f-5a6b7c8d9e0f"
	updCompactSnap = "0190f3c2a1b27c3d8e4f5a6b7c8d9e0f"
	updDashedCrawl = "0190f3c1-0000-7000-8000-000000000001"
	updCurrentID   = "0190aaaa000070008000000000000001"
)

// updCollection writes n legacy folders with awkward payloads plus one
// of each other kind of entry update --migrate-only handles.
func updCollection(t testing.TB, dir string, n int) {
	t.Helper()
	if _, err := archive.Init(dir, false); err != nil {
		t.Fatal(err)
	}
	w := func(rel, data string) { writeRel(t, dir, rel, data) }
	for i := 0; i < n; i++ {
		ts := fmt.Sprint(1500000000 + i*86400)
		d := "archive/" + ts
		url := fmt.Sprintf("https://site%d.example/page/%d?q=%%41", i%5, i)
		if i%10 == 3 {
			w(d+"/index.json", "")
			w(d+"/archive.org.txt", "https://web.archive.org/web/20170531210128/"+url+"\n")
		} else {
			w(d+"/index.json", fmt.Sprintf(`{"schema": "Link", "url": %q, "timestamp": %q, "title": "Page %d ü", "tags": "a,b", "history": {"screenshot": [{"cmd": ["chromium"], "pwd": "/data/%s", "output": "screenshot.png", "status": "succeeded", "start_ts": "2017-10-17T17:02:13+00:00", "end_ts": "2017-10-17T17:02:15+00:00"}]}}`, url, ts, i, d))
		}
		if i%7 == 2 {
			w(d+"/index.jsonl", `{"type":"Process","id":"incomplete"}`+"\n")
		}
		w(d+"/screenshot.png", strings.Repeat("\x00\xff", 1000+i))
		w(d+"/ünï %41.html", fmt.Sprintf("<p>%d</p>", i))
		w(d+fmt.Sprintf("/site%d.example/page/%d.html", i%5, i), "wget")
		w(d+"/media/stderr.log", "")
		if err := os.MkdirAll(filepath.Join(dir, d, "empty/nested"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("screenshot.png", filepath.Join(dir, d, "payload-link")); err != nil {
			t.Fatal(err)
		}
		mt := time.Unix(int64(1500000000+i*86400), 0)
		os.Chtimes(filepath.Join(dir, d), mt, mt)
	}
	w("archive/1111111111/junk.bin", "\x00\xffjunk")
	w("archive/1111111112/notes.txt", "no url here")
	w("archive/hello/file", "not a timestamp")
	w("archive/.DS_Store", "mac")
	cur := "archive/users/system/snapshots/20140513/example.org/" + updCurrentID
	w(cur+"/index.jsonl", `{"type": "Snapshot", "schema_version": "0.9.4", "id": "`+updCurrentID+`", "url": "https://example.org/", "timestamp": "1399999999", "bookmarked_at": "2014-05-13T16:53:19+00:00", "created_at": "2014-05-13T16:53:19+00:00", "status": "sealed", "fs_version": "0.9.4"}`+"\n")
	if err := os.Symlink("users/system/snapshots/20140513/example.org/"+updCurrentID, filepath.Join(dir, "archive/1399999999")); err != nil {
		t.Fatal(err)
	}
	dsh := "archive/users/system/snapshots/20240101/example.net/" + updDashedSnap
	w(dsh+"/index.jsonl", `{"type": "Snapshot", "schema_version": "0.9.31rc1", "id": "`+updDashedSnap+`", "crawl_id": "`+updDashedCrawl+`", "url": "https://example.net/", "title": "Net", "tags": "", "bookmarked_at": "2024-01-01T10:00:00+00:00", "created_at": "2024-01-01T10:00:00+00:00", "timestamp": "1704103200.0", "depth": 0, "status": "sealed", "fs_version": "0.9.0", "custom_key": "kept"}`+"\n")
	w(dsh+"/screenshot/screenshot.png", "\x00\xffpng")
	crawl := "archive/users/system/crawls/20240101/example.net/" + updDashedCrawl
	w(crawl+"/input/staticfile/stdin.txt", "https://example.net/")
	if err := os.MkdirAll(filepath.Join(dir, crawl, "snapshots/example.net"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../../../../../snapshots/20240101/example.net/"+updDashedSnap, filepath.Join(dir, crawl, "snapshots/example.net", updDashedSnap)); err != nil {
		t.Fatal(err)
	}
}

// tree describes every entry of the data dir but .folio/.
func updTree(t testing.TB, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if rel == ".folio" {
			return filepath.SkipDir
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			tgt, _ := os.Readlink(p)
			out[rel] = "link " + tgt
		case fi.IsDir():
			out[rel] = "dir"
		case fi.Mode().IsRegular():
			data, _ := os.ReadFile(p)
			sum := sha256.Sum256(data)
			out[rel] = fmt.Sprintf("file %s %o %d", hex.EncodeToString(sum[:]), fi.Mode().Perm(), fi.ModTime().UnixNano())
		default:
			out[rel] = "special"
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

var (
	updIDPattern   = regexp.MustCompile(`[0-9a-f]{32}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	updCreatedAt   = regexp.MustCompile(`"created_at": "[^"]*"`)
	updInvalidDate = regexp.MustCompile(`^invalid/\d{8}/`)
)

// canonical is tree with what a run makes up — ids of orphans, crawls and
// results, an orphan's created_at (the time of the run), the invalid/ date,
// the folio-made crawl folders — replaced by placeholders; snapshots are
// named by their timestamps. Two runs that did the same work over the same
// input have the same canonical tree.
func updCanonical(t testing.TB, root string) map[string]string {
	t.Helper()
	names := map[string]string{}
	idx, _ := filepath.Glob(filepath.Join(root, "archive/users/*/snapshots/*/*/*/index.jsonl"))
	for _, p := range idx {
		data, _ := os.ReadFile(p)
		first, _, _ := bytes.Cut(data, []byte("\n"))
		var rec struct{ ID, Timestamp string }
		json.Unmarshal(first, &rec)
		names[filepath.Base(filepath.Dir(p))] = "S<" + rec.Timestamp + ">"
		names[rec.ID] = "S<" + rec.Timestamp + ">"
	}
	mask := func(s string) string {
		return updIDPattern.ReplaceAllStringFunc(s, func(id string) string {
			if n, ok := names[id]; ok {
				return n
			}
			return "ID"
		})
	}
	out := map[string]string{}
	for rel, v := range updTree(t, root) {
		key := updInvalidDate.ReplaceAllString(mask(rel), "invalid/DATE/")
		switch {
		case strings.HasSuffix(rel, "/index.jsonl"):
			data, _ := os.ReadFile(filepath.Join(root, rel))
			v = "index " + updCreatedAt.ReplaceAllString(mask(string(data)), `"created_at": T`)
		case strings.HasPrefix(v, "link "):
			v = mask(v)
		case strings.HasPrefix(v, "file "):
			f := strings.Fields(v)
			v = f[0] + " " + f[1] + " " + f[2] // bytes and mode; mtimes of copies are checked elsewhere
		case v == "dir":
			out[key] = "dir;" // folders named by made-up crawl ids collapse
			continue
		}
		out[key] += v + ";"
	}
	return out
}

func updDiff(a, b map[string]string) string {
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	var ks []string
	for k := range keys {
		if a[k] != b[k] {
			ks = append(ks, k)
		}
	}
	sort.Strings(ks)
	var d []string
	for i, k := range ks {
		if i == 20 {
			d = append(d, fmt.Sprintf("... and %d more", len(ks)-20))
			break
		}
		d = append(d, fmt.Sprintf("%s:\n    want %.300q\n     got %.300q", k, a[k], b[k]))
	}
	return strings.Join(d, "\n")
}

func TestUpdateLeavesLegacyFoldersToMigrateOnly(t *testing.T) {
	dir := t.TempDir()
	updCollection(t, dir, 1)
	before := updTree(t, dir)
	// Without --migrate-only update retries plugins; it leaves legacy
	// folders alone and says what moves them. --dry-run captures nothing
	// (the collection's URLs are not on loopback).
	r := updRun(t, dir, nil, "update", "--dry-run")
	if r.code != 0 || !strings.Contains(r.stderr, "legacy snapshot folders left alone: run 'folio update --migrate-only' first") {
		t.Fatalf("update --dry-run without --migrate-only: exit %d\n%s", r.code, r.stderr)
	}
	if r := updRun(t, dir, nil, "update", "--migrate-only", "--overwrite"); r.code != 2 {
		t.Errorf("--migrate-only with a capture flag: exit %d, want 2\n%s", r.code, r.stderr)
	}
	for _, bad := range [][]string{{"--batch-size", "0"}, {"--workers", "0"}} {
		if r := updRun(t, dir, nil, append([]string{"update", "--migrate-only"}, bad...)...); r.code != 2 {
			t.Errorf("%v: exit %d, want 2", bad, r.code)
		}
	}
	if r := updRun(t, dir, []string{"FOLIO_FAULT=copied"}, "update", "--migrate-only"); r.code != 2 || !strings.Contains(r.stderr, "FOLIO_FAULT") {
		t.Errorf("bad FOLIO_FAULT: exit %d %s", r.code, r.stderr)
	}
	if d := updDiff(before, updTree(t, dir)); d != "" {
		t.Errorf("refused runs changed the tree:\n%s", d)
	}
}

func TestUpdateMigratesThenFindsNothingToDo(t *testing.T) {
	dir := t.TempDir()
	updCollection(t, dir, 12)
	var legacy []string
	for rel, v := range updTree(t, dir) {
		if strings.HasPrefix(rel, "archive/15") && strings.HasPrefix(v, "file") && !strings.HasSuffix(rel, "/index.jsonl") {
			legacy = append(legacy, rel+"\t"+strings.Fields(v)[1])
		}
	}
	before := updTree(t, dir)
	dry := updRun(t, dir, nil, "update", "--migrate-only", "--dry-run")
	if dry.code != 0 {
		t.Fatalf("dry run: exit %d\n%s", dry.code, dry.stderr)
	}
	for _, want := range []string{"move     archive/1500000000 -> archive/users/system/snapshots/20170714/site0.example/", "invalid  archive/1111111111 -> invalid/", "unlink   archive/1399999999", "skip     archive/hello (not a legacy timestamp folder)", "13 to move"} {
		if !strings.Contains(dry.stdout, want) {
			t.Errorf("plan lacks %q:\n%s", want, dry.stdout)
		}
	}
	if d := updDiff(before, updTree(t, dir)); d != "" {
		t.Fatalf("--dry-run changed the tree:\n%s", d)
	}

	// The plan names the folders the run then writes, made-up ids and all.
	var planned []string
	for _, line := range strings.Split(dry.stdout, "\n") {
		if dest, ok := strings.CutPrefix(line, "move     "); ok {
			if _, to, ok := strings.Cut(dest, " -> "); ok {
				planned = append(planned, strings.Fields(to)[0])
			}
		}
	}
	if len(planned) < 10 {
		t.Fatalf("%d moves in the plan:\n%s", len(planned), dry.stdout)
	}

	r := updRun(t, dir, nil, "update", "--migrate-only")
	if r.code != 0 {
		t.Fatalf("update: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for _, dest := range planned {
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(dest), "index.jsonl")); err != nil {
			t.Errorf("the dry run planned %s; the run wrote elsewhere: %v", dest, err)
		}
	}
	for _, want := range []string{
		"[*] Phase 1: Draining old archive/ directories (0.8.x → 0.9.x migration)...",
		"[*] Found 14 old directories to drain",
		"] Migrated: 1500000000",
		"] Invalid: 1111111111",
		"[*] Phase 2: Selecting database snapshots with stale filesystem versions...",
		"[*] Phase 3: Running filesystem maintenance until idle...",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("output lacks %q:\n%s", want, r.stderr)
		}
	}
	for _, want := range []string{"Processed:", "Migrated:          13", "Indexed:           0", "Already current:   1", "Removed symlinks:  1", "Invalid:           2", "Skipped:           1", "Failed:            0", "Bytes moved:", "; 0 B copied and verified, the rest renamed\n"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("table lacks %q:\n%s", want, r.stdout)
		}
	}
	// Every legacy file is at its new path with identical bytes.
	after := updTree(t, dir)
	for _, l := range legacy {
		rel, sum, _ := strings.Cut(l, "\t")
		ts, inside, _ := strings.Cut(strings.TrimPrefix(rel, "archive/"), "/")
		found := false
		for k, v := range after {
			if strings.HasPrefix(k, "archive/users/system/snapshots/") && strings.HasSuffix(k, "/"+inside) && strings.Contains(v, sum) {
				if snapDir := strings.TrimSuffix(k, "/"+inside); updIndexTS(t, filepath.Join(dir, snapDir)) == ts {
					found = true
					break
				}
			}
		}
		if !found {
			t.Errorf("%s (%s) is not at its new path with the same bytes", rel, sum[:12])
		}
		if _, err := os.Lstat(filepath.Join(dir, "archive", ts)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("legacy folder archive/%s remains", ts)
		}
	}
	if _, err := os.Lstat(filepath.Join(dir, "archive/1399999999")); !errors.Is(err, fs.ErrNotExist) {
		t.Error("compatibility symlink remains")
	}
	// A legacy index.jsonl's foreign line survives in the new one.
	for k := range after {
		if strings.HasSuffix(k, "/index.jsonl") && strings.Contains(k, "/site2.example/") {
			if data, _ := os.ReadFile(filepath.Join(dir, k)); updIndexTS(t, filepath.Join(dir, filepath.Dir(k))) == "1500172800" &&
				!bytes.Contains(data, []byte("\n{\"type\":\"Process\",\"id\":\"incomplete\"}\n")) {
				t.Errorf("%s lost the foreign line:\n%s", k, data)
			}
		}
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "invalid/*/1111111111/junk.bin")); len(m) != 1 {
		t.Errorf("invalid folder: %v", m)
	}
	// The catalog was brought up to date.
	if _, err := os.Stat(filepath.Join(dir, ".folio/catalog.sqlite3")); err != nil {
		t.Errorf("catalog: %v", err)
	}

	again := updRun(t, dir, nil, "update", "--migrate-only")
	if again.code != 0 || !strings.Contains(again.stdout, "Migrated:          0") || !strings.Contains(again.stdout, "Bytes moved:       0 B") ||
		!strings.Contains(again.stdout, "Already current:   14") {
		t.Errorf("second run: exit %d\n%s\n%s", again.code, again.stdout, again.stderr)
	}
	if d := updDiff(after, updTree(t, dir)); d != "" {
		t.Errorf("second run changed the tree:\n%s", d)
	}
}

func updIndexTS(t testing.TB, dir string) string {
	data, err := os.ReadFile(filepath.Join(dir, "index.jsonl"))
	if err != nil {
		return ""
	}
	first, _, _ := bytes.Cut(data, []byte("\n"))
	var rec struct{ Timestamp string }
	json.Unmarshal(first, &rec)
	return rec.Timestamp
}

// TestUpdateCountsBytesByKind: the table splits the bytes moved by what
// moved them, and says how much was copied rather than renamed.
func TestUpdateCountsBytesByKind(t *testing.T) {
	dir := t.TempDir()
	updCollection(t, dir, 4)
	r := updRun(t, dir, []string{"FOLIO_MIGRATE_COPY=1"}, "update", "--migrate-only")
	if r.code != 0 {
		t.Fatalf("update: exit %d\n%s", r.code, r.stderr)
	}
	m := regexp.MustCompile(`Bytes moved: +(\S+ \S+) \(\d+ files\)\n +migrated (\S+ \S+), invalid (\S+ \S+); (\S+ \S+) copied and verified, the rest renamed\n`).FindStringSubmatch(r.stdout)
	if m == nil {
		t.Fatalf("no split of the bytes moved:\n%s", r.stdout)
	}
	if m[4] != m[1] {
		t.Errorf("with every folder copied, %s of %s were copied:\n%s", m[4], m[1], r.stdout)
	}
}

func TestUpdatePartialAndLocked(t *testing.T) {
	dir := t.TempDir()
	updCollection(t, dir, 3)
	if err := syscall.Mkfifo(filepath.Join(dir, "archive/1500086400/pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	lock := lockCollection(t, dir)
	if r := updRun(t, dir, nil, "update", "--migrate-only"); r.code != 11 {
		t.Errorf("locked collection: exit %d, want 11\n%s", r.code, r.stderr)
	}
	lock.Unlock()
	before := updTree(t, filepath.Join(dir, "archive/1500086400"))
	// The dry run says which folder the run will refuse, and why.
	dry := updRun(t, dir, nil, "update", "--migrate-only", "--dry-run")
	if dry.code != 0 || !strings.Contains(dry.stdout, "move     archive/1500086400 -> ") ||
		!strings.Contains(dry.stdout, "\n         may be refused: holds a special file: pipe (fifo)\n") ||
		!strings.Contains(dry.stdout, "\n1 folders may be refused by the run (marked 'may be refused' above); it leaves them where they are and exits 3\n") {
		t.Errorf("dry run: exit %d\n%s", dry.code, dry.stdout)
	}
	r := updRun(t, dir, nil, "update", "--migrate-only")
	if r.code != 3 {
		t.Fatalf("fifo: exit %d, want 3\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "cannot safely copy special file") || !strings.Contains(r.stderr, "pipe (fifo)") || !strings.Contains(r.stdout, "Failed:            1") {
		t.Errorf("no clear message for the fifo:\n%s\n%s", r.stdout, r.stderr)
	}
	if d := updDiff(before, updTree(t, filepath.Join(dir, "archive/1500086400"))); d != "" {
		t.Errorf("folder with a fifo was touched:\n%s", d)
	}
	if _, err := os.Stat(filepath.Join(dir, "archive/1500000000")); !errors.Is(err, fs.ErrNotExist) {
		t.Error("the other folders were not migrated")
	}
}

// TestUpdateSurvivesCrashes kills a real folio update --migrate-only at
// every step (FOLIO_FAULT exits the process at once, as kill -9 would) and
// with SIGKILL at random moments, reruns it, and compares the tree with
// that of an uninterrupted run.
func TestUpdateSurvivesCrashes(t *testing.T) {
	makers := []struct {
		name  string
		nths  []int
		steps []string // nil: all
		make  func(t testing.TB, dir string)
	}{
		{"folders", []int{1, 9}, nil, func(t testing.TB, dir string) { updCollection(t, dir, 24) }},
		{"db-0.8", []int{4}, []string{"planned", "copied", "indexed", "deleting", "remove", "done"}, func(t testing.TB, dir string) {
			if _, err := gen.Legacy(dir, gen.LegacyOptions{Version: gen.Legacy08, N: 16, Seed: 3, Edges: gen.AllEdges}); err != nil {
				t.Fatal(err)
			}
		}},
		// The merge of a snapshot's second folder is its 6th move.
		{"half-migrated", []int{1, 6}, nil, func(t testing.TB, dir string) { seedHalfMigrated(t, dir) }},
		{"db-0.9-dashed", []int{4}, []string{"planned", "copied", "indexed", "deleting", "remove", "done"}, func(t testing.TB, dir string) {
			if _, err := gen.Legacy(dir, gen.LegacyOptions{Version: gen.Legacy09Dash, N: 16, Seed: 3, Edges: gen.AllEdges}); err != nil {
				t.Fatal(err)
			}
		}},
	}
	crashes := 0
	for _, mk := range makers {
		ref := filepath.Join(t.TempDir(), "data")
		mk.make(t, ref)
		if r := updRun(t, ref, nil, "update", "--migrate-only"); r.code != 0 {
			t.Fatalf("%s: reference run: exit %d\n%s", mk.name, r.code, r.stderr)
		}
		want := updCanonical(t, ref)
		check := func(t *testing.T, dir string, env []string) {
			r := updRun(t, dir, env, "update", "--migrate-only")
			if r.code != 0 {
				t.Fatalf("rerun: exit %d\n%s", r.code, r.stderr)
			}
			if d := updDiff(want, updCanonical(t, dir)); d != "" {
				t.Fatalf("tree after crash and rerun differs from an uninterrupted run:\n%s", d)
			}
			if r := updRun(t, dir, env, "update", "--migrate-only"); r.code != 0 || !strings.Contains(r.stdout, "Migrated:          0") {
				t.Fatalf("third run did work: %s", r.stdout)
			}
		}
		for _, copyMode := range []bool{false, true} {
			env := []string{}
			if copyMode {
				env = append(env, "FOLIO_MIGRATE_COPY=1")
			}
			steps := mk.steps
			if steps == nil {
				steps = []string{"planned", "copied", "verified", "indexed", "deleting", "deleted", "done", "write", "remove"}
			}
			for _, step := range steps {
				for _, nth := range mk.nths {
					if !copyMode && (step == "write" || step == "remove" || step == "verified" || step == "deleting" || step == "deleted") && nth > 1 {
						continue // a rename has none of these; invalid/ and crawl moves few
					}
					t.Run(fmt.Sprintf("%s/copy=%v/%s:%d", mk.name, copyMode, step, nth), func(t *testing.T) {
						dir := filepath.Join(t.TempDir(), "data")
						mk.make(t, dir)
						r := updRun(t, dir, append(env, fmt.Sprintf("FOLIO_FAULT=%s:%d", step, nth)), "update", "--migrate-only")
						switch r.code {
						case 99:
							crashes++
						case 0:
							t.Logf("%s:%d was never reached", step, nth)
						default:
							t.Fatalf("faulted run: exit %d\n%s", r.code, r.stderr)
						}
						check(t, dir, env)
					})
				}
			}
		}
		rnd := rand.New(rand.NewSource(1))
		for i := 0; i < 3; i++ {
			t.Run(fmt.Sprintf("%s/sigkill-%d", mk.name, i), func(t *testing.T) {
				dir := filepath.Join(t.TempDir(), "data")
				mk.make(t, dir)
				env := []string{}
				if i%2 == 1 {
					env = append(env, "FOLIO_MIGRATE_COPY=1")
				}
				cmd := exec.Command(folioBin(t), "--data-dir", dir, "update", "--migrate-only", "--workers", "2")
				cmd.Env = append(os.Environ(), env...)
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				time.Sleep(time.Duration(5+rnd.Intn(60)) * time.Millisecond)
				cmd.Process.Signal(syscall.SIGKILL)
				cmd.Wait()
				check(t, dir, env)
			})
		}
	}
	if crashes < 30 {
		t.Errorf("only %d runs crashed; the fault points are not being reached", crashes)
	}
}

// TestUpdateInterruptAndResume sends SIGINT mid-run: folio stops after the
// snapshots in flight, exits 130 with the resume hint, and the hinted run
// finishes the job.
func TestUpdateInterruptAndResume(t *testing.T) {
	dir := t.TempDir()
	updCollection(t, dir, 600)
	cmd := exec.Command(folioBin(t), "--data-dir", dir, "update", "--migrate-only", "--workers", "1")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var all strings.Builder
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		all.WriteString(sc.Text() + "\n")
		if strings.Contains(sc.Text(), "old directories to drain") {
			cmd.Process.Signal(os.Interrupt)
			break
		}
	}
	rest, _ := io.ReadAll(stderr)
	all.Write(rest)
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("interrupted run: %v\n%s", err, all.String())
	}
	m := regexp.MustCompile(`folio update --migrate-only --resume (\d+)`).FindStringSubmatch(all.String())
	if m == nil {
		t.Fatalf("no resume hint:\n%s", all.String())
	}
	left, _ := filepath.Glob(filepath.Join(dir, "archive/1*"))
	if len(left) == 0 {
		t.Fatal("the interrupted run finished everything")
	}
	if r := updRun(t, dir, nil, "update", "--migrate-only", "--resume", m[1]); r.code != 0 {
		t.Fatalf("resumed run: exit %d\n%s", r.code, r.stderr)
	}
	left, _ = filepath.Glob(filepath.Join(dir, "archive/15*"))
	if len(left) != 0 {
		t.Errorf("resumed run left %d legacy folders, e.g. %s", len(left), left[0])
	}
	if r := updRun(t, dir, nil, "update", "--migrate-only"); r.code != 0 || !strings.Contains(r.stdout, "Migrated:          0") {
		t.Errorf("run after resume did work:\n%s", r.stdout)
	}
}

// TestUpdateLegacyVersions migrates a generated collection of every legacy
// version (with every edge case, with and without its database) through
// the binary and checks the result against the generator's manifest.
func TestUpdateLegacyVersions(t *testing.T) {
	type variant struct {
		version string
		noDB    bool
		wal     bool
	}
	var variants []variant
	for _, v := range gen.LegacyVersions {
		variants = append(variants, variant{version: v})
	}
	variants = append(variants, variant{version: gen.Legacy07, noDB: true}, variant{version: gen.Legacy08, wal: true})
	for _, vr := range variants {
		name := vr.version
		if vr.noDB {
			name += "-nodb"
		}
		if vr.wal {
			name += "-wal"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "data")
			m, err := gen.Legacy(dir, gen.LegacyOptions{Version: vr.version, N: 30, Seed: 7, Edges: gen.AllEdges, NoDB: vr.noDB, WAL: vr.wal})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%d snapshots, %d invalid, %d untouched, %d symlinks, %d current", len(m.Snapshots), len(m.Invalid), len(m.Untouched), len(m.Symlinks), m.Current)
			dbBefore := map[string]string{}
			for k, v := range updTree(t, dir) {
				if strings.HasPrefix(k, "index.sqlite3") {
					dbBefore[k] = v
				}
			}
			r := updRun(t, dir, nil, "update", "--migrate-only")
			if r.code != 0 {
				t.Fatalf("update: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			after := updTree(t, dir)
			for k, v := range dbBefore {
				if after[k] != v {
					t.Errorf("%s changed", k)
				}
			}
			byTS := map[string]string{}
			idx, _ := filepath.Glob(filepath.Join(dir, "archive/users/*/snapshots/*/*/*/index.jsonl"))
			for _, p := range idx {
				rel, _ := filepath.Rel(dir, filepath.Dir(p))
				byTS[updIndexTS(t, filepath.Dir(p))] = filepath.ToSlash(rel)
			}
			for _, want := range m.Snapshots {
				got, ok := byTS[want.Timestamp]
				if !ok {
					t.Errorf("snapshot %s (%s, from %q) has no folder with an index.jsonl", want.Timestamp, want.URL, want.Source)
					continue
				}
				parts := strings.Split(got, "/")
				if parts[2] != want.User || parts[4] != want.Date || (want.ID != "" && parts[6] != want.ID) {
					t.Errorf("snapshot %s is at %s, want user %s, date %s, id %q", want.Timestamp, got, want.User, want.Date, want.ID)
				}
				rec := updFirstRecord(t, filepath.Join(dir, got, "index.jsonl"))
				title, _ := rec["title"].(string)
				if rec["fs_version"] != "0.9.4" || rec["url"] != want.URL || title != want.Title || rec["tags"] != strings.Join(want.Tags, ",") ||
					(want.Status != "" && rec["status"] != want.Status) || rec["id"] != parts[6] {
					t.Errorf("%s/index.jsonl Snapshot record %v, want %+v", got, rec, want)
				}
				tr, err := gen.ReadTree(filepath.Join(dir, got))
				if err != nil {
					t.Fatal(err)
				}
				exp := want.Tree
				if _, ok := exp.Files["index.jsonl"]; ok {
					exp.Files = updWithout(exp.Files, "index.jsonl")
				}
				if d := exp.Diff(tr); len(d) > 0 {
					t.Errorf("%s (from %s): %v", got, want.Source, d)
				}
				if want.Source != "" && want.Source != got {
					if _, err := os.Lstat(filepath.Join(dir, want.Source)); !errors.Is(err, fs.ErrNotExist) {
						t.Errorf("legacy folder %s remains", want.Source)
					}
				}
			}
			for _, inv := range m.Invalid {
				base := filepath.Base(inv.Path)
				found := false
				cands, _ := filepath.Glob(filepath.Join(dir, "invalid", "*", base+"*"))
				for _, c := range cands {
					if tr, err := gen.ReadTree(c); err == nil && len(inv.Tree.Diff(tr)) == 0 {
						found = true
					}
				}
				if !found {
					t.Errorf("invalid folder %s not found under invalid/ (candidates %v)", inv.Path, cands)
				}
				if _, err := os.Lstat(filepath.Join(dir, inv.Path)); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("%s remains", inv.Path)
				}
			}
			for _, u := range m.Untouched {
				tr, err := gen.ReadTree(filepath.Join(dir, u.Path))
				if err != nil {
					t.Errorf("untouched %s: %v", u.Path, err)
				} else if d := u.Tree.Diff(tr); len(d) > 0 {
					t.Errorf("untouched %s changed: %v", u.Path, d)
				}
			}
			for _, s := range m.Symlinks {
				if _, err := os.Lstat(filepath.Join(dir, s)); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("symlink %s remains", s)
				}
			}
			if len(byTS) != len(m.Snapshots)+m.Current {
				t.Errorf("%d snapshot folders, want %d migrated + %d current", len(byTS), len(m.Snapshots), m.Current)
			}
			again := updRun(t, dir, nil, "update", "--migrate-only")
			if again.code != 0 || !strings.Contains(again.stdout, "Migrated:          0") || !strings.Contains(again.stdout, "Bytes moved:       0 B") {
				t.Errorf("second run: exit %d\n%s\n%s", again.code, again.stdout, again.stderr)
			}
			if d := updDiff(after, updTree(t, dir)); d != "" {
				t.Errorf("second run changed the tree:\n%s", d)
			}
		})
	}
}

func updWithout(m map[string]string, key string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		if k != key {
			out[k] = v
		}
	}
	return out
}

func updFirstRecord(t testing.TB, p string) map[string]any {
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := bytes.Cut(data, []byte("\n"))
	var m map[string]any
	if err := json.Unmarshal(first, &m); err != nil {
		t.Fatalf("%s: first line: %v", p, err)
	}
	return m
}

// TestUpdateSurvivesACrashAfterEveryIndex kills the process right after
// each "indexed" journal record in turn (one worker, so the order is the
// plan's): the crawl link of that snapshot is not made yet, and the rerun
// must make it although the folder now looks current.
func TestUpdateSurvivesACrashAfterEveryIndex(t *testing.T) {
	mk := func(t testing.TB, dir string) {
		if _, err := gen.Legacy(dir, gen.LegacyOptions{Version: gen.Legacy09Dash, N: 6, Seed: 3, Edges: gen.AllEdges}); err != nil {
			t.Fatal(err)
		}
	}
	ref := filepath.Join(t.TempDir(), "data")
	mk(t, ref)
	if r := updRun(t, ref, nil, "update", "--migrate-only", "--workers", "1"); r.code != 0 {
		t.Fatalf("reference run: exit %d\n%s", r.code, r.stderr)
	}
	want := updCanonical(t, ref)
	crashed := 0
	for nth := 1; ; nth++ {
		dir := filepath.Join(t.TempDir(), "data")
		mk(t, dir)
		r := updRun(t, dir, []string{fmt.Sprintf("FOLIO_FAULT=indexed:%d", nth)}, "update", "--migrate-only", "--workers", "1")
		if r.code == 0 {
			break // past the last index
		}
		if r.code != 99 {
			t.Fatalf("indexed:%d: exit %d\n%s", nth, r.code, r.stderr)
		}
		crashed++
		if r := updRun(t, dir, nil, "update", "--migrate-only"); r.code != 0 {
			t.Fatalf("indexed:%d: rerun exit %d\n%s", nth, r.code, r.stderr)
		}
		if d := updDiff(want, updCanonical(t, dir)); d != "" {
			t.Errorf("indexed:%d: tree after crash and rerun differs from an uninterrupted run:\n%s", nth, d)
		}
	}
	if crashed < 10 {
		t.Errorf("only %d crashes; the index steps are not being reached", crashed)
	}
}

// A dry run changes nothing at all: on an ArchiveBox folder folio has
// never seen it creates no .folio/ (and so works where the user cannot
// write); where another folio process holds the lock it exits 11.
func TestUpdateDryRunCreatesNothing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	if _, err := gen.Legacy(dir, gen.LegacyOptions{Version: gen.Legacy07, N: 3, Seed: 5}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, archive.StateDir)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the generated folder already has %s", archive.StateDir)
	}
	r := updRun(t, dir, nil, "update", "--migrate-only", "--dry-run")
	if r.code != 0 || !strings.Contains(r.stdout, "3 to move") {
		t.Fatalf("dry run: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, archive.StateDir)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the dry run created %s: %v", archive.StateDir, err)
	}
	lock := lockCollection(t, dir)
	defer lock.Unlock()
	if r := updRun(t, dir, nil, "update", "--migrate-only", "--dry-run"); r.code != 11 {
		t.Errorf("dry run of a locked collection: exit %d, want 11\n%s", r.code, r.stderr)
	}
}
