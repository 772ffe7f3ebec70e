package gen

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
)

// Tree is the content of a folder: sha256 of every regular file, the
// target of every symlink, and every directory (also empty ones), by slash
// path relative to the folder.
type Tree struct {
	Files    map[string]string
	Symlinks map[string]string
	Dirs     []string
}

// ReadTree records the tree under root. A symlink root is recorded as
// Symlinks[""].
func ReadTree(root string) (Tree, error) {
	t := Tree{Files: map[string]string{}, Symlinks: map[string]string{}}
	st, err := os.Lstat(root)
	if err != nil {
		return t, err
	}
	if st.Mode()&fs.ModeSymlink != 0 {
		target, err := os.Readlink(root)
		t.Symlinks[""] = target
		return t, err
	}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if rel == "." {
			return nil
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			t.Symlinks[rel] = target
		case d.IsDir():
			t.Dirs = append(t.Dirs, rel)
		case d.Type().IsRegular():
			sum, err := fileSHA256(p)
			if err != nil {
				return err
			}
			t.Files[rel] = sum
		default:
			return fmt.Errorf("%s: special file", p)
		}
		return nil
	})
	sort.Strings(t.Dirs)
	return t, err
}

func fileSHA256(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Diff lists how got differs from t (missing, changed or extra entries);
// nil when equal.
func (t Tree) Diff(got Tree) []string {
	var out []string
	for p, sum := range t.Files {
		switch g, ok := got.Files[p]; {
		case !ok:
			out = append(out, "missing file "+p)
		case g != sum:
			out = append(out, "changed file "+p)
		}
	}
	for p, target := range t.Symlinks {
		switch g, ok := got.Symlinks[p]; {
		case !ok:
			out = append(out, "missing symlink "+p)
		case g != target:
			out = append(out, fmt.Sprintf("symlink %s -> %s, want -> %s", p, g, target))
		}
	}
	have := map[string]bool{}
	for _, d := range got.Dirs {
		have[d] = true
	}
	for _, d := range t.Dirs {
		if !have[d] {
			out = append(out, "missing dir "+d)
		}
	}
	sort.Strings(out)
	return out
}
