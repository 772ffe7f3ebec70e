package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/folio-archive/folio/archive"
)

func init() { commands = append(commands, newInitCmd) }

func newInitCmd(e *env) *cobra.Command {
	var force bool
	cmd := &cobra.Command{
		Use:   "init [DIR]",
		Short: "Create a collection in DIR (else the data directory)",
		Long: `Create a collection in DIR, else in the data directory (-D, $FOLIO_DATA_DIR or
the current directory): archive/users/, sources/, logs/ and .folio/. An existing
ArchiveBox data directory is accepted as it is and none of its files are
changed. A directory holding other files is refused unless --force.`,
		Example: `  folio init ~/archive`,
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := e.dir()
			if len(args) == 1 {
				if e.dataDir != "" && e.dataDir != args[0] {
					return usagef("init %s: -D names another directory (%s); give one of them", args[0], e.dataDir)
				}
				dir = args[0]
			}
			res, err := archive.Init(dir, force)
			if err != nil {
				return err
			}
			p := e.printer()
			switch {
			case res.Existing && len(res.Created) == 0:
				p.Infof("%s is already a collection; nothing to do", res.Collection.Dir)
			case res.Existing:
				p.Infof("Opened existing collection %s (created %v)", res.Collection.Dir, res.Created)
			default:
				p.Infof("Created collection %s", res.Collection.Dir)
			}
			fmt.Fprintln(e.stdout, res.Collection.Dir)
			return nil
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "create the collection even if the directory holds other files")
	return cmd
}
