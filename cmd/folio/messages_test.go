package main_test

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// wantLine runs folio and wants the exit code and stderr's last line.
func wantLine(t *testing.T, env []string, code int, line string, args ...string) string {
	t.Helper()
	_, stderr, got := runFolioEnv(t, env, args...)
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	last := lines[len(lines)-1]
	if code == 2 && len(lines) > 1 {
		last = lines[len(lines)-2] // then the pointer to --help
	}
	if got != code || last != line {
		t.Errorf("folio %s: exit %d, stderr\n%s\nwant exit %d and the line\n%s", strings.Join(args, " "), got, stderr, code, line)
	}
	return stderr
}

// TestMessagesNameTheNextStep: errors a user meets in the first hour are
// one line naming the thing and what to do, not Go's error chains.
func TestMessagesNameTheNextStep(t *testing.T) {
	dir := newCollection(t)
	missing := filepath.Join(t.TempDir(), "missing")
	wantLine(t, nil, 1, fmt.Sprintf("folio: no collection at %s: the folder does not exist; run 'folio init -D %s' to create one, or pass --data-dir", missing, missing),
		"-D", missing, "list")
	wantLine(t, []string{"FOLIO_DATA_DIR=" + missing}, 1, fmt.Sprintf("folio: no collection at %s (set by $FOLIO_DATA_DIR): the folder does not exist; run 'folio init -D %s' to create one, or pass --data-dir", missing, missing),
		"status")
	wantLine(t, []string{"FOLIO_DATA_DIR=" + missing}, 1, fmt.Sprintf("folio: no collection at %s (set by $FOLIO_DATA_DIR): the folder does not exist; run 'folio init -D %s' to create one, or pass --data-dir", missing, missing),
		"serve")

	wantLine(t, nil, 2, `folio: unknown plugin "scrrenshot"; did you mean screenshot? (the plugins: dom, favicon, hashes, headers, htmltotext, pdf, readability, screenshot, singlefile, staticfile, title, warc)`,
		"-D", dir, "add", "--plugins", "scrrenshot", "http://127.0.0.1:9/")
	wantLine(t, nil, 2, fmt.Sprintf("folio: --bundle %s/site.tar.zst: there is no folder %s to write it in (create it first)", missing, missing),
		"-D", dir, "export", "--bundle", missing+"/site.tar.zst")

	// A host that cannot exist (a 64-letter label) fails in Go's own
	// resolver, before any query leaves the machine.
	host := strings.Repeat("a", 64) + ".example"
	stderr := wantLine(t, []string{"GODEBUG=netdns=go"}, 3, "folio: 1 snapshot failed (nothing archived): some items failed",
		"-D", dir, "add", "--plugins", "staticfile", "http://"+host+"/")
	want := fmt.Sprintf("warning: http://%s/: nothing archived (staticfile failed: fetch http://%[1]s/: no such host %[1]s: check the URL, or this machine's DNS) (", host)
	if !strings.Contains("\n"+stderr, "\n"+want) {
		t.Errorf("an unknown host: stderr\n%s\nwant a line beginning\n%s", stderr, want)
	}
	closed := freeAddr(t)
	stderr = wantLine(t, nil, 3, "folio: 1 snapshot failed (nothing archived): some items failed",
		"-D", dir, "add", "--plugins", "staticfile", "http://"+closed+"/")
	if want := fmt.Sprintf("(staticfile failed: fetch http://%s/: %[1]s refused the connection: nothing listens there)", closed); !strings.Contains(stderr, want) {
		t.Errorf("a closed port: stderr\n%s\nwant %s", stderr, want)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	addr := ln.Addr().(*net.TCPAddr)
	wantLine(t, nil, 1, fmt.Sprintf("folio: %s is in use by another program: stop it, or choose another address with --addr 127.0.0.1:%d", addr, addr.Port+1),
		"-D", dir, "serve", "--addr", addr.String())
}

// freeAddr is a loopback address nothing listens on.
func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// TestInterruptIsOneLine: Ctrl-C in the middle of a capture ends with
// "interrupted", not "context canceled", and exit 130.
func TestInterruptIsOneLine(t *testing.T) {
	dir := newCollection(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() { // a server that takes the request and never answers
		if c, err := ln.Accept(); err == nil {
			accepted <- c
		}
	}()
	cmd := exec.Command(folioBin(t), "-D", dir, "add", "--plugins", "staticfile", "http://"+ln.Addr().String()+"/slow")
	cmd.Env = append(os.Environ(), "FOLIO_DATA_DIR=")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := <-accepted
	defer c.Close()
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	code := 0
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	}
	lines := strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n")
	if last := lines[len(lines)-1]; code != 130 || last != "folio: interrupted: what finished is kept" {
		t.Errorf("add interrupted: exit %d, stderr\n%s\nwant exit 130 and the last line %q", code, stderr.String(), "folio: interrupted: what finished is kept")
	}
}
