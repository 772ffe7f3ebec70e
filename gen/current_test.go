package gen_test

import (
	"bytes"
	"image/png"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/gen"
	"github.com/folio-archive/folio/layout"
)

func generate(t *testing.T, o gen.Options) *gen.Manifest {
	t.Helper()
	m, err := gen.Current(filepath.Join(t.TempDir(), "data"), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Snapshots) != o.N {
		t.Fatalf("manifest lists %d snapshots, want %d", len(m.Snapshots), o.N)
	}
	return m
}

// tree reads every file under dir, keyed by slash path.
func tree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)], err = os.ReadFile(p)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestCurrentIsDeterministic(t *testing.T) {
	a := generate(t, gen.Options{N: 60, Seed: 7, Workers: 1})
	b := generate(t, gen.Options{N: 60, Seed: 7, Workers: 8, NoSync: true})
	if !reflect.DeepEqual(a.Snapshots, b.Snapshots) || a.Files != b.Files || a.Bytes != b.Bytes {
		t.Fatal("same seed, different manifests")
	}
	ta, tb := tree(t, a.Dir), tree(t, b.Dir)
	if len(ta) != len(tb) {
		t.Fatalf("same seed: %d files vs %d", len(ta), len(tb))
	}
	for p, data := range ta {
		if !bytes.Equal(data, tb[p]) {
			t.Fatalf("same seed: %s differs", p)
		}
	}
	c := generate(t, gen.Options{N: 60, Seed: 8, NoSync: true})
	for i := range c.Snapshots {
		if c.Snapshots[i].ID == a.Snapshots[i].ID {
			t.Fatalf("seeds 7 and 8 both gave snapshot %d the id %s", i, c.Snapshots[i].ID)
		}
	}
}

// TestCurrentIndexesMatchManifest reads every index.jsonl back and checks
// it against the manifest, the path rules and the files on disk.
func TestCurrentIndexesMatchManifest(t *testing.T) {
	m := generate(t, gen.Options{N: 400, Seed: 3, NoSync: true})
	ids := map[string]bool{}
	var files, missing int
	for i, e := range m.Snapshots {
		if ids[e.ID] {
			t.Fatalf("id %s used twice", e.ID)
		}
		ids[e.ID] = true
		want, err := layout.SnapshotDir(e.User, e.BookmarkedAt, e.URL, e.ID)
		if err != nil || want != e.Dir {
			t.Fatalf("snapshot %d: dir %s, layout.SnapshotDir gives %s (%v)", i, e.Dir, want, err)
		}
		data, err := os.ReadFile(m.IndexPath(i))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(data, []byte(`{"type": "Snapshot", `)) {
			t.Fatalf("%s: first line is not a Snapshot record: %.80s", m.IndexPath(i), data)
		}
		ix, problems := archive.ParseIndex(data)
		if len(problems) > 0 {
			t.Fatalf("%s: %v", m.IndexPath(i), problems)
		}
		s, ok := ix.Snapshot()
		if !ok {
			t.Fatalf("%s: no Snapshot record", m.IndexPath(i))
		}
		if s.ID != e.ID || s.URL != e.URL || s.Title != e.Title || s.Status != e.Status ||
			!s.BookmarkedAt.Equal(e.BookmarkedAt) || archive.TagString(s.Tags) != archive.TagString(e.Tags) {
			t.Fatalf("%s: record %+v does not match manifest %+v", m.IndexPath(i), s, e)
		}
		if s.FSVersion != layout.Current || !layout.IsCompactID(s.CrawlID) || s.CreatedAt.Before(s.BookmarkedAt) ||
			s.CreatedAt.After(gen.DefaultBase.Add(3*time.Second)) {
			t.Fatalf("%s: bad record %+v", m.IndexPath(i), s)
		}
		if f, ok := layout.PyFloat(s.Timestamp); !ok || int64(f) != s.BookmarkedAt.Unix() {
			t.Fatalf("%s: timestamp %q does not match bookmarked_at %s", m.IndexPath(i), s.Timestamp, s.BookmarkedAt)
		}
		results := ix.Results()
		if len(results) != e.Results {
			t.Fatalf("%s: %d results, manifest says %d", m.IndexPath(i), len(results), e.Results)
		}
		var size int64
		snapDir := filepath.Join(m.Dir, filepath.FromSlash(e.Dir))
		onDisk, gone := 0, 0
		for _, r := range results {
			if r.SnapshotID != e.ID || !layout.IsCompactID(r.ID) || r.HookName == "" || r.StartTS.IsZero() {
				t.Fatalf("%s: bad result %+v", m.IndexPath(i), r)
			}
			if r.Status == archive.StatusSucceeded && (len(r.OutputFiles) == 0 || r.OutputStr == "") {
				t.Fatalf("%s: succeeded result without outputs: %+v", m.IndexPath(i), r)
			}
			var sum int64
			for _, f := range r.OutputFiles {
				sum += f.Size
				st, err := os.Stat(filepath.Join(snapDir, r.Plugin, filepath.FromSlash(f.Path)))
				switch {
				case err == nil && st.Size() == f.Size:
					onDisk++
				case err == nil:
					t.Fatalf("%s: %s/%s is %d bytes, recorded %d", e.Dir, r.Plugin, f.Path, st.Size(), f.Size)
				default:
					gone++
				}
			}
			if sum != r.OutputSize {
				t.Fatalf("%s: %s output_size %d, files sum to %d", e.Dir, r.Plugin, r.OutputSize, sum)
			}
			size += sum
		}
		if size != s.ArchiveSize {
			t.Fatalf("%s: archive_size %d, results sum to %d", e.Dir, s.ArchiveSize, size)
		}
		if onDisk != e.Files || gone != e.Missing {
			t.Fatalf("%s: %d files on disk and %d missing, manifest says %d and %d", e.Dir, onDisk, gone, e.Files, e.Missing)
		}
		files += onDisk
		missing += gone
	}
	if int64(files) != m.Files {
		t.Fatalf("manifest counts %d files, entries %d", m.Files, files)
	}
	// Nothing but recorded outputs and index.jsonl is in the tree.
	all := tree(t, filepath.Join(m.Dir, archive.UsersDir))
	if len(all) != files+len(m.Snapshots) {
		t.Fatalf("tree holds %d files, want %d outputs + %d indexes", len(all), files, len(m.Snapshots))
	}
	if missing == 0 {
		t.Fatal("no recorded output is missing on disk")
	}
}

// TestCurrentIsAwkward checks that the collection holds the odd cases
// readers and exporters must handle.
func TestCurrentIsAwkward(t *testing.T) {
	m := generate(t, gen.Options{N: 1000, Seed: 1, Minimal: true, NoSync: true})
	want := map[string]func(e gen.Entry) bool{
		"IPv6 host":         func(e gen.Entry) bool { return strings.Contains(e.URL, "[::1]") },
		"IDN host":          func(e gen.Entry) bool { return strings.HasPrefix(e.URL, "https://münchen.de/") },
		"port":              func(e gen.Entry) bool { return strings.Contains(e.URL, ":8080/") },
		"query":             func(e gen.Entry) bool { return strings.Contains(e.URL, "?") },
		"fragment":          func(e gen.Entry) bool { return strings.Contains(e.URL, "#") },
		"percent escape":    func(e gen.Entry) bool { return strings.Contains(e.URL, "%25") },
		"file URL":          func(e gen.Entry) bool { return strings.HasPrefix(e.URL, "file://") },
		"ftp URL":           func(e gen.Entry) bool { return strings.HasPrefix(e.URL, "ftp://") },
		"trailing dot":      func(e gen.Entry) bool { return strings.Contains(e.Dir, "/example.com./") },
		"repeated URL":      func(e gen.Entry) bool { return false },
		"empty title":       func(e gen.Entry) bool { return e.Title == "" },
		"emoji title":       func(e gen.Entry) bool { return strings.Contains(e.Title, "🎉") },
		"markup title":      func(e gen.Entry) bool { return strings.Contains(e.Title, "<script>") },
		"quoted title":      func(e gen.Entry) bool { return strings.Contains(e.Title, `"`) },
		"long title":        func(e gen.Entry) bool { return utf8.RuneCountInString(e.Title) > 1000 },
		"tag with a space":  func(e gen.Entry) bool { return hasTag(e, "to read") },
		"unicode tag":       func(e gen.Entry) bool { return hasTag(e, "日本語") },
		"no tags":           func(e gen.Entry) bool { return len(e.Tags) == 0 },
		"sealed":            func(e gen.Entry) bool { return e.Status == "sealed" },
		"queued":            func(e gen.Entry) bool { return e.Status == "queued" && e.Results == 0 },
		"user system":       func(e gen.Entry) bool { return e.User == "system" },
		"user bob":          func(e gen.Entry) bool { return e.User == "bob" },
		"date bucket years": func(e gen.Entry) bool { return e.BookmarkedAt.Year() < 2016 },
	}
	urls := map[string]int{}
	for _, e := range m.Snapshots {
		urls[e.URL]++
		if e.Files != 0 {
			t.Fatalf("minimal tree wrote %d files for %s", e.Files, e.Dir)
		}
	}
	found := map[string]bool{}
	for _, e := range m.Snapshots {
		for name, ok := range want {
			if ok(e) || name == "repeated URL" && urls[e.URL] > 1 {
				found[name] = true
			}
		}
	}
	for name := range want {
		if !found[name] {
			t.Errorf("no snapshot with %s", name)
		}
	}
}

func hasTag(e gen.Entry, tag string) bool {
	for _, t := range e.Tags {
		if t == tag {
			return true
		}
	}
	return false
}

func TestCurrentOutputFiles(t *testing.T) {
	m := generate(t, gen.Options{N: 300, Seed: 5, NoSync: true})
	all := tree(t, m.Dir)
	var pngs, odd, failed, skipped int
	for p, data := range all {
		switch base := p[strings.LastIndex(p, "/")+1:]; {
		case base == "screenshot.png":
			if _, err := png.Decode(bytes.NewReader(data)); err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			pngs++
		case base == "favicon.ico":
			if !bytes.HasPrefix(data, []byte{0, 0, 1, 0, 1, 0}) {
				t.Fatalf("%s is not an icon", p)
			}
		case base == "output.pdf":
			if !bytes.HasPrefix(data, []byte("%PDF-1.")) || !bytes.HasSuffix(data, []byte("%%EOF\n")) {
				t.Fatalf("%s is not a PDF", p)
			}
		case strings.Contains(p, "/wget/") && (strings.ContainsAny(base, "% ") || !isASCII(base)):
			odd++
		}
	}
	for i := range m.Snapshots {
		ix, _, err := archive.ReadIndex(filepath.Dir(m.IndexPath(i)))
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range ix.Results() {
			switch r.Status {
			case archive.StatusFailed:
				failed++
			case archive.StatusSkipped:
				skipped++
			}
		}
	}
	if pngs == 0 || odd == 0 || failed == 0 || skipped == 0 {
		t.Fatalf("want screenshots, oddly named wget files, failed and skipped results; got %d, %d, %d, %d", pngs, odd, failed, skipped)
	}
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

func TestRetitleIndex(t *testing.T) {
	m := generate(t, gen.Options{N: 20, Seed: 2})
	dir := filepath.Dir(m.IndexPath(4))
	before, _, err := archive.ReadIndex(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := gen.RetitleIndex(dir, "Édité à la main"); err != nil {
		t.Fatal(err)
	}
	after, _, err := archive.ReadIndex(dir)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := after.Snapshot()
	if s.Title != "Édité à la main" || s.ID != m.Snapshots[4].ID {
		t.Fatalf("after retitle: %+v", s)
	}
	if !reflect.DeepEqual(before.Results(), after.Results()) || !reflect.DeepEqual(before.Foreign(), after.Foreign()) {
		t.Fatal("retitle changed other records")
	}
	if err := gen.RetitleIndex(t.TempDir(), "x"); err == nil {
		t.Fatal("retitle of a folder without index.jsonl succeeded")
	}
}

func TestCurrentRefusesBadInput(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := gen.Current(dir, gen.Options{N: 1}); err == nil {
		t.Fatal("generated into a non-empty folder that is not a collection")
	}
	if _, err := gen.Current(t.TempDir(), gen.Options{N: 1, Users: []string{"a/b"}}); err == nil {
		t.Fatal("accepted the user name a/b")
	}
	if _, err := gen.Current(t.TempDir(), gen.Options{N: -1}); err == nil {
		t.Fatal("accepted N=-1")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("refused folder was changed: %d entries", len(entries))
	}
}

func BenchmarkCurrentMinimal(b *testing.B) {
	for b.Loop() {
		if _, err := gen.Current(b.TempDir(), gen.Options{N: 1000, Seed: 1, Minimal: true, NoSync: true}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*1000), "µs/snapshot")
}
