package plugins

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/folio-archive/folio/archive"
)

// writeHook writes an executable shell hook at <root>/<plugin>/<name>.
func writeHook(t *testing.T, root, plugin, name, script string) {
	t.Helper()
	dir := filepath.Join(root, plugin)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
}

func runHooks(t *testing.T, root string, cfg Config) (string, []archive.Result) {
	t.Helper()
	hooks, err := DiscoverHooks(root)
	if err != nil {
		t.Fatal(err)
	}
	reg := NewRegistry()
	for _, h := range hooks {
		reg.Register(h)
	}
	ps, err := reg.Select(nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	r := &Runner{Plugins: ps, Config: cfg, HTTP: NewHTTPClient(cfg), IDs: archive.RandomIDs, Now: time.Now}
	var got []archive.Result
	err = r.Capture(context.Background(), &Job{URL: "http://127.0.0.1:9/page", Dir: dir, SnapshotID: "0190a1b2c3d4e5f60718293a4b5c6d7e", Depth: 0},
		false, func(res archive.Result) error { got = append(got, res); return nil })
	if err != nil {
		t.Fatal(err)
	}
	return dir, got
}

func TestHooksFollowArchiveBoxsContract(t *testing.T) {
	root := t.TempDir()
	// Records the contract's inputs, writes a file, prints noise and then
	// two ArchiveResults: the last one wins.
	writeHook(t, root, "probe", "on_Snapshot__40_probe.sh", `
printf '%s\n' "$@" > args.txt
pwd > cwd.txt
printf '%s\n%s\n%s\n' "$SNAP_DIR" "$EXTRA_CONTEXT" "$PROBE_TIMEOUT" > env.txt
echo "probe started"
echo '{"type":"ArchiveResult","status":"failed","output_str":"first"}'
echo '{"type":"ArchiveResult","status":"succeeded","output_str":"probe/args.txt"}'
`)
	writeHook(t, root, "early", "on_Snapshot__05_early.sh", "exit 10\n")
	writeHook(t, root, "broken", "on_Snapshot__60_broken.sh", "echo 'not json {'\necho 'something broke' >&2\nexit 3\n")
	writeHook(t, root, "garbage", "on_Snapshot__61_garbage.sh", "head -c 300 /dev/urandom\necho '{\"type\":\"ArchiveResult\",'\n")
	writeHook(t, root, "off", "on_Snapshot__62_off.sh", "touch ran\n")
	writeHook(t, root, "_hidden", "on_Snapshot__01_hidden.sh", "exit 1\n")
	if err := os.WriteFile(filepath.Join(root, "probe", "on_Snapshot__41_notexec.sh"), []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(t, "PROBE_TIMEOUT", "7", "OFF_ENABLED", "False")
	dir, got := runHooks(t, root, cfg)

	var order []string
	by := map[string]archive.Result{}
	for _, r := range got {
		order = append(order, r.HookName)
		by[r.Plugin] = r
	}
	if want := "on_Snapshot__05_early on_Snapshot__40_probe on_Snapshot__60_broken on_Snapshot__61_garbage"; strings.Join(order, " ") != want {
		t.Fatalf("ran %v, want %s", order, want)
	}
	if r := by["early"]; r.Status != Skipped {
		t.Errorf("exit 10: %q %q", r.Status, r.OutputStr)
	}
	if r := by["probe"]; r.Status != Succeeded || r.OutputStr != "probe/args.txt" || len(r.Cmd) != 2 || r.Cmd[1] != "--url=http://127.0.0.1:9/page" {
		t.Errorf("probe: %+v", r)
	}
	if r := by["broken"]; r.Status != Failed || !strings.Contains(r.OutputStr, "exited 3") || !strings.Contains(r.OutputStr, "something broke") {
		t.Errorf("broken: %q %q", r.Status, r.OutputStr)
	}
	if r := by["garbage"]; r.Status != NoResults {
		t.Errorf("garbage: %q %q", r.Status, r.OutputStr)
	}
	if _, err := os.Stat(filepath.Join(dir, "broken", "on_Snapshot__60_broken.stderr.log")); err != nil {
		t.Errorf("a failed hook's stderr log is not kept: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "probe", "on_Snapshot__40_probe.stdout.log")); err == nil {
		t.Error("a hook that exited 0 keeps its stdout log")
	}
	if got := strings.TrimSpace(string(read(t, dir, "probe/args.txt"))); got != "--url=http://127.0.0.1:9/page" {
		t.Errorf("argv: %q", got)
	}
	if got := strings.TrimSpace(string(read(t, dir, "probe/cwd.txt"))); got != filepath.Join(dir, "probe") {
		t.Errorf("cwd %q", got)
	}
	env := strings.Split(strings.TrimSpace(string(read(t, dir, "probe/env.txt"))), "\n")
	if len(env) != 3 || env[0] != dir || env[2] != "7" {
		t.Fatalf("env: %q", env)
	}
	var extra map[string]any
	if err := json.Unmarshal([]byte(env[1]), &extra); err != nil || extra["snapshot_id"] != "0190a1b2c3d4e5f60718293a4b5c6d7e" || extra["hook_name"] != "on_Snapshot__40_probe" {
		t.Errorf("EXTRA_CONTEXT %q (%v)", env[1], err)
	}
	files := map[string]bool{}
	for _, f := range by["probe"].OutputFiles {
		files[f.Path] = true
	}
	if !files["args.txt"] || files["on_Snapshot__40_probe.stdout.log"] {
		t.Errorf("probe output_files %v", by["probe"].OutputFiles)
	}
}

// A hook that ignores SIGTERM and leaves a child behind is killed, child
// and all, at its timeout.
func TestHookThatHangsIsKilled(t *testing.T) {
	old := hookGrace
	hookGrace = 300 * time.Millisecond
	t.Cleanup(func() { hookGrace = old })
	root := t.TempDir()
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	writeHook(t, root, "hang", "on_Snapshot__40_hang.sh", `
trap '' TERM
sleep 1000 &
echo $! > `+pidFile+`
while :; do sleep 1; done
`)
	start := time.Now()
	_, got := runHooks(t, root, testConfig(t, "HANG_TIMEOUT", "1"))
	if len(got) != 1 || got[0].Status != Failed || !strings.Contains(got[0].OutputStr, "timed out after 1s") {
		t.Fatalf("results %+v", got)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("the hang took %s to stop", d)
	}
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid := strings.TrimSpace(string(data))
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, err := os.Stat("/proc/" + pid); err != nil {
			break
		}
		if status, _ := os.ReadFile("/proc/" + pid + "/status"); strings.Contains(string(status), "State:\tZ") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the hook's child %s is still running", pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
