package main

import (
	"errors"
	"io"
	"os"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/folio-archive/folio/archive"
)

// env holds what every command shares: the global flags and the streams.
type env struct {
	dataDir string
	quiet   bool

	stdin          io.Reader
	stdout, stderr io.Writer
}

// commands lists the constructors of folio's subcommands; each command
// file adds its own in init so command files stay independent.
var commands []func(*env) *cobra.Command

func newRoot(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr}
	root := &cobra.Command{
		Use:   "folio",
		Short: "Keep a filesystem-first web archive and publish it as a static site",
		Long: `folio keeps a filesystem-first web archive. Its collections are ArchiveBox
collections: the same data directory, the same archive/users/<user>/snapshots/...
tree and the same per-snapshot index.jsonl. folio migrates collections written by
any ArchiveBox version, keeps a rebuildable catalog of them, and exports them as
static sites that work from disk or any static host.

The data directory is --data-dir, else $FOLIO_DATA_DIR, else the current directory.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.PersistentFlags().StringVarP(&e.dataDir, "data-dir", "D", "", "collection directory (default $FOLIO_DATA_DIR, else the current directory)")
	root.PersistentFlags().BoolVarP(&e.quiet, "quiet", "q", false, "print only results, warnings and errors: no progress, no summaries")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error { return checkCounts(cmd) }
	for _, newCmd := range commands {
		cmd := newCmd(e)
		if cmd.Args == nil {
			cmd.Args = cobra.NoArgs
		}
		cmd.Args = usageArgs(cmd.Args)
		root.AddCommand(cmd)
	}
	return root
}

// usageArgs turns cobra's argument validation failures into usage errors.
func usageArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return usageError{err}
		}
		return nil
	}
}

// dir returns the data directory the user chose.
func (e *env) dir() string {
	if e.dataDir != "" {
		return e.dataDir
	}
	if d := os.Getenv("FOLIO_DATA_DIR"); d != "" {
		return d
	}
	return "."
}

// open opens the collection in the data directory.
func (e *env) open() (*archive.Collection, error) {
	c, err := archive.Open(e.dir())
	if err != nil {
		return nil, e.openError(err)
	}
	return c, nil
}

// openLocked opens the collection and takes its writer lock for the named
// command; unlock releases it.
func (e *env) openLocked(command string) (c *archive.Collection, unlock func() error, err error) {
	if c, err = e.open(); err != nil {
		return nil, nil, err
	}
	lock, err := c.Lock(command)
	if err != nil {
		return nil, nil, err
	}
	return c, lock.Unlock, nil
}

// openReadOnly opens the collection for a command that changes nothing.
// It takes the writer lock where it can, so that it does not read a tree
// another folio process is changing, but creates no .folio/ to hold it
// and goes on without it in a collection it cannot write.
func (e *env) openReadOnly(command string) (c *archive.Collection, unlock func() error, err error) {
	if c, err = archive.Inspect(e.dir()); err != nil {
		return nil, nil, e.openError(err)
	}
	nothing := func() error { return nil }
	if _, err := os.Stat(c.Path(archive.StateDir)); err != nil {
		return c, nothing, nil // no folio process has used it
	}
	lock, err := c.Lock(command)
	switch {
	case errors.Is(err, archive.ErrLocked):
		return nil, nil, err
	case err != nil:
		return c, nothing, nil // read-only: nobody can be changing it through folio
	}
	return c, lock.Unlock, nil
}

// openFor opens the collection for the named command: with the writer
// lock when the command writes, else as openReadOnly does (a dry run).
func (e *env) openFor(command string, writes bool) (*archive.Collection, func() error, error) {
	if writes {
		return e.openLocked(command)
	}
	return e.openReadOnly(command)
}

// printer returns the Printer for progress and messages on stderr.
func (e *env) printer() *printer {
	tty := false
	if f, ok := e.stderr.(*os.File); ok {
		tty = term.IsTerminal(int(f.Fd()))
	}
	return newPrinter(e.stderr, tty, e.quiet)
}
