package main_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/folio-archive/folio/export"
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

// serveGet fetches base+p without following redirects or decoding gzip.
func serveGet(t *testing.T, url string, hdr ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	c := &http.Client{Transport: &http.Transport{DisableCompression: true},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

// writeFiles writes name -> content under dir, creating folders.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestServeRefusesSecretsBehindSymlinks links a snapshot folder's entries
// to the collection's private files: the name rules hold for where a link
// leads, not only for the URL, and for the .gz sibling and the folder
// index too.
func TestServeRefusesSecretsBehindSymlinks(t *testing.T) {
	dir, e := exportCollection(t, 5, "Needle")
	if _, stderr, code := runFolio(t, "-D", dir, "export", "--gzip"); code != 0 {
		t.Fatalf("export: %s", stderr)
	}
	secrets := map[string]string{
		"ArchiveBox.conf":      "SECRET_KEY=conf-secret-1\n",
		"index.sqlite3":        "SQLite format 3\x00db-secret-2",
		"sources/list.txt":     "source-secret-3",
		"sources/index.html":   "source-secret-4",
		"logs/errors.log":      "log-secret-5",
		"logs/index.html":      "log-secret-6",
		".folio/notes.txt":     "state-secret-7",
		"invalid/x/note.txt":   "invalid-secret-8",
		"invalid/x/index.html": "invalid-secret-9",
	}
	writeFiles(t, dir, secrets)
	writeFiles(t, dir, map[string]string{"sources/list.txt.gz": gzipped(t, "source-secret-10")})
	snap := filepath.Join(dir, filepath.FromSlash(e.Dir))
	writeFiles(t, snap, map[string]string{"note.txt": "plain note"})
	up := strings.Repeat("../", strings.Count(e.Dir, "/")+1)
	for name, target := range map[string]string{
		"conf.txt": up + "ArchiveBox.conf", "db.txt": up + "index.sqlite3",
		"catalog.txt": up + ".folio/catalog.sqlite3", "src": up + "sources", "lg": up + "logs",
		"state": up + ".folio", "inv": up + "invalid/x", "top": up, "abs.txt": filepath.Join(dir, "ArchiveBox.conf"),
		"note.txt.gz": up + "sources/list.txt.gz", "alias.html": "singlefile/singlefile.html",
		"hop": "lg/../state",
	} {
		if err := os.Symlink(target, filepath.Join(snap, name)); err != nil {
			t.Fatal(err)
		}
	}
	base, _ := exportServe(t, dir)
	base += e.Dir + "/"
	for _, p := range []string{
		"conf.txt", "db.txt", "catalog.txt", "src/list.txt", "src/list.txt.gz", "src/", "lg/errors.log", "lg/",
		"state/notes.txt", "state/", "inv/note.txt", "inv/", "top/ArchiveBox.conf", "abs.txt", "hop/notes.txt",
		"top/sources/list.txt", "top/invalid/x/",
	} {
		resp, body := serveGet(t, base+p, "Accept-Encoding", "gzip")
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", p, resp.StatusCode)
		}
		for _, s := range append(mapValues(secrets), "SQLite format 3", "\x1f\x8b") {
			if strings.Contains(body, s) {
				t.Errorf("%s: body holds %q", p, s)
			}
		}
	}
	// The .gz sibling that leads to sources/ is not used; the file itself is.
	resp, body := serveGet(t, base+"note.txt", "Accept-Encoding", "gzip")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Encoding") != "" || body != "plain note" {
		t.Errorf("note.txt: %d %q %q", resp.StatusCode, resp.Header.Get("Content-Encoding"), body)
	}
	// A link that stays among the archived files still works.
	resp, body = serveGet(t, base+"alias.html")
	if resp.StatusCode != 200 || !strings.HasPrefix(body, "<!DOCTYPE html>") || resp.Header.Get("Content-Security-Policy") != "sandbox" {
		t.Errorf("alias.html: %d %v", resp.StatusCode, resp.Header)
	}
	if resp, _ := serveGet(t, base+"top/index.html"); resp.StatusCode != 200 {
		t.Errorf("top/index.html: %d", resp.StatusCode)
	}
}

func gzipped(t *testing.T, s string) string {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write([]byte(s)); err != nil || zw.Close() != nil {
		t.Fatal("gzip")
	}
	return b.String()
}

func mapValues(m map[string]string) []string {
	var out []string
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// TestServeGivesFolioCSPOnlyToExportedPages serves index.html files folio
// did not write in folders shaped like snapshots: they get the sandbox,
// and the pages the export wrote (as its root index.jsonl lists them,
// reread when it changes) get folio's CSP.
func TestServeGivesFolioCSPOnlyToExportedPages(t *testing.T) {
	dir, e := exportCollection(t, 5, "Needle")
	if _, stderr, code := runFolio(t, "-D", dir, "export", "-f", "exact", e.URL); code != 0 {
		t.Fatalf("export: %s", stderr)
	}
	// A catalogued snapshot the first export left out.
	dirs, _ := filepath.Glob(filepath.Join(dir, "archive", "users", "*", "snapshots", "*", "*", "*"))
	later := ""
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "index.html")); os.IsNotExist(err) {
			later, _ = filepath.Rel(dir, d)
			break
		}
	}
	if later == "" {
		t.Fatal("every snapshot was exported")
	}
	hostile := `<!DOCTYPE html><script src="evil.js"></script>`
	fake := "archive/users/admin/snapshots/20200101/evil.example/0123456789abcdef0123456789abcdef"
	writeFiles(t, dir, map[string]string{
		fake + "/index.html": hostile, fake + "/evil.js": "document.title='owned'",
		"archive/1600000000.123/index.html": hostile, later + "/index.html": hostile,
		e.Dir + "/index.html.gz": gzipped(t, hostile),
	})
	base, _ := exportServe(t, dir)
	// A .gz beside the page the export wrote is not the page: not served.
	if resp, body := serveGet(t, base+e.Dir+"/index.html", "Accept-Encoding", "gzip"); resp.Header.Get("Content-Encoding") != "" || strings.Contains(body, "evil.js") {
		t.Errorf("%s/index.html.gz the export did not write was served: %v", e.Dir, resp.Header)
	}
	csp := func(p string) string {
		t.Helper()
		resp, _ := serveGet(t, base+p)
		if resp.StatusCode != 200 {
			t.Errorf("%s: %d", p, resp.StatusCode)
		}
		return resp.Header.Get("Content-Security-Policy")
	}
	for _, p := range []string{"", "index.html", e.Dir + "/index.html", e.Dir + "/"} {
		if got := csp(p); got != export.CSP {
			t.Errorf("%s: CSP %q, want folio's", p, got)
		}
	}
	for _, p := range []string{fake + "/index.html", fake + "/", "archive/1600000000.123/index.html", later + "/index.html"} {
		if got := csp(p); got != "sandbox" {
			t.Errorf("%s: CSP %q, want sandbox", p, got)
		}
	}
	// Exporting everything writes the left-out page: the server sees the
	// new manifest and gives it folio's CSP.
	if _, stderr, code := runFolio(t, "-D", dir, "export"); code != 0 {
		t.Fatalf("export: %s", stderr)
	}
	if got := csp(later + "/index.html"); got != export.CSP {
		t.Errorf("%s after the export: CSP %q, want folio's", later, got)
	}
	if got := csp(fake + "/index.html"); got != "sandbox" {
		t.Errorf("%s after the export: CSP %q, want sandbox", fake, got)
	}

	// The same in an --out export.
	out := filepath.Join(t.TempDir(), "public")
	if _, stderr, code := runFolio(t, "-D", dir, "export", "--out", out, "--gzip"); code != 0 {
		t.Fatalf("export --out: %s", stderr)
	}
	writeFiles(t, out, map[string]string{fake + "/index.html": hostile, fake + "/evil.js": "document.title='owned'"})
	base, _ = exportServe(t, out)
	if got := csp(e.Dir + "/index.html"); got != export.CSP {
		t.Errorf("--out %s: CSP %q, want folio's", e.Dir, got)
	}
	if resp, _ := serveGet(t, base+e.Dir+"/index.html", "Accept-Encoding", "gzip"); resp.Header.Get("Content-Encoding") != "gzip" {
		t.Errorf("--out %s: the export's .gz sibling not served: %v", e.Dir, resp.Header)
	}
	if got := csp(fake + "/index.html"); got != "sandbox" {
		t.Errorf("--out %s: CSP %q, want sandbox", fake, got)
	}
}

// rawGet sends one GET on a new connection and returns the connection
// and a reader of its responses. The connection's receive buffer is
// small, so a reader that stops reading stalls the server's writes soon.
func rawGet(t *testing.T, base, p string) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimSuffix(strings.TrimPrefix(base, "http://"), "/"))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.(*net.TCPConn).SetReadBuffer(64 << 10); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := fmt.Fprintf(c, "GET /%s HTTP/1.1\r\nHost: folio\r\n\r\n", p); err != nil {
		t.Fatal(err)
	}
	return c, bufio.NewReader(c)
}

// readResponse reads one whole response from br, waiting at most wait.
func readResponse(c net.Conn, br *bufio.Reader, wait time.Duration) (int, int64, error) {
	c.SetReadDeadline(time.Now().Add(wait))
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return 0, 0, err
	}
	n, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, n, err
}

// TestServeClosesIdleAndStalledConnections holds connections open
// against a real 'folio serve' with short timeouts and a small cap:
// connections beyond the cap wait, idle and stalled ones are closed and
// free their place, and a slow download that keeps reading is not cut.
// Bounds on waiting are generous; only the order of events is asserted.
func TestServeClosesIdleAndStalledConnections(t *testing.T) {
	dir, e := exportCollection(t, 5, "Needle")
	if _, stderr, code := runFolio(t, "-D", dir, "export"); code != 0 {
		t.Fatalf("export: %s", stderr)
	}
	const size = 64 << 20 // more than socket buffers hold
	big := e.Dir + "/media/big.bin"
	p := filepath.Join(dir, filepath.FromSlash(big))
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, nil, 0o644); err != nil || os.Truncate(p, size) != nil {
		t.Fatal("write big.bin")
	}
	const limit = 3
	for _, bad := range [][]string{{"--max-connections", "0"}, {"--write-timeout", "0s"}, {"--idle-timeout", "-1s"}, {"--read-timeout", "0"}} {
		if _, stderr, code := runFolio(t, append([]string{"serve", dir}, bad...)...); code != 2 || !strings.Contains(stderr, bad[0]) {
			t.Errorf("serve %s: exit %d, %s", strings.Join(bad, " "), code, stderr)
		}
	}

	type conn struct {
		c  net.Conn
		br *bufio.Reader
	}
	// hold opens n connections that each get index.html and stay open.
	hold := func(base string, n int) []conn {
		var held []conn
		for i := 0; i < n; i++ {
			c, br := rawGet(t, base, "index.html")
			held = append(held, conn{c, br})
		}
		for i, h := range held {
			if code, _, err := readResponse(h.c, h.br, 30*time.Second); code != 200 {
				t.Fatalf("connection %d: %d %v", i, code, err)
			}
		}
		return held
	}

	// Short idle timeout: kept-alive connections are closed, each
	// freeing its place for one waiting past the cap.
	base, _ := exportServe(t, dir, "--max-connections", "3", "--idle-timeout", "1s")
	for i, k := range hold(base, 3*limit) { // three rounds of the cap
		k.c.SetReadDeadline(time.Now().Add(30 * time.Second))
		if _, err := k.br.ReadByte(); err != io.EOF {
			t.Errorf("idle connection %d not closed by the server: %v", i, err)
		}
	}

	// Long idle timeout: the cap holds. With every place taken by an
	// idle connection, one more is not served until one of them closes.
	base, _ = exportServe(t, dir, "--max-connections", "3", "--idle-timeout", "10m", "--write-timeout", "2s")
	idle := hold(base, limit)
	c, br := rawGet(t, base, "index.html")
	if code, _, err := readResponse(c, br, time.Second); err == nil {
		t.Fatalf("connection %d past the cap served (%d)", limit+1, code)
	}
	idle[0].c.Close()
	if code, _, err := readResponse(c, br, 30*time.Second); code != 200 {
		t.Fatalf("waiting connection not served once a place freed: %d %v", code, err)
	}
	c.Close()
	for _, k := range idle[1:] {
		k.c.Close()
	}

	// Readers that stop reading a large file hold every place; new
	// connections, each keeping its place, are all served only once the
	// server gave up on every stalled reader.
	var stalled []conn
	for i := 0; i < limit; i++ {
		c, br := rawGet(t, base, big)
		c.SetReadDeadline(time.Now().Add(30 * time.Second))
		if line, err := br.ReadString('\n'); !strings.HasPrefix(line, "HTTP/1.1 200") {
			t.Fatalf("stalled reader %d: %q %v", i, line, err)
		}
		stalled = append(stalled, conn{c, br})
	}
	for _, k := range hold(base, limit) {
		k.c.Close()
	}
	for i, s := range stalled {
		s.c.SetReadDeadline(time.Now().Add(30 * time.Second))
		if n, _ := io.Copy(io.Discard, s.br); n >= size {
			t.Errorf("stalled reader %d got the whole file", i)
		}
		s.c.Close()
	}
	// A download that keeps reading, for longer than the write timeout
	// in all, is not cut.
	c, br = rawGet(t, base, big)
	c.SetReadDeadline(time.Now().Add(time.Minute))
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got int64
	buf := make([]byte, 2<<20)
	for got < size {
		n, err := io.ReadFull(resp.Body, buf)
		got += int64(n)
		if err != nil {
			break
		}
		time.Sleep(100 * time.Millisecond) // 32 pauses: more than the 2s write timeout in all
	}
	if got != size {
		t.Errorf("slow download cut at %d of %d bytes", got, size)
	}
}
