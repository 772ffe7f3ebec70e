package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// measureArg, as the first argument, runs folio-bench as the small process
// that starts a measured command and reports its resource use:
//
//	folio-bench -measure-child PATH ARG...
//
// It exists because on Linux a process's peak RSS (ru_maxrss) starts at
// the high-water mark of the memory it was exec'd from: execve folds the
// old address space's peak into the new program's ru_maxrss, and Go's
// os/exec forks with CLONE_VM, so that old address space is the parent's.
// A command started straight from folio-bench, which holds a generated
// collection's manifest and ran the generator in-process, would report
// folio-bench's own peak. Started from this helper, which is freshly
// exec'd and small, it reports its own (or the helper's few megabytes,
// whichever is larger).
const measureArg = "-measure-child"

// measureFD is the descriptor on which the helper writes its report; the
// command's stdin, stdout and stderr are the helper's own.
const measureFD = 3

// childReport is what the helper writes on measureFD once the command has
// exited. Start and End are CLOCK_MONOTONIC readings, comparable with the
// parent's, so the helper's own start-up is not counted as the command's.
type childReport struct {
	Start, End int64 // nanoseconds
	UserNS     int64
	SysNS      int64
	MaxRSSKB   int64
	Exit       int // exit code, or 128+signal
	Err        string
}

// monotonic reads CLOCK_MONOTONIC, shared by every process of the machine.
func monotonic() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		panic(fmt.Sprintf("clock_gettime: %v", err)) // cannot fail on Linux
	}
	return ts.Nano()
}

// measureChild is the helper's main: it runs args with its own stdio,
// writes a childReport on measureFD and exits as the command did.
func measureChild(args []string) int {
	report := os.NewFile(measureFD, "report")
	var r childReport
	defer func() {
		if err := json.NewEncoder(report).Encode(r); err != nil {
			fmt.Fprintf(os.Stderr, "folio-bench: report: %v\n", err)
		}
	}()
	if len(args) == 0 {
		r.Err, r.Exit = "no command", 2
		return r.Exit
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	// The command dies with the helper, which folio-bench kills when its
	// context ends.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	r.Start = monotonic()
	err := cmd.Run()
	r.End = monotonic()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		r.Err, r.Exit = err.Error(), 1
		return r.Exit
	}
	st := cmd.ProcessState
	r.UserNS, r.SysNS = int64(st.UserTime()), int64(st.SystemTime())
	if ru, ok := st.SysUsage().(*syscall.Rusage); ok {
		r.MaxRSSKB = ru.Maxrss
	}
	r.Exit = st.ExitCode()
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		r.Exit = 128 + int(ws.Signal())
	}
	return r.Exit
}
