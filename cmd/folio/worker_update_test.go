package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// workersLockHeld reports whether some process holds the collection's
// workers lock (a worker holds it shared for its life).
func workersLockHeld(t *testing.T, dir string) bool {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(dir, ".folio", "workers.lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) != nil
}

// 'folio update' captures the queued and started snapshots workers
// claim, so beside running workers it fails as locked, as add --update
// does, and captures nothing.
func TestWorkersUpdateRefused(t *testing.T) {
	t.Parallel()
	dir := newCollection(t)
	site := newPageSite(t)
	if _, stderr, code := runFolio(t, "-D", dir, "add", "--index-only", site.URL+"/p/0"); code != 0 {
		t.Fatalf("add --index-only: exit %d\n%s", code, stderr)
	}
	var logs syncBuffer
	worker := startWorker(t, dir, nil, &logs, "-j", "1")
	deadline := time.Now().Add(time.Minute)
	for !workersLockHeld(t, dir) {
		if time.Now().After(deadline) {
			t.Fatalf("the worker does not hold the workers lock\n%s", logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	_, stderr, code := runFolio(t, "-D", dir, "update", "-p", "title,hashes", "--status", "queued")
	if code != 11 || !strings.Contains(stderr, "stop the workers first") {
		t.Fatalf("update beside a worker: exit %d, want 11 and a word on the workers\n%s", code, stderr)
	}
	worker.Process.Signal(os.Interrupt)
	worker.Wait()
	if _, stderr, code := runFolio(t, "-D", dir, "update", "-p", "title,hashes"); code != 0 {
		t.Fatalf("update once the worker stopped: exit %d\n%s", code, stderr)
	}
}
