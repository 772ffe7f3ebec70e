package main

import (
	"io"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// TestShortFlagsHaveOneMeaning walks every command of folio: a short
// flag means the same long flag wherever it is, and no command's own
// flag takes the name or letter of a global one (which it would shadow).
func TestShortFlagsHaveOneMeaning(t *testing.T) {
	root := newRoot(strings.NewReader(""), io.Discard, io.Discard)
	global := map[string]string{} // name and shorthand -> the global flag
	root.PersistentFlags().VisitAll(func(f *pflag.Flag) {
		global["--"+f.Name] = f.Name
		if f.Shorthand != "" {
			global["-"+f.Shorthand] = f.Name
		}
	})
	letters := map[string]string{} // shorthand -> long name
	where := map[string]string{}   // shorthand -> first command with it
	var walk func(cmd *cobra.Command)
	walk = func(cmd *cobra.Command) {
		cmd.LocalNonPersistentFlags().VisitAll(func(f *pflag.Flag) {
			if g, ok := global["--"+f.Name]; ok {
				t.Errorf("%s --%s shadows the global --%s", cmd.CommandPath(), f.Name, g)
			}
			if f.Shorthand == "" {
				return
			}
			if g, ok := global["-"+f.Shorthand]; ok {
				t.Errorf("%s -%s (--%s) shadows the global -%s (--%s)", cmd.CommandPath(), f.Shorthand, f.Name, f.Shorthand, g)
			}
			if name, ok := letters[f.Shorthand]; ok && name != f.Name {
				t.Errorf("-%s is --%s in %s but --%s in %s", f.Shorthand, name, where[f.Shorthand], f.Name, cmd.CommandPath())
				return
			}
			letters[f.Shorthand], where[f.Shorthand] = f.Name, cmd.CommandPath()
		})
		for _, c := range cmd.Commands() {
			walk(c)
		}
	}
	walk(root)
	if len(letters) < 5 {
		t.Fatalf("found only %d short flags: the walk missed the commands", len(letters))
	}
}
