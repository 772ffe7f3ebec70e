package main_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/folio-archive/folio/archive"
)

// smallFS mounts a tmpfs of size bytes on a fresh folder and returns it;
// it is unmounted when the test ends. It needs root (CI runs as root);
// elsewhere the test is skipped, loudly.
func smallFS(t *testing.T, size int) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("NOT TESTED: mounting a small tmpfs to fill needs root; CI runs as root")
	}
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d,mode=0755", size), "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Fatalf("mount tmpfs: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", mnt).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v\n%s", mnt, err, out)
		}
	})
	return mnt
}

// fill writes a file at p that leaves about free bytes free on its file
// system.
func fill(t *testing.T, p string, free int64) {
	t.Helper()
	var st unix.Statfs_t
	if err := unix.Statfs(filepath.Dir(p), &st); err != nil {
		t.Fatal(err)
	}
	n := int64(st.Bavail)*st.Bsize - free
	if n <= 0 {
		t.Fatalf("only %d bytes free", int64(st.Bavail)*st.Bsize)
	}
	if err := os.WriteFile(p, make([]byte, n), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestUpdateStopsOnAFullDisk: issue 30 item 10 for the migration. When
// the file system fills up, the migration stops at the first "no space
// left on device" with one line naming the file system (not a warning
// per folder), exits 1, and once space is freed a rerun finishes the
// work with every byte in place.
func TestUpdateStopsOnAFullDisk(t *testing.T) {
	mnt := smallFS(t, 16<<20)
	dir := filepath.Join(mnt, "data")
	if _, err := archive.Init(dir, false); err != nil {
		t.Fatal(err)
	}
	const n = 20
	for i := 0; i < n; i++ {
		ts := fmt.Sprint(1599955200 + i*86400)
		writeRel(t, dir, "archive/"+ts+"/index.json", fmt.Sprintf(`{"url": "https://full.example/%d", "timestamp": %q}`, i, ts))
		writeRel(t, dir, "archive/"+ts+"/output.html", strings.Repeat(fmt.Sprintf("payload %d ", i), 20000)) // about 200 kB
	}
	payloads := map[string]string{}
	for rel, v := range updTree(t, filepath.Join(dir, "archive")) {
		if strings.HasSuffix(rel, "/output.html") {
			payloads[v] = rel
		}
	}
	filler := filepath.Join(mnt, "filler")
	fill(t, filler, 100<<10)

	// A copy (as across file systems) needs the space a rename does not.
	env := []string{"FOLIO_MIGRATE_COPY=1"}
	r := updRun(t, dir, env, "update", "--migrate-only")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	full := 0
	for _, line := range strings.Split(r.stderr, "\n") {
		if strings.Contains(line, "no space left") {
			full++
			if !strings.Contains(line, mnt) {
				t.Errorf("the line does not name the file system mounted at %s: %s", mnt, line)
			}
		}
	}
	if full != 1 || strings.Contains(r.stderr, "Skipped (error") {
		t.Errorf("want one line about the full disk and no line per folder, got %d:\n%s", full, r.stderr)
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	r = updRun(t, dir, env, "update", "--migrate-only")
	if r.code != 0 {
		t.Fatalf("rerun with space: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	got := map[string]bool{}
	for rel, v := range updTree(t, filepath.Join(dir, "archive")) {
		if strings.HasPrefix(rel, "users/") && strings.HasSuffix(rel, "/output.html") {
			if _, ok := payloads[v]; !ok {
				t.Errorf("%s: unexpected content %s", rel, v)
			}
			got[v] = true
		} else if rel != "." && !strings.HasPrefix(rel, "users") {
			t.Errorf("left behind: %s", rel)
		}
	}
	if len(got) != n {
		t.Errorf("%d of %d payloads migrated whole", len(got), n)
	}
	if entries, _ := filepath.Glob(filepath.Join(dir, "archive/users/*/snapshots/*/*/.*folio-tmp*")); len(entries) > 0 {
		t.Errorf("temp folders left: %v", entries)
	}
}
