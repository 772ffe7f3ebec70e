package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// status reads the job queue without writing it: an embedded queue file
// without tables gets none (and no queue section), an unreachable shared
// queue is one line and the rest of the report (exit 0), and snapshots
// the queue holds are 'folio worker”s to capture, not 'add --resume”s.
func TestStatusQueueReadOnly(t *testing.T) {
	t.Parallel()
	dir := newCollection(t)
	if _, stderr, code := runFolio(t, "-D", dir, "add", "--index-only", "https://example.com/"); code != 0 {
		t.Fatalf("add --index-only: exit %d\n%s", code, stderr)
	}
	file := filepath.Join(dir, ".folio", "queue.sqlite3")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := runFolio(t, "-D", dir, "status")
	if code != 0 || strings.Contains(stdout, "queue  ") || !strings.Contains(stdout, "'folio add --resume'") {
		t.Fatalf("status beside an empty queue file: exit %d, want 0, no queue section and add --resume\n%s%s", code, stdout, stderr)
	}
	if fi, err := os.Stat(file); err != nil || fi.Size() != 0 {
		t.Fatalf("status wrote the queue file (%v): it must only read it", err)
	}

	conf := filepath.Join(dir, "ArchiveBox.conf")
	data, err := os.ReadFile(conf)
	if err != nil {
		t.Fatal(err)
	}
	// Port 1 of loopback: nothing listens, the connection is refused.
	unreachable := string(data) + "QUEUE_URL = postgres://folio@127.0.0.1:1/folio?connect_timeout=5\n"
	if err := os.WriteFile(conf, []byte(unreachable), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code = runFolio(t, "-D", dir, "status")
	if code != 0 || !strings.Contains(stdout, "queue              not read: ") || !strings.Contains(stdout, "snapshots          1") {
		t.Fatalf("status with an unreachable queue: exit %d, want 0, one line on the queue and the rest\n%s%s", code, stdout, stderr)
	}
	if err := os.WriteFile(conf, data, 0o644); err != nil {
		t.Fatal(err)
	}

	os.Remove(file)
	if _, stderr, code := runFolio(t, "-D", dir, "add", "--enqueue-only", "--resume"); code != 0 {
		t.Fatalf("add --enqueue-only --resume: exit %d\n%s", code, stderr)
	}
	stdout, stderr, code = runFolio(t, "-D", dir, "status")
	if code != 0 || !strings.Contains(stdout, "'folio worker'") || strings.Contains(stdout, "add --resume") {
		t.Fatalf("status with the queued snapshot in the queue: exit %d, want 0 and 'folio worker', not add --resume\n%s%s", code, stdout, stderr)
	}
}
