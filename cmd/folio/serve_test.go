package main_test

import (
	"bufio"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// exportServe starts a real 'folio serve' process on a free loopback port
// and returns its base URL and a stop function that interrupts it (as
// Ctrl-C does) and returns its exit code.
func exportServe(t *testing.T, args ...string) (string, func() (int, string)) {
	t.Helper()
	cmd := exec.Command(folioBin(t), append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			lines <- sc.Text()
		}
		io.Copy(io.Discard, stdout)
	}()
	var base string
	select {
	case base = <-lines:
	case <-time.After(15 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("folio serve printed no URL; stderr: %s", stderr.String())
	}
	stopped := false
	stop := func() (int, string) {
		if stopped {
			return 0, ""
		}
		stopped = true
		cmd.Process.Signal(syscall.SIGINT)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			t.Errorf("folio serve did not stop on SIGINT")
			<-done
		}
		return cmd.ProcessState.ExitCode(), stderr.String()
	}
	t.Cleanup(func() { stop() })
	return base, stop
}

func TestServeProcess(t *testing.T) {
	needle := "Needle unicorn 🦄 served"
	dir, e := exportCollection(t, 45, needle)
	if _, stderr, code := runFolio(t, "-D", dir, "export", "--page-size", "10", "--gzip"); code != 0 {
		t.Fatalf("export: %s", stderr)
	}
	base, stop := exportServe(t, dir)
	if !strings.HasPrefix(base, "http://127.0.0.1:") {
		t.Fatalf("base URL %q", base)
	}
	// A byte range of an archived file.
	req, _ := http.NewRequest("GET", base+e.Dir+"/singlefile/singlefile.html", nil)
	req.Header.Set("Range", "bytes=0-14")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusPartialContent || string(body) != "<!DOCTYPE html>" {
		t.Errorf("range: %d %q", resp.StatusCode, body)
	}
	if resp.Header.Get("Content-Security-Policy") != "sandbox" || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("archived file headers: %v", resp.Header)
	}
	for _, p := range []string{".folio/catalog.sqlite3", ".folio/lock", "sources/", "logs/", "archive/"} {
		resp, err := http.Get(base + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", p, resp.StatusCode)
		}
	}
	// Ctrl-C: one calm line after the banner, exit 130.
	code, errOut := stop()
	if code != 130 {
		t.Errorf("serve exit code after SIGINT: %d, want 130 (interrupted)", code)
	}
	if lines := strings.Split(strings.TrimSuffix(errOut, "\n"), "\n"); lines[len(lines)-1] != "stopped" || strings.Contains(errOut, "folio:") {
		t.Errorf("serve on SIGINT wrote:\n%s", errOut)
	}
}

func TestServeInBrowser(t *testing.T) {
	ctx := exportBrowser(t)
	needle := "Needle unicorn 🦄 over http"
	dir, _ := exportCollection(t, 45, needle)
	out := filepath.Join(t.TempDir(), "public")
	if _, stderr, code := runFolio(t, "-D", dir, "export", "--page-size", "10", "--out", out, "--gzip"); code != 0 {
		t.Fatalf("export: %s", stderr)
	}
	base, _ := exportServe(t, out)
	exportBrowse(t, ctx, base+"index.html", needle)
}
