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
		Use:   "init",
		Short: "Create a collection in the data directory",
		Long: `Create a collection in the data directory: archive/users/, sources/, logs/ and
.folio/. An existing ArchiveBox data directory is accepted as it is and none of
its files are changed. A directory holding other files is refused unless --force.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			res, err := archive.Init(e.dir(), force)
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
