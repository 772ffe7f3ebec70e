package main_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/folio-archive/folio/archive"
)

// writeSnapshotFiles writes a sealed snapshot titled title into the
// collection at dir, with files (path in the folder -> content), and
// returns its folder relative to dir.
func writeSnapshotFiles(t *testing.T, dir, id, title string, files map[string]string) string {
	t.Helper()
	at := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	s := archive.Snapshot{ID: id, URL: "https://pages.example.org/" + id[len(id)-4:], Title: title,
		BookmarkedAt: at, CreatedAt: at, Timestamp: "1714564800.0", Status: "sealed"}
	rel := "archive/users/system/snapshots/20240501/pages.example.org/" + id
	abs := filepath.Join(dir, filepath.FromSlash(rel))
	for name, content := range files {
		p := filepath.Join(abs, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeSnapshotIndex(t, abs, s)
	return rel
}

// writeSnapshotIndex makes the snapshot folder abs and writes its
// index.jsonl holding s.
func writeSnapshotIndex(t *testing.T, abs string, s archive.Snapshot) {
	t.Helper()
	if err := os.MkdirAll(abs, 0o755); err != nil {
		t.Fatal(err)
	}
	ix, _ := archive.ParseIndex(nil)
	ix.SetSnapshot(s)
	if err := archive.WriteIndex(abs, ix); err != nil {
		t.Fatal(err)
	}
}

// TestExportRefusesSymlinkedFolders: an export whose site folder (or a
// folder or file it writes or deletes) is a symlink stops with one line
// naming it, exit 1, and leaves what the link leads to untouched; in
// place and with --out, where the out folder itself may be a symlink.
func TestExportRefusesSymlinkedFolders(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "data")
	if _, stderr, code := runFolio(t, "init", "-D", dir); code != 0 {
		t.Fatalf("init: %s", stderr)
	}
	writeSnapshotFiles(t, dir, "0190f3c2a1b27c3d8e4f5a6b7c8d0001", "Quokkas", map[string]string{"dom/output.html": "<p>hi</p>"})
	// Somewhere else: what the links lead to, with files an export would
	// overwrite or think stale.
	elsewhere := filepath.Join(base, "elsewhere")
	for name, content := range map[string]string{"folio.js": "mine", "folio.css": "mine", "page-9.html": "mine",
		"search/9.js": "mine", "text/9.js": "mine", "notes.txt": "keep me"} {
		p := filepath.Join(elsewhere, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	manifest := filepath.Join(base, "manifest.jsonl")
	if err := os.WriteFile(manifest, []byte("{\"mine\":1}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := fmt.Sprint(updTree(t, base+"/elsewhere"), updTree(t, manifest))
	untouched := func(what string) {
		t.Helper()
		if after := fmt.Sprint(updTree(t, base+"/elsewhere"), updTree(t, manifest)); after != before {
			t.Errorf("%s: what the link leads to changed", what)
		}
	}
	refuse := func(what, link string, args ...string) {
		t.Helper()
		_, stderr, code := runFolio(t, append([]string{"-D", dir, "export"}, args...)...)
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		last := lines[len(lines)-1]
		if code != 1 || !strings.HasPrefix(last, "folio: ") || !strings.Contains(last, link) || !strings.Contains(last, "symlink") {
			t.Errorf("%s: exit %d, stderr %q; want exit 1 and one line naming %s as a symlink", what, code, stderr, link)
		}
		untouched(what)
	}
	link := func(target, name string) {
		t.Helper()
		os.RemoveAll(name)
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, name); err != nil {
			t.Fatal(err)
		}
	}

	// In place.
	site := filepath.Join(dir, "site")
	link(elsewhere, site)
	refuse("in place, site", site)
	os.Remove(site)
	if _, stderr, code := runFolio(t, "-D", dir, "export"); code != 0 {
		t.Fatalf("export: exit %d\n%s", code, stderr)
	}
	for _, sub := range []string{"search", "text"} {
		p := filepath.Join(site, sub)
		link(filepath.Join(elsewhere, sub), p)
		refuse("in place, site/"+sub, p)
		os.Remove(p)
		os.Mkdir(p, 0o755)
	}
	root := filepath.Join(dir, "index.jsonl")
	link(manifest, root)
	refuse("in place, index.jsonl", root, "--full")
	os.Remove(root)

	// --out: the out folder may be a symlink the user chose; the folders
	// below it the export writes into may not.
	real := filepath.Join(base, "real-public")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(base, "public")
	link(real, out)
	if _, stderr, code := runFolio(t, "-D", dir, "export", "--out", out); code != 0 {
		t.Fatalf("export --out through a symlink: exit %d\n%s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(real, "site", "folio.js")); err != nil {
		t.Fatalf("the export did not land in the folder the out link names: %v", err)
	}
	if err := os.Rename(filepath.Join(real, "site"), filepath.Join(real, "site.aside")); err != nil {
		t.Fatal(err)
	}
	link(elsewhere, filepath.Join(real, "site"))
	refuse("--out, site", filepath.Join(out, "site"), "--out", out)
	os.Remove(filepath.Join(real, "site"))
	if err := os.Rename(filepath.Join(real, "site.aside"), filepath.Join(real, "site")); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := runFolio(t, "-D", dir, "export", "--out", out, "--full"); code != 0 {
		t.Fatalf("export --out: exit %d\n%s", code, stderr)
	}
	// A snapshot folder's parent in the copy leading elsewhere: the copy
	// would be written, and stale copies deleted, there.
	users := filepath.Join(real, "archive", "users")
	if err := os.Rename(users, filepath.Join(base, "elsewhere", "users")); err != nil {
		t.Fatal(err)
	}
	before = fmt.Sprint(updTree(t, base+"/elsewhere"), updTree(t, manifest))
	link(filepath.Join(base, "elsewhere", "users"), users)
	refuse("--out, archive/users", filepath.Join(out, "archive", "users"), "--out", out, "--full")
}

// TestExportCutsLongTitles: a title of megabytes (the was 40 MB;
// 4 MB shows the same and keeps the race-detector run short) does not
// make a page or search shard of megabytes; the root manifest keeps it
// whole.
func TestExportCutsLongTitles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	if _, stderr, code := runFolio(t, "init", "-D", dir); code != 0 {
		t.Fatalf("init: %s", stderr)
	}
	title := strings.Repeat("Quokka ünïcödé 🦄 ", 4<<20/24)
	rel := writeSnapshotFiles(t, dir, "0190f3c2a1b27c3d8e4f5a6b7c8d0002", title, map[string]string{"dom/output.html": "<p>hi</p>"})
	if _, stderr, code := runFolio(t, "-D", dir, "export"); code != 0 {
		t.Fatalf("export: exit %d\n%s", code, stderr)
	}
	for _, p := range []string{"index.html", rel + "/index.html", "site/search/1.js"} {
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(p)))
		if err != nil {
			t.Fatal(err)
		}
		if len(data) > 64<<10 {
			t.Errorf("%s holds %d bytes", p, len(data))
		}
		if !utf8.Valid(data) {
			t.Errorf("%s: a title was cut inside a character", p)
		}
		if !strings.Contains(string(data), "Quokka ünïcödé 🦄 Quokka") || !strings.Contains(string(data), "…") {
			t.Errorf("%s does not show the start of the title, cut with an ellipsis", p)
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, "index.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var rec struct{ Title string }
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Title != title {
		t.Errorf("the root manifest's title has %d bytes, want the whole %d", len(rec.Title), len(title))
	}
}

// TestExportFullDisk: an --out export onto a file system that fills up
// stops with one line naming it and exit 1 (not "context canceled" and
// 130), and once there is room again the next export finishes.
func TestExportFullDisk(t *testing.T) {
	if os.Geteuid() != 0 {
		if os.Getenv("CI") != "" {
			t.Fatal("the full-disk test mounts a tmpfs and must run as root in CI")
		}
		t.Skip("SKIPPING FULL-DISK TEST: mounting a small tmpfs needs root (CI runs it as root)")
	}
	base := t.TempDir()
	dir := filepath.Join(base, "data")
	if _, stderr, code := runFolio(t, "init", "-D", dir); code != 0 {
		t.Fatalf("init: %s", stderr)
	}
	blob := strings.Repeat("0123456789abcdef", 256<<10/16)
	var rels []string
	for i := range 24 {
		id := fmt.Sprintf("0190f3c2a1b27c3d8e4f5a6b7c8d%04x", 0x100+i)
		rels = append(rels, writeSnapshotFiles(t, dir, id, "Page "+id, map[string]string{"pdf/output.pdf": blob}))
	}
	mnt := filepath.Join(base, "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Fatalf("mount tmpfs: %v\n%s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", mnt).Run() })
	out := filepath.Join(mnt, "public")
	// One worker and one snapshot a page: the stream of the selection is
	// still going when the disk fills up.
	_, stderr, code := runFolio(t, "-D", dir, "export", "--out", out, "--workers", "1", "--page-size", "1")
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	last := lines[len(lines)-1]
	if code != 1 || strings.Contains(stderr, "context canceled") || !strings.Contains(last, "no space left") || !strings.Contains(last, "mounted at "+mnt) {
		t.Fatalf("export onto a full disk: exit %d, stderr %q; want exit 1 and one line naming the file system at %s", code, stderr, mnt)
	}
	if out, err := exec.Command("mount", "-o", "remount,size=64m", mnt).CombinedOutput(); err != nil {
		t.Fatalf("remount: %v\n%s", err, out)
	}
	if _, stderr, code := runFolio(t, "-D", dir, "export", "--out", out); code != 0 {
		t.Fatalf("export once there is room: exit %d\n%s", code, stderr)
	}
	for _, rel := range rels {
		for _, f := range []string{"index.html", "pdf/output.pdf"} {
			if fi, err := os.Stat(filepath.Join(out, filepath.FromSlash(rel), f)); err != nil || f == "pdf/output.pdf" && fi.Size() != int64(len(blob)) {
				t.Errorf("%s/%s after the resumed export: %v", rel, f, err)
			}
		}
	}
	filepath.WalkDir(out, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.Contains(d.Name(), "folio-tmp") {
			t.Errorf("temp file left: %s", p)
		}
		return nil
	})
}
