package main

import (
	"context"
	"errors"
	"fmt"

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
gzip, nosniff, folio's CSP on its own pages and a CSP sandbox on archived files.
In a collection only the export's pages, site/ and archive/ are served; never
.folio/, databases, config, sources/, logs/, dotfiles or directory listings.
With --watch (in a collection) the export is kept current as the tree changes,
as 'folio watch --export' does, while it is served.
Ctrl-C stops the server; folio then exits 130 (interrupted), as every command does.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Dir = e.dir()
			if len(args) == 1 {
				opts.Dir = args[0]
			}
			p := e.printer()
			opts.Ready = func(url string) {
				fmt.Fprintln(e.stdout, url)
				p.Infof("serving %s at %s (Ctrl-C stops)", opts.Dir, url)
			}
			if !watching {
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
	cmd.Flags().BoolVar(&opts.AllowArchivedScripts, "allow-archived-scripts", false, "let archived pages run scripts inside their sandbox")
	return cmd
}
