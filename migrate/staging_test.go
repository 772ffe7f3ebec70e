package migrate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/folio-archive/folio/archive"
)

// destOf plans dir's migration with a fresh id source (the one the run
// will use gives the same ids) and returns where source is to go.
func destOf(t *testing.T, c *archive.Collection, source string) string {
	t.Helper()
	inv, err := Scan(context.Background(), c, ScanOptions{IDs: testIDs(), Now: runOpts(nil).Now})
	must(t, err)
	plan, err := NewPlan(c, inv, testNow)
	must(t, err)
	for _, s := range plan.Steps {
		if s.Source == source {
			return s.Dest
		}
	}
	t.Fatalf("the plan has no step for %s", source)
	return ""
}

// stageCopy writes what a copy of src cut short by a power loss leaves:
// the staging folder beside dst with part of src's tree, its last file
// half written, and a journal whose record of the move is torn.
func stageCopy(t *testing.T, dir, src, dst string) string {
	t.Helper()
	stage := path.Join(path.Dir(dst), "."+path.Base(dst)+archive.TempMarker+"4242-1")
	abs := filepath.Join(dir, stage)
	must(t, os.MkdirAll(filepath.Join(abs, "example.com/deep"), 0o755))
	copyFile := func(rel string, n int) {
		data, err := os.ReadFile(filepath.Join(dir, src, rel))
		must(t, err)
		if n >= 0 {
			data = data[:n]
		}
		must(t, os.WriteFile(filepath.Join(abs, rel), data, 0o644))
	}
	copyFile("index.json", -1)
	copyFile("screenshot.png", -1)
	copyFile("big.bin", 100_000) // the write the power loss cut
	must(t, os.Symlink("screenshot.png", filepath.Join(abs, "payload-link")))
	journal := `{"step":"planned","src":"` + src + `","dst":"` + dst + `","mo`
	must(t, os.WriteFile(filepath.Join(dir, JournalFile), []byte(journal), 0o644))
	return stage
}

func TestRunRemovesStagingFolderOfACopyCutShort(t *testing.T) {
	ref := t.TempDir()
	buildCollection(t, ref)
	rc, _ := archive.Open(ref)
	if _, err := Run(context.Background(), rc, runOpts(testIDs())); !errors.Is(err, archive.ErrPartial) {
		t.Fatal(err)
	}
	want := canonical(t, ref)

	dir := t.TempDir()
	buildCollection(t, dir)
	c, _ := archive.Open(dir)
	const src = "archive/1508259732"
	srcFiles := fileHashes(t, filepath.Join(dir, src))
	dst := destOf(t, c, src)
	stage := stageCopy(t, dir, src, dst)

	st, err := Run(context.Background(), c, runOpts(testIDs()))
	if !errors.Is(err, archive.ErrPartial) { // the fifo folder is refused, as in ref
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(dir, stage)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("staging folder still there: %v", err)
	}
	for _, f := range st.Failures {
		if strings.Contains(f.Source, archive.TempMarker) {
			t.Errorf("staging folder failed: %+v", f)
		}
	}
	if st.Recovered != 1 {
		t.Errorf("Recovered = %d, want 1", st.Recovered)
	}
	if d := diffTrees(want, canonical(t, dir)); d != "" {
		t.Errorf("after the staging folder was settled the tree differs from an uninterrupted run:\n%s", d)
	}
	got := fileHashes(t, filepath.Join(dir, dst))
	for rel, h := range srcFiles {
		if got[rel] != h {
			t.Errorf("%s: %s at the destination, want the source's %s", rel, got[rel], h)
		}
	}
}

func TestRunKeepsStagingFolderHoldingFilesFoundNowhereElse(t *testing.T) {
	dir := t.TempDir()
	buildCollection(t, dir)
	c, _ := archive.Open(dir)
	const src = "archive/1508259732"
	dst := destOf(t, c, src)
	stage := stageCopy(t, dir, src, dst)
	must(t, os.WriteFile(filepath.Join(dir, stage, "notes.txt"), []byte("written by hand"), 0o644))
	// A different prefix: the same length cut from other bytes.
	must(t, os.WriteFile(filepath.Join(dir, stage, "screenshot.png"), []byte("not the screenshot"), 0o644))
	before := fileHashes(t, filepath.Join(dir, stage))

	p := &recordPrinter{}
	o := runOpts(testIDs())
	o.Printer = p
	st, err := Run(context.Background(), c, o)
	if !errors.Is(err, archive.ErrPartial) {
		t.Fatal(err)
	}
	if d := diffHashes(before, fileHashes(t, filepath.Join(dir, stage))); d != "" {
		t.Fatalf("staging folder changed:\n%s", d)
	}
	found := false
	for _, f := range st.Failures {
		found = found || f.Source == stage
	}
	if !found {
		t.Errorf("no failure names %s: %+v", stage, st.Failures)
	}
	// The destination is made after the staging folders are settled.
	if !containsLine(p.warns, stage+": its notes.txt is not in "+src+"; kept as it is") &&
		!containsLine(p.warns, stage+": its screenshot.png is not in "+src+"; kept as it is") {
		t.Errorf("no warning names the file found nowhere else: %q", p.warns)
	}
	// The snapshot itself migrated beside it, all the same, and the next
	// run, which finds its copy at the destination, keeps it still.
	if _, err := os.Stat(filepath.Join(dir, dst, archive.IndexFile)); err != nil {
		t.Error(err)
	}
	p.warns = nil
	if _, err := Run(context.Background(), c, o); !errors.Is(err, archive.ErrPartial) {
		t.Fatal(err)
	}
	if d := diffHashes(before, fileHashes(t, filepath.Join(dir, stage))); d != "" {
		t.Fatalf("staging folder changed by the second run:\n%s", d)
	}
	if !containsLine(p.warns, stage+": its notes.txt is not in "+dst+"; kept as it is") &&
		!containsLine(p.warns, stage+": its screenshot.png is not in "+dst+"; kept as it is") {
		t.Errorf("second run: no warning names the file found nowhere else: %q", p.warns)
	}
}

// A staging folder whose destination does not exist and whose source
// this run does not move (here: --resume leaves it for later) is kept as
// it is: moved into place, the copy cut short would stand in the way of
// the real one.
func TestRunKeepsStagingFolderWhoseSourceWaits(t *testing.T) {
	dir := t.TempDir()
	buildCollection(t, dir)
	c, _ := archive.Open(dir)
	const src = "archive/1508259732"
	dst := destOf(t, c, src)
	stage := stageCopy(t, dir, src, dst)
	before := fileHashes(t, filepath.Join(dir, stage))

	p := &recordPrinter{}
	o := runOpts(testIDs())
	o.Printer = p
	o.Resume = "1400000000" // 1508259732 sorts after it: left for a later run
	if _, err := Run(context.Background(), c, o); !errors.Is(err, archive.ErrPartial) {
		t.Fatal(err)
	}
	if d := diffHashes(before, fileHashes(t, filepath.Join(dir, stage))); d != "" {
		t.Fatalf("staging folder changed:\n%s", d)
	}
	if _, err := os.Lstat(filepath.Join(dir, dst)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the destination was made: %v", err)
	}
	want := stage + ": neither " + dst + " nor a source this run moves there exists to hold its files; if it is the only copy left, move it there by hand; kept as it is"
	if !containsLine(p.warns, want) {
		t.Errorf("warnings %q lack %q", p.warns, want)
	}
}

// recordPrinter keeps the warnings a run prints.
type recordPrinter struct {
	mu    sync.Mutex
	warns []string
}

func (p *recordPrinter) Infof(string, ...any) {}
func (p *recordPrinter) Warnf(f string, a ...any) {
	p.mu.Lock()
	p.warns = append(p.warns, fmt.Sprintf(f, a...))
	p.mu.Unlock()
}
func (p *recordPrinter) Progress(string, int64, int64) {}

// diffHashes lists the files whose hash differs between two fileHashes.
func diffHashes(a, b map[string]string) string {
	var d []string
	for rel, h := range a {
		if b[rel] != h {
			d = append(d, fmt.Sprintf("%s: %s, then %s", rel, h, b[rel]))
		}
	}
	for rel := range b {
		if _, ok := a[rel]; !ok {
			d = append(d, rel+": new")
		}
	}
	sort.Strings(d)
	return strings.Join(d, "\n")
}
