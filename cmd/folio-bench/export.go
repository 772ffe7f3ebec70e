package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"

	"github.com/folio-archive/folio/gen"
)

func init() {
	suites = append(suites, Suite{
		Name: "export",
		Doc:  "full export beside hugo building a site of as many pages, re-export with nothing changed beside find -newer, and after one change",
		Run:  runExport,
	})
}

// runExport measures the export goals of PRODUCT.md: a full in-place
// export (time and peak RSS), a re-export with nothing changed (beside
// find -newer) and one after one snapshot changed.
// The baseline is Debian's hugo building a site with one page per
// snapshot, in the same run; pages per second of both are logged and
// named in the rows.
func runExport(b *B) error {
	// The export writes pages into the tree, so it gets a collection of
	// its own rather than the one other suites share.
	c, err := b.Current("export", gen.Options{N: b.N, Seed: b.Seed, Minimal: !b.Files})
	if err != nil {
		return err
	}
	n := count(b.N)
	pages := float64(b.N)
	if _, err := b.Run(b.FolioCmd(c.Dir, "reindex")); err != nil { // the catalog is not what is measured
		return err
	}

	// The baseline is hugo building as many pages, measured interleaved
	// with the export (folio, hugo, folio, hugo...).
	hugoBin, err := exec.LookPath("hugo")
	if err != nil {
		err = fmt.Errorf("hugo not found (apt-get install hugo): %w", err)
	}
	site := filepath.Join(b.Work, "hugo-site")
	if err == nil {
		err = writeHugoSite(site, b.N)
	}
	// --full renders every page; over the site it wrote before, the
	// pages that come out the same are left as they are, so a first
	// export (every page written) is measured too, its pages and state
	// removed before each run.
	hugoStep := Step{Setup: func() error { return os.RemoveAll(filepath.Join(site, "public")) }, Cmd: func() *exec.Cmd {
		return exec.CommandContext(b.Ctx, hugoBin, "--quiet", "--source", site, "--destination", "public")
	}}
	var full, hugo Spread
	if err == nil {
		full, hugo, err = b.Interleave(Step{Cmd: func() *exec.Cmd { return b.FolioCmd(c.Dir, "export", "--full") }}, hugoStep)
	}
	fullRow := pairRow("export "+n+", full", Goal{Max: 30, MaxRatio: 1.0 / 3}, full, hugo, "hugo")
	fullRow.Err = err
	if err == nil {
		fullRow.Work += fmt.Sprintf(" (%.0f pages/s, hugo %.0f)", pages/full.Wall.Seconds(), pages/hugo.Wall.Seconds())
	}
	b.Add(fullRow)
	b.Add(Row{Work: "export " + n + ", full: peak RSS", Unit: Bytes, Goal: Goal{Max: 300e6}, Value: float64(full.MaxRSS),
		Baseline: float64(hugo.MaxRSS), BaselineName: "hugo", Err: err})
	if err == nil {
		var first, hugo2 Spread
		first, hugo2, err = b.Interleave(Step{Setup: func() error { return unexport(c) },
			Cmd: func() *exec.Cmd { return b.FolioCmd(c.Dir, "export", "--full") }}, hugoStep)
		row := pairRow("export "+n+", full, first export", Goal{MaxRatio: 1.0 / 3}, first, hugo2, "hugo")
		row.Err = err
		if err == nil {
			row.Work = fmt.Sprintf("export %s, first (%.0f pages/s, hugo %.0f)", n, pages/first.Wall.Seconds(), pages/hugo2.Wall.Seconds())
		}
		b.Add(row)
	}

	if err == nil {
		b.nothingChanged(c, "export "+n+", nothing changed", "export")
	}

	// One snapshot changes between repetitions: its title is edited by
	// hand, as a user would.
	edit := 0
	target := filepath.Dir(c.Manifest.IndexPath(len(c.Manifest.Snapshots) / 2))
	setup := func() error {
		edit++
		return gen.RetitleIndex(target, "Edited by folio-bench "+strconv.Itoa(edit))
	}
	m, err := b.Repeat(setup, func() *exec.Cmd { return b.FolioCmd(c.Dir, "export") })
	one := Row{Work: "export " + n + ", after one change", Goal: Goal{Max: 1}, Err: err}
	if err == nil {
		one.Value = m.Wall.Seconds()
		one.Note = "cpu " + format(Seconds, m.CPU.Seconds())
		if hugo.Wall > 0 {
			one.Baseline, one.BaselineName = hugo.Wall.Seconds(), "hugo full build"
		}
	}
	b.Add(one)
	added := b.addedExport(c, n, hugo)
	b.Add(added)
	if err == nil {
		b.Add(b.watchedExport(c, target, n, m.Wall))
	}
	if added.Err == nil {
		b.Add(b.watchedAddedExport(c, n, added.Value))
	}
	return nil
}

// addedExport measures a re-export after the snapshot at the top of the
// list went or came back: its folder is moved out of the tree and in
// again between repetitions, as a removal and an addition would. The
// root pages are cut from the oldest end, so the first root page, its
// shards and the manifest are written again; the other pages stay.
func (b *B) addedExport(c *Collection, n string, hugo Spread) Row {
	row := Row{Work: "export " + n + ", after one snapshot added or removed"}
	p := b.newestParker(c)
	m, err := b.Repeat(p.toggle, func() *exec.Cmd { return b.FolioCmd(c.Dir, "export") })
	if rerr := p.restore(); err == nil { // the collection as it was, for the rows after this one
		err = rerr
	}
	row.Err = err
	if err == nil {
		row.Value = m.Wall.Seconds()
		row.Note = "cpu " + format(Seconds, m.CPU.Seconds()) + ", peak RSS " + format(Bytes, float64(m.MaxRSS))
		if hugo.Wall > 0 {
			row.Baseline, row.BaselineName = hugo.Wall.Seconds(), "hugo full build"
		}
	}
	return row
}

// newestParker moves the folder of the snapshot at the top of c's list
// out of the tree and back, as a removal and an addition would.
type newestParker struct {
	b       *B
	c       *Collection
	in, out string
	parked  bool
}

func (b *B) newestParker(c *Collection) *newestParker {
	newest := 0
	for i, s := range c.Manifest.Snapshots {
		if s.BookmarkedAt.After(c.Manifest.Snapshots[newest].BookmarkedAt) {
			newest = i
		}
	}
	return &newestParker{b: b, c: c, in: filepath.Join(c.Dir, filepath.FromSlash(c.Manifest.Snapshots[newest].Dir)),
		out: filepath.Join(b.Work, "parked-snapshot")}
}

// toggle moves the folder out, or back in.
func (p *newestParker) toggle() error {
	from, to := p.in, p.out
	if p.parked {
		from, to = p.out, p.in
	}
	if err := os.Rename(from, to); err != nil {
		return err
	}
	p.parked = !p.parked
	return nil
}

// restore brings the folder back when it is out, and the export with it.
func (p *newestParker) restore() error {
	if !p.parked {
		return nil
	}
	if err := p.toggle(); err != nil {
		return err
	}
	_, err := p.b.Run(p.b.FolioCmd(p.c.Dir, "export"))
	return err
}

// unexport removes what an in-place export of c wrote: the snapshot
// pages, the root pages, shards and manifest, and the export's state.
func unexport(c *Collection) error {
	for _, s := range c.Manifest.Snapshots {
		if err := os.Remove(filepath.Join(c.Dir, filepath.FromSlash(s.Dir), "index.html")); err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	for _, name := range []string{"site", "index.html", "index.jsonl", "robots.txt", filepath.Join(".folio", "export")} {
		if err := os.RemoveAll(filepath.Join(c.Dir, name)); err != nil {
			return err
		}
	}
	return nil
}

// writeHugoSite writes a minimal Hugo site with n content pages of about
// the size of a snapshot's record, and layouts that render each one as a
// page and the home page as a list.
func writeHugoSite(dir string, n int) error {
	if _, err := os.Stat(filepath.Join(dir, "content", "p", strconv.Itoa(n-1)+".md")); err == nil {
		return nil // written by an earlier run with -work
	}
	files := map[string]string{
		"hugo.toml": "baseURL = 'http://localhost/'\ntitle = 'bench'\ndisableKinds = ['taxonomy', 'term', 'RSS', 'sitemap', 'robotsTXT', '404']\n" +
			"[pagination]\npagerSize = 250\n",
		"layouts/_default/single.html": "<!DOCTYPE html><html><head><title>{{ .Title }}</title></head><body><h1>{{ .Title }}</h1>" +
			"<p><a href=\"{{ .Params.url }}\">{{ .Params.url }}</a></p>{{ range .Params.tags }}<span>{{ . }}</span>{{ end }}{{ .Content }}</body></html>\n",
		"layouts/_default/list.html": "<!DOCTYPE html><html><body><ul>{{ range .Paginator.Pages }}<li><a href=\"{{ .RelPermalink }}\">{{ .Title }}</a></li>{{ end }}</ul></body></html>\n",
		"layouts/index.html":         "<!DOCTYPE html><html><body><ul>{{ range (.Paginate .Site.RegularPages).Pages }}<li><a href=\"{{ .RelPermalink }}\">{{ .Title }}</a></li>{{ end }}</ul></body></html>\n",
	}
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return err
		}
	}
	content := filepath.Join(dir, "content", "p")
	if err := os.MkdirAll(content, 0o755); err != nil {
		return err
	}
	for i := range n {
		f, err := os.Create(filepath.Join(content, strconv.Itoa(i)+".md"))
		if err != nil {
			return err
		}
		w := bufio.NewWriter(f)
		fmt.Fprintf(w, "---\ntitle: \"Snapshot %d\"\nparams:\n  url: \"https://example.com/page/%d\"\ntags: [\"news\", \"t%d\"]\ndate: 2024-01-01T00:00:00Z\n---\n\nArchived page %d with a few words of text.\n", i, i, i%50, i)
		if err := w.Flush(); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	return nil
}
