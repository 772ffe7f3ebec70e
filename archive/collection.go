package archive

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Folders and files of a data directory.
const (
	ArchiveDir  = "archive"
	UsersDir    = "archive/users"
	SourcesDir  = "sources"
	LogsDir     = "logs"
	InvalidDir  = "invalid"
	StateDir    = ".folio"
	CatalogFile = ".folio/catalog.sqlite3"
	LockFile    = ".folio/lock"
	LegacyDB    = "index.sqlite3"
	ConfigFile  = "ArchiveBox.conf"
)

// Sentinel errors the CLI maps onto exit codes.
var (
	ErrNotCollection = errors.New("not a folio or ArchiveBox collection")
	ErrNotEmpty      = errors.New("directory is not empty")
	ErrLocked        = errors.New("collection is locked")
	ErrPartial       = errors.New("some items failed")
)

// Collection is an open data directory.
type Collection struct {
	Dir string // absolute path of the data directory
}

// Path returns the absolute path of a slash-separated path inside the
// collection.
func (c *Collection) Path(rel string) string {
	return filepath.Join(c.Dir, filepath.FromSlash(rel))
}

// Open opens the collection at dir: a folio collection, or an ArchiveBox
// data directory that folio has never seen, in which case .folio/ is
// created and nothing else is touched.
func Open(dir string) (*Collection, error) {
	c, err := Inspect(dir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(c.Path(StateDir), 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", c.Path(StateDir), err)
	}
	return c, nil
}

// Inspect is Open for commands that change nothing (a dry run): it does
// not create .folio/, so it works on a collection the user cannot write.
func Inspect(dir string) (*Collection, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", dir, err)
	}
	st, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("open collection %s: %w", abs, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("open collection %s: not a directory", abs)
	}
	if !IsCollection(abs) {
		return nil, fmt.Errorf("%s: %w (run 'folio init' there, or pass --data-dir)", abs, ErrNotCollection)
	}
	return &Collection{Dir: abs}, nil
}

// IsCollection reports whether dir looks like a folio or ArchiveBox data
// directory.
func IsCollection(dir string) bool {
	for _, name := range []string{StateDir, LegacyDB, ArchiveDir, ConfigFile} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			return true
		}
	}
	return false
}

// allowedInDataDir lists entries that do not make a directory "non-empty"
// for init, as ArchiveBox's ALLOWED_IN_DATA_DIR does.
var allowedInDataDir = map[string]bool{
	"index.sqlite3": true, "index.sqlite3-wal": true, "index.sqlite3-shm": true,
	"ArchiveBox.conf": true, "ArchiveBox.conf.bak": true, "archive": true, "sources": true,
	"logs": true, "index.json": true, "index.html": true, "index.jsonl": true, "favicon.ico": true,
	"robots.txt": true, "static": true, "static_index.json": true, "search.sqlite3": true,
	"sonic": true, "queue.sqlite3": true, "crontabs": true, "user_plugins": true,
	"user_templates": true, "custom_plugins": true, "custom_templates": true, "personas": true,
	"lib": true, "tmp": true, "cache": true, "invalid": true, ".archivebox_id": true,
	".collection_id": true, "machines": true, "machine": true, "users": true, ".venv": true,
	"node_modules": true, ".git": true, ".env": true, "Dockerfile": true, "lost+found": true,
	".DS_Store": true, ".gitignore": true, ".folio": true, RemovedDir: true,
}

// InitResult says what Init found and did.
type InitResult struct {
	Collection *Collection
	Existing   bool     // the directory already was a collection
	Created    []string // folders created, relative to the data dir
}

// Init creates a collection in dir (creating dir if needed). It accepts an
// existing folio or ArchiveBox data directory and leaves its files alone;
// it refuses a directory holding anything else unless force is set.
func Init(dir string, force bool) (*InitResult, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("init %s: %w", dir, err)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, fmt.Errorf("init %s: %w", abs, err)
	}
	res := &InitResult{Existing: IsCollection(abs)}
	if !res.Existing && !force {
		entries, err := os.ReadDir(abs)
		if err != nil {
			return nil, fmt.Errorf("init %s: %w", abs, err)
		}
		var foreign []string
		for _, e := range entries {
			if !allowedInDataDir[e.Name()] {
				foreign = append(foreign, e.Name())
			}
		}
		if len(foreign) > 0 {
			sort.Strings(foreign)
			if len(foreign) > 3 {
				foreign = append(foreign[:3], "…")
			}
			return nil, fmt.Errorf("init %s: %w (holds %s); use --force to create a collection here anyway", abs, ErrNotEmpty, strings.Join(foreign, ", "))
		}
	}
	c := &Collection{Dir: abs}
	for _, rel := range []string{UsersDir, SourcesDir, LogsDir, StateDir} {
		p := c.Path(rel)
		if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
			if err := os.MkdirAll(p, 0o755); err != nil {
				return nil, fmt.Errorf("create %s: %w", p, err)
			}
			res.Created = append(res.Created, rel)
		}
	}
	res.Collection = c
	return res, nil
}
