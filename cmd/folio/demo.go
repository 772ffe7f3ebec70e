package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/folio-archive/folio/demo"
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
			opts.Out, opts.Printer, opts.Version, opts.Folio = e.stdout, p, version, invokedAs()
			res, err := demo.Run(cmd.Context(), opts)
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "\nThe demo collection is %s (%d snapshots).\nOpen %s\nor run: %s serve -D %s\n", res.Dir, res.Snapshots, res.URL, opts.Folio, res.Dir)
			return nil
		},
	}
	cmd.Flags().StringVar(&opts.Dir, "out", "", "folder to build the demo collection in (default: a new temporary folder)")
	cmd.Flags().StringVar(&opts.Legacy, "legacy-version", "0.7", "ArchiveBox version of the bundled legacy collection (0.4, 0.4.24, 0.7, 0.8, 0.9-dashed)")
	return cmd
}

// invokedAs is how the user can run this folio again: "folio" when that
// name on $PATH is this binary, else the binary's absolute path (after
// 'make demo' it is bin/folio, which is not on $PATH).
func invokedAs() string {
	self, err := os.Executable()
	if err != nil {
		return "folio"
	}
	self, _ = filepath.EvalSymlinks(self)
	if onPath, err := exec.LookPath("folio"); err == nil {
		if p, err := filepath.EvalSymlinks(onPath); err == nil && p == self {
			return "folio"
		}
	}
	return self
}
