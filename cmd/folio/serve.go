package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/folio-archive/folio/export"
)

func init() { commands = append(commands, newServeCmd) }

func newServeCmd(e *env) *cobra.Command {
	opts := export.ServeOptions{}
	var (
		w        watchFlags
		watching bool
	)
	cmd := &cobra.Command{
		Use:   "serve [DIR]",
		Short: "Serve an export on 127.0.0.1:8000",
		Long: `Serve an export folder (or, without DIR, the collection's in-place export) over
HTTP, read-only: byte ranges, precompressed .gz siblings when the client accepts
gzip, nosniff. folio's CSP goes only to the pages the export wrote (the root
page, site/, and the index.html of each snapshot its index.jsonl lists, reread
when it changes); every other file, an index.html folio did not write among
them, gets a CSP sandbox, so archived scripts never run with the site's origin.
In a collection only the export's pages, site/ and archive/ are served; never
.folio/, databases, config, sources/, logs/, dotfiles or directory listings, and
these rules hold for where a symlink leads as much as for the URL (a link may
not leave the folder either).
A connection is closed when a request takes longer than --read-timeout to
arrive, when a response makes no progress for --write-timeout (a slow download
that keeps reading is never cut), or when it idles --idle-timeout between
requests; at most --max-connections are served at once, more wait their turn.
With --watch (in a collection) the export is kept current as the tree changes,
as 'folio watch --export' does, while it is served.
Without --watch serve writes nothing: a collection never exported answers /
with a page saying to run 'folio export' (and serve says so when it starts).
It prints the folder it serves as an absolute path, symlinks resolved.
Ctrl-C stops the server; folio then exits 130 (interrupted), as every command does.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, d := range []struct {
				flag string
				v    time.Duration
			}{{"--read-timeout", opts.ReadTimeout}, {"--write-timeout", opts.WriteTimeout}, {"--idle-timeout", opts.IdleTimeout}} {
				if d.v <= 0 {
					return usagef("%s %s: must be more than 0", d.flag, d.v)
				}
			}
			if opts.MaxConns < 1 {
				return usagef("--max-connections %d: must be at least 1", opts.MaxConns)
			}
			opts.Dir = e.dir()
			if len(args) == 1 {
				opts.Dir = args[0]
			}
			if err := e.serveDir(opts.Dir, len(args) == 1); err != nil && !(watching && len(args) == 1) {
				return err
			}
			p := e.printer()
			real := realPath(opts.Dir)
			opts.Ready = func(url string) {
				fmt.Fprintln(e.stdout, url)
				p.Infof("serving %s at %s (Ctrl-C stops)", real, url)
			}
			if !watching {
				warnNotExported(p, real)
				err := export.Serve(cmd.Context(), opts, p)
				if cmd.Context().Err() != nil {
					p.Infof("stopped")
					return errStopped
				}
				return err
			}
			if err := w.validate(); err != nil {
				return err
			}
			if len(args) == 1 {
				return usagef("--watch keeps a collection's in-place export current; it takes no DIR (use -D DATA_DIR)")
			}
			coll, err := e.open()
			if err != nil {
				return err
			}
			// The export is brought up to date, then served while the
			// watcher keeps it current; either one ending stops both.
			w.export = true
			ctx, cancel := context.WithCancel(cmd.Context())
			defer cancel()
			werr := make(chan error, 1)
			go func() {
				defer cancel()
				werr <- w.run(ctx, p, coll)
			}()
			err = export.Serve(ctx, opts, p)
			cancel()
			if e := <-werr; cmd.Context().Err() == nil && e != nil && !errors.Is(e, context.Canceled) {
				err = e
			}
			if cmd.Context().Err() != nil {
				p.Infof("stopped")
				return errStopped
			}
			return err
		},
	}
	cmd.Flags().BoolVar(&watching, "watch", false, "keep the collection's export current while serving (as 'folio watch --export')")
	w.register(cmd, false)
	cmd.Flags().StringVar(&opts.Addr, "addr", export.DefaultAddr, "address to listen on")
	cmd.Flags().DurationVar(&opts.ReadTimeout, "read-timeout", export.DefaultReadTimeout, "close a connection whose request takes longer than this to arrive")
	cmd.Flags().DurationVar(&opts.WriteTimeout, "write-timeout", export.DefaultWriteTimeout, "close a connection whose response makes no progress for this long")
	cmd.Flags().DurationVar(&opts.IdleTimeout, "idle-timeout", export.DefaultIdleTimeout, "close a kept-alive connection idle for this long")
	cmd.Flags().IntVar(&opts.MaxConns, "max-connections", export.DefaultMaxConns, "connections served at once (more wait to be accepted)")
	cmd.Flags().BoolVar(&opts.AllowArchivedScripts, "allow-archived-scripts", false, "let archived pages run scripts inside their sandbox")
	return cmd
}

// realPath is dir as an absolute path with its symlinks resolved, as
// serve names what it serves ("." says nothing); dir itself when it
// cannot be resolved (serve then says why).
func realPath(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return dir
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real
	}
	return abs
}

// warnNotExported says when the folder served has no root page: a
// collection never exported, whose / then says to run 'folio export'.
func warnNotExported(p *printer, dir string) {
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return // Serve names the problem
	}
	if _, err := os.Lstat(filepath.Join(dir, export.RootPage)); err == nil {
		return
	}
	p.Warnf("%s has no export yet: run 'folio export -D %s' (or serve with --watch, which exports first); until then / says so", dir, dir)
}
