package export

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/archive/catalog"
)

// InPlace is what the last in-place export of a collection ran with,
// kept in .folio/export/in-place.json when it finished: add, update and
// remove keep that export current with the same options (the pages they
// rewrite then look like the rest), and status tells when the catalog
// has moved on since.
type InPlace struct {
	Title                string        `json:"title,omitempty"`
	PageSize             int           `json:"page_size,omitempty"`
	Gzip                 bool          `json:"gzip,omitempty"`
	AllowArchivedScripts bool          `json:"allow_archived_scripts,omitempty"`
	AllowCrawlers        bool          `json:"allow_crawlers,omitempty"`
	Templates            string        `json:"templates,omitempty"` // absolute
	Query                catalog.Query `json:"query"`
	// Catalog is the catalog generation the export read.
	Catalog catalog.Generation `json:"catalog"`
	// At is when it finished (the file's modification time).
	At time.Time `json:"-"`
}

const inPlaceFile = archive.StateDir + "/export/in-place.json"

// LastInPlace returns what the collection's last in-place export ran
// with, or nil when it has none: no root index.html, or no export state
// (the pages were not written by folio). An export by a folio that kept
// no options counts, with the default options.
func LastInPlace(c *archive.Collection) (*InPlace, error) {
	if fi, err := os.Lstat(c.Path(RootPage)); err != nil || !fi.Mode().IsRegular() {
		return nil, nil
	}
	if _, err := os.Lstat(c.Path(archive.StateDir + "/export/in-place.state")); err != nil {
		return nil, nil
	}
	p := c.Path(inPlaceFile)
	data, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return &InPlace{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", p, err)
	}
	var last InPlace
	if err := json.Unmarshal(data, &last); err != nil {
		return &InPlace{}, nil // damaged: the defaults, as before it was kept
	}
	if fi, err := os.Stat(p); err == nil {
		last.At = fi.ModTime()
	}
	return &last, nil
}

// Options are the export options that bring the in-place export up to
// date as it was last written, trusting the catalog as it is.
func (l *InPlace) Options(c *archive.Collection, version string) Options {
	return Options{Collection: c, Version: version, Title: l.Title, PageSize: l.PageSize, Gzip: l.Gzip,
		AllowArchivedScripts: l.AllowArchivedScripts, AllowCrawlers: l.AllowCrawlers, Templates: l.Templates, Query: l.Query, SkipReindex: true}
}

// rememberInPlace writes what this in-place export ran with.
func (s *site) rememberInPlace() error {
	tpl := s.opts.Templates
	if tpl != "" {
		if abs, err := filepath.Abs(tpl); err == nil {
			tpl = abs
		}
	}
	q := s.opts.Query
	q.Dirs, q.Sort, q.Limit, q.WithResults, q.RecordOnly, q.Snippets = nil, "", 0, false, false, false
	data, err := json.MarshalIndent(InPlace{Title: s.opts.Title, PageSize: s.opts.PageSize, Gzip: s.opts.Gzip,
		AllowArchivedScripts: s.opts.AllowArchivedScripts, AllowCrawlers: s.opts.AllowCrawlers, Templates: tpl, Query: q, Catalog: s.next.Catalog}, "", "  ")
	if err != nil {
		return fmt.Errorf("write %s: %w", s.opts.Collection.Path(inPlaceFile), err)
	}
	return archive.WriteFile(s.opts.Collection.Path(inPlaceFile), append(data, '\n'), 0o644)
}
