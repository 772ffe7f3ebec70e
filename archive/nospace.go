package archive

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// FullDisk describes a "no space left on device": the path being
// written and the file system that is full. Commands stop at the first
// one (a full file system fails every item alike) and name it once.
type FullDisk struct {
	Path  string // the file or folder being written
	Mount string // mount point of its file system ("" if unknown)
	Dev   string // the file system's device, major:minor ("" if unknown)
}

// NoSpace returns what err says about a full disk, and false when err is
// not an ENOSPC. The path is the one the error names, else fallback.
func NoSpace(err error, fallback string) (FullDisk, bool) {
	if err == nil || !errors.Is(err, syscall.ENOSPC) {
		return FullDisk{}, false
	}
	d := FullDisk{Path: fallback}
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		d.Path = pe.Path
	case errors.As(err, &le):
		d.Path = le.New
	}
	d.Mount, d.Dev = mountOf(d.Path)
	return d, true
}

// FileSystem names the full file system for a message: by its mount
// point and device when known, else by the path written.
func (d FullDisk) FileSystem() string {
	if d.Mount == "" {
		return "the file system of " + d.Path
	}
	return "the file system mounted at " + d.Mount + " (device " + d.Dev + ")"
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
