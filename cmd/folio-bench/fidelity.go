package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"text/tabwriter"

	"github.com/folio-archive/folio/fixtures"
)

func init() {
	suites = append(suites, Suite{
		Name: "fidelity",
		Doc:  "the fidelity pages through folio's singlefile and single-file-cli: pixels differing offline, sizes, capture times",
		Run:  runFidelity,
	})
}

// fidelityCapture is one page captured by one tool.
type fidelityCapture struct {
	file    string  // the saved page
	seconds float64 // the capture's wall time, browser start included
	size    int64
	diff    float64 // fraction of pixels differing from the live page, offline
	err     error
}

// runFidelity captures every fixture fidelity page (fixtures.FidelityPages,
// served on loopback) once with `folio add --plugins singlefile` into a
// fresh collection and once with single-file-cli (npm install -g
// single-file-cli), both driving the same Chromium at 800×600; then, with
// the server closed, screenshots each capture from file:// and compares it
// with the live page. It prints one table, a row per page (folio's
// difference, the goal ≤ 1 %; single-file-cli's, sizes and times in the
// note), and the time per page of folio beside single-file-cli's (goal:
// at most half), with how many pages each kept within 1 %. With -keep,
// the captures and the screenshots (fidelity/shots) stay in the scratch
// directory.
func runFidelity(b *B) error {
	chromium, err := chromiumBinary()
	if err != nil {
		return err
	}
	work := filepath.Join(b.Work, "fidelity")
	shots := filepath.Join(work, "shots")
	if err := os.RemoveAll(work); err != nil {
		return err
	}
	if err := os.MkdirAll(shots, 0o755); err != nil {
		return err
	}
	root := os.Geteuid() == 0
	ctx, stop, err := fixtures.StartShotBrowser(chromium, filepath.Join(work, "shot-profile"), root)
	if err != nil {
		return err
	}
	defer stop()
	srv, err := fixtures.Start()
	if err != nil {
		return err
	}
	defer srv.Close()
	sfExe, sfErr := exec.LookPath("single-file")
	if sfErr != nil {
		sfErr = errors.New("single-file-cli is not installed (npm install -g single-file-cli)")
	}
	sfArgs := `["--disable-background-networking","--disable-component-update","--disable-sync","--no-first-run","--hide-scrollbars"`
	if root {
		sfArgs += `,"--no-sandbox"`
	}
	sfArgs += "]"

	pages := fixtures.FidelityPages
	live := make([][]byte, len(pages))
	control := make([]float64, len(pages))
	folio := make([]fidelityCapture, len(pages))
	sf := make([]fidelityCapture, len(pages))
	retried := 0
	for i, p := range pages {
		u := p.URL(srv.URL)
		b.Logf("%s", u)
		if live[i], err = fixtures.ShootURL(ctx, u, p, true); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(shots, p.Name()+"-live.png"), live[i], 0o644); err != nil {
			return err
		}
		again, err := fixtures.ShootURL(ctx, u, p, true)
		if err != nil {
			return err
		}
		if control[i], err = fixtures.PixelDiff(live[i], again); err != nil {
			return err
		}
		folio[i] = b.folioCapture(filepath.Join(work, fmt.Sprintf("folio-%d", i)), u)
		if sfErr != nil {
			sf[i].err = sfErr
			continue
		}
		// single-file-cli now and then exits 0 having written nothing
		// (more often on a loaded machine); such a page is tried once more
		// and the note says so. Its output goes to a log beside the page.
		sf[i].file = filepath.Join(work, fmt.Sprintf("single-file-%d.html", i))
		for range 2 {
			sf[i].run(b, exec.CommandContext(b.Ctx, "sh", "-c", fmt.Sprintf(`"$0" "$@" >%q 2>&1`, sf[i].file+".log"), sfExe, "--browser-executable-path="+chromium,
				"--browser-args="+sfArgs, fmt.Sprintf("--browser-width=%d", fixtures.ShotWidth),
				fmt.Sprintf("--browser-height=%d", fixtures.ShotHeight), u, sf[i].file))
			if _, err := os.Stat(sf[i].file); err == nil || sf[i].err != nil {
				break
			}
			retried++
		}
	}
	srv.Close() // the captures are shown with no server to ask

	var within, captured [2]int
	var seconds, size [2]float64
	tw := tabwriter.NewWriter(b.log, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "page\tfolio diff\tsingle-file diff\tfolio size\tsingle-file size\tfolio s\tsingle-file s\tlive control\t")
	for i, p := range pages {
		for k, c := range []*fidelityCapture{&folio[i], &sf[i]} {
			c.compare(ctx, p, live[i], filepath.Join(shots, p.Name()+"-"+[]string{"folio", "single-file"}[k]+".png"))
			if c.err == nil {
				seconds[k] += c.seconds
				captured[k]++
				size[k] += float64(c.size)
				if c.diff <= 0.01 {
					within[k]++
				}
			}
		}
		if sf[i].err != nil && sf[i].err != sfErr {
			b.Logf("%s: single-file-cli: %v", p.Name(), sf[i].err)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.2f %%\t\n", p.Name(), folio[i].diffText(), sf[i].diffText(),
			folio[i].sizeText(), sf[i].sizeText(), folio[i].secondsText(), sf[i].secondsText(), control[i]*100)
		row := Row{Work: p.Name() + ": pixels differing offline", Unit: Percent, Goal: Goal{Max: 1}, Err: folio[i].err,
			Value: folio[i].diff * 100,
			Note: fmt.Sprintf("single-file-cli %s; size %s vs %s; capture %s vs %s", sf[i].diffText(),
				folio[i].sizeText(), sf[i].sizeText(), folio[i].secondsText(), sf[i].secondsText())}
		if control[i] > 0.001 {
			row.Note += fmt.Sprintf("; the live page itself differs by %.2f %% between two loads", control[i]*100)
		}
		b.Add(row)
	}
	tw.Flush()
	perPage := func(k int) float64 { return seconds[k] / float64(max(captured[k], 1)) }
	note := fmt.Sprintf("within 1 %%: folio %d/%d, single-file-cli %d/%d; captured: %d and %d; %.1f MB vs %.1f MB in all",
		within[0], len(pages), within[1], len(pages), captured[0], captured[1], size[0]/1e6, size[1]/1e6)
	if retried > 0 {
		note += fmt.Sprintf("; single-file-cli retried %d times after writing nothing", retried)
	}
	b.Logf("%s", note)
	if sfErr != nil {
		b.Add(Row{Work: "singlefile capture per page", Value: perPage(0), Note: note})
		b.Fail("singlefile capture beside single-file-cli", sfErr)
		return nil
	}
	b.Add(Row{Work: "singlefile capture per page beside single-file-cli", Value: perPage(0), Goal: Goal{MaxRatio: 0.5},
		Baseline: perPage(1), BaselineName: "single-file-cli", Note: note})
	return nil
}

// folioCapture runs `folio add --plugins singlefile url` into a fresh
// collection in dir, with an 800×600 window.
func (b *B) folioCapture(dir, url string) fidelityCapture {
	var c fidelityCapture
	if err := b.FolioCmd(dir, "init", "-q").Run(); err != nil {
		c.err = fmt.Errorf("folio init: %w", err)
		return c
	}
	conf := fmt.Sprintf("[SERVER_CONFIG]\nRESOLUTION = %d,%d\n", fixtures.ShotWidth, fixtures.ShotHeight)
	if err := os.WriteFile(filepath.Join(dir, "ArchiveBox.conf"), []byte(conf), 0o644); err != nil {
		c.err = err
		return c
	}
	if c.run(b, b.FolioCmd(dir, "add", "-q", "--plugins", "singlefile", url)); c.err != nil {
		return c
	}
	files, _ := filepath.Glob(filepath.Join(dir, "archive/users/*/snapshots/*/*/*/singlefile/singlefile.html"))
	if len(files) != 1 {
		c.err = fmt.Errorf("folio add saved %d singlefile.html files, want 1", len(files))
		return c
	}
	c.file = files[0]
	return c
}

// run measures cmd, which writes c.file.
func (c *fidelityCapture) run(b *B, cmd *exec.Cmd) {
	m, err := b.Run(cmd)
	c.seconds, c.err = m.Wall.Seconds(), err
}

// compare screenshots the capture offline (into the file shot) and
// measures how far it is from the live page's screenshot.
func (c *fidelityCapture) compare(ctx context.Context, p fixtures.FidelityPage, live []byte, shot string) {
	if c.err != nil {
		return
	}
	info, err := os.Stat(c.file)
	if err != nil {
		c.err = fmt.Errorf("the capture wrote no file: %w", err)
		if log, _ := os.ReadFile(c.file + ".log"); len(log) > 0 {
			c.err = fmt.Errorf("the capture wrote no file; its output ends: %.300s", log[max(0, len(log)-300):])
		}
		return
	}
	c.size = info.Size()
	png, err := fixtures.ShootURL(ctx, "file://"+c.file, p, false)
	if err != nil {
		c.err = err
		return
	}
	if c.err = os.WriteFile(shot, png, 0o644); c.err == nil {
		c.diff, c.err = fixtures.PixelDiff(live, png)
	}
}

func (c *fidelityCapture) diffText() string {
	if c.err != nil {
		return "error"
	}
	return fmt.Sprintf("%.2f %%", c.diff*100)
}

func (c *fidelityCapture) sizeText() string {
	if c.err != nil {
		return "-"
	}
	return fmt.Sprintf("%.0f kB", float64(c.size)/1e3)
}

func (c *fidelityCapture) secondsText() string {
	if c.err != nil {
		return "-"
	}
	return fmt.Sprintf("%.2f s", c.seconds)
}
