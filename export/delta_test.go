package export

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/gen"
)

// generatedFile is one file an export wrote, as a later export may find it.
type generatedFile struct {
	ino   uint64
	mtime time.Time
	data  []byte
}

// generatedFiles reads every file an in-place export writes: the root
// pages, manifest and site/ folder, and each snapshot's index.html.
func generatedFiles(t *testing.T, root string) map[string]generatedFile {
	t.Helper()
	out := map[string]generatedFile{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == archive.StateDir {
				return filepath.SkipDir
			}
			return nil
		}
		if rel != RootPage && rel != ManifestFile && !strings.HasPrefix(rel, SiteDir+"/") &&
			!(strings.HasPrefix(rel, archive.ArchiveDir+"/") && strings.HasSuffix(rel, "/"+RootPage)) {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out[rel] = generatedFile{ino: fi.Sys().(*syscall.Stat_t).Ino, mtime: fi.ModTime(), data: data}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestReexportFromChangeFeed changes one snapshot at a time and checks
// that the re-export takes the catalog's change feed (no pass over the
// selection), rewrites exactly that snapshot's page, the root page and
// search shard that list it and the manifest, and leaves every file as a
// --full export writes it. A second change on another page checks the
// manifest offsets the first re-export recorded.
func TestReexportFromChangeFeed(t *testing.T) {
	dir, m, c := generatedIn(t, 90, 5)
	var mu sync.Mutex
	events := map[string]int{}
	testEvent = func(e string) {
		mu.Lock()
		events[e]++
		mu.Unlock()
	}
	defer func() { testEvent = func(string) {} }()
	const pageSize = 20
	export := func(full bool) Stats {
		t.Helper()
		clear(events)
		st, err := Run(context.Background(), Options{Collection: c, PageSize: pageSize, Full: full}, archive.Discard)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	export(false)
	if st := export(false); events["delta"] != 1 || events["pass1"] != 0 || st.Written != 0 || st.RootWritten != 0 {
		t.Fatalf("unchanged re-export: events %v, %+v", events, st)
	}

	// Snapshots whose URL is captured once, newest first as the list is.
	urls := map[string]int{}
	for _, s := range m.Snapshots {
		urls[s.URL]++
	}
	order := append([]gen.Entry(nil), m.Snapshots...)
	sort.SliceStable(order, func(a, b int) bool { return order[a].BookmarkedAt.After(order[b].BookmarkedAt) })
	var picks []int // places in the list, on different pages
	for i, s := range order {
		if urls[s.URL] == 1 && (len(picks) == 0 && i/pageSize == 1 || len(picks) == 1 && i/pageSize == 3) {
			picks = append(picks, i)
		}
	}
	if len(picks) != 2 {
		t.Fatalf("no single captures on pages 2 and 4: %v", picks)
	}
	for k, pos := range picks {
		target := order[pos]
		before := generatedFiles(t, dir)
		time.Sleep(10 * time.Millisecond) // a distinct mtime on coarse clocks
		title := "Retitled " + strings.Repeat("long ", 5*k) + "<b>&"
		if err := gen.RetitleIndex(filepath.Join(dir, filepath.FromSlash(target.Dir)), title); err != nil {
			t.Fatal(err)
		}
		st := export(false)
		if events["delta"] != 1 || events["pass1"] != 0 || events["pass2"] != 0 || st.Written != 1 || st.RootWritten != 1 {
			t.Fatalf("change %d: events %v, %+v", k, events, st)
		}
		after := generatedFiles(t, dir)
		n := strconv.Itoa(pos/pageSize + 1)
		want := map[string]bool{target.Dir + "/" + RootPage: true, SiteDir + "/page-" + n + ".html": true,
			SiteDir + "/search/" + n + ".js": true, ManifestFile: true}
		for rel, a := range after {
			b, ok := before[rel]
			if !ok {
				t.Errorf("change %d: %s appeared", k, rel)
				continue
			}
			if rewritten := a.ino != b.ino || !a.mtime.Equal(b.mtime); rewritten != want[rel] {
				t.Errorf("change %d: %s rewritten = %v, want %v", k, rel, rewritten, want[rel])
			}
		}
		if len(after) != len(before) {
			t.Errorf("change %d: %d files before, %d after", k, len(before), len(after))
		}
		if !bytes.Contains(after[ManifestFile].data, []byte("Retitled "+strings.Repeat("long ", 5*k))) {
			t.Errorf("change %d: the manifest misses the new title", k)
		}
	}

	// The site is what a full export writes, byte for byte: the second
	// splice of the manifest used the offsets the first one recorded.
	after := generatedFiles(t, dir)
	export(true)
	full := generatedFiles(t, dir)
	if len(full) != len(after) {
		t.Errorf("--full wrote %d files, the re-exports left %d", len(full), len(after))
	}
	for rel, f := range full {
		if !bytes.Equal(f.data, after[rel].data) {
			t.Errorf("%s differs from a --full export's", rel)
		}
	}
}
