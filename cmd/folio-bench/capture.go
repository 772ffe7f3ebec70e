package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/folio-archive/folio/fixtures"
	"github.com/folio-archive/folio/plugins"
)

func init() {
	suites = append(suites, Suite{
		Name: "capture",
		Doc:  "add of 20 fixture pages with every built-in plugin, beside plain Chromium screenshots and single-file-cli",
		Run:  runCapture,
	})
}

// capturePages is how many fixture pages the suite captures.
const capturePages = 20

// runCapture measures `folio add` of 20 pages of the fixture site, served
// on loopback, with all built-in plugins at --parallel 1 and 4, beside, in
// the same run:
//
//   - one `chromium --headless --screenshot` process per page (the goal:
//     folio's time per page with every plugin ≤ 1.5× it);
//   - one single-file-cli process per page, pointed at the same Chromium
//     (goal: folio faster than it alone), when it is installed
//     (npm install -g single-file-cli).
//
// Every repetition of folio starts from an empty collection.
func runCapture(b *B) error {
	chromium, err := chromiumBinary()
	if err != nil {
		return err
	}
	srv, err := fixtures.Start()
	if err != nil {
		return err
	}
	defer srv.Close()
	urls := pageURLs(srv, "copy")
	out := filepath.Join(b.Work, "capture-out")
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	defer os.RemoveAll(out)
	perPage := func(m Measure) float64 { return m.Wall.Seconds() / capturePages }

	flags := []string{"--headless", "--disable-gpu", "--hide-scrollbars", "--no-first-run", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--disable-extensions", "--disable-dev-shm-usage", "--window-size=1440,2000"}
	if os.Geteuid() == 0 {
		flags = append(flags, "--no-sandbox")
	}
	// Chromium now and then crashes on its way out after writing the
	// screenshot; a page counts when its file is there.
	retries := filepath.Join(b.Work, "baseline-retries")
	var shots strings.Builder
	shots.WriteString("set -e\n")
	for i, u := range urls {
		shot := filepath.Join(out, fmt.Sprintf("shot-%d.png", i))
		shots.WriteString(countsWhenWritten(fmt.Sprintf("%q %s --user-data-dir=%q --screenshot=%q %q", chromium,
			strings.Join(flags, " "), filepath.Join(out, "profile"), shot, u), shot, retries))
	}
	screenshots, err := b.script("chromium-screenshots.sh", shots.String())
	if err != nil {
		return err
	}
	bare, err := b.Repeat(clean(out), screenshots)
	if err != nil {
		return fmt.Errorf("chromium --screenshot: %w", err)
	}

	var sf Measure
	sfErr := errors.New("single-file-cli is not installed (npm install -g single-file-cli)")
	if exe, err := exec.LookPath("single-file"); err == nil {
		var pages strings.Builder
		pages.WriteString("set -e\n")
		for i, u := range urls {
			page := filepath.Join(out, fmt.Sprintf("page-%d.html", i))
			pages.WriteString(countsWhenWritten(fmt.Sprintf("%q --browser-executable-path=%q --browser-args=%q %q %q", exe, chromium,
				`["--no-sandbox","--disable-background-networking","--disable-component-update","--disable-sync","--no-first-run"]`,
				u, page), page, retries))
		}
		singlefile, err := b.script("single-file-cli.sh", pages.String())
		if err != nil {
			return err
		}
		sf, sfErr = b.Repeat(clean(out), singlefile)
	}

	retried := ""
	if log, err := os.ReadFile(retries); err == nil {
		retried = fmt.Sprintf("; baseline pages retried after a Chromium crash: %d", bytes.Count(log, []byte("\n")))
	}

	data := filepath.Join(b.Work, "capture-data")
	defer os.RemoveAll(data)
	fresh := func() error {
		if err := os.RemoveAll(data); err != nil {
			return err
		}
		return b.FolioCmd(data, "init", "-q").Run()
	}
	for _, parallel := range []int{1, 4} {
		m, err := b.Repeat(fresh, func() *exec.Cmd {
			args := append([]string{"add", "-q", "--parallel", fmt.Sprint(parallel), "--per-domain", "0"}, urls...)
			return b.FolioCmd(data, args...)
		})
		work := fmt.Sprintf("add, %d pages, all built-in plugins, --parallel %d (per page)", capturePages, parallel)
		row := Row{Work: work, Value: perPage(m), Err: err, Goal: Goal{MaxRatio: 1.5},
			Baseline: perPage(bare), BaselineName: "chromium --headless --screenshot per page"}
		if err == nil {
			row.Note = fmt.Sprintf("%.2f pages/s, peak RSS %.0f MB (folio)", capturePages/m.Wall.Seconds(), float64(m.MaxRSS)/1e6) + retried
		}
		b.Add(row)
		if sfErr != nil {
			b.Fail(fmt.Sprintf("add --parallel %d beside single-file-cli", parallel), sfErr)
			continue
		}
		b.Add(Row{Work: fmt.Sprintf("add --parallel %d beside single-file-cli (per page)", parallel), Value: perPage(m), Err: err,
			Goal: Goal{MaxRatio: 1}, Baseline: perPage(sf), BaselineName: "single-file-cli per page", Note: strings.TrimPrefix(retried, "; ")})
	}
	return nil
}

// pageURLs is capturePages distinct URLs over the fixture site's pages
// (a query named key tells them apart), so each is a capture of its own.
func pageURLs(srv *fixtures.Server, key string) []string {
	urls := make([]string, capturePages)
	for i := range urls {
		urls[i] = fmt.Sprintf("%s%s?%s=%d", srv.URL, fixtures.Pages[i%len(fixtures.Pages)], key, i)
	}
	return urls
}

// chromiumBinary is the Chromium folio would drive, as the environment
// (CHROME_BINARY) says.
func chromiumBinary() (string, error) {
	cfg, err := plugins.LoadConfig("/nonexistent", os.Environ())
	if err != nil {
		return "", err
	}
	if exe := plugins.FindChromium(cfg); exe != "" {
		return exe, nil
	}
	return "", plugins.ErrNoBrowser
}

// script writes a shell script to the scratch directory and returns the
// command that runs it (named by its file in errors and logs).
func (b *B) script(name, body string) (func() *exec.Cmd, error) {
	p := filepath.Join(b.Work, name)
	if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
		return nil, err
	}
	return func() *exec.Cmd { return exec.CommandContext(b.Ctx, "sh", p) }, nil
}

// countsWhenWritten is a script line that runs command and fails only when
// it failed and left file empty. Chromium now and then segfaults before it
// writes anything; such a page is tried once more (which can only make the
// baseline slower, so the note says when it happened), and a second
// failure shows the command's output.
// Each retry appends a line to the file retries.
func countsWhenWritten(command, file, retries string) string {
	run := fmt.Sprintf("%s >%q.log 2>&1 || test -s %q", command, file, file)
	return fmt.Sprintf("%s || { echo %q >>%q; %s; } || { tail -c 2000 %q.log >&2; exit 1; }\n",
		run, filepath.Base(file), retries, run, file)
}

// clean empties dir before a baseline repetition.
func clean(dir string) func() error {
	return func() error {
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
		return os.MkdirAll(dir, 0o755)
	}
}
