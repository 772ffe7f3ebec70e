package migrate

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestFolderRisk(t *testing.T) {
	root := t.TempDir()
	write := func(rel, data string) {
		t.Helper()
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	src, dst := filepath.Join(root, "src"), filepath.Join(root, "dst")
	write("src/screenshot/screenshot.png", "png")
	write("src/index.jsonl", "{}\n")
	if got := folderRisk(src, dst); got != "" {
		t.Errorf("no destination: %q", got)
	}
	write("dst/screenshot/screenshot.png", "png")
	write("dst/index.jsonl", "{\"other\": 1}\n") // merged by the index step, not a risk
	if got := folderRisk(src, dst); got != "" {
		t.Errorf("the same files: %q", got)
	}
	write("dst/screenshot/screenshot.png", "another png")
	if got, want := folderRisk(src, dst), "its destination already has a different file: screenshot/screenshot.png"; got != want {
		t.Errorf("a differing file: %q, want %q", got, want)
	}
	if err := syscall.Mkfifo(filepath.Join(src, "screenshot", "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, want := folderRisk(src, dst), "holds a special file: screenshot/pipe (fifo)"; got != want {
		t.Errorf("a fifo: %q, want %q", got, want)
	}
}
