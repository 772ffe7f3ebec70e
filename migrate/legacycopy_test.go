package migrate

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// A copy folder named after a dead pid is still kept while some process
// holds its lock (a process of another pid namespace sharing $TMPDIR).
func TestRemoveStaleCopiesKeepsLockedCopies(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	done := exec.Command("true")
	if err := done.Run(); err != nil {
		t.Fatal(err)
	}
	locked := filepath.Join(tmp, fmt.Sprintf("%s%d-1", copyPrefix, done.Process.Pid))
	stale := filepath.Join(tmp, fmt.Sprintf("%s%d-2", copyPrefix, done.Process.Pid))
	for _, d := range []string{locked, stale} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	fd, err := unix.Open(locked, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if err := unix.Flock(fd, unix.LOCK_SH); err != nil {
		t.Fatal(err)
	}
	n, err := removeStaleCopies()
	if err != nil || n != 1 {
		t.Fatalf("removed %d, %v; want 1", n, err)
	}
	if _, err := os.Lstat(locked); err != nil {
		t.Errorf("a locked copy was removed")
	}
	if _, err := os.Lstat(stale); err == nil {
		t.Errorf("the stale copy is still there")
	}
}
