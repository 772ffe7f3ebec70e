package verify

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/archive/catalog"
	"github.com/folio-archive/folio/plugins"
)

// TestFoldersTrustedLikeListed: what a folder unchanged since the hashes
// were taken (and so not listed) still shows, as a listing would: a
// subfolder the hashes named no file in, given files since; a temp-named
// folder; a listed WARC file replaced by a symlink, missing and not read.
func TestFoldersTrustedLikeListed(t *testing.T) {
	data := t.TempDir()
	snap := filepath.Join(data, "snap")
	write := func(rel, text string) {
		t.Helper()
		p := filepath.Join(snap, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a/f.txt", "f")
	write("a/sub/g.txt", "g")
	for _, d := range []string{"a/empty", "a/onlylink"} {
		if err := os.MkdirAll(filepath.Join(snap, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("../f.txt", filepath.Join(snap, "a/onlylink/l")); err != nil {
		t.Fatal(err)
	}
	write("b/h.txt", "h")
	write("b/d.folio-tmp-1/i.txt", "i") // hashed: folio's walk leaves out temp files, not folders
	write("warc/capture.warc.gz", "not a WARC, but listed")
	write("warc/other.txt", "o")
	// The hashes are taken (the walk) now but record a time 1.2 s on,
	// after the WARC file is replaced; the files added after that time
	// go into folders the hashes named no file in.
	time.Sleep(1100 * time.Millisecond) // past the slack verify allows the filesystem's clock
	taken := time.Now().Add(1200 * time.Millisecond)
	doc, _, _, err := plugins.HashTree(context.Background(), snap, taken)
	if err != nil {
		t.Fatal(err)
	}
	write(archive.HashesFile, string(doc))
	if err := os.Remove(filepath.Join(snap, "warc/capture.warc.gz")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("other.txt", filepath.Join(snap, "warc/capture.warc.gz")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Until(taken) + 100*time.Millisecond)
	if err := os.Chtimes(filepath.Join(snap, archive.HashesFile), taken, taken); err != nil {
		t.Fatal(err)
	}
	write("a/empty/x.txt", "extra")    // a's own ctime does not move
	write("a/onlylink/y.txt", "extra") // nor here
	// b and warc are unchanged since the recorded time and a, whose
	// link count names two subfolders the hashes did not, is listed.
	var got []string
	rep, err := Run(context.Background(), &archive.Collection{Dir: data},
		[]catalog.Entry{{Dir: "snap", Layout: catalog.LayoutCurrent}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range rep.Problems {
		if p.Snapshot == "snap" {
			got = append(got, string(p.Kind)+" "+p.Path)
		}
	}
	slices.Sort(got)
	want := []string{
		"extra snap/a/empty/x.txt",
		"extra snap/a/onlylink/y.txt",
		"missing snap/b/d.folio-tmp-1/i.txt",
		"missing snap/warc/capture.warc.gz",
		"temp snap/b/d.folio-tmp-1",
	}
	if !slices.Equal(got, want) {
		t.Errorf("problems:\n got %q\nwant %q", got, want)
	}
}
