package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/folio-archive/folio/archive"
)

// explain turns the errors a user can act on, whatever command they come
// from, into one line that names the thing and the next step; other
// errors pass through as they are.
func explain(ctx context.Context, err error) error {
	var op *net.OpError
	switch {
	case ctx.Err() != nil && errors.Is(err, context.Canceled):
		// A message that says so already, and what to run next, stays
		// (without Go's ": context canceled"); any other is one line.
		if msg := strings.TrimSuffix(err.Error(), ": "+context.Canceled.Error()); strings.Contains(msg, "interrupted") {
			return errors.New(msg)
		}
		return errors.New("interrupted: what finished is kept")
	case errors.Is(err, syscall.EADDRINUSE) && errors.As(err, &op) && op.Addr != nil:
		addr := op.Addr.String()
		return fmt.Errorf("%s is in use by another program: stop it, or choose another address with --addr %s", addr, nextPort(addr))
	}
	return err
}

// nextPort is addr with the port after its own: a free one, likely.
func nextPort(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	n, perr := strconv.Atoi(port)
	if err != nil || perr != nil || n >= 65535 {
		return "127.0.0.1:8001"
	}
	return net.JoinHostPort(host, strconv.Itoa(n+1))
}

// folderExists refuses a file flag whose folder does not exist, before
// any work is done that could not be written in the end.
func folderExists(flag, file string) error {
	dir := filepath.Dir(file)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return usagef("%s %s: there is no folder %s to write it in (create it first)", flag, file, dir)
	}
	return nil
}

// serveDir refuses a folder to serve that is not there: DIR as a usage
// error, the data directory as a missing collection.
func (e *env) serveDir(dir string, given bool) error {
	_, err := os.Stat(dir)
	switch {
	case err == nil:
		return nil
	case given:
		return usagef("%s: no such folder to serve (name an export folder, or leave DIR out to serve the collection's export)", dir)
	}
	return e.openError(err)
}

// openError says why the data directory is no collection, and where its
// path came from when $FOLIO_DATA_DIR chose it.
func (e *env) openError(err error) error {
	dir := e.dir()
	abs, aerr := filepath.Abs(dir)
	if aerr != nil {
		abs = dir
	}
	from := ""
	if e.dataDir == "" && os.Getenv("FOLIO_DATA_DIR") != "" {
		from = " (set by $FOLIO_DATA_DIR)"
	}
	_, serr := os.Stat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist) && errors.Is(serr, fs.ErrNotExist):
		return fmt.Errorf("no collection at %s%s: the folder does not exist; run 'folio init -D %s' to create one, or pass --data-dir", abs, from, abs)
	case errors.Is(err, archive.ErrNotCollection):
		return fmt.Errorf("%s%s: %w (run 'folio init' there, or pass --data-dir)", abs, from, archive.ErrNotCollection)
	}
	return err
}
