package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/export"
	"github.com/folio-archive/folio/plugins"
	"github.com/folio-archive/folio/wacz"
)

func init() { commands = append(commands, newExportCmd) }

func newExportCmd(e *env) *cobra.Command {
	var (
		opts     export.Options
		sel      *selection
		waczFile string
	)
	cmd := &cobra.Command{
		Use:   "export [PATTERN...]",
		Short: "Write the collection as a static site (in place, or a publishable copy with --out)",
		Long: `Write the collection as a static site that opens from disk or any static host.

In place (the default) it writes index.html and further pages (site/page-N.html)
listing the snapshots newest first, a filter box that searches all of them (and,
when its "captured text" box is ticked, the first 4 KiB of each snapshot's
captured text as 'folio search' indexes it, from site/text/N.js; it finds words
as 'folio search' does, in any order, and keeps them in the address, #q=WORDS,
so a filtered view can be bookmarked), a detail page
index.html in every snapshot folder, and the root manifest index.jsonl. With
--out DIR it writes a publishable copy holding only the selected snapshots:
their files hard-linked where possible (copied otherwise),
fresh pages, a _headers file, and never the catalog, databases, config, sources
or logs.

A snapshot's page has a card for every output found: from its records, then
hashes/hashes.json, then the folder itself, so a plugin folder or file put there
by hand shows too. Its WARC files (warc/, wget/warc/) are listed with
their size, their number of records and a download link; a WARC is read once to
count them (kept in .folio/export/warc-counts until the file changes). A plugin whose runs all ended without output (failed,
noresults, skipped) gets no card for its folder's leftovers.

PATTERNs and the filter flags select snapshots as in 'folio list'. Exports are
incremental: only pages whose snapshots or snapshot folders' entries changed are
rewritten (a file added inside a plugin folder that has its card already shows
once the index changes, or at once under 'folio watch --export'); --full redoes
all.

Archived documents never run with the site's origin, even on a host that ignores
_headers (GitHub Pages, S3, plain nginx, python -m http.server): they are shown
only inside sandboxed frames (no allow-same-origin). Links to archived HTML,
XHTML, SVG, XML, MHTML and files of any other or no type open site/view.html,
a viewer that frames the file named after the "#" of its address, and only
files below archive/ of the same site. Images (not SVG), PDF, audio, video and
plain text or data (txt md json jsonl csv tsv log css js) are linked directly,
WARC and WACZ files with the download attribute: a host must serve these with
their usual types, never as text/html (every common host does). The _headers
file (Netlify, Cloudflare Pages) adds a CSP sandbox for archive/ as defence in
depth. Titles are cut for display and kept whole in index.jsonl.

The export writes a robots.txt that lets search engines index the list of
snapshots and each snapshot's page but not the archived copies; with
--allow-crawlers, or EXPORT_ALLOW_CRAWLERS = True in ArchiveBox.conf or the
environment (which every later export, watch --export and serve --watch keep),
it lets them index everything. A robots.txt counts only at the root of a
host.

The export never writes through a symlink where it writes (site/, site/search,
site/text, the root pages and index.jsonl, with --out the snapshot copies): it
stops and names it; the --out folder itself may be a symlink. On a full disk it
stops with one line naming the file system; the next export, once there is
room, goes on where it stopped.

An export that is killed leaves the temp files of the writes it was in the
middle of (.index.html.folio-tmp-… in snapshot folders, site/.folio.js.folio-tmp-…);
the next export removes them: it notes the snapshot folders it writes in, in
.folio/export/, before it writes there, and looks in exactly those.

With --wacz FILE.wacz it writes no site but one WACZ 1.1.1 file, the web
archiving standard that ReplayWeb.page, pywb and other replay tools open: the
WARC files of the selected snapshots (folio's warc/, and the warc/ and
wget/warc/ that ArchiveBox wrote) stored uncompressed under archive/, a CDXJ
index of their records (indexes/index.cdx, or index.cdx.gz and index.idx for
more than 3000 records), pages/pages.jsonl with one page per snapshot that has
a WARC (its URL, time, title and captured text, for search), datapackage.json
with the sha256 and size of every file, and datapackage-digest.json. The file
is replaced atomically. A WARC that cannot be read whole (truncated, corrupt)
is left out with one warning naming it, and folio exits 3.`,
		Example: `  folio export
  folio export --out ../public --tag published
  folio export --out site --gzip --bundle site.tar.zst
  folio export --wacz news.wacz --tag news`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := sel.resolve(args); err != nil {
				return err
			}
			switch {
			case opts.PageSize < 1:
				return usagef("--page-size %d: at least 1", opts.PageSize)
			}
			if opts.Templates != "" {
				if st, err := os.Stat(opts.Templates); err != nil || !st.IsDir() {
					return usagef("--templates %s: not a folder (it names a folder of templates that override the embedded ones)", opts.Templates)
				}
			}
			if waczFile != "" {
				return exportWACZ(cmd, e, waczFile, opts)
			}
			if opts.Bundle != "" && !strings.HasSuffix(opts.Bundle, ".tar.zst") {
				return usagef("--bundle %q: the file name must end in .tar.zst", opts.Bundle)
			}
			if opts.Bundle != "" {
				if err := folderExists("--bundle", opts.Bundle); err != nil {
					return err
				}
			}
			fault, err := envFault()
			if err != nil {
				return err
			}
			opts.Fault = fault
			coll, err := e.open()
			if err != nil {
				return err
			}
			opts.Collection = coll
			opts.Version = version
			if opts.AllowCrawlers, err = allowCrawlers(cmd, coll); err != nil {
				return err
			}
			p := e.printer()
			defer p.done()
			defer softMemoryLimit(exportMemory)()
			st, err := export.Run(cmd.Context(), opts, p)
			if err != nil {
				return queryUsage(err)
			}
			p.Infof("exported %d snapshots: %d pages written, %d unchanged; %d root pages written, %d unchanged",
				st.Snapshots, st.Written, st.Kept+st.Same, st.RootWritten, st.RootKept+st.RootSame)
			if st.Same+st.RootSame > 0 {
				p.Infof("%d pages rendered again held the same bytes on disk already: left as they were", st.Same+st.RootSame)
			}
			if opts.Out != "" {
				p.Infof("%d files (%d linked, %d copied this run), %d bytes", st.Files, st.Linked, st.Copied, st.Bytes)
			}
			if st.Bundle != "" {
				p.Infof("bundle %s", st.Bundle)
			}
			fmt.Fprintln(e.stdout, st.URL)
			return nil
		},
	}
	f := cmd.Flags()
	sel = addSelectionFlags(f, &opts.Query)
	f.StringVar(&opts.Out, "out", "", "write a publishable copy into this folder instead of exporting in place")
	f.BoolVar(&opts.Full, "full", false, "render every page again, ignoring what the last export wrote (a page whose bytes are on disk already is left as it is)")
	f.BoolVar(&opts.Gzip, "gzip", false, "also write .gz siblings of the generated files")
	f.StringVar(&opts.Bundle, "bundle", "", "also write the site as one zstd tarball (FILE.tar.zst)")
	f.BoolVar(&opts.AllowArchivedScripts, "allow-archived-scripts", false, "let archived pages run scripts inside their sandbox (never with the site's origin)")
	f.BoolVar(&opts.AllowCrawlers, "allow-crawlers", false, "write a robots.txt that lets search engines index the archived copies too (default: EXPORT_ALLOW_CRAWLERS of ArchiveBox.conf or the environment, else only folio's pages)")
	f.IntVar(&opts.PageSize, "page-size", 250, "snapshots per root page; the first holds from half to one and a half times as many, so that adding snapshots rewrites it alone")
	f.IntVar(&opts.Workers, "workers", 0, "pages rendered and written in parallel (default 8 per CPU)")
	f.BoolVar(&opts.AllowShrink, "allow-shrink", false, "let an --out export drop most of the snapshots its folder holds (otherwise refused: a typo in a filter must not empty a published site)")
	f.StringVar(&opts.Templates, "templates", "", "folder whose files override the embedded templates by name")
	f.StringVar(&opts.Title, "title", "", `site title (default "folio archive")`)
	f.StringVar(&waczFile, "wacz", "", "write the selected snapshots' WARCs as one WACZ file (FILE.wacz) instead of the site")
	return cmd
}

// allowCrawlers is --allow-crawlers when given, else the setting
// EXPORT_ALLOW_CRAWLERS (environment, then ArchiveBox.conf), else false:
// the export's robots.txt keeps search engines out of archived copies
// unless the user opts in. Every command that exports reads it, so the
// choice holds for each re-export.
func allowCrawlers(cmd *cobra.Command, coll *archive.Collection) (bool, error) {
	if f := flagOf(cmd, "allow-crawlers"); f != nil && f.Changed {
		return f.Value.String() == "true", nil
	}
	cfg, err := plugins.LoadConfig(coll.Path(archive.ConfigFile), os.Environ())
	if err != nil {
		return false, err
	}
	return cfg.Bool("EXPORT_ALLOW_CRAWLERS", false), nil
}

// flagOf is cmd's flag name, nil without cmd or flag.
func flagOf(cmd *cobra.Command, name string) *pflag.Flag {
	if cmd == nil {
		return nil
	}
	return cmd.Flags().Lookup(name)
}

// exportWACZ runs export --wacz: the selection packaged as one WACZ.
func exportWACZ(cmd *cobra.Command, e *env, file string, opts export.Options) error {
	switch {
	case !strings.HasSuffix(file, ".wacz"):
		return usagef("--wacz %q: the file name must end in .wacz", file)
	case opts.Out != "" || opts.Bundle != "" || opts.Gzip:
		return usagef("--wacz writes no site: it cannot go with --out, --bundle or --gzip")
	}
	if err := folderExists("--wacz", file); err != nil {
		return err
	}
	coll, err := e.open()
	if err != nil {
		return err
	}
	p := e.printer()
	defer p.done()
	st, err := wacz.Run(cmd.Context(), wacz.Options{Collection: coll, Query: opts.Query, File: file,
		Title: opts.Title, Version: version}, p)
	if err != nil && !errors.Is(err, archive.ErrPartial) {
		return queryUsage(err)
	}
	p.Infof("packaged %d WARC files (%d records) of %d of %d snapshots, %s", st.WARCs, st.Records, st.Pages, st.Snapshots, archive.HumanBytes(st.Bytes))
	abs, aerr := filepath.Abs(file)
	if aerr != nil {
		abs = file
	}
	fmt.Fprintln(e.stdout, abs)
	return err
}

// exportMemory is export's soft heap limit (PRODUCT.md: RSS ≤ 300 MB for
// a full export of 100k snapshots, SQLite's cache and the page buffers
// beside the heap).
const exportMemory = 200 << 20
