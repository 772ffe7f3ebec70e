package archive

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"
)

// HiddenFile lists the snapshot folders 'folio remove' took out of the
// catalog without deleting them: one JSON object a line. Every reindex
// skips them, so a removed snapshot stays removed although its folder is
// still in the tree. Deleting a line (and running 'folio reindex') brings
// its snapshot back. It is part of the tree (RemovedDir), not of the
// catalog's StateDir: a catalog rebuilt from the tree honours it.
const HiddenFile = RemovedDir + "/hidden.jsonl"

// Hidden is one line of HiddenFile.
type Hidden struct {
	Dir  string    `json:"dir"` // snapshot folder, slash path relative to the data dir
	ID   string    `json:"id,omitempty"`
	URL  string    `json:"url,omitempty"`
	Time time.Time `json:"hidden_at"`
}

// HiddenDirs returns the folders of HiddenFile, nil when there is none.
// Lines that are not a JSON object with a dir are left out (and kept in
// the file by Hide). The list an earlier folio kept in StateDir counts
// too until the lock moves it (see moveRemoved), so that commands that
// read without the lock honour it.
func (c *Collection) HiddenDirs() (map[string]bool, error) {
	lines, err := c.hiddenLines(HiddenFile)
	if err != nil {
		return nil, err
	}
	old, err := c.hiddenLines(oldHiddenFile)
	if err != nil || len(lines)+len(old) == 0 {
		return nil, err
	}
	return hiddenSet(append(lines, old...)), nil
}

func hiddenSet(lines [][]byte) map[string]bool {
	dirs := make(map[string]bool, len(lines))
	for _, l := range lines {
		if h, ok := parseHidden(l); ok {
			dirs[h.Dir] = true
		}
	}
	return dirs
}

// Hide adds entries to HiddenFile, rewriting it atomically; a folder
// already listed is not listed twice. The caller holds the collection's
// writer lock.
func (c *Collection) Hide(entries []Hidden) error {
	lines, err := c.hiddenLines(HiddenFile)
	if err != nil {
		return err
	}
	listed := hiddenSet(lines)
	for _, h := range entries {
		if listed[h.Dir] {
			continue
		}
		listed[h.Dir] = true
		line, err := json.Marshal(h)
		if err != nil {
			return fmt.Errorf("write %s: %w", c.Path(HiddenFile), err)
		}
		lines = append(lines, line)
	}
	return c.writeHidden(lines)
}

// Unhide drops the lines of the folders dirs from HiddenFile and returns
// the folders it found there. The caller holds the collection's writer
// lock and reindexes those folders to bring their snapshots back.
func (c *Collection) Unhide(dirs []string) ([]string, error) {
	lines, err := c.hiddenLines(HiddenFile)
	if err != nil {
		return nil, err
	}
	drop := map[string]bool{}
	for _, d := range dirs {
		drop[d] = true
	}
	var kept [][]byte
	var found []string
	for _, l := range lines {
		if h, ok := parseHidden(l); ok && drop[h.Dir] {
			found = append(found, h.Dir)
			continue
		}
		kept = append(kept, l)
	}
	if len(found) == 0 {
		return nil, nil
	}
	return found, c.writeHidden(kept)
}

// HiddenList returns the entries of HiddenFile, in the file's order;
// lines that are not a JSON object with a dir are left out.
func (c *Collection) HiddenList() ([]Hidden, error) {
	lines, err := c.hiddenLines(HiddenFile)
	if err != nil {
		return nil, err
	}
	var out []Hidden
	for _, l := range lines {
		if h, ok := parseHidden(l); ok {
			out = append(out, h)
		}
	}
	return out, nil
}

// hiddenLines returns the non-blank lines of the hidden list rel.
func (c *Collection) hiddenLines(rel string) ([][]byte, error) {
	data, err := os.ReadFile(c.Path(rel))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", c.Path(rel), err)
	}
	var lines [][]byte
	for _, l := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(l)) > 0 {
			lines = append(lines, l)
		}
	}
	return lines, nil
}

func (c *Collection) writeHidden(lines [][]byte) error {
	var b bytes.Buffer
	for _, l := range lines {
		b.Write(l)
		b.WriteByte('\n')
	}
	if err := c.makeRemovedDir(RemovedDir); err != nil {
		return err
	}
	return WriteFile(c.Path(HiddenFile), b.Bytes(), 0o644)
}

func parseHidden(line []byte) (Hidden, bool) {
	var h Hidden
	if err := json.Unmarshal(line, &h); err != nil || h.Dir == "" {
		return h, false
	}
	return h, true
}
