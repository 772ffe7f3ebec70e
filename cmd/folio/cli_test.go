package main_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// folioBin builds the folio binary once per test process, beside the test
// binary (in go test's work dir, removed when the run ends).
func folioBin(t testing.TB) string {
	t.Helper()
	binOnce.Do(func() {
		exe, err := os.Executable()
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(filepath.Dir(exe), "folio-test-bin")
		out, err := exec.Command("go", "build", "-o", binPath, "github.com/folio-archive/folio/cmd/folio").CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// runFolio runs the built binary with args and returns stdout, stderr and
// the exit code.
func runFolio(t testing.TB, args ...string) (string, string, int) {
	t.Helper()
	return runFolioEnv(t, nil, args...)
}

// runFolioEnv is runFolio with extra environment variables.
func runFolioEnv(t testing.TB, env []string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(folioBin(t), args...)
	cmd.Env = append(append(os.Environ(), "FOLIO_DATA_DIR="), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return out.String(), errb.String(), ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return out.String(), errb.String(), 0
}

func TestEveryCommandHasHelp(t *testing.T) {
	out, _, code := runFolio(t, "--help")
	if code != 0 {
		t.Fatalf("folio --help exited %d", code)
	}
	for _, name := range []string{"init", "reindex", "list", "status", "update", "export", "serve", "watch", "search", "verify", "remove", "demo", "version", "completion"} {
		if !strings.Contains(out, "\n  "+name+" ") {
			t.Errorf("folio --help does not list %s", name)
		}
		help, _, code := runFolio(t, name, "--help")
		if code != 0 || !strings.Contains(help, "Usage:") || !strings.Contains(help, "folio "+name) {
			t.Errorf("folio %s --help: exit %d\n%s", name, code, help)
		}
	}
}

func TestUsageErrorsExit2(t *testing.T) {
	for _, args := range [][]string{
		{"no-such-command"},
		{"init", "--no-such-flag"},
		{"init", "one-dir", "another-dir"},
		{"version", "--short=maybe"},
		{"demo", "unexpected"},
		{"update", "--migrate-only", "--resume", "notatimestamp"},
	} {
		_, stderr, code := runFolio(t, args...)
		if code != 2 {
			t.Errorf("folio %v: exit %d, want 2\n%s", args, code, stderr)
		}
		lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
		if len(lines) != 2 || !strings.HasPrefix(lines[0], "folio: ") || !regexp.MustCompile(`^run 'folio( [a-z]+)? --help' for usage$`).MatchString(lines[1]) {
			t.Errorf("folio %v: a usage error prints one error line, then where to find the usage:\n%s", args, stderr)
		}
	}
}

func TestInitCommand(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "coll")
	out, _, code := runFolio(t, "init", "-D", dir)
	if code != 0 || strings.TrimSpace(out) != dir {
		t.Fatalf("init: exit %d, stdout %q", code, out)
	}
	for _, p := range []string{"archive/users", "sources", "logs", ".folio"} {
		if st, err := os.Stat(filepath.Join(dir, p)); err != nil || !st.IsDir() {
			t.Errorf("init did not create %s", p)
		}
	}
	if _, stderr, code := runFolio(t, "init", "-D", dir); code != 0 || !strings.Contains(stderr, "already a collection") {
		t.Errorf("second init: exit %d\n%s", code, stderr)
	}

	foreign := t.TempDir()
	os.WriteFile(filepath.Join(foreign, "notes.txt"), []byte("mine"), 0o644)
	_, stderr, code := runFolio(t, "init", "-D", foreign)
	if code != 1 || !strings.Contains(stderr, "notes.txt") || !strings.Contains(stderr, "--force") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("init in a foreign dir: exit %d, want 1 with one line naming the file and --force:\n%s", code, stderr)
	}
	if entries, _ := os.ReadDir(foreign); len(entries) != 1 {
		t.Errorf("a refused init changed the folder: %v", entries)
	}
	if _, _, code := runFolio(t, "init", "--force", "-D", foreign); code != 0 {
		t.Errorf("init --force: exit %d", code)
	}
}

func TestCommandsOutsideACollection(t *testing.T) {
	empty := t.TempDir()
	for _, cmd := range []string{"reindex", "list", "status", "export"} {
		_, stderr, code := runFolio(t, cmd, "-D", empty)
		if code != 1 || !strings.Contains(stderr, "not a folio or ArchiveBox collection") {
			t.Errorf("folio %s outside a collection: exit %d\n%s", cmd, code, stderr)
		}
	}
	if entries, _ := os.ReadDir(empty); len(entries) != 0 {
		t.Errorf("commands outside a collection created %v", entries)
	}
}

func TestVersionCommand(t *testing.T) {
	t.Parallel() // its own build of folio takes long on a busy machine: let other tests run meanwhile
	out, _, code := runFolio(t, "version", "-D", "/somewhere")
	if code != 0 {
		t.Fatalf("version exited %d", code)
	}
	for _, want := range []string{"folio ", "go go1.", "chromium ", "data dir /somewhere"} {
		if !strings.Contains(out, want) {
			t.Errorf("version output lacks %q:\n%s", want, out)
		}
	}
	short, _, _ := runFolio(t, "version", "--short")
	if strings.Count(short, "\n") != 1 || strings.Contains(short, " ") {
		t.Errorf("version --short: %q", short)
	}
	// make build stamps the version it passes in.
	stamped := filepath.Join(t.TempDir(), "folio")
	if out, err := exec.Command("go", "build", "-ldflags", "-X main.version=v1.2.3-stamped", "-o", stamped, "github.com/folio-archive/folio/cmd/folio").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	if out, err := exec.Command(stamped, "version", "--short").Output(); err != nil || string(out) != "v1.2.3-stamped\n" {
		t.Errorf("stamped version --short: %q, %v", out, err)
	}
}

func TestManPages(t *testing.T) {
	t.Parallel() // its own build of folio takes long on a busy machine
	dir := t.TempDir()
	// The generator is built only with -tags man, as make man builds it.
	if _, errOut, code := runFolio(t, "gen", "man", dir); code == 0 || !strings.Contains(errOut, "unknown command") {
		t.Errorf("gen man without -tags man: exit %d: %s", code, errOut)
	}
	withMan := filepath.Join(t.TempDir(), "folio-man")
	if out, err := exec.Command("go", "build", "-tags", "man", "-o", withMan, "github.com/folio-archive/folio/cmd/folio").CombinedOutput(); err != nil {
		t.Fatalf("go build -tags man: %v\n%s", err, out)
	}
	if out, err := exec.Command(withMan, "gen", "man", dir).CombinedOutput(); err != nil {
		t.Fatalf("gen man: %v: %s", err, out)
	}
	page, err := os.ReadFile(filepath.Join(dir, "folio-verify.1"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(page), `folio verify [PATTERN...] [flags]`) || !strings.Contains(string(page), `\fB--write-hashes\fP`) {
		t.Errorf("folio-verify.1:\n%s", page)
	}
	if out, _, _ := runFolio(t, "--help"); strings.Contains(out, "gen ") {
		t.Errorf("folio --help lists the hidden gen command:\n%s", out)
	}
}

func TestCompletion(t *testing.T) {
	out, _, code := runFolio(t, "completion", "bash")
	if code != 0 || !strings.Contains(out, "__start_folio") {
		t.Fatalf("completion bash: exit %d", code)
	}
}

func TestDemoCommand(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo")
	out, stderr, code := runFolio(t, "demo", "--out", dir)
	if code != 0 {
		t.Fatalf("demo exited %d\n%s\n%s", code, out, stderr)
	}
	for _, want := range []string{"Phase 1: Draining old archive/ directories", "Migration complete"} {
		if !strings.Contains(stderr+out, want) {
			t.Errorf("demo output lacks %q", want)
		}
	}
	if !strings.Contains(out, "file://"+dir+"/index.html") {
		t.Errorf("demo must print the file:// URL of its export:\n%s", out)
	}
	// The commands it names are ones that run: the test's binary is not
	// on $PATH, so they name its path, and the table's command prints
	// those rows.
	bin := folioBin(t)
	for _, want := range []string{"\nor run: " + bin + " serve -D " + dir + "\n", "(all of them: " + bin + " list -D " + dir + " --csv bookmarked_at,title,url):\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output lacks %q:\n%s", want, out)
		}
	}
	checkDemoArchive(t, dir)
	csv, _, code := runFolio(t, "list", "-D", dir, "--csv", "bookmarked_at,title,url")
	if code != 0 || !strings.HasPrefix(csv, "bookmarked_at,title,url\r\n") {
		t.Errorf("the demo's table command: exit %d\n%s", code, csv)
	}
	// Its data reads like an archive; the hostile values stay in the tests.
	for _, bad := range []string{"<script", "onerror", "Page 1 ", "{{", "xss", "\\t"} {
		if strings.Contains(csv, bad) {
			t.Errorf("the demo's snapshots hold %q:\n%s", bad, csv)
		}
	}
	if !strings.Contains(csv, " - Wikipedia,https://en.wikipedia.org/wiki/") {
		t.Errorf("the demo's snapshots lack believable pages:\n%s", csv)
	}
	for _, p := range []string{"index.html", "index.jsonl", ".folio/catalog.sqlite3"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			t.Errorf("demo did not write %s", p)
		}
	}
	// The legacy folders were drained: only non-snapshot entries remain
	// directly under archive/.
	entries, _ := os.ReadDir(filepath.Join(dir, "archive"))
	for _, e := range entries {
		if name := e.Name(); name != "users" && name != "hello" && name != ".DS_Store" && !strings.HasPrefix(name, "2024") && !strings.HasPrefix(name, "13999999") {
			t.Errorf("archive/%s left after the demo's migration", name)
		}
	}
	// The demo lists what it exported; list agrees.
	list, _, code := runFolio(t, "list", "-D", dir)
	if code != 0 || strings.Count(list, "\n") < 50 {
		t.Errorf("list after demo: exit %d, %d lines", code, strings.Count(list, "\n"))
	}
	// It never builds over an existing folder.
	if _, stderr, code := runFolio(t, "demo", "--out", dir); code != 1 || !strings.Contains(stderr, "not empty") {
		t.Errorf("demo into a used folder: exit %d\n%s", code, stderr)
	}
}
