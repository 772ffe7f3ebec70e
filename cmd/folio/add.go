package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/capture"
	"github.com/folio-archive/folio/capture/input"
)

func init() { commands = append(commands, newAddCmd) }

func newAddCmd(e *env) *cobra.Command {
	var (
		opts    capture.Options
		from    []string
		tags    []string
		only    string
		timeout int
		enqueue bool
		url     string
	)
	cmd := &cobra.Command{
		Use:   "add [URL... | FILE... | -]",
		Short: "Archive web pages: create snapshots and capture them with headless Chromium",
		Long: `Archive web pages. Each URL gets a new snapshot folder in the current layout
(archive/users/<user>/snapshots/<date>/<domain>/<id>/) whose index.jsonl is
written first (status queued); the capture plugins then run in ArchiveBox's
order, each writing under <snapshot>/<plugin>/ and recording an ArchiveResult
as it finishes; the snapshot is sealed at the end and the catalog updated.

Input: URLs as arguments; a FILE argument (a path that exists) or --from FILE
(repeatable) is read as a list; stdin is read when it is piped or redirected
(echo URL | folio add, folio add < urls.txt) or with '-'. The format of a
list is detected (--parser forces one): one URL a line (url_list), free text
with URLs in it (txt: every http(s) URL found), Netscape bookmark exports
(netscape_html), any HTML page of links and Pocket's HTML export (html: its
absolute <a href> links, with Pocket's time_added and tags), RSS/Atom feeds
(rss), JSON Lines records with a url field (jsonl), a JSON array of such
objects such as Pinboard's export (json: href, description, time, tags),
and CSV with a header row naming a url column such as Pocket's and
Instapaper's exports (csv). URLs are http(s), or file:// for
a page on this machine (its snapshot goes under the domain folder localhost,
as in ArchiveBox; links a page holds are followed by --depth 1 only to http(s)
pages, never to local files). Invalid items are reported and
skipped; with no valid URL at all the command exits 2. The raw input is kept
under sources/<timestamp>__cli_add.txt.

Built-in plugins (native Go, one Chromium for the run, one tab per snapshot):
  staticfile headers favicon singlefile screenshot pdf dom title readability
  htmltotext warc hashes
singlefile writes the page as one self-contained HTML file that renders with
no network and runs no script: resources, frames, canvases, shadow roots and
SVG sprite symbols are inside it.
The warc plugin records every request and response of the snapshot's tab (and
folio's own fetches) as WARC/1.1 in warc/<unix ts>.warc.gz; WARC_ENABLED=false
(or SAVE_WARC=False) turns it off.
External hooks: executables named on_Snapshot__NN_name.ext under
<data>/custom_plugins/<plugin>/ run with ArchiveBox's hook contract.

Settings come from <data>/ArchiveBox.conf and the environment under ArchiveBox's
names: TIMEOUT, <PLUGIN>_TIMEOUT, <PLUGIN>_ENABLED, USER_AGENT, RESOLUTION,
CHROME_BINARY, CHROME_CDP_URL (attach to a running browser),
CHROME_PAGELOAD_TIMEOUT, CHROME_DELAY_AFTER_LOAD, CHROME_ARGS_EXTRA (more Chromium
flags, a JSON list or space-separated), CHECK_SSL_VALIDITY,
SNAPSHOT_USER; and folio's own CHROME_SETTLE_TIMEOUT (seconds, default 5; 0
reads the page at its load event): after the load event a page is waited for
until its network and DOM are quiet, scrolled through once so lazy content
loads, and waited for again, at most that long, before any plugin reads it.

Adding a URL the collection has makes a new snapshot (captures are kept over
time) unless --skip-existing, or --update: then its newest snapshot gets its
failed and missing plugins run again in place, as 'folio update' does
(--overwrite: all of them). A URL whose folder would lie below a folder of
archive/users/ that is a symlink (which no reader follows) is refused with one
line and the others are added.

The summary counts each sealed snapshot by its state: failed when nothing of
the page was archived (every capture method that ran failed, only bookkeeping such as
hashes succeeded), partial when some content was archived and some plugin
failed; 'folio update --status failed' (or partial) runs them again. Exit 3
when some snapshot failed or is partial, or some URL was refused (each failure
is recorded in its snapshot's index.jsonl with the reason); Ctrl-C stops cleanly
(exit 130): finished snapshots are sealed, the others stay queued and
'folio add --resume' captures them (never the snapshots of a legacy
index.sqlite3: those were migrated, not added). Every snapshot's index.jsonl
holds the run's Crawl record (ArchiveBox's shape: urls, label, tags, depth,
creator) after its Snapshot record. After a kill, the next add removes the temp
files and half-made snapshot folders it left (in the folders it noted in
.folio/add.touched) and the Chromium profiles folio-chromium-* it left in
$TMPDIR (those whose lock no living folio holds).

On stderr add says what it does: the Chromium it starts, each URL as a worker
takes it, each snapshot saved with its title and folder (-q: none of these).
In a collection exported in place the export is then brought up to date, as
'folio watch --export' does, and the run ends with the file:// URL of its root
page on stdout; in one never exported, with the file:// URL of each saved
snapshot's page (its singlefile.html, else its screenshot or PDF). add never
writes a site that 'folio export' did not write first.

--enqueue-only creates the snapshot folders (status queued) and puts one job per
snapshot in the capture job queue (with --resume, also every snapshot left
queued or started: this rebuilds a lost queue, and enqueues nothing twice), then
returns; 'folio worker' captures them, on this machine or, with a shared
PostgreSQL queue (--queue, QUEUE_URL), on many. While workers run on the queue,
add without --enqueue-only does the same (it never captures a snapshot a worker
may have), except --update and --depth 1, which capture here and so fail as
locked (exit 11); with no worker running it captures, and workers that start
meanwhile wait for it to finish.`,
		Example: `  folio add https://example.com/
  folio add bookmarks.html --tag imported
  echo https://example.com/ | folio add
  folio add --parallel 4 < notes.txt
  folio add --from pocket.csv --from pinboard.json
  folio add --depth 1 https://example.com/links.html
  folio add --plugins title,screenshot,hashes https://example.com/`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Depth != 0 && opts.Depth != 1 {
				return usagef("--depth %d: want 0 (only the URLs given) or 1 (also the pages they link to)", opts.Depth)
			}
			if opts.Update && (opts.IndexOnly || opts.SkipExisting) {
				return usagef("--update runs plugins on the snapshots the collection has, so it cannot go with --index-only or --skip-existing")
			}
			if opts.Overwrite && !opts.Update {
				return usagef("--overwrite needs --update")
			}
			if opts.Depth == 1 && opts.IndexOnly {
				return usagef("--depth 1 needs the pages loaded, so it cannot go with --index-only")
			}
			if enqueue && (opts.Update || opts.Depth == 1) {
				return usagef("--enqueue-only leaves the capture to 'folio worker', so it cannot go with --update or --depth 1")
			}
			opts.IndexOnly = opts.IndexOnly || enqueue
			if opts.Parallel < 1 {
				return usagef("--parallel must be at least 1")
			}
			if opts.PerDomain < 0 {
				return usagef("--per-domain must be at least 1 (or 0 for no limit beyond --parallel)")
			}
			if !validParser(opts.Parser) {
				return usagef("--parser %q: want one of %s", opts.Parser, strings.Join(input.Formats(), ", "))
			}
			if only != "" {
				opts.Plugins = splitList(only)
			}
			opts.Tags = archive.NormalizeTags(splitTags(tags))
			sources, err := addSources(e.stdin, args, from, opts.Resume)
			if err != nil {
				return err
			}
			if len(sources) == 0 && !opts.Resume {
				return usagef("no URLs given: pass them as arguments, a file of them, or pipe them in (echo URL | folio add)")
			}
			opts.Sources = sources
			opts.CrawlLabel = crawlLabel(time.Now())
			if opts.Fault, err = envFault(); err != nil {
				return err
			}
			coll, unlock, err := e.openLocked("add")
			if err != nil {
				return err
			}
			defer unlock()
			if opts.Config, err = captureConfig(coll, timeout); err != nil {
				return err
			}
			p := e.printer()
			defer p.done()
			opts.Printer = p
			release := func() {}
			if !opts.IndexOnly {
				toQueue, rel, err := captureHere(cmd.Context(), coll, queueURL(url, opts.Config.Get("QUEUE_URL")), &opts, p)
				if err != nil {
					return err
				}
				release = sync.OnceFunc(rel)
				defer release()
				enqueue = toQueue
			}
			st, runErr := capture.Run(cmd.Context(), coll, opts)
			switch {
			case errors.Is(runErr, capture.ErrNoURLs):
				return usagef("%v in the input (each line needs an http(s) URL with a host, or a file:// URL of a local file)", runErr)
			case st == nil:
				return runErr
			}
			if enqueue && runErr == nil {
				runErr = enqueueAdded(cmd.Context(), coll, queueURL(url, opts.Config.Get("QUEUE_URL")), st.Pending, p)
			}
			if !e.quiet { // else the warnings and the error line said what went wrong
				if err := st.WriteTable(e.stdout, runErr); err != nil && runErr == nil {
					runErr = err
				}
			}
			// The workers lock goes with the collection's: an add that takes
			// the collection's lock next must not find it held by this one
			// (it would think workers run). The export takes the lock.
			release()
			unlock()
			siteRefresh{coll: coll, p: p, out: e.stdout}.run(cmd.Context(), st.Saved)
			return runErr
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&from, "from", nil, "read URLs from `FILE` (repeatable; '-' is stdin)")
	f.StringVar(&opts.Parser, "parser", input.Auto, "input format: "+strings.Join(input.Formats(), ", "))
	f.StringArrayVarP(&tags, "tag", "t", nil, "tag every new snapshot (repeatable, or comma-separated)")
	f.IntVarP(&opts.Depth, "depth", "d", 0, "0: archive the URLs given; 1: also the pages they link to")
	f.BoolVar(&opts.IndexOnly, "index-only", false, "create the snapshots (status queued) without capturing them")
	f.BoolVar(&opts.SkipExisting, "skip-existing", false, "do not add a URL the collection already has")
	f.BoolVar(&opts.Update, "update", false, "for a URL the collection has, run the failed and missing plugins of its newest snapshot again instead of adding it again")
	f.BoolVar(&opts.Overwrite, "overwrite", false, "with --update, also run the plugins that succeeded (their output is kept until the new one succeeds)")
	f.BoolVar(&opts.Resume, "resume", false, "also capture the snapshots an earlier run left queued or started")
	f.BoolVar(&enqueue, "enqueue-only", false, "create the snapshots and put them (with --resume, also those left queued) in the job queue for 'folio worker', then return")
	f.StringVar(&url, "queue", "", "the shared job queue postgres://… (for --enqueue-only, and to see whether workers run) (default $QUEUE_URL, else QUEUE_URL of ArchiveBox.conf, else .folio/queue.sqlite3)")
	parallelFlag(f, &opts.Parallel, 2, "snapshots captured at once (one browser tab each)")
	f.IntVar(&opts.PerDomain, "per-domain", 2, "snapshots of one domain captured at once (0: as many as --parallel)")
	f.StringVarP(&only, "plugins", "p", "", "run only these plugins (comma-separated names)")
	f.IntVar(&timeout, "timeout", 0, "TIMEOUT in seconds for plugins without their own <PLUGIN>_TIMEOUT")
	return cmd
}

// crawlLabel is the label ArchiveBox's add gives its crawl:
// "user@host $ cmd [ts]".
func crawlLabel(now time.Time) string {
	name := os.Getenv("USER")
	if u, err := user.Current(); name == "" && err == nil {
		name = u.Username
	}
	host, _ := os.Hostname()
	cmd := append([]string{filepath.Base(os.Args[0])}, os.Args[1:]...)
	return fmt.Sprintf("%s@%s $ %s [%s]", name, host, strings.Join(cmd, " "), now.UTC().Format("2006-01-02 15:04:05"))
}

func validParser(name string) bool {
	for _, f := range input.Formats() {
		if f == name {
			return true
		}
	}
	return false
}

// addSources gathers the input: the URL arguments as one source, '-' and
// --from - as stdin, every other --from as a file, and so is an argument
// that names an existing file (as ArchiveBox reads it). With no argument
// and no --from, stdin is read when it is a pipe or a file, not a
// terminal (nor /dev/null); --resume needs no input, so then only '-'
// reads it.
func addSources(stdin io.Reader, args, from []string, resume bool) ([]capture.Source, error) {
	var out []capture.Source
	var urls []string
	readStdin := len(args) == 0 && len(from) == 0 && !resume && piped(stdin)
	for _, a := range args {
		switch {
		case a == "-":
			readStdin = true
		case isFile(a):
			from = append(from, a)
		default:
			urls = append(urls, a)
		}
	}
	if len(urls) > 0 {
		out = append(out, capture.Source{Name: "arguments", Data: []byte(strings.Join(urls, "\n") + "\n"), Format: input.URLList})
	}
	for _, name := range from {
		if name == "-" {
			readStdin = true
			continue
		}
		data, err := os.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("--from: %w", err)
		}
		out = append(out, capture.Source{Name: name, Data: data})
	}
	if readStdin {
		data, err := io.ReadAll(stdin)
		if err != nil {
			return nil, fmt.Errorf("read stdin: %w", err)
		}
		out = append(out, capture.Source{Name: "stdin", Data: data})
	}
	return out, nil
}

// piped reports whether r is a pipe, socket or file to read URLs from:
// not a terminal or a device such as /dev/null.
func piped(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return r != nil
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice == 0
}

// isFile reports whether an add argument names an existing file rather
// than a URL.
func isFile(arg string) bool {
	if strings.Contains(arg, "://") {
		return false
	}
	fi, err := os.Stat(arg)
	return err == nil && fi.Mode().IsRegular()
}

func splitList(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

func splitTags(flags []string) []string {
	var out []string
	for _, f := range flags {
		out = append(out, archive.SplitTags(f)...)
	}
	return out
}
