package main_test

import (
	"strings"
	"testing"
)

// wantUsage runs folio with args and wants exit 2 with exactly the line
// msg and the pointer to the command's help.
func wantUsage(t *testing.T, env []string, msg string, args ...string) {
	t.Helper()
	_, stderr, code := runFolioEnv(t, env, args...)
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	if code != 2 || len(lines) != 2 || lines[0] != msg || !strings.HasSuffix(lines[1], "--help' for usage") {
		t.Errorf("folio %s: exit %d, stderr\n%s\nwant exit 2 and %q", strings.Join(args, " "), code, stderr, msg)
	}
}

// TestGlobalQuiet: -q is folio's one --quiet in every command, watch and
// serve included (their settle time is --settle), and add honours it.
func TestGlobalQuiet(t *testing.T) {
	dir := newCollection(t)
	wantUsage(t, nil, "folio: --settle -1s: must not be negative", "-D", dir, "watch", "-q", "--settle", "-1s")
	wantUsage(t, nil, "folio: --settle -1s: must not be negative", "-D", dir, "serve", "--quiet", "--settle", "-1s")
	stdout, stderr, code := runFolio(t, "-D", dir, "add", "-q", "--index-only", "http://127.0.0.1:9/quiet")
	if code != 0 || stdout != "" || stderr != "" {
		t.Errorf("add -q --index-only: exit %d, stdout %q, stderr %q; want 0 and nothing printed", code, stdout, stderr)
	}
	if _, stderr, code := runFolio(t, "-D", dir, "list", "-o", "url", "-n", "1", "-f", "exact", "http://127.0.0.1:9/quiet"); code != 0 {
		t.Errorf("list -o url -n 1 -f exact: exit %d\n%s", code, stderr)
	}
	// A letter that meant --dry-run, --force or --out before is unknown now:
	// it fails and changes nothing.
	wantUsage(t, nil, "folio: unknown shorthand flag: 'n' in -n", "-D", dir, "remove", "-n", "--all")
}

// TestNegativeValuesAreUsageErrors: a negative count or duration is a
// usage error in every command, named by its flag.
func TestNegativeValuesAreUsageErrors(t *testing.T) {
	dir := newCollection(t)
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"add", "--timeout", "-3", "http://127.0.0.1:9/"}, "folio: --timeout -3: must not be negative"},
		{[]string{"add", "--depth=-1", "http://127.0.0.1:9/"}, "folio: --depth -1: must not be negative"},
		{[]string{"update", "--timeout", "-3"}, "folio: --timeout -3: must not be negative"},
		{[]string{"update", "--migrate-only", "-j", "-4"}, "folio: --parallel -4: must not be negative"},
		{[]string{"list", "--limit", "-1"}, "folio: --limit -1: must not be negative"},
		{[]string{"search", "-n", "-5", "word"}, "folio: --limit -5: must not be negative"},
		{[]string{"export", "--page-size", "-10"}, "folio: --page-size -10: must not be negative"},
		{[]string{"reindex", "--workers", "-1"}, "folio: --workers -1: must not be negative"},
		{[]string{"serve", "--read-timeout", "-1s"}, "folio: --read-timeout -1s: must not be negative"},
		{[]string{"watch", "--poll", "-2s"}, "folio: --poll -2s: must not be negative"},
	} {
		wantUsage(t, nil, c.msg, append([]string{"-D", dir}, c.args...)...)
	}
}

// TestHelpHoldsNoTestKnobs: the environment variables folio's tests use
// are in no --help.
func TestHelpHoldsNoTestKnobs(t *testing.T) {
	for _, name := range []string{"init", "add", "update", "remove", "export", "reindex", "list", "search", "status", "verify", "watch", "serve", "demo"} {
		help, _, _ := runFolio(t, name, "--help")
		for _, knob := range []string{"FOLIO_FAULT", "FOLIO_MIGRATE_COPY", "Testing knobs"} {
			if strings.Contains(help, knob) {
				t.Errorf("folio %s --help mentions %s", name, knob)
			}
		}
	}
}
