package rawsys_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/folio-archive/folio/internal/rawsys"
)

// TestCallsAgreeWithUnix makes each call on a small tree and checks it
// against golang.org/x/sys/unix's own: the same bytes, stats and names,
// and a failure as the bare errno.
func TestCallsAgreeWithUnix(t *testing.T) {
	dir := t.TempDir()
	data := bytes.Repeat([]byte("folio "), 1000)
	if err := os.WriteFile(filepath.Join(dir, "file"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("file", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	dfd, err := rawsys.Openat(unix.AT_FDCWD, dir, unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		t.Fatal(err)
	}
	defer rawsys.Close(dfd)
	if flags, err := unix.FcntlInt(uintptr(dfd), unix.F_GETFD, 0); err != nil || flags&unix.FD_CLOEXEC == 0 {
		t.Errorf("descriptor flags %#x, %v: want close-on-exec", flags, err)
	}

	fd, err := rawsys.Openat(dfd, "file", unix.O_RDONLY)
	if err != nil {
		t.Fatal(err)
	}
	var st, want unix.Stat_t
	if err := rawsys.Fstat(fd, &st); err != nil {
		t.Fatal(err)
	}
	if err := unix.Fstat(fd, &want); err != nil || st != want || st.Size != int64(len(data)) {
		t.Errorf("Fstat %+v, unix.Fstat %+v (%v)", st, want, err)
	}
	buf := make([]byte, 4096)
	n, err := rawsys.Pread(fd, buf[:10], 6)
	if err != nil || string(buf[:n]) != "folio foli" {
		t.Errorf("Pread at 6: %q, %v", buf[:n], err)
	}
	var got []byte
	for {
		n, err := rawsys.Read(fd, buf)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		got = append(got, buf[:n]...)
	}
	if !bytes.Equal(got, data) {
		t.Errorf("Read gave %d bytes, want %d", len(got), len(data))
	}
	if err := rawsys.Close(fd); err != nil {
		t.Error(err)
	}
	if err := rawsys.Close(fd); err != unix.EBADF {
		t.Errorf("second Close: %v, want EBADF", err)
	}

	if err := rawsys.Lstatat(dfd, "link", &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFLNK {
		t.Errorf("Lstatat of a symlink: mode %#o, %v", st.Mode, err)
	}
	if err := rawsys.Lstatat(dfd, "none", &st); err != unix.ENOENT {
		t.Errorf("Lstatat of nothing: %v, want ENOENT", err)
	}
	if _, err := rawsys.Openat(dfd, "link", unix.O_RDONLY|unix.O_NOFOLLOW); err != unix.ELOOP {
		t.Errorf("Openat of a symlink with O_NOFOLLOW: %v, want ELOOP", err)
	}
	if _, err := rawsys.Openat(dfd, "a\x00b", unix.O_RDONLY); err != unix.EINVAL {
		t.Errorf("Openat of a name with a NUL: %v, want EINVAL", err)
	}

	// Openat2 opens through no symlink at any step when told so.
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sub", "inner"), data[:6], 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("sub", filepath.Join(dir, "sublink")); err != nil {
		t.Fatal(err)
	}
	fd, err = rawsys.Openat2(dfd, "sub/inner", unix.O_RDONLY, unix.RESOLVE_NO_SYMLINKS)
	if err != nil {
		t.Fatalf("Openat2 of sub/inner: %v", err)
	}
	if n, err := rawsys.Pread(fd, buf, 0); err != nil || string(buf[:n]) != "folio " {
		t.Errorf("Pread of sub/inner: %q, %v", buf[:n], err)
	}
	rawsys.Close(fd)
	for _, name := range []string{"sublink/inner", "link"} {
		if _, err := rawsys.Openat2(dfd, name, unix.O_RDONLY, unix.RESOLVE_NO_SYMLINKS); err != unix.ELOOP {
			t.Errorf("Openat2 of %s through a symlink: %v, want ELOOP", name, err)
		}
	}
	var stx, stxWant unix.Statx_t
	const mask = unix.STATX_TYPE | unix.STATX_NLINK | unix.STATX_CTIME | unix.STATX_BTIME
	if err := rawsys.Statx(dfd, "sub", unix.AT_SYMLINK_NOFOLLOW, mask, &stx); err != nil {
		t.Fatal(err)
	}
	if err := unix.Statx(dfd, "sub", unix.AT_SYMLINK_NOFOLLOW, mask, &stxWant); err != nil || stx != stxWant || stx.Mode&unix.S_IFMT != unix.S_IFDIR || stx.Nlink != 2 {
		t.Errorf("Statx %+v, unix.Statx %+v (%v)", stx, stxWant, err)
	}
	if err := rawsys.Statx(dfd, "sublink", unix.AT_SYMLINK_NOFOLLOW, mask, &stx); err != nil || stx.Mode&unix.S_IFMT != unix.S_IFLNK {
		t.Errorf("Statx of a symlink: mode %#o, %v", stx.Mode, err)
	}
	var fs, fsWant unix.Statfs_t
	if err := rawsys.Fstatfs(dfd, &fs); err != nil {
		t.Fatal(err)
	}
	if err := unix.Fstatfs(dfd, &fsWant); err != nil || fs.Type != fsWant.Type || fs.Type == 0 {
		t.Errorf("Fstatfs type %#x, unix.Fstatfs %#x (%v)", fs.Type, fsWant.Type, err)
	}

	names := map[string]bool{}
	for {
		n, err := rawsys.Getdents(dfd, buf)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		var list []string
		_, _, list = unix.ParseDirent(buf[:n], -1, list)
		for _, name := range list {
			names[name] = true
		}
	}
	if len(names) != 4 || !names["file"] || !names["link"] || !names["sub"] || !names["sublink"] {
		t.Errorf("Getdents listed %v", names)
	}
}
