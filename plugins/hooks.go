package plugins

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Hook is an external capture method: an executable named like an
// ArchiveBox hook (on_Snapshot__NN_name.ext) in <data>/custom_plugins/<plugin>/,
// run with ArchiveBox's contract (plugins spec §3): argv [hook, --url=URL],
// working directory <snapshot>/<plugin>/, the configuration, SNAP_DIR and
// EXTRA_CONTEXT in the environment, JSONL records on stdout (the last
// ArchiveResult wins), exit 0/10/other meaning ok/skipped/failed, and a
// timeout that sends SIGTERM and then SIGKILL to its process group.
type Hook struct {
	Path   string // the executable
	plugin string
	order  int
	hook   string // file name without its last extension
}

var hookName = regexp.MustCompile(`^on_Snapshot__(?:(\d+)_)?(.+)$`)

// DiscoverHooks finds the hooks under dir (<data>/custom_plugins): every
// executable file matching on_Snapshot__* in a plugin folder whose name
// does not start with "." or "_".
func DiscoverHooks(dir string) ([]*Hook, error) {
	plugins, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", dir, err)
	}
	var out []*Hook
	for _, p := range plugins {
		if !p.IsDir() || strings.HasPrefix(p.Name(), ".") || strings.HasPrefix(p.Name(), "_") {
			continue
		}
		files, err := os.ReadDir(filepath.Join(dir, p.Name()))
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", filepath.Join(dir, p.Name()), err)
		}
		for _, f := range files {
			m := hookName.FindStringSubmatch(f.Name())
			if m == nil {
				continue
			}
			full := filepath.Join(dir, p.Name(), f.Name())
			info, err := os.Stat(full)
			if err != nil || !info.Mode().IsRegular() || info.Mode().Perm()&0o111 == 0 {
				continue
			}
			order, _ := strconv.Atoi(m[1])
			name := f.Name()
			if ext := filepath.Ext(name); ext != "" && ext != name {
				name = strings.TrimSuffix(name, ext)
			}
			out = append(out, &Hook{Path: full, plugin: p.Name(), order: order, hook: name})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

func (h *Hook) Name() string     { return h.plugin }
func (h *Hook) Order() int       { return h.order }
func (h *Hook) HookName() string { return h.hook }

// Browser is false: a hook that wants the page attaches to the browser
// itself; folio loads the page when any built-in plugin of the run needs
// it.
func (h *Hook) Browser() bool { return false }

// hookGrace is how long a hook has between SIGTERM and SIGKILL.
var hookGrace = 5 * time.Second

func (h *Hook) Run(ctx context.Context, job *Job) Outcome {
	dir := job.PluginDir(h.plugin)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return failed("%v", err)
	}
	cmdline := []string{h.Path, "--url=" + job.URL}
	extra, _ := json.Marshal(map[string]any{"snapshot_id": job.SnapshotID, "snapshot_depth": job.Depth,
		"plugin": h.plugin, "hook_name": h.hook})
	stdoutPath := filepath.Join(dir, h.hook+".stdout.log")
	stderrPath := filepath.Join(dir, h.hook+".stderr.log")
	stdout, err := os.Create(stdoutPath)
	if err != nil {
		return failed("%v", err)
	}
	defer stdout.Close()
	stderr, err := os.Create(stderrPath)
	if err != nil {
		return failed("%v", err)
	}
	defer stderr.Close()
	cmd := exec.Command(h.Path, cmdline[1:]...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.Env = append(append(os.Environ(), job.Config.Environ()...),
		"SNAP_DIR="+job.Dir, "EXTRA_CONTEXT="+string(extra), "ABX_RUNTIME=archivebox")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return Outcome{Status: Failed, Output: fmt.Sprintf("start %s: %v", h.Path, err), Cmd: cmdline}
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var waitErr error
	timedOut := false
	select {
	case waitErr = <-done:
	case <-ctx.Done():
		timedOut = true
		pgid := cmd.Process.Pid
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		select {
		case waitErr = <-done:
		case <-time.After(hookGrace):
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			waitErr = <-done
		}
		// Whatever the hook started in its group goes too.
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
	stdout.Close()
	stderr.Close()
	out := Outcome{Cmd: cmdline}
	rec, found := lastResult(stdoutPath)
	code := cmd.ProcessState.ExitCode()
	switch {
	case timedOut && ctx.Err() == context.DeadlineExceeded:
		out.Status, out.Output = Failed, fmt.Sprintf("Hook timed out after %s", job.Config.Timeout(h.plugin))
	case timedOut:
		out.Status, out.Output = Failed, "interrupted"
	case found:
		out.Status, out.Output = normalizeStatus(rec.Status), rec.OutputStr
	case code == 10:
		out.Status, out.Output = Skipped, "hook exited 10 (skipped)"
	case code != 0 || waitErr != nil:
		out.Status, out.Output = Failed, fmt.Sprintf("hook exited %d: %s", code, tail(stderrPath))
	default:
		out.Status, out.Output = NoResults, "hook printed no ArchiveResult"
		if len(outputFiles(mustWalk(dir))) > 0 {
			out.Status, out.Output = Succeeded, ""
		}
	}
	if code == 0 && !timedOut {
		// As abx-dl does: the logs of a hook that succeeded are not kept.
		os.Remove(stdoutPath)
		os.Remove(stderrPath)
	}
	return out
}

// hookRecord is the part of a hook's ArchiveResult record folio reads.
type hookRecord struct {
	Type      string `json:"type"`
	Status    string `json:"status"`
	OutputStr string `json:"output_str"`
}

// lastResult reads the last ArchiveResult record a hook printed; lines
// that are not JSON objects are ignored, as the contract allows.
func lastResult(stdoutPath string) (hookRecord, bool) {
	data, err := os.ReadFile(stdoutPath)
	if err != nil {
		return hookRecord{}, false
	}
	var last hookRecord
	found := false
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 || line[0] != '{' {
			continue
		}
		var r hookRecord
		if json.Unmarshal(line, &r) == nil && r.Type == "ArchiveResult" {
			last, found = r, true
		}
	}
	return last, found
}

// normalizeStatus maps a hook's status to ArchiveBox's: "noresult" (abx-dl)
// is noresults; unknown values are failed.
func normalizeStatus(s string) string {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case Succeeded, "success", "succeded":
		return Succeeded
	case Skipped:
		return Skipped
	case NoResults, "noresult":
		return NoResults
	}
	return Failed
}

// tail is the last line of a log, for a failure's reason.
func tail(p string) string {
	data, _ := os.ReadFile(p)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	last := strings.TrimSpace(lines[len(lines)-1])
	if len(last) > 300 {
		last = last[:300]
	}
	if last == "" {
		return "(no output on stderr)"
	}
	return last
}

func mustWalk(dir string) []fileEntry {
	files, _ := walkFiles(dir, nil)
	return files
}

var _ Plugin = (*Hook)(nil)
