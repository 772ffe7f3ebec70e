package archive

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"golang.org/x/sys/unix"
)

// A TouchLog lists, in a file under StateDir, the folders a command is
// about to write temp files in, so that the next run of the same command
// can remove the temp files a kill left there by looking in those folders
// only, never by listing the whole tree. A folder is noted (one write(2),
// so a kill loses no line that was written) before anything is written in
// it; a run that ends, whether it succeeded, failed or was interrupted,
// has removed its own temp files and removes the log. The log is not
// fsynced: after a power cut its last lines may be lost with the unsynced
// temp files they name, which 'folio verify' still reports.
type TouchLog struct {
	mu   sync.Mutex
	f    *os.File
	path string
}

// OpenTouchLog opens the log at path for a run holding the collection's
// lock. It first hands each folder an earlier run noted and did not see
// through to sweep; a folder whose sweep fails is reported to onError and
// noted again, so the next run tries it once more.
func OpenTouchLog(path string, sweep func(dir string) error, onError func(error)) (*TouchLog, error) {
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	var again []string
	for _, dir := range touchedDirs(data) {
		if err := sweep(dir); err != nil {
			onError(err)
			again = append(again, dir)
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", filepath.Dir(path), err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	l := &TouchLog{f: f, path: path}
	if err := l.Note(again...); err != nil {
		f.Close()
		return nil, err
	}
	return l, nil
}

// touchedDirs decodes a log's lines, each a JSON string; a line torn by a
// kill is skipped (nothing was written in its folder yet).
func touchedDirs(data []byte) []string {
	var out []string
	seen := map[string]bool{}
	for _, line := range bytes.Split(data, []byte("\n")) {
		var dir string
		if json.Unmarshal(line, &dir) != nil || dir == "" || seen[dir] {
			continue
		}
		seen[dir] = true
		out = append(out, dir)
	}
	return out
}

// Note records dirs in one write. A folder noted twice is written twice
// (touchedDirs reads it once): a set of every folder noted would grow
// with the collection on an export --full.
func (l *TouchLog) Note(dirs ...string) error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	var b []byte
	for _, d := range dirs {
		q, _ := json.Marshal(d)
		b = append(append(b, q...), '\n')
	}
	if len(b) == 0 {
		return nil
	}
	if _, err := l.f.Write(b); err != nil {
		return fmt.Errorf("write %s: %w", l.path, err)
	}
	return nil
}

// Close ends a run that removed its own temp files: the log goes.
func (l *TouchLog) Close() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	if rerr := os.Remove(l.path); rerr != nil && err == nil {
		err = fmt.Errorf("remove %s: %w", l.path, rerr)
	}
	return err
}

// RemoveTemps removes the entries of dir (files or folders) that are temp
// names and that match accepts (nil: every temp name). A dir that is gone,
// or is no folder, has none.
func RemoveTemps(dir string, match func(name string) bool) error {
	var st unix.Stat_t
	if err := unix.Lstat(dir, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("remove temp files in %s: %w", dir, err)
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return fmt.Errorf("remove temp files in %s: %w", dir, err)
	}
	removed := false
	for _, n := range names {
		if !IsTemp(n) || match != nil && !match(n) {
			continue
		}
		if err := os.RemoveAll(filepath.Join(dir, n)); err != nil {
			return fmt.Errorf("remove temp file %s: %w", filepath.Join(dir, n), err)
		}
		removed = true
	}
	if removed {
		return SyncDir(dir)
	}
	return nil
}

// RemoveTempsBelow is RemoveTemps for root and every folder below it
// (links are not followed; a temp folder is removed whole); match, nil
// for every temp name, is told the folder too.
func RemoveTempsBelow(root string, match func(dir, name string) bool) error {
	var dirs []string
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && !IsTemp(d.Name()) {
			dirs = append(dirs, p)
		}
		return nil
	})
	for _, d := range dirs {
		var m func(string) bool
		if match != nil {
			m = func(name string) bool { return match(d, name) }
		}
		if err := RemoveTemps(d, m); err != nil {
			return err
		}
	}
	return nil
}
