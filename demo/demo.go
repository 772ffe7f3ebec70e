// Package demo builds folio's embedded default: a legacy ArchiveBox
// collection generated from the code bundled in the binary, migrated to the
// current layout beside snapshots folio wrote itself, cataloged, listed and
// exported as a static site.
package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/archive/catalog"
	"github.com/folio-archive/folio/capture"
	"github.com/folio-archive/folio/export"
	"github.com/folio-archive/folio/fixtures"
	"github.com/folio-archive/folio/gen"
	"github.com/folio-archive/folio/migrate"
	"github.com/folio-archive/folio/plugins"
)

// Options configure Run.
// folio is Options.Folio, "folio" when not set.
func (o *Options) folio() string {
	if o.Folio == "" {
		return "folio"
	}
	return o.Folio
}

type Options struct {
	// Dir is the folder the demo collection is built in. It must not exist
	// or be empty: the demo never writes over anything.
	Dir string
	// Legacy is the ArchiveBox version of the bundled legacy collection.
	Legacy string
	// N is the number of ordinary legacy snapshots; Current the number of
	// snapshots in the current layout added beside them.
	N, Current int
	// Out receives the migration table and the listing (stdout).
	Out     io.Writer
	Printer archive.Printer
	// Folio is how the user runs this folio, for the commands the demo
	// names: "folio" when that is on $PATH, else the binary's path.
	Folio   string
	Version string
}

// Result says where the demo is.
type Result struct {
	Dir       string
	URL       string // file:// URL of the exported site
	Snapshots int
	Migration *migrate.Stats
	Export    export.Stats
}

// demoEdges are the awkward cases of real collections the demo shows the
// migration handling: a folder without a database row, a row whose page
// was never captured, the compatibility symlinks of ArchiveBox 0.8 and a
// Finder .DS_Store. The hostile ones (garbage index files, truncated
// names, unicode traps) stay in the tests.
var demoEdges = []gen.Edge{gen.EdgeOrphan, gen.EdgeRowNoFolder, gen.EdgeCompatSymlinks, gen.EdgeDSStore}

// Run builds, migrates, catalogs, lists and exports the demo collection.
func Run(ctx context.Context, o Options) (*Result, error) {
	if o.Legacy == "" {
		o.Legacy = gen.Legacy07
	}
	if o.N == 0 {
		o.N = 24
	}
	if o.Current == 0 {
		o.Current = 36
	}
	p := o.Printer
	if p == nil {
		p = archive.Discard
	}
	dir, err := filepath.Abs(o.Dir)
	if err != nil {
		return nil, err
	}
	if err := checkEmpty(dir); err != nil {
		return nil, err
	}

	p.Infof("[*] Writing a bundled ArchiveBox %s collection to %s", o.Legacy, dir)
	lm, err := gen.Legacy(dir, gen.LegacyOptions{Version: o.Legacy, N: o.N, Seed: 1, Plain: true, Edges: demoEdges})
	if err != nil {
		return nil, fmt.Errorf("write the legacy collection: %w", err)
	}
	p.Infof("    %d legacy snapshots, %d folders that cannot be identified", len(lm.Snapshots), len(lm.Invalid))
	c, err := archive.Open(dir)
	if err != nil {
		return nil, err
	}

	p.Infof("[*] Migrating it: %s update --migrate-only", o.folio())
	st, err := migrate.Run(ctx, c, migrate.Options{Printer: p})
	if err != nil && !errors.Is(err, archive.ErrPartial) {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	if err := st.WriteTable(o.Out, err); err != nil {
		return nil, err
	}

	p.Infof("[*] Adding %d snapshots in the current layout", o.Current)
	if _, err := gen.Current(dir, gen.Options{N: o.Current, Seed: 2, Plain: true, Base: time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)}); err != nil {
		return nil, fmt.Errorf("write current snapshots: %w", err)
	}

	if err := captureFixtures(ctx, c, p, o.Out, o.folio()); err != nil {
		return nil, err
	}

	cat, err := catalog.Open(ctx, c)
	if err != nil {
		return nil, err
	}
	defer cat.Close()
	if _, err := cat.Reindex(ctx, catalog.ReindexOptions{Printer: p}); err != nil {
		return nil, err
	}
	n, err := cat.Count(ctx, catalog.Query{})
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(o.Out, "\nThe newest snapshots of %d (all of them: %s list -D %s --csv bookmarked_at,title,url):\n", n, o.folio(), dir)
	err = cat.Each(ctx, catalog.Query{Limit: 8}, func(e catalog.Entry) error {
		title := e.Snapshot.Title
		if title == "" {
			title = "(no title)"
		}
		title = archive.Shorten(title, 50)
		_, err := fmt.Fprintf(o.Out, "  %s  %-50s  %s\n", e.Snapshot.BookmarkedAt.Format("2006-01-02"), title, e.Snapshot.URL)
		return err
	})
	if err != nil {
		return nil, err
	}

	p.Infof("[*] Exporting the static site: %s export", o.folio())
	es, err := export.Run(ctx, export.Options{Collection: c, Version: o.Version, SkipReindex: true}, p)
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	return &Result{Dir: dir, URL: es.URL, Snapshots: n, Migration: st, Export: es}, nil
}

// captureFixtures archives the bundled fixture site, served on loopback,
// with every built-in plugin: what 'folio add' does with a real site.
// Without Chromium it says so and goes on.
func captureFixtures(ctx context.Context, c *archive.Collection, p archive.Printer, out io.Writer, folio string) error {
	cfg, err := plugins.LoadConfig(c.Path("ArchiveBox.conf"), os.Environ())
	if err != nil {
		return err
	}
	if plugins.FindChromium(cfg) == "" && cfg.Get("CHROME_CDP_URL") == "" {
		p.Infof("[ ] Chromium not found: no live captures (install Debian's chromium package to see them)")
		return nil
	}
	srv, err := fixtures.Start()
	if err != nil {
		return err
	}
	defer srv.Close()
	var list strings.Builder
	for _, page := range append(fixtures.Pages, "/doc.pdf") {
		list.WriteString(srv.URL + page + "\n")
	}
	p.Infof("[*] Capturing the bundled fixture site at %s: %s add", srv.URL, folio)
	st, err := capture.Run(ctx, c, capture.Options{
		Sources:  []capture.Source{{Name: "fixture site", Data: []byte(list.String())}},
		Tags:     []string{"demo-capture"},
		Parallel: 2,
		Config:   cfg,
		Printer:  p,
	})
	if st != nil {
		if werr := st.WriteTable(out, err); werr != nil {
			return werr
		}
	}
	if err != nil && !errors.Is(err, archive.ErrPartial) {
		return fmt.Errorf("capture the fixture site: %w", err)
	}
	return nil
}

// checkEmpty refuses a folder that holds anything.
func checkEmpty(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("demo folder %s: %w", dir, err)
	}
	if len(entries) > 0 {
		return fmt.Errorf("demo folder %s is not empty; choose a new folder with --out", dir)
	}
	return nil
}
