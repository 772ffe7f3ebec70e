package archive

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Lock is the collection's writer lock: an flock on .folio/lock that the
// kernel releases when the process dies, so a crash never leaves a stale
// lock behind.
type Lock struct {
	f *os.File
}

// Lock takes the collection's writer lock for the named command, or fails
// at once with ErrLocked and a message saying who holds it. Holding it,
// it first moves the removal state an earlier folio kept in StateDir into
// the tree (see moveRemoved).
func (c *Collection) Lock(command string) (*Lock, error) {
	path := c.Path(LockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open lock %s: %w", path, err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		holder, _ := os.ReadFile(path)
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			who := strings.TrimSpace(string(bytes.ReplaceAll(holder, []byte("\n"), []byte(", "))))
			if who == "" {
				who = "another folio process"
			}
			return nil, fmt.Errorf("%w by %s (%s)", ErrLocked, who, path)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	host, _ := os.Hostname()
	// The holder note is advisory text inside the lock file itself: the
	// lock lives on this inode, so the file cannot be replaced by rename.
	note := fmt.Sprintf("pid %d on %s running 'folio %s' since %s\n", os.Getpid(), host, command, time.Now().UTC().Format(time.RFC3339))
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(note), 0)
	}
	l := &Lock{f: f}
	if err := c.moveRemoved(); err != nil {
		l.Unlock()
		return nil, err
	}
	return l, nil
}

// Unlock releases the lock.
func (l *Lock) Unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	_ = l.f.Truncate(0)
	err := l.f.Close() // closing the descriptor releases the flock
	l.f = nil
	return err
}
