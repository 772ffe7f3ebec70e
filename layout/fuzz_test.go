package layout_test

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/folio-archive/folio/layout"
)

func FuzzDomain(f *testing.F) {
	for _, s := range []string{"https://example.com:8080", "http://[::1]:8080/", "http://[fe80::1%25x]/", "https://münchen.de/", "http://:8080/", "data:x", "http://./", "http://ΟΔΟΣ/", "http://İ/", "\x00http://a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d := layout.Domain(s)
		if !layout.Component(d) {
			t.Fatalf("Domain(%q) = %q is not a safe component", s, d)
		}
		_ = layout.Netloc(s)
	})
}

func FuzzLegacyTimestamp(f *testing.F) {
	for _, s := range []string{"1508259732", "1.5e9", " 1508259732 ", "1_508_259_732", "inf", "nan", "0x10", "123_abc", "2082758400.9", "١٥٠٨٢٥٩٧٣٢", "1e-99999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sec, ok := layout.LegacyTimestamp(s)
		if ok && (sec < layout.MinLegacyTimestamp || sec > layout.MaxLegacyTimestamp) {
			t.Fatalf("LegacyTimestamp(%q) = %d out of range", s, sec)
		}
		if v, ok := layout.PyFloat(s); ok && (math.IsInf(v, 0) || math.IsNaN(v)) {
			t.Fatalf("PyFloat(%q) = %v", s, v)
		}
		if ts, ok := layout.BestTimestamp(s, s); ok {
			if b := layout.BumpTimestamp(ts, 1); b == "" || b == ts {
				t.Fatalf("BumpTimestamp(%q, 1) = %q", ts, b)
			}
		}
	})
}

func FuzzJoin(f *testing.F) {
	for _, s := range []string{"a/b", "../x", "a/../../x", "/etc/passwd", "a\x00b", "", ".", "a//b/./c"} {
		f.Add("/data/root", s)
		f.Add("rel", s)
	}
	f.Add("/", "etc")
	f.Fuzz(func(t *testing.T, root, rel string) {
		p, err := layout.Join(root, rel)
		if err != nil {
			return
		}
		r := filepath.Clean(root)
		prefix := r + string(filepath.Separator)
		if r == string(filepath.Separator) {
			prefix = r
		}
		if !strings.HasPrefix(p, prefix) || p == r {
			t.Fatalf("Join(%q, %q) = %q is not under root", root, rel, p)
		}
		if rest, _ := filepath.Rel(r, p); rest == ".." || strings.HasPrefix(rest, ".."+string(filepath.Separator)) {
			t.Fatalf("Join(%q, %q) = %q escapes", root, rel, p)
		}
	})
}
