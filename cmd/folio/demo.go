package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"folio/demo"
)

func init() { commands = append(commands, newDemoCmd) }

func newDemoCmd(e *env) *cobra.Command {
	var opts demo.Options
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Build, migrate and export a demo collection from data bundled in folio",
		Long: `Build a demo collection from data bundled in the folio binary and run folio's
main job on it: a legacy ArchiveBox collection (database, legacy archive/<timestamp>
folders and the awkward cases real collections hold) is migrated to the current
layout with 'folio update --migrate-only', snapshots in the current layout are
added beside it, the catalog is built, the newest snapshots are listed and the
collection is exported as a static site. Prints the file:// URL to open.

--out names the folder (it must not exist or be empty); without it a new folder
under the system's temporary directory is used.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opts.Dir == "" {
				dir, err := os.MkdirTemp("", "folio-demo-")
				if err != nil {
					return err
				}
				opts.Dir = dir
			}
			p := e.printer()
			defer p.done()
			opts.Out, opts.Printer, opts.Version = e.stdout, p, version
			res, err := demo.Run(cmd.Context(), opts)
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "\nThe demo collection is %s (%d snapshots).\nOpen %s\nor run: folio serve -D %s\n", res.Dir, res.Snapshots, res.URL, res.Dir)
			return nil
		},
	}
	cmd.Flags().StringVar(&opts.Dir, "out", "", "folder to build the demo collection in (default: a new temporary folder)")
	cmd.Flags().StringVar(&opts.Legacy, "legacy-version", "0.7", "ArchiveBox version of the bundled legacy collection (0.4, 0.4.24, 0.7, 0.8, 0.9-dashed)")
	return cmd
}
