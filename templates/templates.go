// Package templates holds the pages and assets of folio's static export:
// real .html, .css and .js files embedded in the binary. A user folder may
// override any of them by relative path (see Load).
package templates

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"os"
	"sort"
)

//go:embed *.html *.css *.js
var embedded embed.FS

// Page templates.
const (
	Root     = "root.html"
	Snapshot = "snapshot.html"
	View     = "view.html" // the viewer that frames an archived document
)

// Assets are the files copied verbatim into the export's site/ folder.
var Assets = []string{"folio.css", "folio.js"}

// Set is a parsed set of export templates with their assets.
type Set struct {
	Root     *template.Template
	Snapshot *template.Template
	View     *template.Template
	assets   map[string][]byte
	// Version changes whenever any template or asset byte changes; the
	// export's incremental state records it.
	Version string
	// RootBuiltin and SnapshotBuiltin are set when the root page and
	// snapshot page templates are the embedded ones (no override), which
	// the export may then render without html/template.
	RootBuiltin, SnapshotBuiltin bool
}

// Asset returns the content of a file named in Assets.
func (s *Set) Asset(name string) []byte { return s.assets[name] }

// Names lists every file of the embedded set, sorted.
func Names() []string {
	entries, _ := fs.ReadDir(embedded, ".")
	var out []string
	for _, e := range entries {
		if !e.IsDir() {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out
}

// Load parses the embedded templates. When overrideDir is not empty, a
// file of the same name in that folder replaces the embedded one.
func Load(overrideDir string, funcs template.FuncMap) (*Set, error) {
	overridden := map[string]bool{}
	read := func(name string) ([]byte, error) {
		if overrideDir != "" {
			b, err := os.ReadFile(overrideDir + string(os.PathSeparator) + name)
			if err == nil {
				overridden[name] = true
				return b, nil
			}
			if !errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("read template %s: %w", name, err)
			}
		}
		return embedded.ReadFile(name)
	}
	h := sha256.New()
	s := &Set{assets: map[string][]byte{}}
	parse := func(name string) (*template.Template, error) {
		b, err := read(name)
		if err != nil {
			return nil, err
		}
		h.Write([]byte(name))
		h.Write(b)
		t, err := template.New(name).Funcs(funcs).Parse(string(b))
		if err != nil {
			return nil, fmt.Errorf("parse template %s: %w", name, err)
		}
		return t, nil
	}
	var err error
	if s.Root, err = parse(Root); err != nil {
		return nil, err
	}
	if s.Snapshot, err = parse(Snapshot); err != nil {
		return nil, err
	}
	if s.View, err = parse(View); err != nil {
		return nil, err
	}
	for _, name := range Assets {
		b, err := read(name)
		if err != nil {
			return nil, err
		}
		h.Write([]byte(name))
		h.Write(b)
		s.assets[name] = b
	}
	s.Version = hex.EncodeToString(h.Sum(nil))[:16]
	s.RootBuiltin, s.SnapshotBuiltin = !overridden[Root], !overridden[Snapshot]
	return s, nil
}
