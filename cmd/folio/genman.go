//go:build man

package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

func init() { commands = append(commands, newGenCmd) }

// newGenCmd holds generators for packagers: 'folio gen man DIR' writes a
// man page per command with cobra's own generator, from the same text as
// --help. It is hidden from 'folio --help', and built only with -tags man
// ('make man' builds bin/folio-man and runs it): the generator brings a
// Markdown parser and a YAML encoder whose package initialisation every
// command would pay at start (about 1.2 ms of 26).
func newGenCmd(e *env) *cobra.Command {
	gen := &cobra.Command{
		Use:    "gen",
		Short:  "Generate files for packagers (man pages)",
		Hidden: true,
	}
	gen.AddCommand(&cobra.Command{
		Use:   "man DIR",
		Short: "Write a man page per command into DIR (folio.1, folio-list.1, …)",
		Args:  usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := os.MkdirAll(args[0], 0o755); err != nil {
				return err
			}
			header := &doc.GenManHeader{Title: "FOLIO", Section: "1", Source: "folio " + buildVersion(), Manual: "folio manual"}
			root := cmd.Root()
			root.DisableAutoGenTag = true
			if err := doc.GenManTree(root, header, args[0]); err != nil {
				return fmt.Errorf("write man pages: %w", err)
			}
			entries, _ := os.ReadDir(args[0])
			fmt.Fprintf(e.stderr, "wrote %d man pages to %s\n", len(entries), args[0])
			return nil
		},
	})
	gen.Args = cobra.NoArgs
	return gen
}
