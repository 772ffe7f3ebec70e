package archive_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/folio-archive/folio/archive"
)

func TestInitRefusesForeignDirectory(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "thesis.docx"), []byte("x"), 0o644)
	_, err := archive.Init(dir, false)
	if !errors.Is(err, archive.ErrNotEmpty) || !strings.Contains(err.Error(), "thesis.docx") {
		t.Fatalf("want ErrNotEmpty naming the file, got %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".folio")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("a refused init must create nothing")
	}
	res, err := archive.Init(dir, true)
	if err != nil || res.Existing {
		t.Fatalf("forced init: %v %+v", err, res)
	}
	for _, p := range []string{"archive/users", "sources", "logs", ".folio"} {
		if st, err := os.Stat(filepath.Join(dir, p)); err != nil || !st.IsDir() {
			t.Errorf("missing %s", p)
		}
	}
}

func TestInitAcceptsArchiveBoxDirUntouched(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "index.sqlite3"), []byte("db bytes"), 0o644)
	os.WriteFile(filepath.Join(dir, "ArchiveBox.conf"), []byte("[SERVER_CONFIG]\n"), 0o644)
	os.MkdirAll(filepath.Join(dir, "archive", "1508259732"), 0o755)
	res, err := archive.Init(dir, false)
	if err != nil || !res.Existing {
		t.Fatalf("init on ArchiveBox dir: %v %+v", err, res)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "index.sqlite3")); string(b) != "db bytes" {
		t.Fatal("init changed index.sqlite3")
	}
	again, err := archive.Init(dir, false)
	if err != nil || len(again.Created) != 0 {
		t.Fatalf("second init must be a no-op: %v %+v", err, again)
	}
}

func TestOpenNeverInitedArchiveBoxDir(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "archive", "1508259732"), 0o755)
	c, err := archive.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(c.Path(".folio")); err != nil {
		t.Fatal("Open must create .folio/ on first use")
	}
	if _, err := archive.Open(t.TempDir()); !errors.Is(err, archive.ErrNotCollection) {
		t.Fatalf("open of an empty dir: want ErrNotCollection, got %v", err)
	}
}

func TestLockIsExclusive(t *testing.T) {
	res, err := archive.Init(t.TempDir(), false)
	if err != nil {
		t.Fatal(err)
	}
	c := res.Collection
	l, err := c.Lock("reindex")
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Lock("export")
	if !errors.Is(err, archive.ErrLocked) || !strings.Contains(err.Error(), "folio reindex") {
		t.Fatalf("second lock: want ErrLocked naming the holder, got %v", err)
	}
	if err := l.Unlock(); err != nil {
		t.Fatal(err)
	}
	l2, err := c.Lock("export")
	if err != nil {
		t.Fatalf("lock after unlock: %v", err)
	}
	l2.Unlock()
}

func TestBatchWritesAtomicallyAndSyncs(t *testing.T) {
	dir := t.TempDir()
	b := archive.NewBatch(dir)
	path := filepath.Join(dir, "page.html")
	if err := b.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := b.WriteFileWith(path, 0o644, func(w io.Writer) error { w.Write([]byte("half")); return os.ErrInvalid }); err == nil {
		t.Fatal("want the writer's error")
	}
	if err := b.Sync(); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	entries, _ := os.ReadDir(dir)
	if string(got) != "old" || len(entries) != 1 {
		t.Fatalf("a failed batch write must leave the old file and no temp file: %q %v", got, entries)
	}
}

// TestBatchLeavesTheSameBytes checks that WriteFileUnlessSame leaves a
// file holding the bytes already (the same inode, its mtime kept) and
// replaces one that differs, even by a byte of the same length, one that
// is a hard link (never written through) and a symlink (never followed).
func TestBatchLeavesTheSameBytes(t *testing.T) {
	dir := t.TempDir()
	b := archive.NewBatch(dir)
	path := filepath.Join(dir, "page.html")
	if err := os.WriteFile(path, []byte("<p>one</p>"), 0o644); err != nil {
		t.Fatal(err)
	}
	ino := func(p string) uint64 {
		t.Helper()
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Sys().(*syscall.Stat_t).Ino
	}
	write := func(data string) bool {
		t.Helper()
		same, err := b.WriteFileUnlessSame(path, []byte(data), 0o644)
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(path); string(got) != data {
			t.Fatalf("%s holds %q, want %q", path, got, data)
		}
		return same
	}
	first := ino(path)
	if !write("<p>one</p>") || ino(path) != first {
		t.Fatal("the same bytes were written again")
	}
	if write("<p>two</p>") || ino(path) == first {
		t.Fatal("bytes of the same length that differ were not written")
	}
	if write("<p>three</p>") {
		t.Fatal("a longer content was reported the same")
	}

	link := filepath.Join(dir, "linked.html")
	if err := os.Link(path, link); err != nil {
		t.Fatal(err)
	}
	if write("<p>three</p>") {
		t.Fatal("a file of two links was left in place")
	}
	if got, _ := os.ReadFile(link); string(got) != "<p>three</p>" || ino(link) == ino(path) {
		t.Fatalf("the hard link was written through or kept: %q", got)
	}

	target := filepath.Join(dir, "elsewhere.html")
	if err := os.WriteFile(target, []byte("<p>four</p>"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
	if write("<p>four</p>") {
		t.Fatal("a symlink to the same bytes was left in place")
	}
	if fi, _ := os.Lstat(path); fi.Mode()&os.ModeSymlink != 0 {
		t.Fatal("the symlink is still there")
	}
}

// TestReadFdSizes checks that ReadFd reads a file whole whatever the size
// it is told: the file's own, a smaller one (the file grew since its
// stat) or a larger one (it shrank).
func TestReadFdSizes(t *testing.T) {
	p := filepath.Join(t.TempDir(), "index.jsonl")
	data := []byte(strings.Repeat("0123456789", 1000))
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, size := range []int64{int64(len(data)), 0, 1, int64(len(data)) - 1, int64(len(data)) + 1, 1 << 20} {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		got, err := archive.ReadFd(int(f.Fd()), size)
		f.Close()
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("size %d: read %d bytes, %v; want %d", size, len(got), err, len(data))
		}
	}
}
