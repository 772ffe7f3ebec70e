package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The first hour of a user: init, add, look at it; export once, and add,
// update and remove keep the site current. These run the real binary
// with the real Chromium against the fixture site.

// manifestLines counts the snapshots the root index.jsonl lists.
func manifestLines(t *testing.T, dir string) int {
	t.Helper()
	return strings.Count(string(mustRead(t, filepath.Join(dir, "index.jsonl"))), "\n")
}

func TestAddSaysWhatItDoesAndKeepsTheSiteCurrent(t *testing.T) {
	srv := fixtureServer(t)
	dir := newCollection(t)
	page, about := srv.URL+"/index.html", srv.URL+"/about.html"
	const title = "Keepers of the Light: A Short History of Lighthouses"

	// Never exported: add names the browser, the URL as it starts and the
	// snapshot as it ends, writes no site, and ends with the snapshot's
	// own page.
	stdout, stderr, code := runFolio(t, "add", "-D", dir, "--plugins", "title,singlefile,hashes", page)
	if code != 0 {
		t.Fatalf("add: exit %d\n%s\n%s", code, stdout, stderr)
	}
	snap := byURL(snapshots(t, dir), page)[0]
	for _, want := range []string{
		"starting Chromium (",
		"capturing " + page + "\n",
		"saved \"" + title + "\" (" + page + ") in " + snap.dir + "\n",
		"no site yet: 'folio export' writes one (index.html) listing every snapshot, and add, update and remove keep it current\n",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("add's stderr lacks %q:\n%s", want, stderr)
		}
	}
	if got, want := lastLine(stdout), "file://"+snap.dir+"/singlefile/singlefile.html"; got != want {
		t.Errorf("add ends with %q, want the snapshot's page %q", got, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "index.html")); err == nil {
		t.Error("add wrote a site nobody asked for")
	}

	// Exported once (with a title of its own), the site follows every
	// add, update and remove, keeping that title and its robots.txt.
	if _, stderr, code := runFolio(t, "export", "-D", dir, "--title", "Harbour shelf", "--allow-crawlers"); code != 0 {
		t.Fatalf("export: %s", stderr)
	}
	root := "file://" + filepath.Join(dir, "index.html")
	stdout, stderr, code = runFolio(t, "add", "-D", dir, "--plugins", "title,hashes", about)
	if code != 0 {
		t.Fatalf("second add: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if got := lastLine(stdout); got != root {
		t.Errorf("add in an exported collection ends with %q, want the root page %q", got, root)
	}
	if want := "site: 1 snapshot page and 1 root page written, 1 unchanged\n"; !strings.Contains(stderr, want) {
		t.Errorf("add's stderr lacks %q:\n%s", want, stderr)
	}
	index := string(mustRead(t, filepath.Join(dir, "index.html")))
	if manifestLines(t, dir) != 2 || !strings.Contains(index, "About - The Harbour Notebook") || !strings.Contains(index, "Harbour shelf") {
		t.Errorf("the root page was not brought up to date with its own title (%d in index.jsonl)", manifestLines(t, dir))
	}
	if robots := string(mustRead(t, filepath.Join(dir, "robots.txt"))); strings.Contains(robots, "Disallow: /") {
		t.Errorf("add closed the robots.txt that export --allow-crawlers opened:\n%s", robots)
	}
	aboutDir := byURL(snapshots(t, dir), about)[0].dir
	if _, err := os.Stat(filepath.Join(aboutDir, "index.html")); err != nil {
		t.Errorf("the new snapshot has no page: %v", err)
	}

	// -q keeps only the result: the site's URL.
	stdout, stderr, code = runFolio(t, "-q", "update", "-D", dir, "--plugins", "hashes", "--overwrite", about)
	if code != 0 || lastLine(stdout) != root || strings.Contains(stderr, "updating") || strings.Contains(stderr, "site:") {
		t.Errorf("update -q: exit %d\n%s\n%s", code, stdout, stderr)
	}
	stdout, stderr, code = runFolio(t, "update", "-D", dir, "--plugins", "hashes", "--overwrite", about)
	for _, want := range []string{"updating " + about + " (", "saved \"About - The Harbour Notebook\" (" + about + ") in " + aboutDir + "\n", "site: "} {
		if code != 0 || !strings.Contains(stderr, want) {
			t.Errorf("update: exit %d, stderr lacks %q:\n%s", code, want, stderr)
		}
	}

	stdout, stderr, code = runFolio(t, "remove", "-D", dir, about)
	if code != 0 || lastLine(stdout) != root || manifestLines(t, dir) != 1 {
		t.Errorf("remove: exit %d, %d in index.jsonl\n%s\n%s", code, manifestLines(t, dir), stdout, stderr)
	}
	if strings.Contains(string(mustRead(t, filepath.Join(dir, "index.html"))), "About - The Harbour Notebook") {
		t.Error("the root page still lists the removed snapshot")
	}
}

func TestStatusNamesTheNextCommand(t *testing.T) {
	dir := t.TempDir()
	if _, stderr, code := runFolio(t, "init", "-D", dir); code != 0 {
		t.Fatal(stderr)
	}
	status := func() (string, string) {
		t.Helper()
		out, stderr, code := runFolio(t, "status", "-D", dir)
		if code != 0 {
			t.Fatalf("status: exit %d\n%s", code, stderr)
		}
		return out, stderr
	}
	has := func(out string, lines ...string) {
		t.Helper()
		for _, l := range lines {
			if !strings.Contains(out, l) {
				t.Errorf("status lacks %q:\n%s", l, out)
			}
		}
	}

	// A new collection: nothing contradicts itself.
	out, stderr := status()
	has(out, "catalog            never built; the tree holds nothing to catalog yet\n",
		"unreadable         0\n",
		"export             none yet; 'folio export' writes the site (index.html), then add, update and remove keep it current\n")
	if strings.Contains(out, "up to date") || strings.Contains(out, "warnings above") || stderr != "" {
		t.Errorf("status of a new collection contradicts itself:\n%s%s", out, stderr)
	}

	// A snapshot left queued names add --resume.
	if _, stderr, code := runFolio(t, "add", "-D", dir, "--index-only", "http://127.0.0.1:9/queued"); code != 0 {
		t.Fatal(stderr)
	}
	out, _ = status()
	has(out, "queued             1 snapshot waiting to be captured: 'folio add --resume' captures them\n",
		"next               folio add --resume (captures the snapshots left queued)\n")

	// Exported, it is current; a hand edit makes it older than the tree,
	// and stays so after a reindex until the next export.
	if _, stderr, code := runFolio(t, "export", "-D", dir); code != 0 {
		t.Fatal(stderr)
	}
	out, _ = status()
	has(out, "; up to date: file://"+filepath.Join(dir, "index.html")+"\n")
	idx, _ := filepath.Glob(filepath.Join(dir, "archive/users/*/snapshots/*/*/*/index.jsonl"))
	f, err := os.OpenFile(idx[0], os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"type": "Process", "id": "added-by-hand"}` + "\n")
	f.Close()
	out, _ = status()
	has(out, "; older than the tree: run 'folio export'\n", "; stale: the tree changed since, run 'folio reindex'\n")
	if _, stderr, code := runFolio(t, "reindex", "-D", dir); code != 0 {
		t.Fatal(stderr)
	}
	out, _ = status()
	has(out, "; older than the tree: run 'folio export'\n")
	if _, stderr, code := runFolio(t, "add", "-D", dir, "--index-only", "http://127.0.0.1:9/second"); code != 0 {
		t.Fatal(stderr)
	}
	out, _ = status() // add brought the export up to date
	has(out, "; up to date: file://"+filepath.Join(dir, "index.html")+"\n",
		"queued             2 snapshots waiting to be captured: 'folio add --resume' captures them\n")
}

func TestServeSaysWhatToDoWithoutAnExport(t *testing.T) {
	dir := t.TempDir()
	if _, stderr, code := runFolio(t, "init", "-D", dir); code != 0 {
		t.Fatal(stderr)
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "archive-link")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	base, stop := exportServe(t, "-D", link)
	resp, body := serveGet(t, base)
	if resp.StatusCode != 404 || !strings.Contains(body, "<h1>This collection has not been exported yet</h1>") ||
		!strings.Contains(body, "<pre>folio export -D COLLECTION</pre>") || resp.Header.Get("Content-Security-Policy") == "" {
		t.Errorf("GET / of a collection never exported: %d %v\n%s", resp.StatusCode, resp.Header, body)
	}
	if resp, _ := serveGet(t, base+"sources/"); resp.StatusCode != 404 {
		t.Errorf("GET /sources/: %d", resp.StatusCode)
	}
	_, stderr := stop()
	for _, want := range []string{
		"warning: " + real + " has no export yet: run 'folio export -D " + real + "' (or serve with --watch, which exports first); until then / says so\n",
		"serving " + real + " at " + base + " (Ctrl-C stops)\n",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("serve's stderr lacks %q:\n%s", want, stderr)
		}
	}
}

// TestReadmeQuickStart runs the README's quick start as a user would type
// it (the fixture site stands in for example.com, a temp folder for the
// home directory; the install line is the only one left out) and opens
// what it printed: the first thing the README shows must be this loop.
func TestReadmeQuickStart(t *testing.T) {
	readme := string(mustRead(t, "../../README.md"))
	start := strings.Index(readme, "## Quick start\n\n```sh\n")
	if start < 0 || start > strings.Index(readme, "make demo") {
		t.Fatal("the README does not begin with a quick start before the developer commands")
	}
	block := readme[start+len("## Quick start\n\n```sh\n"):]
	block = block[:strings.Index(block, "```")]
	srv := fixtureServer(t)
	var script []string
	for _, line := range strings.Split(block, "\n") {
		if strings.HasPrefix(line, "go install") || strings.TrimSpace(line) == "" {
			continue
		}
		script = append(script, strings.ReplaceAll(line, "https://example.com/", srv.URL+"/index.html"))
	}
	if len(script) != 3 || !strings.HasPrefix(script[0], "folio init ") || !strings.HasPrefix(script[2], "folio add ") {
		t.Fatalf("quick start %q: want folio init, cd, folio add", script)
	}
	home, bin := t.TempDir(), t.TempDir()
	if err := os.Symlink(folioBin(t), filepath.Join(bin, "folio")); err != nil {
		t.Fatal(err)
	}
	sh := exec.Command("sh", "-e", "-c", strings.Join(script, "\n"))
	sh.Env = append(os.Environ(), "FOLIO_DATA_DIR=", "HOME="+home, "PATH="+bin+":"+os.Getenv("PATH"), "RESOLUTION=800,600", "TIMEOUT=20")
	var out, errb strings.Builder
	sh.Stdout, sh.Stderr = &out, &errb
	if err := sh.Run(); err != nil {
		t.Fatalf("the quick start failed: %v\n%s\n%s", err, out.String(), errb.String())
	}
	stdout := out.String()
	page := strings.TrimPrefix(lastLine(stdout), "file://")
	if !strings.HasPrefix(page, filepath.Join(home, "archive")+"/") || !strings.HasSuffix(page, "/singlefile/singlefile.html") {
		t.Fatalf("the quick start ends with %q, not the page of the snapshot", lastLine(stdout))
	}
	if !strings.Contains(string(mustRead(t, page)), "Keepers of the Light") {
		t.Error("the printed page does not show the archived page")
	}
}
