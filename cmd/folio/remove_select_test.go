package main_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestRemoveSelectsLikeArchiveBox: remove matches whole URLs by default,
// asks before removing more than one snapshot (and without a terminal
// needs --yes), and --unhide takes the same selection back.
func TestRemoveSelectsLikeArchiveBox(t *testing.T) {
	dir := newCollection(t)
	for i, u := range []string{"https://example.org/p/a", "https://example.org/p/b", "https://example.org/p/c"} {
		writeSnap(t, dir, "0190f3c2a1b27c3d8e4f5a6b7c8d010"+string(rune('1'+i)), u, "page", time.Date(2024, 3, 1+i, 9, 0, 0, 0, time.UTC), "news")
	}
	writeSnap(t, dir, "0190f3c2a1b27c3d8e4f5a6b7c8d0109", "https://example.org/other", "other", time.Date(2024, 4, 1, 9, 0, 0, 0, time.UTC), "keep")
	count := func() int { out, _, _ := runFolio(t, "-D", dir, "list"); return len(catLines(out)) }
	if n := count(); n != 4 {
		t.Fatalf("%d snapshots listed, want 4", n)
	}

	// A pattern is a whole URL: a prefix of four URLs removes nothing.
	_, stderr, code := runFolio(t, "-D", dir, "remove", "https://example.org/")
	if code != 0 || stderr != "warning: the selection matches no snapshot in the catalog: nothing removed\n" || count() != 4 {
		t.Errorf("remove of a URL prefix: exit %d, %d listed\n%s", code, count(), stderr)
	}

	// Three at once without a terminal: refused, nothing changed.
	wantLine(t, nil, 2, "folio: 3 snapshots match: pass --yes to remove them all (stdin is not a terminal to ask on; nothing was changed)",
		"-D", dir, "remove", "--tag", "news")
	if n := count(); n != 4 {
		t.Errorf("a refused remove left %d of 4 snapshots", n)
	}

	// On a terminal it asks; "n" keeps them, "y" removes them.
	if _, err := exec.LookPath("script"); err == nil {
		ask := func(answer string) string {
			cmd := exec.Command("script", "-qec", folioBin(t)+" -D "+dir+" remove --tag news", "/dev/null")
			cmd.Env = append(os.Environ(), "FOLIO_DATA_DIR=")
			cmd.Stdin = strings.NewReader(answer + "\n")
			out, _ := cmd.CombinedOutput()
			return string(out)
		}
		if out := ask("n"); !strings.Contains(out, "remove 3 snapshots from the catalog (their folders are kept)? [y/N]") || !strings.Contains(out, "folio: not confirmed: nothing was changed") || count() != 4 {
			t.Errorf("answered n: %d listed\n%s", count(), out)
		}
		if out := ask("y"); !strings.Contains(out, "removed 3 snapshots from the catalog") || count() != 1 {
			t.Errorf("answered y: %d listed\n%s", count(), out)
		}
	} else if _, stderr, code := runFolio(t, "-D", dir, "remove", "--tag", "news", "--yes"); code != 0 || count() != 1 {
		t.Errorf("remove --yes: exit %d\n%s", code, stderr)
	}

	// --unhide takes the same selection: the undo of a bulk removal.
	wantLine(t, nil, 1, "folio: no removed snapshot matches /etc/passwd: --unhide takes the folders or URLs remove printed (removed/hidden.jsonl lists them)",
		"-D", dir, "remove", "--unhide", "/etc/passwd")
	wantLine(t, nil, 0, "brought back 1 snapshot", "-D", dir, "remove", "--unhide", "https://example.org/p/b")
	wantLine(t, nil, 0, "brought back 2 snapshots", "-D", dir, "remove", "--unhide", "--tag", "news")
	if n := count(); n != 4 {
		t.Errorf("after --unhide %d snapshots are listed, want 4", n)
	}
}
