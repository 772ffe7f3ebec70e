package migrate

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// NoSpaceError stops a migration at the first "no space left on device":
// a full file system fails every folder alike, so the run stops there
// and says so once, naming the file system. What is done is consistent
// and the journal lets the next run finish. It wraps syscall.ENOSPC.
type NoSpaceError struct {
	Mount string // mount point of the full file system ("" if unknown)
	Dev   string // its device, major:minor
	Path  string // the file or folder being written
	Err   error
}

func (e *NoSpaceError) Error() string {
	fsName := "the file system of " + e.Path
	if e.Mount != "" {
		fsName = "the file system mounted at " + e.Mount + " (device " + e.Dev + ")"
	}
	return fmt.Sprintf("no space left on %s, writing %s; the migration stopped there and what it did is consistent: free some space and run 'folio update --migrate-only' again to finish it", fsName, e.Path)
}

func (e *NoSpaceError) Unwrap() error { return e.Err }

// noSpace returns a NoSpaceError when err is an ENOSPC, else nil. The
// path written is the one the error names, else fallback.
func noSpace(err error, fallback string) *NoSpaceError {
	if err == nil || !errors.Is(err, syscall.ENOSPC) {
		return nil
	}
	p := fallback
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		p = pe.Path
	case errors.As(err, &le):
		p = le.New
	}
	e := &NoSpaceError{Path: p, Err: err}
	e.Mount, e.Dev = mountOf(p)
	return e
}

// mountOf returns the mount point of the file system holding p (or its
// nearest existing parent) and the file system's device: the highest
// folder above p on the same device.
func mountOf(p string) (mount, dev string) {
	p = filepath.Clean(p)
	var st unix.Stat_t
	for unix.Stat(p, &st) != nil {
		if filepath.Dir(p) == p {
			return "", ""
		}
		p = filepath.Dir(p)
	}
	d := st.Dev
	for p != filepath.Dir(p) {
		if unix.Stat(filepath.Dir(p), &st) != nil || st.Dev != d {
			break
		}
		p = filepath.Dir(p)
	}
	return p, strconv.FormatUint(uint64(unix.Major(d)), 10) + ":" + strconv.FormatUint(uint64(unix.Minor(d)), 10)
}
