package layout_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/folio-archive/folio/layout"
)

func TestDomain(t *testing.T) {
	tests := []struct{ url, want string }{
		// Verified examples, spec §1.4.
		{"https://example.com:8080", "example.com_8080"},
		{"HTTP://Example.COM/", "example.com"},
		{"http://[::1]:8080/", "__1_8080"},
		{"http://[::1]/", "::1"},
		{"http://[2001:db8::1]/", "2001:db8::1"},
		{"https://münchen.de/", "münchen.de"},
		{"https://user:pw@example.com/", "example.com"},
		{"http://example.com:80/", "example.com_80"},
		{"http://example.com:0/", "example.com"},
		{"http://example.com:abc/", "unknown"},
		{"http://example.com:99999/", "unknown"},
		{"http:///path", "unknown"},
		{"http://example.com./", "example.com."},
		{"http://127.0.0.1:8000/", "127.0.0.1_8000"},
		// Schemes.
		{"ftp://x/", "ftp"},
		{"data:text/html,hi", "data"},
		{"mailto:a@b.c", "mailto"},
		{"FILE:///etc/passwd", "localhost"},
		{"example.com/page", "unknown"},
		{"", "unknown"},
		{"git+ssh://host/repo", "git+ssh"},
		// Ports.
		{"http://example.com:/", "example.com"},
		{"http://example.com:00/", "example.com"},
		{"http://example.com:0080/", "example.com_80"},
		{"http://example.com:65535/", "example.com_65535"},
		{"http://example.com:65536/", "unknown"},
		{"http://example.com:+80/", "unknown"},
		{"http://example.com:٨٠/", "unknown"},
		{"http://:8080/", "None_8080"}, // Python formats the missing hostname as None
		{"http://user@:0/", "unknown"},
		// Brackets and IPv6.
		{"http://[::1/", "unknown"},
		{"http://::1]/", "unknown"},
		{"http://[1.2.3.4]/", "unknown"},
		{"http://[::ffff:1.2.3.4]:81/", "__ffff_1.2.3.4_81"},
		{"http://[fe80::1%ETH0]/", "fe80::1%ETH0"},
		{"http://[FE80::A]/", "fe80::a"},
		{"http://[::1]x/", "unknown"},
		{"http://x[::1]/", "unknown"},
		{"http://[v1.x]/", "v1.x"},
		{"http://[1::2::3]/", "unknown"},
		// Unicode, NFKC and Python's str.lower.
		{"http://a\u2100b/", "unknown"},
		{"http://ex\uff0fample.com/", "unknown"},
		{"http://İSTANBUL.tr/", "i\u0307stanbul.tr"},
		{"http://ΟΔΟΣ/", "οδος"},
		{"http://ΟΔΟΣ.gr/", "οδοσ.gr"},
		// Whitespace and controls.
		{" \x00\thttp://a.com", "a.com"},
		{"http://a\t.c\nom/", "a.com"},
		// Never an unsafe component.
		{"http://./", "unknown"},
		{"http://../", "unknown"},
		{"http://a\x00b/", "unknown"},
		{"http://" + strings.Repeat("a", 256) + "/", "unknown"},
		{"http://" + strings.Repeat("a", 255) + "/", strings.Repeat("a", 255)},
	}
	for _, tt := range tests {
		if got := layout.Domain(tt.url); got != tt.want {
			t.Errorf("Domain(%q) = %q, want %q", tt.url, got, tt.want)
		}
	}
}

func TestNetloc(t *testing.T) {
	tests := []struct{ url, want string }{
		{"https://User:pw@Example.COM:8080/x", "User:pw@Example.COM:8080"},
		{"http://[::1]:8080/", "[::1]:8080"},
		{"mailto:a@b", ""},
		{"http://[::1/", ""},
		{"http://example.com:abc/", "example.com:abc"},
	}
	for _, tt := range tests {
		if got := layout.Netloc(tt.url); got != tt.want {
			t.Errorf("Netloc(%q) = %q, want %q", tt.url, got, tt.want)
		}
	}
}

func TestLegacyTimestamp(t *testing.T) {
	tests := []struct {
		name string
		sec  int64
		ok   bool
	}{
		{"1508259732", 1508259732, true},
		{"1508259732.0", 1508259732, true},
		{"1508259732.999", 1508259732, true},
		{"1609459200.123456", 1609459200, true},
		{"1.5e9", 1500000000, true},
		{" 1508259732 ", 1508259732, true},
		{"1_508_259_732", 1508259732, true},
		{"١٥٠٨٢٥٩٧٣٢", 1508259732, true},
		{"788918400", 788918400, true},
		{"788918399", 0, false},
		{"788918399.9", 0, false},
		{"2082758400", 2082758400, true},
		{"2082758400.9", 2082758400, true},
		{"2082758401", 0, false},
		{"-1508259732", 0, false},
		{"inf", 0, false},
		{"-Infinity", 0, false},
		{"nan", 0, false},
		{"0x5a000000", 0, false},
		{"123_abc", 0, false},
		{"1508259732_1", 0, false}, // float() accepts it (15082597321), out of range
		{"20240101120000.000000", 0, false},
		{"1e400", 0, false},
		{"\x1c1508259732", 0, false},
		{"users", 0, false},
		{"snapshots", 0, false},
		{"crawls", 0, false},
		{"invalid", 0, false},
		{".DS_Store", 0, false},
		{".1508259732", 0, false},
		{"", 0, false},
	}
	for _, tt := range tests {
		sec, ok := layout.LegacyTimestamp(tt.name)
		if sec != tt.sec || ok != tt.ok {
			t.Errorf("LegacyTimestamp(%q) = %d, %v, want %d, %v", tt.name, sec, ok, tt.sec, tt.ok)
		}
	}
}

func TestPyFloat(t *testing.T) {
	tests := []struct {
		s  string
		f  float64
		ok bool
	}{
		{"1.", 1, true},
		{".5", 0.5, true},
		{"+1E+3", 1000, true},
		{"1508259732_1", 15082597321, true},
		{"1_5e1_0", 15e10, true},
		{"\u00a01\u3000", 1, true},
		{"\t1\n", 1, true},
		{"1e-400", 0, true},
		{"-0", 0, true},
		{"1_", 0, false},
		{"_1", 0, false},
		{"1__2", 0, false},
		{"1_.5", 0, false},
		{"1._5", 0, false},
		{"1_e5", 0, false},
		{"1 2", 0, false},
		{".", 0, false},
		{"1e", 0, false},
		{"e5", 0, false},
		{"infinity", 0, false},
		{"+nan", 0, false},
		{"1e400", 0, false},
		{"0x10", 0, false},
		{"1\x1c", 0, false},
		{"1\x7f", 0, false},
		{"\xff", 0, false},
	}
	for _, tt := range tests {
		f, ok := layout.PyFloat(tt.s)
		if f != tt.f || ok != tt.ok {
			t.Errorf("PyFloat(%q) = %v, %v, want %v, %v", tt.s, f, ok, tt.f, tt.ok)
		}
	}
}

func TestBestTimestamp(t *testing.T) {
	tests := []struct {
		index, folder, want string
		ok                  bool
	}{
		{"1508259732.0", "1508259732", "1508259732", true},
		{"1508259732", "1508259732.0", "1508259732.0", true},
		{" 1508259732.5 ", "not-a-timestamp", "1508259732.5", true},
		{"1508259732", " 1508259733 ", "1508259733", true},
		{"", "1508259732", "1508259732", true},
		{"garbage", "also-garbage", "", false},
		{"20240101120000.000000", "20240101120000.000000", "", false},
		{"", "", "", false},
	}
	for _, tt := range tests {
		got, ok := layout.BestTimestamp(tt.index, tt.folder)
		if got != tt.want || ok != tt.ok {
			t.Errorf("BestTimestamp(%q, %q) = %q, %v, want %q, %v", tt.index, tt.folder, got, ok, tt.want, tt.ok)
		}
	}
}

func TestBumpTimestamp(t *testing.T) {
	tests := []struct {
		ts   string
		n    int
		want string
	}{
		{"1508259732", 1, "1508259732.000001"},
		{"1508259732", 2, "1508259732.000002"},
		{"1508259732.5", 1, "1508259732.500001"},
		{"1508259732.999999", 1, "1508259733"},
		{"1508259732.000001", 999999, "1508259733"},
		{"1508259732", 1000000, "1508259733"},
		{"1.5e9", 1, "1500000000.000001"},
		{" 1_508_259_732 ", 1, "1508259732.000001"},
		{"20240101120000.000000", 1, "20240101120000.000001"}, // exact, unlike float64
		{"1508259732.1234565", 1, "1508259732.123458"},        // exact; Python float gives .123457
		{"-0.000001", 1, "0"},
		{"0", 1, "0.000001"},
		{"1e-99999999", 1, "0.000001"},
		{"garbage", 1, ""},
		{"inf", 1, ""},
	}
	for _, tt := range tests {
		if got := layout.BumpTimestamp(tt.ts, tt.n); got != tt.want {
			t.Errorf("BumpTimestamp(%q, %d) = %q, want %q", tt.ts, tt.n, got, tt.want)
		}
	}
}

func TestIDs(t *testing.T) {
	const hex = "06a968de3dbf7942800020c7cf0795e8"
	const dashed = "06a968de-3dbf-7942-8000-20c7cf0795e8"
	for _, in := range []string{hex, strings.ToUpper(hex), dashed, strings.ToUpper(dashed)} {
		if got, ok := layout.ParseID(in); !ok || got != hex {
			t.Errorf("ParseID(%q) = %q, %v", in, got, ok)
		}
	}
	for _, in := range []string{"", hex[:31], hex + "0", "06a968de-3dbf-7942-8000_20c7cf0795e8", "g6a968de3dbf7942800020c7cf0795e8", "06a968de3-dbf-7942-8000-20c7cf0795e8", "{" + dashed[1:35] + "}"} {
		if got, ok := layout.ParseID(in); ok {
			t.Errorf("ParseID(%q) = %q, true", in, got)
		}
	}
	if !layout.IsCompactID(hex) || layout.IsCompactID(strings.ToUpper(hex)) || layout.IsCompactID(dashed) {
		t.Error("IsCompactID")
	}
	if !layout.IsDashedID(dashed) || !layout.IsDashedID(strings.ToUpper(dashed)) || layout.IsDashedID(hex) {
		t.Error("IsDashedID")
	}
	if got, ok := layout.Undash(strings.ToUpper(dashed)); !ok || got != hex {
		t.Errorf("Undash(upper dashed) = %q, %v", got, ok)
	}
	if got, ok := layout.Undash(hex); ok {
		t.Errorf("Undash(compact) = %q, true", got)
	}
	if got := layout.Dashed(hex); got != dashed {
		t.Errorf("Dashed = %q", got)
	}
	if got := layout.Dashed(strings.ToUpper(dashed)); got != dashed {
		t.Errorf("Dashed(upper dashed) = %q", got)
	}
	if got := layout.Dashed("nope"); got != "" {
		t.Errorf("Dashed(nope) = %q", got)
	}
}

func TestDirs(t *testing.T) {
	const id = "06a968de3dbf7942800020c7cf0795e8"
	date := time.Date(2026, 9, 1, 23, 30, 0, 0, time.FixedZone("x", -3*3600)) // 2026-09-02 UTC
	got, err := layout.SnapshotDir("system", date, "https://www.youtube.com/watch?v=1", id)
	if want := "archive/users/system/snapshots/20260902/www.youtube.com/" + id; err != nil || got != want {
		t.Errorf("SnapshotDir = %q, %v, want %q", got, err, want)
	}
	got, err = layout.SnapshotDir("admin", time.Time{}, "ftp://x/", id)
	if want := "archive/users/admin/snapshots/unknown/ftp/" + id; err != nil || got != want {
		t.Errorf("SnapshotDir = %q, %v, want %q", got, err, want)
	}
	for _, bad := range [][2]string{{"system", strings.ToUpper(id)}, {"system", layout.Dashed(id)}, {"..", id}, {"a/b", id}, {"", id}} {
		if _, err := layout.SnapshotDir(bad[0], date, "https://a/", bad[1]); err == nil {
			t.Errorf("SnapshotDir(%q, %q) accepted", bad[0], bad[1])
		}
	}
	urls := "\n  # comment\n\t\n  https://Example.com:8080/a \r\nhttps://other/\n"
	got, err = layout.CrawlDir("system", time.Unix(1609459200, 0), urls, id)
	if want := "archive/users/system/crawls/20210101/example.com_8080/" + id; err != nil || got != want {
		t.Errorf("CrawlDir = %q, %v, want %q", got, err, want)
	}
	got, _ = layout.CrawlDir("system", time.Unix(1609459200, 0), "# only\n\n", id)
	if want := "archive/users/system/crawls/20210101/unknown/" + id; got != want {
		t.Errorf("CrawlDir = %q, want %q", got, want)
	}
	if got := layout.Bucket(time.Unix(1609459200, 123456000)); got != "20210101" {
		t.Errorf("Bucket = %q", got)
	}
	if got, err := layout.LegacyDir("1508259732.0"); err != nil || got != "archive/1508259732.0" {
		t.Errorf("LegacyDir = %q, %v", got, err)
	}
}

func TestFSVersion(t *testing.T) {
	for v, want := range map[string]string{"0.7.0": "0.9.0", "0.8.0": "0.9.0", "0.8.5": "0.9.0", "0.9.0": "0.9.4", "0.9.3": "0.9.4"} {
		if got, ok := layout.NextFSVersion(v); !ok || got != want {
			t.Errorf("NextFSVersion(%q) = %q, %v", v, got, ok)
		}
	}
	for _, v := range []string{layout.Current, "0.6.0", "1.0.0", ""} {
		if _, ok := layout.NextFSVersion(v); ok {
			t.Errorf("NextFSVersion(%q) has a hop", v)
		}
	}
	if !layout.IsLegacyFSVersion("0.8.5") || layout.IsLegacyFSVersion("0.9.0") || layout.IsLegacyFSVersion("1.0.0") {
		t.Error("IsLegacyFSVersion")
	}
	if layout.MigrationNeeded(layout.Current) || !layout.MigrationNeeded("1.0.0") {
		t.Error("MigrationNeeded")
	}
}

func TestJoin(t *testing.T) {
	root := filepath.FromSlash("/data/archive")
	for _, rel := range []string{"../x", "a/../../x", "a/..", "/etc/passwd", "a\x00b", "", ".", "./", "a/../b"} {
		if got, err := layout.Join(root, rel); !errors.Is(err, layout.ErrUnsafePath) {
			t.Errorf("Join(%q) = %q, %v, want ErrUnsafePath", rel, got, err)
		}
	}
	for rel, want := range map[string]string{"a/b": "a/b", "./a//b/": "a/b", "..a/b..": "..a/b..", "%2e%2e/x": "%2e%2e/x"} {
		got, err := layout.Join(root, rel)
		if err != nil || got != filepath.Join(root, filepath.FromSlash(want)) {
			t.Errorf("Join(%q) = %q, %v", rel, got, err)
		}
	}
}

func TestJoinNoSymlinks(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "root")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{filepath.Join(root, "snap", "sub"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	links := map[string]string{
		"snap/abs-out": outside,
		"snap/rel-out": "../../outside",
		"snap/in":      "sub",
		"snap/abs-in":  filepath.Join(root, "snap", "sub"),
		"snap/chain":   "in/../rel-out", // inside, then out through another link
		"snap/loop":    "loop",
		"snap/upin":    "sub/../..", // resolves to root itself: allowed
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(root, filepath.FromSlash(name))); err != nil {
			t.Skipf("symlinks unavailable: %v", err)
		}
	}
	for _, rel := range []string{"snap/abs-out/secret", "snap/rel-out", "snap/rel-out/secret", "snap/chain/secret", "snap/loop/x", "snap/upin/../x"} {
		if got, err := layout.JoinNoSymlinks(root, rel); !errors.Is(err, layout.ErrUnsafePath) {
			t.Errorf("JoinNoSymlinks(%q) = %q, %v, want ErrUnsafePath", rel, got, err)
		}
	}
	for _, rel := range []string{"snap/in/file", "snap/abs-in/x/y", "snap/missing/deeper", "snap/upin/snap", "snap/sub"} {
		got, err := layout.JoinNoSymlinks(root, rel)
		if err != nil || got != filepath.Join(root, filepath.FromSlash(rel)) {
			t.Errorf("JoinNoSymlinks(%q) = %q, %v", rel, got, err)
		}
	}
	// StatNoSymlinks refuses the same paths and says what the others name.
	if err := os.WriteFile(filepath.Join(root, "snap", "sub", "file"), []byte("12345"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, rel := range []string{"snap/abs-out/secret", "snap/chain/secret", "snap/loop/x"} {
		if _, _, err := layout.StatNoSymlinks(root, rel); !errors.Is(err, layout.ErrUnsafePath) {
			t.Errorf("StatNoSymlinks(%q): %v, want ErrUnsafePath", rel, err)
		}
	}
	for rel, size := range map[string]int64{"snap/in/file": 5, "snap/abs-in/file": 5, "snap/sub/file": 5, "snap/sub/./file": 5, "snap/upin/snap/sub/file": 5} {
		got, fi, err := layout.StatNoSymlinks(root, rel)
		if err != nil || got != filepath.Join(root, filepath.FromSlash(rel)) || !fi.Mode().IsRegular() || fi.Size() != size {
			t.Errorf("StatNoSymlinks(%q) = %q, %v, %v", rel, got, fi, err)
		}
	}
	for _, rel := range []string{"snap/in", "snap/upin", "snap/upin/snap"} {
		if _, fi, err := layout.StatNoSymlinks(root, rel); err != nil || !fi.IsDir() {
			t.Errorf("StatNoSymlinks(%q): %v, %v, want a folder", rel, fi, err)
		}
	}
	for _, rel := range []string{"snap/missing/deeper", "snap/in/none", "snap/sub/file/x"} {
		if _, _, err := layout.StatNoSymlinks(root, rel); !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			t.Errorf("StatNoSymlinks(%q): %v, want a missing file", rel, err)
		}
	}
	// Plain Join does not look at the disk.
	if _, err := layout.Join(root, "snap/abs-out/secret"); err != nil {
		t.Errorf("Join: %v", err)
	}
}

func TestComponent(t *testing.T) {
	for _, s := range []string{"a", "münchen.de", "::1", "a b", strings.Repeat("x", 255)} {
		if !layout.Component(s) {
			t.Errorf("Component(%q) = false", s)
		}
	}
	for _, s := range []string{"", ".", "..", "a/b", "a\x00", "\xff", strings.Repeat("x", 256)} {
		if layout.Component(s) {
			t.Errorf("Component(%q) = true", s)
		}
	}
}
