package main_test

import (
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestUpdateSettlesStagingFolderAfterPowerLoss injects what a power loss
// in the middle of a copy across filesystems leaves: a staging folder
// beside the destination holding part of the source, its last file cut
// short, and a journal whose record of the move is torn. status names it,
// the dry run says what the run will do, and the run removes it once every
// file of it is found in the source, then migrates the folder with every
// byte.
func TestUpdateSettlesStagingFolderAfterPowerLoss(t *testing.T) {
	dir := t.TempDir()
	updCollection(t, dir, 3)
	const src = "archive/1500000000"
	dry := updRun(t, dir, nil, "update", "--migrate-only", "--dry-run")
	var dst string
	for _, line := range strings.Split(dry.stdout, "\n") {
		if to, ok := strings.CutPrefix(line, "move     "+src+" -> "); ok {
			dst = strings.Fields(to)[0]
		}
	}
	if dst == "" {
		t.Fatalf("the plan does not move %s:\n%s", src, dry.stdout)
	}
	srcFiles := map[string]string{}
	for rel, v := range updTree(t, dir) {
		if r, ok := strings.CutPrefix(rel, src+"/"); ok && strings.HasPrefix(v, "file") {
			srcFiles[r] = strings.Fields(v)[1]
		}
	}

	stage := path.Join(path.Dir(dst), "."+path.Base(dst)+".folio-tmp-4242-1")
	abs := filepath.Join(dir, filepath.FromSlash(stage))
	mustDo(t, os.MkdirAll(filepath.Join(abs, "media"), 0o755))
	for rel, n := range map[string]int{"index.json": -1, "screenshot.png": 700} {
		data, err := os.ReadFile(filepath.Join(dir, src, rel))
		mustDo(t, err)
		if n >= 0 {
			data = data[:n] // the write the power loss cut
		}
		mustDo(t, os.WriteFile(filepath.Join(abs, rel), data, 0o644))
	}
	torn := `{"step":"planned","src":"` + src + `","dst":"` + dst + `","mode":"re`
	mustDo(t, os.WriteFile(filepath.Join(dir, ".folio/migrate.journal"), []byte(torn), 0o644))

	const line = "interrupted        1 staging folder of copies a crash cut short (their sources are intact): 'folio update --migrate-only' settles them\n"
	const next = "next               folio update --migrate-only (add --dry-run to see the plan first)\n"
	if out := catRun(t, dir, "status").want(t, 0).stdout; !strings.Contains(out, line) || !strings.Contains(out, next) {
		t.Errorf("status lacks %q or %q:\n%s", line, next, out)
	}
	// A reindex keeps the listing of the domain folder; status, trusting
	// it, still counts the staging folder.
	time.Sleep(2100 * time.Millisecond)
	catRun(t, dir, "reindex").want(t, 0)
	if s := catStatusJSON(t, dir); s.Staging != 1 {
		t.Errorf("status after a reindex counts %d staging folders, want 1", s.Staging)
	}

	dry = updRun(t, dir, nil, "update", "--migrate-only", "--dry-run")
	if want := "[*] Staging folders of interrupted copies: 1, each removed once its every file is found in its source or destination"; !strings.Contains(dry.stderr, want) {
		t.Errorf("dry run lacks %q:\n%s", want, dry.stderr)
	}
	if _, err := os.Lstat(abs); err != nil {
		t.Fatalf("the dry run touched the staging folder: %v", err)
	}

	r := updRun(t, dir, nil, "update", "--migrate-only")
	if r.code != 0 {
		t.Fatalf("update: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if want := "Removed the staging folder of an interrupted copy: " + stage + " (every file of it is in " + src + ")"; !strings.Contains(r.stderr, want) {
		t.Errorf("update lacks %q:\n%s", want, r.stderr)
	}
	if _, err := os.Lstat(abs); !os.IsNotExist(err) {
		t.Fatalf("staging folder still there: %v", err)
	}
	got := updTree(t, dir)
	for rel, sum := range srcFiles {
		if v := got[dst+"/"+rel]; !strings.HasPrefix(v, "file "+sum) {
			t.Errorf("%s/%s is %q, want the source's bytes %s", dst, rel, v, sum)
		}
	}
	if out := catRun(t, dir, "status").want(t, 0).stdout; strings.Contains(out, "interrupted ") {
		t.Errorf("status after the run still names a staging folder:\n%s", out)
	}
}

func mustDo(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
