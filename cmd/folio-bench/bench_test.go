package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/folio-archive/folio/gen"
)

// TestMain lets the test binary act as folio-bench's measuring helper,
// which B.Run starts by re-executing itself.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == measureArg {
		os.Exit(measureChild(os.Args[2:]))
	}
	os.Exit(m.Run())
}

func newB(t *testing.T) *B {
	return &B{Ctx: context.Background(), N: 5, Seed: 1, Runs: 3, Work: t.TempDir(), log: &bytes.Buffer{}, colls: map[string]*Collection{}}
}

func TestRunMeasuresACommand(t *testing.T) {
	b := newB(t)
	m, err := b.Run(exec.Command("sh", "-c", "echo first; sleep 0.2; echo second; printf tail"))
	if err != nil {
		t.Fatal(err)
	}
	if m.Lines != 2 || m.Bytes != int64(len("first\nsecond\ntail")) {
		t.Fatalf("lines %d, bytes %d", m.Lines, m.Bytes)
	}
	if m.FirstLine <= 0 || m.Wall-m.FirstLine < 150*time.Millisecond {
		t.Fatalf("first line at %s of %s; the second came 200ms later", m.FirstLine, m.Wall)
	}
	if m.MaxRSS <= 0 {
		t.Fatalf("no peak RSS: %d", m.MaxRSS)
	}
}

// TestPeakRSSIsTheCommands: on Linux a child's ru_maxrss starts at the
// peak of the address space it was exec'd from, so a tiny command started
// straight from a big folio-bench reported folio-bench's peak. Here the
// test process holds 512 MB while measuring true (a few MB) and dd (which
// fills a 256 MB buffer); each must report its own peak.
func TestPeakRSSIsTheCommands(t *testing.T) {
	const big = 512 << 20
	held := make([]byte, big)
	for i := 0; i < len(held); i += 4096 {
		held[i] = 1
	}
	b := newB(t)
	tiny, err := b.Run(exec.Command("true"))
	if err != nil {
		t.Fatal(err)
	}
	if tiny.MaxRSS <= 0 || tiny.MaxRSS > 64<<20 {
		t.Errorf("true: peak RSS %d MB, want a few MB (this process holds %d MB)", tiny.MaxRSS>>20, big>>20)
	}
	dd, err := b.Run(exec.Command("dd", "if=/dev/zero", "of=/dev/null", "bs=256M", "count=1"))
	if err != nil {
		t.Fatal(err)
	}
	if dd.MaxRSS < 256<<20 || dd.MaxRSS > 400<<20 {
		t.Errorf("dd bs=256M: peak RSS %d MB, want about 256 MB", dd.MaxRSS>>20)
	}
	runtime.KeepAlive(held)
}

func TestRunNamesAFailingCommand(t *testing.T) {
	b := newB(t)
	script := filepath.Join(t.TempDir(), "folio")
	body := "#!/bin/sh\necho 'folio: unknown command \"reindex\" for \"folio\"' >&2\necho >&2\necho 'Usage: folio [command]' >&2\nexit 2\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	b.Folio = script
	_, err := b.Run(b.FolioCmd(t.TempDir(), "reindex", "--full"))
	want := `folio reindex --full: unknown command "reindex" for "folio" (exit 2)`
	if err == nil || err.Error() != want {
		t.Fatalf("error %v, want %s", err, want)
	}
	if _, err := b.Repeat(nil, func() *exec.Cmd { return exec.Command("false") }); err == nil {
		t.Fatal("Repeat of a failing command succeeded")
	}
}

func TestCatBaselineReadsEveryIndex(t *testing.T) {
	b := newB(t)
	c, err := b.Current("current", gen.Options{N: 30, Seed: 4, Minimal: true})
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := b.Current("current", gen.Options{N: 30, Seed: 4}); again != c {
		t.Fatal("the collection was generated twice")
	}
	m, err := b.Repeat(nil, func() *exec.Cmd { return b.CatCmd(c.IndexPaths()) })
	if err != nil {
		t.Fatal(err)
	}
	if m.Bytes != c.Manifest.Bytes {
		t.Fatalf("cat read %d bytes, the indexes hold %d", m.Bytes, c.Manifest.Bytes)
	}
}

func TestVerdict(t *testing.T) {
	for _, tc := range []struct {
		row  Row
		want string
	}{
		{Row{Value: 9, Goal: Goal{Max: 10}}, "ok"},
		{Row{Value: 11, Goal: Goal{Max: 10}}, "MISSED"},
		{Row{Value: 3, Baseline: 2, Goal: Goal{MaxRatio: 1.5}}, "ok"},
		{Row{Value: 4, Baseline: 2, Goal: Goal{MaxRatio: 1.5}}, "MISSED"},
		{Row{Value: 3, Baseline: 2, Goal: Goal{MinRatio: 0.7}}, "ok"},
		{Row{Value: 3, Goal: Goal{MinRatio: 0.7}}, "MISSED"}, // no baseline: the ratio goal cannot be met
		{Row{Value: 3}, ""},
		{Row{Err: errors.New("x"), Goal: Goal{Max: 10}}, "error"},
	} {
		if got := tc.row.Verdict(); got != tc.want {
			t.Errorf("%+v: verdict %q, want %q", tc.row, got, tc.want)
		}
	}
	if r := (Row{Value: 1}); !math.IsNaN(r.Ratio()) {
		t.Fatal("ratio without a baseline is not NaN")
	}
}

func TestFormat(t *testing.T) {
	for _, tc := range []struct {
		u    Unit
		v    float64
		want string
	}{
		{Seconds, 0.0042, "4.2 ms"}, {Seconds, 0.25, "250 ms"}, {Seconds, 12.345, "12.35 s"},
		{Bytes, 142e6, "142 MB"}, {Percent, 12.345, "12.35 %"},
	} {
		if got := format(tc.u, tc.v); got != tc.want {
			t.Errorf("format(%v, %v) = %q, want %q", tc.u, tc.v, got, tc.want)
		}
	}
	if got := (Row{Goal: Goal{Max: 0.1}}).goalText(); got != "≤ 100 ms" {
		t.Errorf("goal text %q", got)
	}
	if got := (Row{Unit: Percent, Goal: Goal{Max: 1}}).goalText(); got != "≤ 1 %" {
		t.Errorf("percent goal text %q", got)
	}
}

func TestUsage(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"-suite", "nope"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), `unknown suite "nope"`) {
		t.Fatalf("exit %d, stderr %q", code, errb.String())
	}
	errb.Reset()
	if code := run(context.Background(), []string{"-help"}, &out, &errb); code != 0 || !strings.Contains(errb.String(), "core") {
		t.Fatalf("-help: exit %d, stderr %q", code, errb.String())
	}
}

func TestCurrentIsReusedWithWork(t *testing.T) {
	work := t.TempDir()
	first := newB(t)
	first.Work, first.Reuse = work, true
	a, err := first.Current("current", gen.Options{N: 8, Seed: 2, Minimal: true})
	if err != nil {
		t.Fatal(err)
	}
	second := newB(t)
	second.Work, second.Reuse = work, true
	log := second.log.(*bytes.Buffer)
	b, err := second.Current("current", gen.Options{N: 8, Seed: 2, Minimal: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "reusing current") || !reflect.DeepEqual(a.IndexPaths(), b.IndexPaths()) ||
		a.Manifest.Snapshots[3].Title != b.Manifest.Snapshots[3].Title {
		t.Fatalf("not reused: %s", log.String())
	}
	third := newB(t)
	third.Work, third.Reuse = work, true
	c, err := third.Current("current", gen.Options{N: 9, Seed: 2, Minimal: true})
	if err != nil || len(c.Manifest.Snapshots) != 9 {
		t.Fatalf("other options: %v", err)
	}
	if err := os.MkdirAll(filepath.Join(work, "mine"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := third.Current("mine", gen.Options{N: 1}); err == nil || !strings.Contains(err.Error(), "did not generate it") {
		t.Fatalf("generated over a folder it did not make: %v", err)
	}
}

// TestStatCountCountsPathStats runs strace as the no-change rows do: ls
// -l stats each file of a folder by its path, so listing 40 files counts
// at least 40 more path stats than listing none, and the fstat of a file
// already open is not counted.
func TestStatCountCountsPathStats(t *testing.T) {
	b := newB(t)
	empty, full := filepath.Join(b.Work, "empty"), filepath.Join(b.Work, "full")
	for _, d := range []string{empty, full} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 40 {
		if err := os.WriteFile(filepath.Join(full, fmt.Sprintf("f%02d", i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	none, err := b.StatCount(exec.Command("ls", "-l", empty))
	if err != nil {
		t.Fatal(err)
	}
	forty, err := b.StatCount(exec.Command("ls", "-l", full))
	if err != nil {
		t.Fatal(err)
	}
	if forty-none < 40 {
		t.Fatalf("ls -l of 40 files: %d path stats, of none: %d", forty, none)
	}
	// cat opens each file and fstats it: no path stat of a file.
	files, _ := filepath.Glob(filepath.Join(full, "f*"))
	catForty, err := b.StatCount(exec.Command("cat", files...))
	if err != nil {
		t.Fatal(err)
	}
	catOne, err := b.StatCount(exec.Command("cat", files[0]))
	if err != nil {
		t.Fatal(err)
	}
	if catForty != catOne {
		t.Fatalf("cat of 40 files: %d path stats, of one: %d (its fstats counted?)", catForty, catOne)
	}
}

func TestPathStats(t *testing.T) {
	trace := `23191 newfstatat(3, "", {st_mode=S_IFREG|0644, st_size=37791, ...}, AT_EMPTY_PATH) = 0
23198 lstat("/work", {st_mode=S_IFDIR|0755, st_size=4096, ...}) = 0
21423 newfstatat(32, "headers/headers.json",  <unfinished ...>
21424 fstat(7, {st_mode=S_IFREG|0644, st_size=2, ...}) = 0
21423 <... newfstatat resumed>{st_mode=S_IFREG|0644, st_size=286, ...}, AT_SYMLINK_NOFOLLOW) = 0
21425 statx(AT_FDCWD, "a b(c)", AT_STATX_SYNC_AS_STAT|AT_SYMLINK_NOFOLLOW, STATX_ALL, 0x7ffd) = 0
21425 statx(4, "", AT_STATX_SYNC_AS_STAT|AT_EMPTY_PATH, STATX_ALL, 0x7ffd) = 0
21426 newfstatat(AT_FDCWD, "/missing", 0xc000, AT_SYMLINK_NOFOLLOW) = -1 ENOENT (No such file or directory)
21426 --- SIGURG {si_signo=SIGURG, si_code=SI_TKILL, si_pid=23196, si_uid=0} ---
21426 +++ exited with 0 +++
`
	n, err := pathStats(strings.NewReader(trace))
	if err != nil {
		t.Fatal(err)
	}
	if n != 4 { // lstat, the interrupted newfstatat once, statx of a path, the missing file
		t.Fatalf("%d path stats, want 4", n)
	}
}
