package main_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/folio-archive/folio/archive"
)

// The queue suite: three folio worker processes share one data directory
// and one queue; every URL is captured exactly once, a worker killed
// mid-capture has its snapshot finished by another, and a lost queue is
// rebuilt from the tree by add --resume --enqueue-only. It runs on the
// embedded SQLite queue and on a real PostgreSQL server of its own.
//
// Plugins: title (one Chromium per worker) and hashes (none), so a
// capture is quick and still goes through the browser.

const queuePages = 60

func TestWorkersSQLiteQueue(t *testing.T) {
	t.Parallel() // mostly waiting (the lease), and it shares nothing: its own tree, site and queue
	dir := newCollection(t)
	queueSuite(t, dir, nil, func() {
		matches, _ := filepath.Glob(filepath.Join(dir, ".folio", "queue.sqlite3*"))
		for _, m := range matches {
			if err := os.Remove(m); err != nil {
				t.Fatal(err)
			}
		}
	})
}

func TestWorkersPostgresQueue(t *testing.T) {
	t.Parallel() // its own server, in a folder of its own, on a Unix socket there
	url, recreate := startPostgres(t)
	queueSuite(t, newCollection(t), []string{"QUEUE_URL=" + url}, recreate)
}

// pageSite serves /p/N pages, counting the loads of each, and /slow,
// whose first load waits until release is closed.
type pageSite struct {
	*httptest.Server
	mu      sync.Mutex
	loads   map[string]int
	slowHit chan struct{}
	release chan struct{}
}

func newPageSite(t *testing.T) *pageSite {
	s := &pageSite{loads: map[string]int{}, slowHit: make(chan struct{}), release: make(chan struct{})}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/p/") && r.URL.Path != "/slow" {
			http.NotFound(w, r)
			return
		}
		s.mu.Lock()
		s.loads[r.URL.Path]++
		first := s.loads[r.URL.Path] == 1
		s.mu.Unlock()
		if r.URL.Path == "/slow" && first {
			close(s.slowHit)
			<-s.release
		}
		fmt.Fprintf(w, "<!doctype html><title>page %s</title><p>%s</p>", r.URL.Path, r.URL.Path)
	}))
	t.Cleanup(func() {
		select {
		case <-s.release:
		default:
			close(s.release)
		}
		s.Close()
	})
	return s
}

func (s *pageSite) loadsOf(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.loads[path]
}

// syncBuffer is a bytes.Buffer several processes' output may go to.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

func queueSuite(t *testing.T, dir string, env []string, dropQueue func()) {
	site := newPageSite(t)
	// Three Chromiums on a shared machine: a page may take a while to load,
	// and a capture must stay well inside the lease, or it would be redone.
	pageLoadTimeout(t, dir, 30)
	folio := func(args ...string) string {
		t.Helper()
		out, stderr, code := runFolioEnv(t, env, append([]string{"-D", dir}, args...)...)
		if code != 0 {
			t.Fatalf("folio %v: exit %d\n%s", args, code, stderr)
		}
		return out
	}
	folio("add", "--enqueue-only", site.URL+"/slow")
	var urls strings.Builder
	for i := range queuePages {
		fmt.Fprintf(&urls, "%s/p/%d\n", site.URL, i)
	}
	list := filepath.Join(t.TempDir(), "urls.txt")
	if err := os.WriteFile(list, []byte(urls.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	folio("add", "--enqueue-only", "--from", list)

	var logs syncBuffer
	workers := map[int]*exec.Cmd{}
	for range 3 {
		cmd := startWorker(t, dir, env, &logs, "-j", "2", "--lease", "45s")
		workers[cmd.Process.Pid] = cmd
	}
	stopWorkers := func() {
		for _, cmd := range workers {
			cmd.Process.Signal(os.Interrupt)
		}
		for pid, cmd := range workers {
			cmd.Wait()
			delete(workers, pid)
		}
	}
	t.Cleanup(stopWorkers)

	// The worker that claimed /slow is killed while it loads the page.
	select {
	case <-site.slowHit:
	case <-time.After(2 * time.Minute):
		t.Fatalf("no worker loaded /slow\n%s", logs.String())
	}
	var st struct {
		Queue struct {
			ByState map[string]int `json:"by_state"`
			Running []struct {
				Dir    string `json:"dir"`
				Worker string `json:"worker"`
			} `json:"running"`
		} `json:"queue"`
	}
	slowDir := ""
	for _, s := range snapshots(t, dir) {
		if s.snap.URL == site.URL+"/slow" {
			slowDir = s.dir
		}
	}
	if err := json.Unmarshal([]byte(folio("status", "--json")), &st); err != nil {
		t.Fatal(err)
	}
	victim := 0
	for _, j := range st.Queue.Running {
		if filepath.Join(dir, j.Dir) == slowDir {
			victim, _ = strconv.Atoi(j.Worker[strings.LastIndex(j.Worker, "/")+1:])
		}
	}
	if workers[victim] == nil {
		t.Fatalf("status does not show which worker runs %s: %+v", slowDir, st.Queue)
	}
	if s := readSnapshot(t, slowDir); s.Status != "started" {
		t.Fatalf("/slow is %s while its page loads, want started", s.Status)
	}
	profile := browserProfile(t, victim)
	workers[victim].Process.Signal(syscall.SIGKILL)
	workers[victim].Wait()
	delete(workers, victim)
	close(site.release)
	// Its Chromium dies with it (chromedp starts it with a parent-death
	// signal; its helpers follow the browser).
	if firstOf(time.Minute, func() bool { return len(processesUsing(profile)) == 0 }) < 0 {
		t.Errorf("the killed worker's Chromium is still running: pids %v", processesUsing(profile))
	}

	// Another worker takes the dead one's job after its lease.
	waitSealed(t, dir, queuePages+1, 8*time.Minute, &logs)
	stopWorkers()
	// The killed worker captured two pages at once: the one beside /slow
	// may have been under way too, and is loaded again by another worker.
	checkCapturedOnce(t, dir, site, queuePages+1, 1)
	if n := site.loadsOf("/slow"); n != 2 {
		t.Errorf("/slow loaded %d times, want 2 (the killed capture and the one that finished it)", n)
	}

	// A lost queue is rebuilt from the tree: exactly the queued snapshots.
	var more []string
	for i := range 5 {
		more = append(more, fmt.Sprintf("%s/q/%d", site.URL, i))
	}
	folio(append([]string{"add", "--index-only"}, more...)...)
	dropQueue()
	for range 2 { // the second time changes nothing
		folio("add", "--resume", "--enqueue-only")
		st.Queue.ByState = nil
		if err := json.Unmarshal([]byte(folio("status", "--json")), &st); err != nil {
			t.Fatal(err)
		}
		if len(st.Queue.ByState) != 1 || st.Queue.ByState["available"] != 5 {
			t.Fatalf("after the queue was lost, add --resume --enqueue-only made %v, want the 5 queued snapshots", st.Queue.ByState)
		}
	}
}

// pageLoadTimeout sets the collection's CHROME_PAGELOAD_TIMEOUT.
func pageLoadTimeout(t *testing.T, dir string, seconds int) {
	t.Helper()
	conf, err := os.OpenFile(filepath.Join(dir, "ArchiveBox.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err == nil {
		_, err = fmt.Fprintf(conf, "CHROME_PAGELOAD_TIMEOUT = %d\n", seconds)
		conf.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
}

func readSnapshot(t *testing.T, dir string) archive.Snapshot {
	t.Helper()
	ix, _, err := archive.ReadIndex(dir)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := ix.Snapshot()
	return s
}

// waitSealed waits until the collection has n sealed snapshots.
func waitSealed(t *testing.T, dir string, n int, limit time.Duration, logs *syncBuffer) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		sealed := 0
		for _, s := range snapshots(t, dir) {
			if s.snap.Status == "sealed" {
				sealed++
			}
		}
		if sealed == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d snapshots sealed\n%s", sealed, n, logs.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// checkCapturedOnce checks one folder per URL, each with one result per
// plugin, both succeeded, every /p/ page loaded once but at most redone
// of them twice (the captures a killed worker had under way besides
// /slow, done again by another), and no temp file left anywhere in the
// tree.
func checkCapturedOnce(t *testing.T, dir string, site *pageSite, n, redone int) {
	t.Helper()
	list := snapshots(t, dir)
	if len(list) != n {
		t.Fatalf("%d snapshot folders, want %d", len(list), n)
	}
	seen := map[string]bool{}
	for _, s := range list {
		if seen[s.snap.URL] {
			t.Errorf("%s has two folders", s.snap.URL)
		}
		seen[s.snap.URL] = true
		ix, _, err := archive.ReadIndex(s.dir)
		if err != nil {
			t.Fatal(err)
		}
		count := map[string]int{}
		for _, r := range ix.Results() {
			count[r.Plugin]++
			if r.Status != "succeeded" {
				t.Errorf("%s: %s %s: %s", s.snap.URL, r.Plugin, r.Status, r.OutputStr)
			}
		}
		if count["title"] != 1 || count["hashes"] != 1 || len(count) != 2 {
			t.Errorf("%s: results %v, want one title and one hashes", s.snap.URL, count)
		}
		path := strings.TrimPrefix(s.snap.URL, site.URL)
		if !strings.HasPrefix(path, "/p/") {
			continue
		}
		switch loads := site.loadsOf(path); {
		case loads == 2 && redone > 0:
			redone--
		case loads != 1:
			t.Errorf("%s loaded %d times, want once", s.snap.URL, loads)
		}
	}
	filepath.WalkDir(filepath.Join(dir, "archive"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && archive.IsTemp(d.Name()) {
			t.Errorf("temp left: %s", p)
		}
		return nil
	})
}
