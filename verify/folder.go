package verify

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"

	"folio/archive"
	"folio/archive/catalog"
	"folio/plugins"
)

// hashesFile is where a snapshot folder keeps its manifest.
const hashesFile = "hashes/hashes.json"

// skipped are the folders hashes.json leaves out, at any depth.
var skipped = map[string]bool{"hashes": true, ".git": true, "__pycache__": true}

// mutable are the root files a snapshot rewrites after hashes.json is
// written (each result appends to index.jsonl; index.json and index.html
// are written when the snapshot is sealed). The index check covers them.
var mutable = map[string]bool{archive.IndexFile: true, archive.LegacyIndexFile: true, "index.html": true}

// folderReport is what checking one snapshot folder found.
type folderReport struct {
	files, bytes          int64
	hashes, wrote, legacy bool
	problems              []Problem
}

// checker checks one snapshot folder.
type checker struct {
	c     *archive.Collection
	e     catalog.Entry
	opts  *Options
	buf   []byte
	found func(Problem)
	rep   folderReport
}

// problem records a finding about rel, a slash path inside the folder
// ("" for the folder itself).
func (ch *checker) problem(k Kind, rel, format string, args ...any) {
	p := Problem{Kind: k, Path: ch.e.Dir, Snapshot: ch.e.Dir, Detail: fmt.Sprintf(format, args...)}
	if rel != "" {
		p.Path += "/" + rel
	}
	ch.rep.problems = append(ch.rep.problems, p)
	ch.found(p)
}

func (ch *checker) run(ctx context.Context) folderReport {
	dir := ch.c.Path(ch.e.Dir)
	fi, err := os.Lstat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		ch.problem(Stale, "", "the catalog lists this snapshot but its folder is gone (run 'folio reindex')")
		return ch.rep
	case err != nil:
		ch.problem(Unreadable, "", "%v", err)
		return ch.rep
	case !fi.IsDir():
		ch.problem(Stale, "", "the catalog lists this snapshot but it is no longer a folder (run 'folio reindex')")
		return ch.rep
	}
	ch.checkIndex(dir)
	files := ch.walk(dir)
	if ch.e.Layout == catalog.LayoutLegacy {
		ch.checkLegacy()
	}
	m, err := readManifest(filepath.Join(dir, filepath.FromSlash(hashesFile)))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if ch.opts.WriteHashes && ch.e.Layout == catalog.LayoutCurrent {
			ch.writeHashes(ctx, dir, files)
		}
		return ch.rep
	case err != nil:
		ch.problem(Manifest, hashesFile, "%v", err)
		return ch.rep
	}
	ch.rep.hashes = true
	if m.root != "" {
		if got := plugins.MerkleRoot(plugins.MerkleLevels(m.leaves)); got != m.root {
			ch.problem(Manifest, hashesFile, "root_hash %.12s… does not match the file hashes it lists (%.12s…): the manifest was edited", m.root, got)
		}
	}
	ch.compare(ctx, dir, files, m)
	return ch.rep
}

// checkIndex checks the snapshot's index file and that the catalog read
// it as it is now.
func (ch *checker) checkIndex(dir string) {
	name := ch.e.IndexFile
	if name == "" {
		return // a legacy folder without an index: nothing to read
	}
	p := filepath.Join(dir, name)
	data, err := archive.ReadRegular(p)
	if errors.Is(err, fs.ErrNotExist) {
		ch.problem(Index, name, "the snapshot's %s is gone", name)
		return
	}
	if err != nil {
		ch.problem(Unreadable, name, "%v", err)
		return
	}
	if name == archive.IndexFile {
		ix, bad := archive.ParseIndex(data)
		switch {
		case len(bad) == 1:
			ch.problem(Index, name, "%v", bad[0])
		case len(bad) > 1:
			ch.problem(Index, name, "%v (and %d more bad lines)", bad[0], len(bad)-1)
		}
		if _, ok := ix.Snapshot(); !ok && len(bad) == 0 {
			ch.problem(Index, name, "holds no Snapshot record")
		}
	} else if _, err := archive.ParseLegacyIndex(data); err != nil {
		ch.problem(Index, name, "%v", err)
	}
	if st, err := os.Stat(p); err == nil && (st.Size() != ch.e.IndexSize || !st.ModTime().Equal(ch.e.IndexMTime)) {
		ch.problem(Stale, name, "changed since the catalog read it (run 'folio reindex')")
	}
}

// checkLegacy tells a legacy folder left behind by a migration from one
// not migrated yet.
func (ch *checker) checkLegacy() {
	s := ch.e.Snapshot
	if to, ok := ch.opts.Migrated[s.URL+"\x00"+s.Timestamp]; ok && s.URL != "" {
		ch.problem(LeftBehind, "", "already migrated to %s; this copy was left behind", to)
		return
	}
	ch.rep.legacy = true
}

// file is one regular file of a snapshot folder.
type file struct {
	rel  string // slash path inside the folder
	size int64
}

// walk lists the folder's regular files as hashes.json does (symlinks and
// the skipped folders left out), sorted by path, and reports temp files
// and folders that could not be read.
func (ch *checker) walk(dir string) []file {
	var out []file
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		rel := ""
		if p != dir {
			r, _ := filepath.Rel(dir, p)
			rel = filepath.ToSlash(r)
		}
		if err != nil {
			ch.problem(Unreadable, rel, "%v", unwrapPath(err))
			return nil
		}
		if p == dir {
			return nil
		}
		if archive.IsTemp(d.Name()) {
			what := "temp file"
			if d.IsDir() {
				what = "temp folder"
			}
			ch.problem(Temp, rel, "%s of a write that never finished; nothing refers to it", what)
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			if skipped[d.Name()] {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			ch.problem(Unreadable, rel, "%v", unwrapPath(err))
			return nil
		}
		out = append(out, file{rel: rel, size: info.Size()})
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].rel < out[j].rel })
	return out
}

// compare checks the files on disk against the manifest.
func (ch *checker) compare(ctx context.Context, dir string, files []file, m *manifest) {
	seen := make(map[string]bool, len(files))
	for _, f := range files {
		if ctx.Err() != nil {
			return
		}
		if mutable[f.rel] {
			seen[f.rel] = true
			continue
		}
		want, ok := m.files[f.rel]
		if !ok {
			ch.problem(Extra, f.rel, "not listed in %s (%s)", hashesFile, archive.HumanBytes(f.size))
			continue
		}
		seen[f.rel] = true
		if want.size >= 0 && want.size != f.size {
			ch.problem(Changed, f.rel, "size %d, %s says %d", f.size, hashesFile, want.size)
			continue
		}
		if want.hash == "" || want.hash == unreadableHash {
			continue // nothing to compare with but the size
		}
		got, n, err := ch.hash(filepath.Join(dir, filepath.FromSlash(f.rel)))
		if err != nil {
			ch.problem(Unreadable, f.rel, "%v", unwrapPath(err))
			continue
		}
		if got != want.hash {
			ch.problem(Changed, f.rel, "sha256 %.12s…, %s says %.12s…", got, hashesFile, want.hash)
		}
		ch.rep.files++
		ch.rep.bytes += n
	}
	for _, rel := range m.order {
		if !seen[rel] && !mutable[rel] && !inSkipped(rel) {
			ch.problem(Missing, rel, "listed in %s (%s) but not in the folder", hashesFile, archive.HumanBytes(m.files[rel].size))
		}
	}
}

// inSkipped reports whether rel lies in a folder hashes.json leaves out.
func inSkipped(rel string) bool {
	for d := path.Dir(rel); d != "."; d = path.Dir(d) {
		if skipped[path.Base(d)] {
			return true
		}
	}
	return false
}

// unreadableHash is what hashes.json records for a file it could not read.
const unreadableHash = "0000000000000000000000000000000000000000000000000000000000000000"

// hash returns the sha256 hex of the file at p and its length.
func (ch *checker) hash(p string) (string, int64, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.CopyBuffer(h, struct{ io.Reader }{f}, ch.buf)
	if err != nil {
		return "", n, err
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

// writeHashes writes hashes/hashes.json for a folder that has none.
func (ch *checker) writeHashes(ctx context.Context, dir string, files []file) {
	doc, _, total, err := plugins.HashTree(ctx, dir, ch.opts.Now())
	if err == nil {
		err = os.MkdirAll(filepath.Join(dir, "hashes"), 0o755)
	}
	if err == nil {
		err = archive.WriteFile(filepath.Join(dir, filepath.FromSlash(hashesFile)), doc, 0o644)
	}
	if err != nil {
		ch.problem(Unreadable, hashesFile, "write: %v", err)
		return
	}
	ch.rep.wrote = true
	ch.rep.files += int64(len(files))
	ch.rep.bytes += total
}

// unwrapPath drops the path a PathError repeats: the problem names it.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", pe.Op, pe.Err)
	}
	return err
}
