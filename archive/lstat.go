package archive

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// Lstatat is unix.Fstatat(dirfd, name, st, unix.AT_SYMLINK_NOFOLLOW)
// made as a raw system call, for the walks that stat every snapshot: the
// goroutine keeps its P for the few microseconds a stat takes. Through
// syscall.Syscall, a stat the scheduler's monitor finds in progress has
// its P handed to another thread, and a walk making a hundred thousand
// of them keeps that monitor waking every 20 µs and threads waking each
// other: system calls by the hundred thousand that do no work (nanosleep
// and futex). A stat that has to wait for the disk holds its P
// meanwhile, which a walk of stats loses nothing by.
func Lstatat(dirfd int, name string, st *unix.Stat_t) error {
	p, err := unix.BytePtrFromString(name)
	if err != nil {
		return err
	}
	_, _, e := unix.RawSyscall6(unix.SYS_NEWFSTATAT, uintptr(dirfd), uintptr(unsafe.Pointer(p)),
		uintptr(unsafe.Pointer(st)), unix.AT_SYMLINK_NOFOLLOW, 0, 0)
	if e != 0 {
		return e
	}
	return nil
}
