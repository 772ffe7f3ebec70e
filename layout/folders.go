package layout

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// UsersDir is the root of the current layout, relative to the data
// directory.
const UsersDir = "archive/users"

// ErrLinkedFolder is returned by RealFolders for a folder below
// archive/users/ that is a symlink or not a folder at all.
var ErrLinkedFolder = errors.New("folio neither reads nor writes through a symlinked folder below archive/users/")

// RealFolders applies the one rule of the users tree to rel, a folder
// relative to root (slash-separated): every folder of the tree below
// archive/users/ — a user's folder, its snapshots/ or crawls/, a date
// folder, a domain folder, a snapshot or crawl folder — must be a real
// directory. A symlink there is a projection of another folder (or of a
// place outside the collection), and readers do not follow it: the
// catalog's walk and the migration's scan list only real folders below
// archive/users/, so a snapshot written through one would vanish from
// status, verify and export. Writers call RealFolders before they create
// or write a folder there and refuse what it refuses. archive/ and
// archive/users/ themselves may be symlinks (users put them on another
// disk that way); paths not below archive/users/ pass.
//
// Each component of rel below archive/users/ is checked with os.Lstat;
// the first one that does not exist ends the check (a writer creates it,
// as a real folder). The error names the offending folder relative to
// root and wraps ErrLinkedFolder, or is the lstat's error.
func RealFolders(root, rel string) error {
	rest, ok := strings.CutPrefix(path.Clean(rel), UsersDir+"/")
	if !ok {
		return nil
	}
	cur := UsersDir
	for _, name := range strings.Split(rest, "/") {
		cur += "/" + name
		fi, err := os.Lstat(filepath.Join(root, filepath.FromSlash(cur)))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil
		case err != nil:
			return err
		case fi.Mode()&fs.ModeSymlink != 0:
			return fmt.Errorf("%s is a symlink: %w", cur, ErrLinkedFolder)
		case !fi.IsDir():
			return fmt.Errorf("%s is not a folder: %w", cur, ErrLinkedFolder)
		}
	}
	return nil
}
