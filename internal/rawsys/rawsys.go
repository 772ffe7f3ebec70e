// Package rawsys makes the system calls of folio's walks — the stats,
// opens, listings, reads and closes it makes by the hundred thousand over
// a collection's small files — as raw system calls.
//
// Through syscall.Syscall, a call the Go scheduler's monitor finds in
// progress has its P handed to another thread. A walk of a hundred
// thousand short calls on both processors keeps that monitor waking every
// 20 µs and threads waking each other: system calls by the hundred
// thousand that do no work (nanosleep and futex). Made raw, the goroutine
// keeps its P for the few microseconds a call takes. The price: a call
// that waits for a slow disk (or a hung network mount) holds its P
// meanwhile, and a garbage collection waits for it; a walk, which has
// nothing else to run, loses little by that. Reads are bounded by the
// caller's buffer, so no call waits for more than one buffer's worth.
//
// Each function retries a call that a signal interrupted (EINTR) and
// returns a failure as the bare unix.Errno, for the caller to name.
package rawsys

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// errno turns a raw call's error number into an error, nil for none.
func errno(e unix.Errno) error {
	if e != 0 {
		return e
	}
	return nil
}

// Openat is openat(2) of name below the open folder dirfd
// (unix.AT_FDCWD: the working directory), with flags and O_CLOEXEC.
// Opening a fifo without O_NONBLOCK blocks its P: callers that may meet
// one pass O_NONBLOCK.
func Openat(dirfd int, name string, flags int) (int, error) {
	p, err := unix.BytePtrFromString(name)
	if err != nil {
		return -1, err
	}
	for {
		fd, _, e := unix.RawSyscall6(unix.SYS_OPENAT, uintptr(dirfd), uintptr(unsafe.Pointer(p)),
			uintptr(flags|unix.O_CLOEXEC), 0, 0, 0)
		if e != unix.EINTR {
			return int(fd), errno(e)
		}
	}
}

// Openat2 is openat2(2) of name below the open folder dirfd, with flags
// and O_CLOEXEC, resolved as resolve says (unix.RESOLVE_NO_SYMLINKS:
// through no symlink at any step of the path). Linux 5.6 and later have
// it; elsewhere, or under a filter that refuses it, it fails with ENOSYS
// or EPERM.
func Openat2(dirfd int, name string, flags int, resolve uint64) (int, error) {
	p, err := unix.BytePtrFromString(name)
	if err != nil {
		return -1, err
	}
	how := unix.OpenHow{Flags: uint64(flags | unix.O_CLOEXEC), Resolve: resolve}
	for {
		fd, _, e := unix.RawSyscall6(unix.SYS_OPENAT2, uintptr(dirfd), uintptr(unsafe.Pointer(p)),
			uintptr(unsafe.Pointer(&how)), unix.SizeofOpenHow, 0, 0)
		if e != unix.EINTR {
			return int(fd), errno(e)
		}
	}
}

// Statx is statx(2) of name below the open folder dirfd, with flags
// (unix.AT_SYMLINK_NOFOLLOW) and the fields mask asks for; st.Mask says
// which the filesystem gave.
func Statx(dirfd int, name string, flags, mask int, st *unix.Statx_t) error {
	p, err := unix.BytePtrFromString(name)
	if err != nil {
		return err
	}
	for {
		_, _, e := unix.RawSyscall6(unix.SYS_STATX, uintptr(dirfd), uintptr(unsafe.Pointer(p)),
			uintptr(flags), uintptr(mask), uintptr(unsafe.Pointer(st)), 0)
		if e != unix.EINTR {
			return errno(e)
		}
	}
}

// Fstatfs is fstatfs(2) of the filesystem that holds the open file fd.
func Fstatfs(fd int, st *unix.Statfs_t) error {
	_, _, e := unix.RawSyscall(unix.SYS_FSTATFS, uintptr(fd), uintptr(unsafe.Pointer(st)), 0)
	return errno(e)
}

// Read is read(2) into buf.
func Read(fd int, buf []byte) (int, error) {
	var p unsafe.Pointer
	if len(buf) > 0 {
		p = unsafe.Pointer(&buf[0])
	}
	for {
		n, _, e := unix.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(p), uintptr(len(buf)))
		if e != unix.EINTR {
			if e != 0 {
				return 0, e
			}
			return int(n), nil
		}
	}
}

// Fstat is fstat(2) of the open file fd.
func Fstat(fd int, st *unix.Stat_t) error {
	_, _, e := unix.RawSyscall(unix.SYS_FSTAT, uintptr(fd), uintptr(unsafe.Pointer(st)), 0)
	return errno(e)
}

// Lstatat is fstatat(2) of name below the open folder dirfd, not
// following a symlink.
func Lstatat(dirfd int, name string, st *unix.Stat_t) error {
	p, err := unix.BytePtrFromString(name)
	if err != nil {
		return err
	}
	for {
		_, _, e := unix.RawSyscall6(unix.SYS_NEWFSTATAT, uintptr(dirfd), uintptr(unsafe.Pointer(p)),
			uintptr(unsafe.Pointer(st)), unix.AT_SYMLINK_NOFOLLOW, 0, 0)
		if e != unix.EINTR {
			return errno(e)
		}
	}
}

// Getdents is getdents64(2) of the open folder fd into buf: the number
// of bytes of linux_dirent64 records it filled, 0 at the end.
func Getdents(fd int, buf []byte) (int, error) {
	if len(buf) == 0 {
		return 0, unix.EINVAL
	}
	for {
		n, _, e := unix.RawSyscall(unix.SYS_GETDENTS64, uintptr(fd), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
		if e != unix.EINTR {
			if e != 0 {
				return 0, e
			}
			return int(n), nil
		}
	}
}

// Close is close(2). It is not retried on EINTR: Linux has released the
// descriptor by then.
func Close(fd int) error {
	_, _, e := unix.RawSyscall(unix.SYS_CLOSE, uintptr(fd), 0, 0)
	return errno(e)
}

// Pread is pread(2) into buf from offset off.
func Pread(fd int, buf []byte, off int64) (int, error) {
	var p unsafe.Pointer
	if len(buf) > 0 {
		p = unsafe.Pointer(&buf[0])
	}
	for {
		n, _, e := unix.RawSyscall6(unix.SYS_PREAD64, uintptr(fd), uintptr(p), uintptr(len(buf)), uintptr(off), 0, 0)
		if e != unix.EINTR {
			if e != 0 {
				return 0, e
			}
			return int(n), nil
		}
	}
}
