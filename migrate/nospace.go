package migrate

import (
	"fmt"

	"github.com/folio-archive/folio/archive"
)

// NoSpaceError stops a migration at the first "no space left on device":
// a full file system fails every folder alike, so the run stops there
// and says so once, naming the file system. What is done is consistent
// and the journal lets the next run finish. It wraps syscall.ENOSPC.
type NoSpaceError struct {
	archive.FullDisk
	Err error
}

func (e *NoSpaceError) Error() string {
	return fmt.Sprintf("no space left on %s, writing %s; the migration stopped there and what it did is consistent: free some space and run 'folio update --migrate-only' again to finish it", e.FileSystem(), e.Path)
}

func (e *NoSpaceError) Unwrap() error { return e.Err }

// noSpace returns a NoSpaceError when err is an ENOSPC, else nil. The
// path written is the one the error names, else fallback.
func noSpace(err error, fallback string) *NoSpaceError {
	d, ok := archive.NoSpace(err, fallback)
	if !ok {
		return nil
	}
	return &NoSpaceError{FullDisk: d, Err: err}
}
