package main_test

import (
	"bufio"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/folio-archive/folio/gen"
)

// process is a folio process whose stderr lines are kept as they come.
type process struct {
	cmd *exec.Cmd
	mu  sync.Mutex
	err []string
	out chan string // stdout lines
}

func startFolio(t *testing.T, args ...string) *process {
	t.Helper()
	p := &process{cmd: exec.Command(folioBin(t), args...), out: make(chan string, 16)}
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			p.mu.Lock()
			p.err = append(p.err, sc.Text())
			p.mu.Unlock()
		}
	}()
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			select {
			case p.out <- sc.Text():
			default:
			}
		}
		io.Copy(io.Discard, stdout)
	}()
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			p.cmd.Process.Kill()
			p.cmd.Wait()
		}
	})
	return p
}

func (p *process) stderr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.err, "\n")
}

// await waits until ok holds, failing the test after a while.
func await(t *testing.T, what string, p *process, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if ok() {
			return
		}
	}
	t.Fatalf("%s: not within 20 s; stderr:\n%s", what, p.stderr())
}

// interrupt stops p with SIGINT and returns its exit code.
func (p *process) interrupt(t *testing.T) int {
	t.Helper()
	p.cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		p.cmd.Process.Kill()
		<-done
		t.Errorf("folio did not stop on SIGINT; stderr:\n%s", p.stderr())
	}
	return p.cmd.ProcessState.ExitCode()
}

// threeChanges copies a new snapshot folder into dir, retitles the
// snapshot at edit and deletes the one at gone; it returns the new
// snapshot's URL and the new title.
func threeChanges(t *testing.T, dir, edit, gone string) (newURL, title string) {
	t.Helper()
	other := filepath.Join(t.TempDir(), "other")
	om, err := gen.Current(other, gen.Options{N: 1, Seed: 77, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	rel := om.Snapshots[0].Dir
	to := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cp", "-a", filepath.Join(other, filepath.FromSlash(rel)), to).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	title = "Retitled while watched"
	if err := gen.RetitleIndex(filepath.Join(dir, filepath.FromSlash(edit)), title); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(dir, filepath.FromSlash(gone))); err != nil {
		t.Fatal(err)
	}
	return om.Snapshots[0].URL, title
}

// TestWatchFollowsTheTree runs the real watcher: a snapshot folder copied
// in, another's index.jsonl edited and a third deleted all reach the
// catalog and the export within seconds.
func TestWatchFollowsTheTree(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	m, err := gen.Current(dir, gen.Options{N: 30, Seed: 5, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	edit, gone := m.Snapshots[3], m.Snapshots[7]
	w := startFolio(t, "-D", dir, "watch", "--export", "--page-size", "10")
	await(t, "the first export", w, func() bool { return strings.Contains(w.stderr(), "export: ") })
	if !strings.Contains(w.stderr(), "watching ") {
		t.Errorf("no line saying what is watched:\n%s", w.stderr())
	}

	newURL, title := threeChanges(t, dir, edit.Dir, gone.Dir)
	listed := func() string {
		out, _, _ := runFolio(t, "-D", dir, "list", "--csv", "url,title")
		return out
	}
	manifest := func() string {
		b, _ := os.ReadFile(filepath.Join(dir, "index.jsonl"))
		return string(b)
	}
	await(t, "the three changes in the catalog", w, func() bool {
		l := listed()
		return strings.Contains(l, newURL) && strings.Contains(l, title) && !strings.Contains(l, gone.URL+",")
	})
	await(t, "the three changes in the export", w, func() bool {
		s := manifest()
		return strings.Contains(s, newURL) && strings.Contains(s, title) && !strings.Contains(s, `"`+gone.URL+`"`)
	})
	if code := w.interrupt(t); code != 130 {
		t.Errorf("watch exit code after SIGINT: %d, want 130", code)
	}
	if !strings.Contains(w.stderr(), "stopped") {
		t.Errorf("no line saying it stopped:\n%s", w.stderr())
	}
}

// TestWatchExportShowsOutputAddedByHand: a plugin folder dropped into a
// snapshot folder changes no index, yet watch --export puts its card on
// the snapshot's page, also when the folder is made first and filled
// after the export that followed.
func TestWatchExportShowsOutputAddedByHand(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	m, err := gen.Current(dir, gen.Options{N: 6, Seed: 9, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	w := startFolio(t, "-D", dir, "watch", "--export")
	await(t, "the first export", w, func() bool { return strings.Contains(w.stderr(), "export: ") })
	snap := filepath.Join(dir, filepath.FromSlash(m.Snapshots[2].Dir))
	page := func() string {
		b, _ := os.ReadFile(filepath.Join(snap, "index.html"))
		return string(b)
	}
	if strings.Contains(page(), "card-gallerydl") {
		t.Fatal("a gallerydl card before the folder exists")
	}
	exports := func() int { return strings.Count(w.stderr(), "export: ") }
	before := exports()
	if err := os.MkdirAll(filepath.Join(snap, "gallerydl"), 0o755); err != nil {
		t.Fatal(err)
	}
	await(t, "the export after the empty folder was made", w, func() bool { return exports() > before })
	if strings.Contains(page(), "card-gallerydl") {
		t.Fatal("a gallerydl card for an empty folder")
	}
	if err := os.WriteFile(filepath.Join(snap, "gallerydl", "photo.jpg"), []byte("\xff\xd8\xff"), 0o644); err != nil {
		t.Fatal(err)
	}
	await(t, "the card of the folder added by hand", w, func() bool {
		p := page()
		return strings.Contains(p, `card card-gallerydl"`) && strings.Contains(p, "./gallerydl/photo.jpg")
	})
	if code := w.interrupt(t); code != 130 {
		t.Errorf("watch exit code after SIGINT: %d, want 130", code)
	}
}

// TestServeWatchKeepsTheExportCurrent serves a collection with --watch
// and sees a change over HTTP, and a snapshot added: listed on the root
// page, its page served as folio's (folio's CSP, not the sandbox of an
// archived file) once the root manifest lists it.
func TestServeWatchKeepsTheExportCurrent(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	m, err := gen.Current(dir, gen.Options{N: 12, Seed: 8, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	newest := m.Snapshots[0]
	for _, e := range m.Snapshots {
		if e.BookmarkedAt.After(newest.BookmarkedAt) {
			newest = e
		}
	}
	var others []gen.Entry
	for _, e := range m.Snapshots {
		if e.Dir != newest.Dir {
			others = append(others, e)
		}
	}
	parked := filepath.Join(t.TempDir(), "parked")
	if err := os.Rename(filepath.Join(dir, filepath.FromSlash(newest.Dir)), parked); err != nil {
		t.Fatal(err)
	}
	s := startFolio(t, "-D", dir, "serve", "--watch", "--addr", "127.0.0.1:0")
	var base string
	select {
	case base = <-s.out:
	case <-time.After(20 * time.Second):
		t.Fatalf("serve printed no URL; stderr:\n%s", s.stderr())
	}
	get := func() string {
		resp, err := http.Get(base + "index.jsonl")
		if err != nil {
			return ""
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	await(t, "the first export, served", s, func() bool { return strings.Contains(get(), others[0].URL) })
	title := "Changed while served"
	if err := gen.RetitleIndex(filepath.Join(dir, filepath.FromSlash(others[1].Dir)), title); err != nil {
		t.Fatal(err)
	}
	await(t, "the change, served", s, func() bool { return strings.Contains(get(), title) })
	if err := os.Rename(parked, filepath.Join(dir, filepath.FromSlash(newest.Dir))); err != nil {
		t.Fatal(err)
	}
	await(t, "the snapshot added, its page served as folio's", s, func() bool {
		resp, err := http.Get(base + newest.Dir + "/index.html")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK && !strings.Contains(resp.Header.Get("Content-Security-Policy"), "sandbox") &&
			strings.Contains(get(), newest.URL)
	})
	if code := s.interrupt(t); code != 130 {
		t.Errorf("serve --watch exit code after SIGINT: %d, want 130", code)
	}
}

func TestWatchUsageErrors(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	if _, err := gen.Current(dir, gen.Options{N: 1, Seed: 1, NoSync: true}); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"watch", "--poll", "-1s"},
		{"watch", "--page-size", "0"},
		{"watch", "extra"},
		{"serve", "--watch", "somewhere"},
	} {
		_, stderr, code := runFolio(t, append([]string{"-D", dir}, args...)...)
		if code != 2 {
			t.Errorf("folio %s: exit %d, want 2\n%s", strings.Join(args, " "), code, stderr)
		}
	}
}

// TestWatchPolls forces polling, as on a network file system.
func TestWatchPolls(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	m, err := gen.Current(dir, gen.Options{N: 10, Seed: 6, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	w := startFolio(t, "-D", dir, "watch", "--poll", "200ms")
	await(t, "the first reindex", w, func() bool { return strings.Contains(w.stderr(), "catalog: 10 added") })
	if !strings.Contains(w.stderr(), "by polling every 200ms") {
		t.Errorf("no line saying it polls:\n%s", w.stderr())
	}
	newURL, title := threeChanges(t, dir, m.Snapshots[1].Dir, m.Snapshots[2].Dir)
	await(t, "the three changes in the catalog", w, func() bool {
		out, _, _ := runFolio(t, "-D", dir, "list", "--csv", "url,title")
		return strings.Contains(out, newURL) && strings.Contains(out, title) && !strings.Contains(out, m.Snapshots[2].URL+",")
	})
	if code := w.interrupt(t); code != 130 {
		t.Errorf("exit code after SIGINT: %d, want 130", code)
	}
}

// TestWatchExportFlushesTheManifest: under watch --export an edited
// snapshot's page follows at once and the root index.jsonl once the tree
// has been still (it is written for all the changes of a burst together),
// or when watch stops, whichever comes first.
func TestWatchExportFlushesTheManifest(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	m, err := gen.Current(dir, gen.Options{N: 12, Seed: 3, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	// A snapshot whose URL no other one has: its change needs no other page.
	urls := map[string]int{}
	for _, s := range m.Snapshots {
		urls[s.URL]++
	}
	var e gen.Entry
	for _, s := range m.Snapshots {
		if urls[s.URL] == 1 {
			e = s
		}
	}
	w := startFolio(t, "-D", dir, "watch", "--export")
	await(t, "the first export", w, func() bool { return strings.Contains(w.stderr(), "export: ") })
	read := func(rel string) string {
		b, _ := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
		return string(b)
	}
	for i, title := range []string{"Flushed when still", "Flushed as watch stops"} {
		if err := gen.RetitleIndex(filepath.Join(dir, filepath.FromSlash(e.Dir)), title); err != nil {
			t.Fatal(err)
		}
		await(t, "the page with "+title, w, func() bool { return strings.Contains(read(e.Dir+"/index.html"), title) })
		if i == 0 {
			// (The line comes once the manifest and the state are written.)
			await(t, "the line saying index.jsonl was written", w, func() bool {
				return strings.Contains(w.stderr(), "root index.jsonl brought up to date (1 snapshot record)")
			})
			if !strings.Contains(read("index.jsonl"), title) {
				t.Fatalf("index.jsonl lacks %q after the line saying it was written:\n%s", title, w.stderr())
			}
		}
	}
	if code := w.interrupt(t); code != 130 {
		t.Errorf("watch exit code after SIGINT: %d, want 130", code)
	}
	if !strings.Contains(read("index.jsonl"), "Flushed as watch stops") {
		t.Errorf("index.jsonl after watch stopped lacks the last title")
	}
	// What watch left is what an export finds current.
	if _, stderr, code := runFolio(t, "-D", dir, "export"); code != 0 || !strings.Contains(stderr, "0 pages written") {
		t.Errorf("export after watch: exit %d\n%s", code, stderr)
	}
}

// TestWatchExportWithWatchesRunOut: with fewer inotify watches than
// folders, the snapshot folders go unwatched (polled). The poll looks at
// their names as the export would: a plugin folder made in one of them,
// which changes no index, starts an export once it is still, and a file
// written in it after that export another, which shows it on its page.
// An edited title in another is found by the poll's reindex.
func TestWatchExportWithWatchesRunOut(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	m, err := gen.Current(dir, gen.Options{N: 6, Seed: 12, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	// Every folder above the snapshot folders gets a watch, none of them.
	above := 0
	err = filepath.WalkDir(filepath.Join(dir, "archive"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if strings.Count(filepath.ToSlash(rel), "/") < 6 {
			above++
			return nil
		}
		return filepath.SkipDir
	})
	if err != nil {
		t.Fatal(err)
	}
	w := startFolio(t, "-D", dir, "watch", "--export", "--max-watches", strconv.Itoa(above))
	await(t, "the first export", w, func() bool { return strings.Contains(w.stderr(), "export: ") })
	if want := fmt.Sprintf("%d folders are watched (the most asked for); %d more", above, len(m.Snapshots)); !strings.Contains(w.stderr(), want) {
		t.Fatalf("no warning %q:\n%s", want, w.stderr())
	}
	page := func(i int) string {
		b, _ := os.ReadFile(filepath.Join(dir, filepath.FromSlash(m.Snapshots[i].Dir), "index.html"))
		return string(b)
	}
	snap := filepath.Join(dir, filepath.FromSlash(m.Snapshots[2].Dir))
	exports := strings.Count(w.stderr(), "export: ")
	if err := os.MkdirAll(filepath.Join(snap, "gallerydl"), 0o755); err != nil {
		t.Fatal(err)
	}
	await(t, "an export for the plugin folder made", w, func() bool { return strings.Count(w.stderr(), "export: ") > exports })
	if err := os.WriteFile(filepath.Join(snap, "gallerydl", "photo.jpg"), []byte("\xff\xd8\xff"), 0o644); err != nil {
		t.Fatal(err)
	}
	await(t, "the output added to an unwatched folder on its page", w, func() bool {
		p := page(2)
		return strings.Contains(p, `card card-gallerydl"`) && strings.Contains(p, "./gallerydl/photo.jpg")
	})
	title := "Retitled in an unwatched folder"
	if err := gen.RetitleIndex(filepath.Join(dir, filepath.FromSlash(m.Snapshots[4].Dir)), title); err != nil {
		t.Fatal(err)
	}
	await(t, "the edited title on its page", w, func() bool { return strings.Contains(page(4), title) })
	if code := w.interrupt(t); code != 130 {
		t.Errorf("watch exit code after SIGINT: %d, want 130", code)
	}
}
