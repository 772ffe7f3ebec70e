package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// twoFS lays a collection out over two fresh ext4 filesystems, each an
// image file on a loop device: the data directory (with the legacy
// archive/<timestamp>/ folders) on one, archive/users/ — where migrated
// snapshots go — on the other, as when a user has mounted a new disk
// there. Every rename between them fails with EXDEV, so the migration
// takes its real copy path, and the baselines copy the same folders
// between the same two filesystems.
//
// Both are made afresh (mkfs) before every repetition, with default
// mount options: a measurement never starts on a filesystem that an
// earlier one left fragmented or with inodes still being freed. Mounting
// needs root and loop devices; newTwoFS says why it cannot.
type twoFS struct {
	b          *B
	imgA, imgB string
	data       string // where A is mounted: the data directory
	users      string // data/archive/users, where B is mounted
}

func newTwoFS(b *B, size int64) (*twoFS, error) {
	if os.Geteuid() != 0 {
		return nil, errors.New("mounting needs root")
	}
	for _, tool := range []string{"mkfs.ext4", "mount", "umount"} {
		if _, err := exec.LookPath(tool); err != nil {
			return nil, err
		}
	}
	dir := filepath.Join(b.Work, "twofs")
	t := &twoFS{b: b, imgA: filepath.Join(dir, "a.img"), imgB: filepath.Join(dir, "b.img"), data: filepath.Join(dir, "data")}
	t.users = filepath.Join(t.data, "archive", "users")
	t.unmount() // left by an interrupted run
	if err := os.MkdirAll(t.data, 0o755); err != nil {
		return nil, err
	}
	for _, img := range []string{t.imgA, t.imgB} {
		f, err := os.OpenFile(img, os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			return nil, err
		}
		err = f.Truncate(size) // sparse: blocks are taken as written
		f.Close()
		if err != nil {
			return nil, err
		}
	}
	return t, nil
}

// reset makes both filesystems afresh and puts a copy of the collection
// tmpl on A, with B mounted at archive/users.
func (t *twoFS) reset(tmpl string) error {
	t.unmount()
	for _, img := range []string{t.imgA, t.imgB} {
		// nodiscard: no trim of the image on this disk; no lazy init: no
		// kernel thread writing inode tables during the measurement.
		if err := t.run("mkfs.ext4", "-q", "-F", "-E", "nodiscard,lazy_itable_init=0,lazy_journal_init=0", img); err != nil {
			return err
		}
	}
	if err := t.run("mount", "-o", "loop", t.imgA, t.data); err != nil {
		return err
	}
	if err := t.run("sh", "-c", `cp -a "$1"/. "$2"`, "sh", tmpl, t.data); err != nil {
		return err
	}
	if err := os.MkdirAll(t.users, 0o755); err != nil {
		return err
	}
	if err := t.run("mount", "-o", "loop", t.imgB, t.users); err != nil {
		return err
	}
	// An empty archive/users as on a new disk (lost+found aside, which
	// mkfs makes and every mounted ext4 root has).
	return t.run("sync")
}

// copyCmd is the baseline: cp -a of every legacy folder from A to B, then
// script (e.g. sync, or the rm -rf and sync of a move).
func (t *twoFS) copyCmd(then string) *exec.Cmd {
	archive := filepath.Join(t.data, "archive")
	dst := filepath.Join(t.users, "cp-a")
	script := `mkdir "$2" && find "$1" -mindepth 1 -maxdepth 1 ! -name users -exec cp -a -t "$2" {} + && ` + then
	return exec.CommandContext(t.b.Ctx, "sh", "-c", script, "sh", archive, dst)
}

// unmount unmounts both filesystems, if mounted.
func (t *twoFS) unmount() {
	for _, m := range []string{t.users, t.data} {
		if exec.Command("mountpoint", "-q", m).Run() == nil {
			_ = exec.Command("umount", m).Run()
		}
	}
}

// close unmounts both filesystems and removes their images.
func (t *twoFS) close() {
	t.unmount()
	os.Remove(t.imgA)
	os.Remove(t.imgB)
}

func (t *twoFS) run(name string, args ...string) error {
	out, err := exec.CommandContext(t.b.Ctx, name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %v %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}
