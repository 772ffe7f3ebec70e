package main_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/gen"
)

type catResult struct {
	stdout, stderr string
	code           int
}

// catRun runs folio with --data-dir dir (none when dir is "").
func catRun(t testing.TB, dir string, args ...string) catResult {
	t.Helper()
	if dir == "" {
		out, errOut, code := runFolio(t, args...)
		return catResult{out, errOut, code}
	}
	r := updRun(t, dir, nil, args...)
	return catResult{r.stdout, r.stderr, r.code}
}

func (r catResult) want(t testing.TB, code int) catResult {
	t.Helper()
	if r.code != code {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, code, r.stdout, r.stderr)
	}
	return r
}

// catCollection generates n snapshots plus a legacy folder.
func catCollection(t testing.TB, n int) (string, *gen.Manifest) {
	t.Helper()
	dir := t.TempDir()
	m, err := gen.Current(dir, gen.Options{N: n, Seed: 42, Minimal: true, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	legacy := filepath.Join(dir, "archive", "1609459200.123456")
	if err := os.MkdirAll(legacy, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(legacy, "index.json"), []byte(`{"schema": "Link", "url": "https://legacy.example.com/page1", "timestamp": "1609459200.123456", "title": "Legacy page", "tags": "news,old"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, m
}

func TestReindexCommand(t *testing.T) {
	dir, m := catCollection(t, 40)
	n := len(m.Snapshots) + 1

	r := catRun(t, dir, "reindex").want(t, 0)
	if want := fmt.Sprintf("scanned %d, added %d, updated 0, removed 0, unchanged 0, problems 0", n, n); !strings.Contains(r.stderr, want) {
		t.Errorf("summary: %q, want %q", r.stderr, want)
	}
	if r.stdout != "" {
		t.Errorf("reindex wrote to stdout: %q", r.stdout)
	}
	r = catRun(t, dir, "reindex", "--workers", "1").want(t, 0)
	if want := fmt.Sprintf("unchanged %d, problems 0", n); !strings.Contains(r.stderr, want) {
		t.Errorf("second run: %q", r.stderr)
	}
	r = catRun(t, dir, "reindex", "--full").want(t, 0)
	if want := fmt.Sprintf("scanned %d, added 0, updated %d", n, n); !strings.Contains(r.stderr, want) {
		t.Errorf("full: %q", r.stderr)
	}

	// A folder that cannot be read: one warning line naming the file, exit 3.
	bad := filepath.Join(dir, "archive/users/system/snapshots/20240101/example.com/0190f3c2a1b27c3d8e4f5a6b7c8dffff")
	if err := os.MkdirAll(bad, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bad, "index.jsonl"), []byte("{\"type\": \"Snapshot\", \"url\": \"https://x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = catRun(t, dir, "reindex").want(t, 3)
	wantLine := "warning: archive/users/system/snapshots/20240101/example.com/0190f3c2a1b27c3d8e4f5a6b7c8dffff/index.jsonl: no Snapshot record (line 1: invalid JSON: unexpected end of JSON input)"
	if !strings.Contains(r.stderr, wantLine+"\n") || !strings.Contains(r.stderr, "1 snapshot folders could not be read") {
		t.Errorf("stderr %q, want line %q", r.stderr, wantLine)
	}
}

func TestReindexUsage(t *testing.T) {
	dir, _ := catCollection(t, 3)
	if r := catRun(t, dir, "reindex", "--help").want(t, 0); !strings.Contains(r.stdout, "--full") || !strings.Contains(r.stdout, "-j, --parallel") {
		t.Errorf("help: %q", r.stdout)
	}
	for _, args := range [][]string{
		{"reindex", "extra"},
		{"reindex", "--fast"},
		{"reindex", "--workers", "-1"},
		{"reindex", "--workers", "many"},
	} {
		r := catRun(t, dir, args...).want(t, 2)
		if !strings.Contains(r.stderr, "--help' for usage") {
			t.Errorf("%v: no usage in %q", args, r.stderr)
		}
	}
	if r := catRun(t, t.TempDir(), "reindex"); r.code != 1 || !strings.Contains(r.stderr, "not a folio or ArchiveBox collection") {
		t.Errorf("not a collection: %d %q", r.code, r.stderr)
	}
}

func TestReindexLocked(t *testing.T) {
	dir, _ := catCollection(t, 5)
	lock := lockCollection(t, dir)
	r := catRun(t, dir, "reindex").want(t, 11)
	if !strings.Contains(r.stderr, "collection is locked") || !strings.Contains(r.stderr, "'folio test'") {
		t.Errorf("stderr %q", r.stderr)
	}
	// Reading needs no lock once the catalog is filled.
	lock.Unlock()
	catRun(t, dir, "reindex").want(t, 0)
	defer lockCollection(t, dir).Unlock()
	if r := catRun(t, dir, "list").want(t, 0); strings.Count(r.stdout, "\n") != 6 {
		t.Errorf("list under a held lock: %q", r.stdout)
	}
	catRun(t, dir, "status").want(t, 0)
}

// TestReindexConcurrentProcesses runs two real reindexes at once on a
// tree large enough that they overlap: one wins, the other exits 11.
func TestReindexConcurrentProcesses(t *testing.T) {
	dir, _ := catCollection(t, 3000)
	var wg sync.WaitGroup
	results := make([]catResult, 2)
	start := make(chan struct{})
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			results[i] = catRun(t, dir, "reindex", "--full")
		}()
	}
	close(start)
	wg.Wait()
	codes := []int{results[0].code, results[1].code}
	switch {
	case codes[0] == 0 && codes[1] == 11, codes[0] == 11 && codes[1] == 0:
		for _, r := range results {
			if r.code == 11 && !strings.Contains(r.stderr, "collection is locked") {
				t.Errorf("locked run: %q", r.stderr)
			}
		}
	case codes[0] == 0 && codes[1] == 0:
		t.Skip("the two reindexes did not overlap on this machine")
	default:
		t.Fatalf("exit codes %v:\n%s\n%s", codes, results[0].stderr, results[1].stderr)
	}
}

// TestReindexInterrupted sends SIGINT to a running reindex: it exits 130
// and leaves a catalog that the next reindex completes.
func TestReindexInterrupted(t *testing.T) {
	dir, m := catCollection(t, 3000) // two batches of reindex's 2000: the interrupt lands after the first commits
	cmd := exec.Command(folioBin(t), "--data-dir", dir, "reindex")
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait for the first committed batch, then interrupt.
	wal := filepath.Join(dir, ".folio", "catalog.sqlite3-wal")
	for i := 0; i < 2000; i++ {
		if st, err := os.Stat(wal); err == nil && st.Size() > 0 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	var ee *exec.ExitError
	switch {
	case err == nil:
		t.Skip("reindex finished before the interrupt arrived")
	case !errors.As(err, &ee) || ee.ExitCode() != 130:
		t.Fatalf("interrupted reindex: %v\n%s", err, errb.String())
	}
	r := catRun(t, dir, "reindex").want(t, 0)
	if want := fmt.Sprintf("scanned %d,", len(m.Snapshots)+1); !strings.Contains(r.stderr, want) {
		t.Errorf("after interrupt: %q", r.stderr)
	}
	if got := strings.Count(catRun(t, dir, "list").want(t, 0).stdout, "\n"); got != len(m.Snapshots)+1 {
		t.Errorf("list after interrupt: %d lines, want %d", got, len(m.Snapshots)+1)
	}
}

// lockCollection takes the writer lock of the collection at dir, as
// another folio process running 'folio test' would hold it.
func lockCollection(t *testing.T, dir string) *archive.Lock {
	t.Helper()
	c, err := archive.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	lock, err := c.Lock("test")
	if err != nil {
		t.Fatal(err)
	}
	return lock
}
