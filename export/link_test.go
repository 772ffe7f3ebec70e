package export

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestQuote(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"wget/index%3A.html", "wget/index%253A.html"},
		{"a b/c.html", "a%20b/c.html"},
		{"x?y=1#frag", "x%3Fy=1%23frag"},
		{"héllo/日本.png", "h%C3%A9llo/%E6%97%A5%E6%9C%AC.png"},
		{"safe/@-._~!$&'()*+,;=", "safe/@-._~!$&'()*+,;="},
		{"a:b\"c<d>e\\f", "a%3Ab%22c%3Cd%3Ee%5Cf"},
		{"", ""},
	} {
		if got := Quote(tc.in); got != tc.want {
			t.Errorf("Quote(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestRelHref(t *testing.T) {
	for _, tc := range []struct{ from, to, want string }{
		{"", "archive/users/u/s/index.html", "./archive/users/u/s/index.html"},
		{"archive/users/u/s", "archive/users/u/s/dom/output.html", "./dom/output.html"},
		{"archive/users/u/s", "index.html", "../../../../index.html"},
		{"site", "index.html", "../index.html"},
		{"site", "site/page-2.html", "./page-2.html"},
		{"archive/a/b", "archive/a/c/index.html", "../c/index.html"},
		{"", "archive/x y/%.html", "./archive/x%20y/%25.html"},
		{"a/b", "a/b", "../b"},
		{"a//b", "a//b/c", "./c"},
		{"a/", "a/x", "../x"},
		{"", "x", "./x"},
		{"a", "", "../"},
	} {
		if got := relHref(tc.from, tc.to); got != tc.want {
			t.Errorf("relHref(%q, %q) = %q, want %q", tc.from, tc.to, got, tc.want)
		}
	}
}

// splitRelHref is relHref as it was written first, with slices: what
// FuzzRelHref compares it with.
func splitRelHref(from, to string) string {
	var f, t []string
	if from != "" {
		f = strings.Split(from, "/")
	}
	t = strings.Split(to, "/")
	i := 0
	for i < len(f) && i < len(t)-1 && f[i] == t[i] {
		i++
	}
	var b strings.Builder
	if i == len(f) {
		b.WriteString("./")
	} else {
		for range f[i:] {
			b.WriteString("../")
		}
	}
	b.WriteString(Quote(strings.Join(t[i:], "/")))
	return b.String()
}

func FuzzRelHref(f *testing.F) {
	for _, seed := range [][2]string{{"", "index.html"}, {"archive/users/u/s", "archive/users/u/s/dom/output.html"},
		{"site", "index.html"}, {"a//b", "a//b/c"}, {"a/", "a/x"}, {"a", ""}, {"/", "/"}, {"x/y/z", "x/y"}} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, from, to string) {
		if got, want := relHref(from, to), splitRelHref(from, to); got != want {
			t.Errorf("relHref(%q, %q) = %q, want %q", from, to, got, want)
		}
	})
}

// TestResolve builds a snapshot folder with odd file names and checks the
// file and the link that Resolve computes together, from the root page and
// from the snapshot's own page.
func TestResolve(t *testing.T) {
	root := t.TempDir()
	snap := "archive/users/system/snapshots/20240720/example.com/0190f3c2a1b27c3d8e4f5a6b7c8d9e0f"
	sd := filepath.Join(root, filepath.FromSlash(snap))
	outside := t.TempDir()
	files := []string{
		"wget/index%3A.html", "wget/a b.html", "wget/ünï/cödé.html", "wget/q?x=1.html",
		"wget/hash#frag.html", "screenshot/screenshot.png", "dom/output.html",
	}
	for _, f := range files {
		p := filepath.Join(sd, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("s"), 0o644); err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(sd, "wget", "abs-out.txt")))
	must(os.Symlink("../../../../../../../../"+filepath.Base(outside)+"/secret.txt", filepath.Join(sd, "wget", "rel-out.txt")))
	must(os.Symlink("../dom/output.html", filepath.Join(sd, "wget", "inside.html")))
	must(os.Symlink(outside, filepath.Join(sd, "outdir")))

	ok := []struct{ rel, fromRoot, fromSnap string }{
		{"wget/index%3A.html", "./" + snap + "/wget/index%253A.html", "./wget/index%253A.html"},
		{"wget/a b.html", "./" + snap + "/wget/a%20b.html", "./wget/a%20b.html"},
		{"wget/ünï/cödé.html", "./" + snap + "/wget/%C3%BCn%C3%AF/c%C3%B6d%C3%A9.html", "./wget/%C3%BCn%C3%AF/c%C3%B6d%C3%A9.html"},
		{"wget/q?x=1.html", "./" + snap + "/wget/q%3Fx=1.html", "./wget/q%3Fx=1.html"},
		{"wget/hash#frag.html", "./" + snap + "/wget/hash%23frag.html", "./wget/hash%23frag.html"},
		{"dom/output.html?preview=1", "./" + snap + "/dom/output.html?preview=1", "./dom/output.html?preview=1"},
		{"./screenshot/screenshot.png", "./" + snap + "/screenshot/screenshot.png", "./screenshot/screenshot.png"},
		{"wget/inside.html", "./" + snap + "/wget/inside.html", "./wget/inside.html"},
	}
	for _, tc := range ok {
		r, err := Resolve(root, snap, tc.rel, "")
		if err != nil {
			t.Errorf("Resolve(%q): %v", tc.rel, err)
			continue
		}
		if r.Href != tc.fromRoot {
			t.Errorf("Resolve(%q) from root = %q, want %q", tc.rel, r.Href, tc.fromRoot)
		}
		if _, err := os.Stat(r.Disk); err != nil {
			t.Errorf("Resolve(%q) disk %s: %v", tc.rel, r.Disk, err)
		}
		r2, err := Resolve(root, snap, tc.rel, snap)
		if err != nil || r2.Href != tc.fromSnap {
			t.Errorf("Resolve(%q) from snapshot = %q, %v; want %q", tc.rel, r2.Href, err, tc.fromSnap)
		}
	}
	for _, rel := range []string{
		"", "/etc/passwd", "../index.html", "wget/../../x", "missing.png", "wget",
		"wget/abs-out.txt", "wget/rel-out.txt", "outdir/secret.txt", "wget/nothere?x=1",
	} {
		if r, err := Resolve(root, snap, rel, ""); !errors.Is(err, ErrNotLinkable) {
			t.Errorf("Resolve(%q) = %+v, %v; want ErrNotLinkable", rel, r, err)
		}
	}
}
