// Command folio keeps a filesystem-first web archive compatible with
// ArchiveBox and turns it into portable static sites.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/plugins"
)

// Exit codes, the command contract of PRODUCT.md.
const (
	exitOK          = 0
	exitError       = 1
	exitUsage       = 2
	exitPartial     = 3
	exitLocked      = 11
	exitInterrupted = 130
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	defer startProfiles(stderr)()
	root := newRoot(stdin, stdout, stderr)
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return exitOK
	}
	if strings.HasPrefix(err.Error(), "unknown command") {
		err = usageError{err}
	}
	code := exitCode(ctx, err)
	if errors.Is(err, errStopped) {
		return code // the command said so itself
	}
	err = explain(ctx, err)
	fmt.Fprintf(stderr, "folio: %v\n", err)
	if code == exitUsage && cmd != nil {
		fmt.Fprintf(stderr, "run '%s --help' for usage\n", cmd.CommandPath())
	}
	return code
}

// exitCode is folio's one table from errors to exit codes.
func exitCode(ctx context.Context, err error) int {
	var usage usageError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &usage), errors.Is(err, plugins.ErrUnknownPlugin):
		return exitUsage
	case errors.Is(err, archive.ErrLocked):
		return exitLocked
	case errors.Is(err, context.Canceled) || ctx.Err() != nil:
		return exitInterrupted
	case errors.Is(err, archive.ErrPartial):
		return exitPartial
	}
	return exitError
}

// errStopped ends a command that stopped on Ctrl-C and has said so in
// one line: folio exits 130 and prints nothing more.
var errStopped = fmt.Errorf("stopped: %w", context.Canceled)

// usageError marks a mistake in how folio was called; only these point
// to the command's --help.
type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }
func (u usageError) Unwrap() error { return u.err }

func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}
