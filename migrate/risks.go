package migrate

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/folio-archive/folio/archive"
)

// CheckRisks looks at the folders the plan's moves, merges and invalid/
// steps would copy, as the run will when it gets to each, and records in
// Step.Risk why the run may still refuse one: a special file (fifo,
// socket, device) under it, which no copy can take safely, or a
// destination that already holds a different file at a path the folder
// also has. Only a dry run needs this: the run itself checks each folder
// as it goes. It reads every folder's listing, not its files' bytes.
func (p *Plan) CheckRisks(ctx context.Context, c *archive.Collection, workers int) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(max(workers, 1))
	for i := range p.Steps {
		s := &p.Steps[i]
		switch s.Action {
		case ActionMove, ActionMerge, ActionInvalid:
		default:
			continue
		}
		g.Go(func() error {
			if err := ctx.Err(); err != nil {
				return err
			}
			s.Risk = folderRisk(c.Path(s.Source), c.Path(s.Dest))
			return nil
		})
	}
	return g.Wait()
}

// folderRisk says why copying src to dst may be refused, "" when nothing
// on disk says so now.
func folderRisk(src, dst string) string {
	tree, err := walkTree(src)
	switch {
	case errors.Is(err, ErrSpecialFile):
		return "holds a special file: " + relTo(src, err)
	case errors.Is(err, fs.ErrNotExist):
		return "" // gone since the scan: the run says so
	case err != nil:
		return fmt.Sprintf("cannot be read: %v", err)
	}
	if _, err := os.Lstat(dst); err != nil {
		return ""
	}
	if _, err := preflight(src, dst, tree); err != nil {
		if errors.Is(err, ErrWouldOverwrite) {
			return "its destination already has a different file: " + relTo(dst, err)
		}
		return fmt.Sprintf("its destination cannot be read: %v", err)
	}
	return ""
}

// relTo shortens the absolute paths of err's text to paths below root.
func relTo(root string, err error) string {
	msg := err.Error()
	for _, sentinel := range []error{ErrSpecialFile, ErrWouldOverwrite} {
		msg = strings.TrimPrefix(strings.TrimPrefix(msg, sentinel.Error()), ":")
	}
	return strings.TrimSpace(strings.ReplaceAll(msg, root+string(filepath.Separator), ""))
}
