package migrate

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/folio-archive/folio/archive"
)

// Orphaned folders (no database row) share one "[migration] orphaned
// snapshots" crawl, also when a run is interrupted half way: the rerun
// finds the crawl by its folder and puts the remaining orphans in it,
// as ArchiveBox gets the crawl by its label instead of creating another.
func TestOrphanCrawlSurvivesInterruption(t *testing.T) {
	dir := t.TempDir()
	_, err := archive.Init(dir, false)
	must(t, err)
	buildOrphans(t, dir, 6)
	c, err := archive.Open(dir)
	must(t, err)
	ids := testIDs()
	ctx, cancel := context.WithCancel(context.Background())
	o := runOpts(ids)
	o.Workers = 1
	done := 0
	o.Fault = func(step, _ string) error {
		if step == stepDone {
			if done++; done == 2 {
				cancel()
			}
		}
		return nil
	}
	st, err := Run(ctx, c, o)
	if err == nil || st.Migrated >= 6 || st.Migrated < 2 {
		t.Fatalf("interrupted run: migrated %d, err %v; want 2-5 and an interruption", st.Migrated, err)
	}
	if _, err := Run(context.Background(), c, runOpts(ids)); err != nil {
		t.Fatal(err)
	}
	crawls := map[string]int{}
	for i := 0; i < 6; i++ {
		dst := findSnapshot(t, dir, fmt.Sprint(1600000000+i))
		snap, _, _ := readIndexFile(t, filepath.Join(dir, dst, "index.jsonl"))
		crawls[fmt.Sprint(snap["crawl_id"])]++
	}
	dirs, _ := filepath.Glob(filepath.Join(dir, "archive/users/*/crawls/*/unknown/*"))
	if len(crawls) != 1 || len(dirs) != 1 {
		t.Fatalf("orphans landed in crawls %v, crawl folders %v; want one", crawls, dirs)
	}
	links, _ := filepath.Glob(filepath.Join(dirs[0], "snapshots/*/*"))
	if len(links) != 6 {
		t.Errorf("the orphan crawl links %d snapshots, want 6: %v", len(links), links)
	}
}

// buildOrphans writes n legacy folders without a database, each with an
// index.json naming a different URL.
func buildOrphans(t *testing.T, dir string, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		ts := fmt.Sprint(1600000000 + i)
		p := filepath.Join(dir, "archive", ts)
		must(t, os.MkdirAll(p, 0o755))
		must(t, os.WriteFile(filepath.Join(p, "index.json"),
			[]byte(fmt.Sprintf(`{"url": "https://example.com/%d", "timestamp": "%s", "title": "Page %d"}`, i, ts, i)), 0o644))
		must(t, os.WriteFile(filepath.Join(p, "output.html"), []byte("<html></html>"), 0o644))
	}
}
