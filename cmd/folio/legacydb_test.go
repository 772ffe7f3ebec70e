package main_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/folio-archive/folio/gen"
)

// TestUpdateRefusesSpecialLegacyDatabase: issue 30 item 6. An
// index.sqlite3 that is a fifo (which hung even --dry-run), a character
// device (copied endlessly into $TMPDIR) or a symlink to a database
// outside the collection (which was read) is refused at once: exit 1, one
// line naming the file and what it is, the collection unchanged and
// nothing left in $TMPDIR.
func TestUpdateRefusesSpecialLegacyDatabase(t *testing.T) {
	other := filepath.Join(t.TempDir(), "other")
	if _, err := gen.Legacy(other, gen.LegacyOptions{Version: gen.Legacy07, N: 4, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	kinds := []struct {
		name, want string
		make       func(p string) error
	}{
		{"fifo", "fifo", func(p string) error { return unix.Mkfifo(p, 0o644) }},
		{"chardev", "character device", func(p string) error {
			if os.Geteuid() != 0 {
				t.Skip("NOT TESTED: making a character device (like /dev/zero) needs root; CI runs as root")
			}
			return unix.Mknod(p, unix.S_IFCHR|0o644, int(unix.Mkdev(1, 5)))
		}},
		{"symlink", "symlink", func(p string) error { return os.Symlink(filepath.Join(other, "index.sqlite3"), p) }},
	}
	for _, k := range kinds {
		for _, dry := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/dry=%v", k.name, dry), func(t *testing.T) {
				dir := t.TempDir()
				updCollection(t, dir, 2)
				db := filepath.Join(dir, "index.sqlite3")
				if err := k.make(db); err != nil {
					t.Fatal(err)
				}
				tmp := t.TempDir()
				before := updTree(t, dir)
				args := []string{"--data-dir", dir, "update", "--migrate-only"}
				if dry {
					args = append(args, "--dry-run")
				}
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
				defer cancel()
				cmd := exec.CommandContext(ctx, folioBin(t), args...)
				cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
				r := updExec(t, cmd)
				if ctx.Err() != nil {
					t.Fatalf("folio hung on an index.sqlite3 that is a %s", k.name)
				}
				if r.code != 1 || !regexpLine(r.stderr, db, k.want) || strings.Count(r.stderr, "folio: ") != 1 {
					t.Errorf("exit %d, want 1 and one line naming %s as a %s:\n%s", r.code, db, k.want, r.stderr)
				}
				if d := updDiff(before, updTree(t, dir)); d != "" {
					t.Errorf("the collection changed:\n%s", d)
				}
				if entries, _ := os.ReadDir(tmp); len(entries) > 0 {
					t.Errorf("left in $TMPDIR: %v", entries)
				}
			})
		}
	}
}

// TestUpdateRemovesStaleDatabaseCopies: issue 30 item 9 for the
// migration. A copy of the legacy database that a killed run left in
// $TMPDIR is removed by the next migration; one a live process may still
// be reading is kept, and so is everything else there.
func TestUpdateRemovesStaleDatabaseCopies(t *testing.T) {
	dir := t.TempDir()
	updCollection(t, dir, 2)
	tmp := t.TempDir()
	// A process that has ended: its pid is dead.
	done := exec.Command("true")
	if err := done.Run(); err != nil {
		t.Fatal(err)
	}
	dead := done.Process.Pid
	mk := func(name string) string {
		p := filepath.Join(tmp, name)
		if err := os.MkdirAll(p, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(p, "index.sqlite3"), []byte("copy"), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	stale := mk(fmt.Sprintf("folio-legacydb-%d-123", dead))
	live := mk(fmt.Sprintf("folio-legacydb-%d-456", os.Getpid()))
	other := mk("folio-chromium-789")
	r := updRun(t, dir, []string{"TMPDIR=" + tmp}, "update", "--migrate-only")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if _, err := os.Lstat(stale); err == nil {
		t.Errorf("the copy a dead process left is still there: %s", stale)
	}
	for _, p := range []string{live, other} {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s was removed: %v", p, err)
		}
	}
}
