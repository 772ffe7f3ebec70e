package main_test

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// startWorker starts 'folio worker' on the collection dir (plugins title
// and hashes, then args), its output going to logs; it is stopped
// (interrupted) when the test ends, if the test has not stopped it.
func startWorker(t *testing.T, dir string, env []string, logs io.Writer, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(folioBin(t), append([]string{"-D", dir, "worker", "-p", "title,hashes"}, args...)...)
	cmd.Env = append(append(os.Environ(), "FOLIO_DATA_DIR="), env...)
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Signal(os.Interrupt)
			cmd.Wait()
		}
	})
	return cmd
}

// runBackground starts the folio binary on the collection dir; exited is
// closed when it has exited (its code then in cmd.ProcessState).
func runBackground(t *testing.T, dir string, logs io.Writer, args ...string) (cmd *exec.Cmd, exited chan struct{}) {
	t.Helper()
	cmd = exec.Command(folioBin(t), append([]string{"-D", dir}, args...)...)
	cmd.Env = append(os.Environ(), "FOLIO_DATA_DIR=")
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited = make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() { cmd.Process.Kill(); <-exited })
	return cmd, exited
}

func closed(c chan struct{}) func() bool {
	return func() bool {
		select {
		case <-c:
			return true
		default:
			return false
		}
	}
}

// firstOf waits until one of conds holds and returns its index, or -1
// when none does within limit.
func firstOf(limit time.Duration, conds ...func() bool) int {
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		for i, c := range conds {
			if c() {
				return i
			}
		}
	}
	return -1
}

// browserProfile is the --user-data-dir of the Chromium the process pid
// started.
func browserProfile(t *testing.T, pid int) string {
	t.Helper()
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, not ')'
		fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(fields) < 2 || fields[1] != strconv.Itoa(pid) {
			continue
		}
		if dir := profileOf(e.Name()); dir != "" {
			return dir
		}
	}
	t.Fatalf("process %d runs no Chromium", pid)
	return ""
}

// profileOf is the --user-data-dir of process pid's command line, or "".
func profileOf(pid string) string {
	cmdline, _ := os.ReadFile(filepath.Join("/proc", pid, "cmdline"))
	for _, arg := range strings.Split(string(cmdline), "\x00") {
		if dir, ok := strings.CutPrefix(arg, "--user-data-dir="); ok {
			return dir
		}
	}
	return ""
}

// processesUsing lists the living processes (not zombies, whose command
// line is empty) started with --user-data-dir=profile.
func processesUsing(profile string) []string {
	var out []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err == nil && profileOf(e.Name()) == profile {
			out = append(out, e.Name())
		}
	}
	return out
}

// A command that moves snapshot folders (remove --delete) waits for the
// capture a worker has under way, and no worker starts a capture while
// it moves.
func TestWorkersFolderLock(t *testing.T) {
	t.Parallel()
	dir := newCollection(t)
	pageLoadTimeout(t, dir, 300) // /slow is held until the test lets it go
	site := newPageSite(t)
	folio := func(args ...string) {
		t.Helper()
		if _, stderr, code := runFolio(t, append([]string{"-D", dir}, args...)...); code != 0 {
			t.Fatalf("folio %v: exit %d\n%s", args, code, stderr)
		}
	}
	folio("add", "-p", "hashes", site.URL+"/p/gone") // sealed here, before any worker
	gone := snapshots(t, dir)[0].dir
	folio("add", "--enqueue-only", site.URL+"/slow")
	folio("add", "--enqueue-only", site.URL+"/p/next")
	slowDir := byURL(snapshots(t, dir), site.URL+"/slow")[0].dir

	var logs syncBuffer
	startWorker(t, dir, nil, &logs, "-j", "1")
	select {
	case <-site.slowHit:
	case <-time.After(2 * time.Minute):
		t.Fatalf("no worker loaded /slow\n%s", logs.String())
	}

	var moverLogs syncBuffer
	_, moved := runBackground(t, dir, &moverLogs, "remove", "--delete", "--yes", "-f", "exact", site.URL+"/p/gone")
	switch firstOf(2*time.Minute, closed(moved), func() bool { return strings.Contains(moverLogs.String(), "waiting for the workers' captures") }) {
	case 0:
		t.Fatalf("remove --delete did not wait for the capture of /slow under way:\n%s", moverLogs.String())
	case -1:
		t.Fatalf("remove --delete neither waits nor ends:\n%s", moverLogs.String())
	}

	// A second worker claims /p/next, and waits for the mover, which
	// waits for /slow.
	startWorker(t, dir, nil, &logs, "-j", "1")
	switch firstOf(2*time.Minute, func() bool { return site.loadsOf("/p/next") > 0 },
		func() bool { return strings.Contains(logs.String(), "waits for a command that moves snapshot folders") }) {
	case 0:
		t.Fatalf("a worker captured /p/next while remove --delete held the folders\n%s", logs.String())
	case -1:
		t.Fatalf("no worker claimed /p/next\n%s", logs.String())
	}

	close(site.release)
	<-moved
	if s := readSnapshot(t, slowDir); s.Status != "sealed" {
		t.Errorf("remove --delete moved folders while /slow was %s, not sealed", s.Status)
	}
	if _, err := os.Stat(gone); !os.IsNotExist(err) {
		t.Errorf("remove --delete left %s: %v\n%s", gone, err, moverLogs.String())
	}
	waitSealed(t, dir, 2, 2*time.Minute, &logs)
	checkCapturedOnce(t, dir, site, 2, 0)
}

// A plain add (one that captures) and the queue's workers never capture
// the same snapshot: beside a running worker, add --resume enqueues (the
// snapshot the worker captures included) instead of capturing; and a
// worker that starts while an add captures waits for it.
func TestWorkersPlainAdd(t *testing.T) {
	t.Parallel()
	dir := newCollection(t)
	pageLoadTimeout(t, dir, 300) // /slow is held until the test lets it go
	site := newPageSite(t)
	if _, stderr, code := runFolio(t, "-D", dir, "add", "--enqueue-only", site.URL+"/slow"); code != 0 {
		t.Fatalf("add --enqueue-only: exit %d\n%s", code, stderr)
	}
	var logs syncBuffer
	worker := startWorker(t, dir, nil, &logs, "-j", "1")
	select {
	case <-site.slowHit:
	case <-time.After(2 * time.Minute):
		t.Fatalf("the worker did not load /slow\n%s", logs.String())
	}
	// /slow is started, its capture under way in the worker.
	_, stderr, code := runFolio(t, "-D", dir, "add", "--resume", "-p", "title,hashes", site.URL+"/p/0")
	if code != 0 || !strings.Contains(stderr, "workers are running") {
		t.Fatalf("add --resume beside a worker: exit %d, want 0 and a word on the workers\n%s", code, stderr)
	}
	if n, m := site.loadsOf("/slow"), site.loadsOf("/p/0"); n != 1 || m != 0 {
		t.Fatalf("add --resume beside a worker loaded /slow %d times and /p/0 %d times, want 1 and 0: it captured instead of enqueueing\n%s", n, m, stderr)
	}
	close(site.release)
	waitSealed(t, dir, 2, 2*time.Minute, &logs)
	worker.Process.Signal(os.Interrupt)
	worker.Wait()
	checkCapturedOnce(t, dir, site, 2, 0)

	// An add captures /slow2 here; a worker started meanwhile waits for it.
	site2 := newPageSite(t)
	var addLogs syncBuffer
	_, added := runBackground(t, dir, &addLogs, "add", "-p", "title,hashes", site2.URL+"/slow")
	select {
	case <-site2.slowHit:
	case <-time.After(2 * time.Minute):
		t.Fatalf("add did not load /slow\n%s", addLogs.String())
	}
	logs = syncBuffer{}
	startWorker(t, dir, nil, &logs, "-j", "1")
	switch firstOf(2*time.Minute, func() bool { return site2.loadsOf("/slow") > 1 },
		func() bool { return strings.Contains(logs.String(), "waiting for a 'folio add'") }) {
	case 0:
		t.Fatalf("a worker captured the snapshot add was capturing\n%s", logs.String())
	case -1:
		t.Fatalf("the worker neither waits for add nor captures\n%s", logs.String())
	}
	close(site2.release)
	<-added
	waitSealed(t, dir, 3, 2*time.Minute, &addLogs)
	if n := site2.loadsOf("/slow"); n != 1 {
		t.Errorf("/slow of the second site loaded %d times, want once", n)
	}
}
