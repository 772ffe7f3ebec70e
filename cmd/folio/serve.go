package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"folio/export"
)

func init() { commands = append(commands, newServeCmd) }

func newServeCmd(e *env) *cobra.Command {
	opts := export.ServeOptions{}
	cmd := &cobra.Command{
		Use:   "serve [DIR]",
		Short: "Serve an export on 127.0.0.1:8000",
		Long: `Serve an export folder (or, without DIR, the collection's in-place export) over
HTTP, read-only: byte ranges, precompressed .gz siblings when the client accepts
gzip, nosniff, folio's CSP on its own pages and a CSP sandbox on archived files.
In a collection only the export's pages, site/ and archive/ are served; never
.folio/, databases, config, sources/, logs/, dotfiles or directory listings.
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
			err := export.Serve(cmd.Context(), opts, p)
			if cmd.Context().Err() != nil {
				p.Infof("stopped")
			}
			return err
		},
	}
	cmd.Flags().StringVar(&opts.Addr, "addr", export.DefaultAddr, "address to listen on")
	cmd.Flags().BoolVar(&opts.AllowArchivedScripts, "allow-archived-scripts", false, "let archived pages run scripts inside their sandbox")
	return cmd
}
