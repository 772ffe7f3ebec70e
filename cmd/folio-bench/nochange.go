package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// The no-change goal of PRODUCT.md: a reindex or export that finds nothing
// changed takes at most 1.2 times what `find archive -name index.jsonl
// -newer STAMP` takes on the same tree (the floor: it stats each index
// file and prints none), with one stat per snapshot. Both figures are
// measured here: the time interleaved with find, and the stats counted
// with strace.

// newerFind returns the baseline step: find over the collection's archive
// folder for index files newer than a stamp touched now, after the last
// change, so that it prints nothing, as a no-change reindex finds nothing.
func (b *B) newerFind(c *Collection) (Step, error) {
	stamp := filepath.Join(b.Work, "nothing-changed.stamp")
	if err := os.WriteFile(stamp, nil, 0o644); err != nil {
		return Step{}, err
	}
	now := time.Now()
	if err := os.Chtimes(stamp, now, now); err != nil {
		return Step{}, err
	}
	archive := filepath.Join(c.Dir, "archive")
	return Step{Cmd: func() *exec.Cmd {
		return exec.CommandContext(b.Ctx, "find", archive, "-name", "index.jsonl", "-newer", stamp)
	}}, nil
}

// nothingChanged measures folio args (a reindex or an export) on a
// collection where nothing changed since the last one, beside the find
// floor, and counts the path stats of each per snapshot: two rows.
func (b *B) nothingChanged(c *Collection, work string, args ...string) {
	// One run first, outside the measurement: the last command may have
	// written folders that this one looks at once more.
	if _, err := b.Run(b.FolioCmd(c.Dir, args...)); err != nil {
		b.Add(Row{Work: work, Err: err})
		return
	}
	find, err := b.newerFind(c)
	var same, floor Spread
	if err == nil {
		same, floor, err = b.Interleave(Step{Cmd: func() *exec.Cmd { return b.FolioCmd(c.Dir, args...) }}, find)
	}
	if err == nil && floor.Lines != 0 {
		err = fmt.Errorf("find -newer printed %d index files: the collection changed during the measurement", floor.Lines)
	}
	row := pairRow(work, Goal{MaxRatio: 1.2}, same, floor, "find -newer")
	row.Err = err
	b.Add(row)

	// The count has no baseline: find's own, under strace, takes ten
	// minutes of a 100k tree with outputs (it stats every folder).
	stats := Row{Work: work + ": path stats per snapshot", Unit: Number, Goal: Goal{Max: 1}}
	var calls int64
	calls, stats.Err = b.StatCount(b.FolioCmd(c.Dir, args...))
	if stats.Err == nil {
		stats.Value = float64(calls) / float64(b.N)
		stats.Note = fmt.Sprintf("%d stat calls for %d snapshots", calls, b.N)
	}
	b.Add(stats)
}

// StatCount runs cmd once under strace and returns the path stats it made:
// the calls of strace's stat families given a path (stat, lstat,
// newfstatat, statx...), not those that look at a file the command holds
// open (fstat, and glibc's fstat, newfstatat(fd, "", AT_EMPTY_PATH)),
// which count with its open. The count is what it is whatever the
// machine's load; strace slows the command down, so it is never timed.
func (b *B) StatCount(cmd *exec.Cmd) (int64, error) {
	name := commandName(cmd)
	strace, err := exec.LookPath("strace")
	if err != nil {
		return 0, fmt.Errorf("strace not found (apt-get install strace): %w", err)
	}
	out, err := os.CreateTemp(b.Work, "strace-*.txt")
	if err != nil {
		return 0, err
	}
	out.Close()
	defer os.Remove(out.Name())
	args := append([]string{"-f", "-qq", "-o", out.Name(), "-e", "trace=%stat,%lstat,%fstat", "-e", "signal=none", "--", cmd.Path}, cmd.Args[1:]...)
	s := exec.CommandContext(b.Ctx, strace, args...)
	s.Env, s.Dir, s.Stdin = cmd.Env, cmd.Dir, cmd.Stdin
	stderr := &tail{max: 4096}
	s.Stderr = stderr
	if err := s.Run(); err != nil {
		msg := stderr.lastLine()
		if msg == "" {
			msg = err.Error()
		}
		return 0, fmt.Errorf("strace %s: %s", name, msg)
	}
	f, err := os.Open(out.Name())
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n, err := pathStats(f)
	if err != nil {
		return 0, fmt.Errorf("strace %s: %w", name, err)
	}
	return n, nil
}

// pathStats counts the calls in a trace strace wrote (with -f, each line
// "PID call(args...") that stat a file by its path. A call another thread
// interrupted is written twice, "call(args <unfinished ...>" and "<...
// call resumed>...": it counts once, by its first line, which holds its
// path.
func pathStats(r io.Reader) (int64, error) {
	var n int64
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		_, line, _ = strings.Cut(line, " ") // the PID
		call, args, ok := strings.Cut(strings.TrimLeft(line, " "), "(")
		if !ok || strings.HasPrefix(call, "<") || strings.ContainsAny(call, " -+") {
			continue // a resumed call, a signal or an exit
		}
		switch call {
		case "fstat", "fstat64", "oldfstat":
			continue
		case "stat", "lstat", "stat64", "lstat64", "oldstat", "oldlstat":
		default: // newfstatat, fstatat64, statx: (dirfd, path, ...)
			_, path, _ := strings.Cut(args, ", ")
			if strings.HasPrefix(path, `""`) {
				continue // the open file dirfd itself
			}
		}
		n++
	}
	return n, sc.Err()
}
