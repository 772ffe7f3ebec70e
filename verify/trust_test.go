package verify

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
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
// folder; a listed WARC file replaced by a symlink, missing and not read;
// a folder moved in from elsewhere, whose subfolders keep their old
// times; and a hashes.json without its root hash, or naming a file
// whose name is not UTF-8, trusts nothing. A size past any file's is a
// changed file, not a crash.
func TestFoldersTrustedLikeListed(t *testing.T) {
	data := t.TempDir()
	write := func(rel, text string) {
		t.Helper()
		p := filepath.Join(data, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	write("snap/a/f.txt", "f")
	write("snap/a/sub/g.txt", "g")
	must(os.MkdirAll(filepath.Join(data, "snap/a/empty"), 0o755))
	must(os.MkdirAll(filepath.Join(data, "snap/a/onlylink"), 0o755))
	must(os.Symlink("../f.txt", filepath.Join(data, "snap/a/onlylink/l")))
	write("snap/b/h.txt", "h")
	write("snap/b/d.folio-tmp-1/i.txt", "i") // hashed: folio's walk leaves out temp files, not folders
	write("snap/warc/capture.warc.gz", "not a WARC, but listed")
	write("snap/warc/other.txt", "o")
	write("snap/w/site/a.html", "a")
	write("elsewhere/w/site/only-here.html", "b")
	write("snap2/c/k.txt", "k")
	write("snap3/a/g\xe9.txt", "latin-1") // hashes.json writes the byte as U+FFFD
	write("snap4/s.txt", "s")

	// The hashes are taken (the walks) now but record a time 1.2 s on,
	// after the WARC file is replaced, and their hashes/ folders are
	// made then; snap2's misses c/l.txt, added after its walk, and has
	// its root hash taken out, as by an edit.
	time.Sleep(1100 * time.Millisecond) // past the second verify allows the filesystem's clock
	taken := time.Now().Add(1200 * time.Millisecond)
	docs := map[string][]byte{}
	for _, snap := range []string{"snap", "snap2", "snap3", "snap4"} {
		doc, _, _, err := plugins.HashTree(context.Background(), filepath.Join(data, snap), taken)
		must(err)
		docs[snap] = doc
	}
	docs["snap2"] = regexp.MustCompile(`"root_hash": "[0-9a-f]+"`).ReplaceAll(docs["snap2"], []byte(`"root_hash": ""`))
	docs["snap4"] = regexp.MustCompile(`"size": [0-9]+`).ReplaceAll(docs["snap4"], []byte(`"size": 9223372036854775807`))
	write("snap2/c/l.txt", "l")
	must(os.Remove(filepath.Join(data, "snap/warc/capture.warc.gz")))
	must(os.Symlink("other.txt", filepath.Join(data, "snap/warc/capture.warc.gz")))
	time.Sleep(time.Until(taken) + 100*time.Millisecond)
	for snap, doc := range docs {
		write(snap+"/"+archive.HashesFile, string(doc))
		must(os.Chtimes(filepath.Join(data, snap, archive.HashesFile), taken, taken))
	}

	// After the hashes: files in folders they named no file in (a's own
	// ctime does not move), and w replaced by a folder moved in.
	write("snap/a/empty/x.txt", "extra")
	write("snap/a/onlylink/y.txt", "extra")
	must(os.RemoveAll(filepath.Join(data, "snap/w")))
	must(os.Rename(filepath.Join(data, "elsewhere/w"), filepath.Join(data, "snap/w")))

	var got []string
	rep, err := Run(context.Background(), &archive.Collection{Dir: data}, []catalog.Entry{
		{Dir: "snap", Layout: catalog.LayoutCurrent}, {Dir: "snap2", Layout: catalog.LayoutCurrent},
		{Dir: "snap3", Layout: catalog.LayoutCurrent}, {Dir: "snap4", Layout: catalog.LayoutCurrent}}, Options{})
	must(err)
	for _, p := range rep.Problems {
		if p.Kind != Index && p.Kind != Stale { // the entries name no index
			got = append(got, string(p.Kind)+" "+p.Path)
		}
	}
	slices.Sort(got)
	want := []string{
		"extra snap/a/empty/x.txt",
		"extra snap/a/onlylink/y.txt",
		"extra snap/w/site/only-here.html",
		"extra snap2/c/l.txt",
		"extra snap3/a/g\xe9.txt",
		"missing snap/b/d.folio-tmp-1/i.txt",
		"missing snap/w/site/a.html",
		"missing snap/warc/capture.warc.gz",
		"changed snap4/s.txt",
		"missing snap3/a/g\uFFFD.txt",
		"temp snap/b/d.folio-tmp-1",
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("problems:\n got %q\nwant %q", got, want)
	}
}
