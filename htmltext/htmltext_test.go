package htmltext

import (
	"os/exec"
	"strings"
	"testing"
)

func TestOf(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"<p>Hello,\n  <b>world</b></p>", "Hello, world"},
		{"<head><title>T</title><meta charset=utf-8><link rel=x></head><body>x</body>", "x"},
		{"<script>var a = '<p>no</p>'</script><style>p{}</style><noscript>n</noscript>yes", "yes"},
		{"<template><p>later</p></template>now", "now"},
		{"", ""},
	} {
		if got := Of(c.in); got != c.want {
			t.Errorf("Of(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// The catalog and the capture plugins both depend on this package; the
// catalog must not depend on the plugins (it sits below them).
func TestCatalogDoesNotImportPlugins(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/folio-archive/folio/archive/catalog").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, upper := range []string{"/plugins", "/capture", "/export", "/cmd/"} {
			if strings.Contains(dep, "github.com/folio-archive/folio"+upper) {
				t.Errorf("archive/catalog imports %s, a package above it", dep)
			}
		}
	}
}
