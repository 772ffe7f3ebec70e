package gen

import (
	"fmt"
	"os"
	"path"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/folio-archive/folio/archive"
)

// snapshot is one planned snapshot folder.
type snapshot struct {
	entry Entry
	index []byte
	files []file
}

// file is an output file, path relative to the snapshot folder.
type file struct {
	rel  string
	data []byte
}

func (s *snapshot) write(root string, noSync bool) (int64, error) {
	dir := filepath.Join(root, filepath.FromSlash(s.entry.Dir))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, fmt.Errorf("generate: %w", err)
	}
	made := map[string]bool{"": true}
	var n int64
	for _, f := range s.files {
		parent := path.Dir(f.rel)
		if parent == "." {
			parent = ""
		}
		if !made[parent] {
			if err := os.MkdirAll(filepath.Join(dir, filepath.FromSlash(parent)), 0o755); err != nil {
				return 0, fmt.Errorf("generate: %w", err)
			}
			made[parent] = true
		}
		if err := writeFile(filepath.Join(dir, filepath.FromSlash(f.rel)), f.data, noSync); err != nil {
			return 0, err
		}
		n += int64(len(f.data))
	}
	// index.jsonl last, as ArchiveBox writes it when the snapshot is sealed.
	if err := writeFile(filepath.Join(dir, archive.IndexFile), s.index, noSync); err != nil {
		return 0, err
	}
	return n + int64(len(s.index)), nil
}

// syncFS flushes the filesystem holding dir (syncfs(2)).
func syncFS(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	defer f.Close()
	if err := unix.Syncfs(int(f.Fd())); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}

func writeFile(p string, data []byte, noSync bool) error {
	if !noSync {
		return archive.WriteFile(p, data, 0o644)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		return fmt.Errorf("generate: %w", err)
	}
	return nil
}
