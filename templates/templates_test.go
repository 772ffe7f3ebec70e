package templates

import (
	"html/template"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var noFuncs = template.FuncMap{}

// TestParseAll parses every embedded file: the page templates through
// Load, and checks that no asset or page refers to anything outside the
// export.
func TestParseAll(t *testing.T) {
	s, err := Load("", noFuncs)
	if err != nil {
		t.Fatal(err)
	}
	if s.Root == nil || s.Snapshot == nil || s.Version == "" {
		t.Fatalf("incomplete set: %+v", s)
	}
	names := Names()
	if len(names) < 4 {
		t.Fatalf("embedded files: %v", names)
	}
	for _, name := range names {
		b, err := embedded.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(name, ".html") {
			if _, err := template.New(name).Parse(string(b)); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		}
		// The SVG namespace in the icons' data URLs names a namespace;
		// nothing is fetched from it.
		text := strings.ReplaceAll(strings.ToLower(string(b)), "xmlns='http://www.w3.org/2000/svg'", "")
		for _, bad := range []string{"http://", "https://", "//cdn", "/static/", "/admin/", "jquery"} {
			if strings.Contains(text, bad) {
				t.Errorf("%s refers to %q", name, bad)
			}
		}
	}
	for _, a := range Assets {
		if len(s.Asset(a)) == 0 {
			t.Errorf("asset %s is empty", a)
		}
	}
}

func TestOverride(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "folio.css"), []byte("body{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	base, err := Load("", noFuncs)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Load(dir, noFuncs)
	if err != nil {
		t.Fatal(err)
	}
	if string(s.Asset("folio.css")) != "body{}" {
		t.Errorf("override not used")
	}
	if s.Version == base.Version {
		t.Errorf("version did not change with an override")
	}
	if !base.RootBuiltin || !base.SnapshotBuiltin || !s.RootBuiltin || !s.SnapshotBuiltin {
		t.Errorf("embedded page templates not marked built in with only an asset overridden")
	}
	if err := os.WriteFile(filepath.Join(dir, "snapshot.html"), []byte("<p>{{.Title}}</p>"), 0o644); err != nil {
		t.Fatal(err)
	}
	if s, err := Load(dir, noFuncs); err != nil || s.SnapshotBuiltin || !s.RootBuiltin {
		t.Errorf("an overridden snapshot.html is marked built in, or the root template not (%v)", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "root.html"), []byte("{{.Broken"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir, noFuncs); err == nil || !strings.Contains(err.Error(), "root.html") {
		t.Errorf("broken override: err = %v", err)
	}
}
