package catalog

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"strings"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/layout"
)

// Depths, in slash-separated parts, of the folders of the current layout:
// archive/users/<user>/snapshots/<date>/<domain>/<id>.
const (
	depthUser     = 3
	depthSnapshot = 7
)

// cleanScope returns the folders of a scoped reindex, cleaned, paths
// inside a snapshot folder made that folder, without duplicates or
// folders below another one of the list; or nil when one of them is the
// whole archive (or above it): then nothing is scoped.
func cleanScope(scope []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range scope {
		p = path.Clean(strings.Trim(p, "/"))
		if p == "." || p == archive.ArchiveDir || !strings.HasPrefix(p, archive.ArchiveDir+"/") {
			if p == "." || p == archive.ArchiveDir {
				return nil
			}
			continue // outside the archive: no snapshot lies there
		}
		p = folderOf(p)
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	kept := out[:0]
	for _, p := range out {
		if !underAny(p, seen) {
			kept = append(kept, p)
		}
	}
	if len(kept) == 0 {
		return []string{} // scoped to nothing
	}
	return kept
}

// folderOf is the snapshot folder a path inside one lies in (index.jsonl,
// an output), else the path itself.
func folderOf(p string) string {
	parts := strings.Split(p, "/")
	switch {
	case parts[1] != "users" && len(parts) > 2:
		return strings.Join(parts[:2], "/") // inside archive/<timestamp>
	case parts[1] == "users" && len(parts) > depthSnapshot:
		return strings.Join(parts[:depthSnapshot], "/")
	}
	return p
}

// underAny reports whether a folder above p is in set.
func underAny(p string, set map[string]bool) bool {
	for d := path.Dir(p); d != "." && d != "/"; d = path.Dir(d) {
		if set[d] {
			return true
		}
	}
	return false
}

// maxScopeQueries is the most folders above the snapshot level that
// loadScoped queries one by one.
const maxScopeQueries = 256

// listScope finds the snapshot folders in or below the scope's folders,
// listing them with plain ReadDir calls (a scope is small: the folders a
// watcher saw change).
func (w *walker) listScope(ctx context.Context) ([]folder, error) {
	var found []folder
	seen := map[string]bool{} // two paths of the scope may lie in one folder
	add := func(f folder) {
		if !seen[f.dir] {
			seen[f.dir] = true
			found = append(found, f)
		}
	}
	var visit func(rel string, parts []string) error
	visit = func(rel string, parts []string) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if parts[1] != "users" { // a legacy folder
			if _, ok := layout.LegacyTimestamp(parts[1]); ok && !archive.IsTemp(parts[1]) && w.isRealDir(rel) {
				add(folder{dir: rel, layout: LayoutLegacy, name: parts[1]})
			}
			return nil
		}
		if len(parts) > 3 && parts[3] != "snapshots" || archive.IsTemp(parts[len(parts)-1]) || !w.isRealDir(rel) {
			return nil
		}
		if len(parts) == depthSnapshot {
			add(folder{dir: rel, layout: LayoutCurrent, user: parts[2], name: parts[6]})
			return nil
		}
		entries, err := os.ReadDir(w.abs(rel))
		if err != nil {
			w.unlisted(rel, err)
			return nil
		}
		for _, e := range entries {
			if !realDir(e) || len(parts) == depthUser && e.Name() != "snapshots" {
				continue
			}
			if err := visit(rel+"/"+e.Name(), append(parts[:len(parts):len(parts)], e.Name())); err != nil {
				return err
			}
		}
		return nil
	}
	for _, rel := range w.scope {
		if err := visit(rel, strings.Split(rel, "/")); err != nil {
			return nil, err
		}
	}
	return found, nil
}

// loadScoped reads what the catalog knows of the folders in or below the
// scope's folders, as loadKnown does for all of them: snapshot folders in
// one query however many, folders above them a query each, or, when
// there are many of those, one pass over the whole catalog.
func (c *Catalog) loadScoped(ctx context.Context, scope []string) (map[string]*known, error) {
	var exact, above []string
	for _, p := range scope {
		if isSnapshotPath(p) {
			exact = append(exact, p)
		} else {
			above = append(above, p)
		}
	}
	if len(above) > maxScopeQueries {
		all, err := c.loadKnown(ctx)
		if err != nil {
			return nil, err
		}
		in := make(map[string]bool, len(scope))
		for _, p := range scope {
			in[p] = true
		}
		for dir := range all {
			if !in[dir] && !underAny(dir, in) {
				delete(all, dir)
			}
		}
		return all, nil
	}
	m := map[string]*known{}
	load := func(where string, arg any) error {
		// The index holds every column read: the rows themselves (about 17
		// to a page) are not read, which for a watcher's look at 21k
		// unwatched snapshot folders of 100k was most of the pages.
		if err := c.loadKnownWhere(ctx, m, `SELECT rowid, dir, stamp, index_file, text_stamp FROM snapshots INDEXED BY snapshots_known`+where, false, arg); err != nil {
			return err
		}
		return c.loadKnownWhere(ctx, m, `SELECT dir, stamp, problems FROM problems`+where, true, arg)
	}
	if len(exact) > 0 {
		list, err := json.Marshal(exact)
		if err != nil {
			return nil, err
		}
		if err := load(` WHERE dir IN (SELECT value FROM json_each(?1))`, string(list)); err != nil {
			return nil, err
		}
	}
	// The range (p/, p0) holds exactly the paths below p: '0' follows '/'.
	for _, p := range above {
		if err := load(` WHERE dir = ?1 OR (dir > ?1 || '/' AND dir < ?1 || '0')`, p); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// loadKnownWhere adds to m the rows of query: snapshot rows, or with
// problems the rows of folders that could not be cataloged.
func (c *Catalog) loadKnownWhere(ctx context.Context, m map[string]*known, query string, problems bool, args ...any) error {
	rows, err := c.db.QueryContext(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("read catalog %s: %w", c.path, err)
	}
	defer rows.Close()
	for rows.Next() {
		var dir, text string
		k := &known{}
		if problems {
			err = rows.Scan(&dir, &k.stamp, &text)
			k.problems = decodeProblems(text)
		} else {
			err = rows.Scan(&k.rowid, &dir, &k.stamp, &k.indexFile, &k.textStamp)
		}
		if err != nil {
			return fmt.Errorf("read catalog %s: %w", c.path, err)
		}
		m[dir] = k
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read catalog %s: %w", c.path, err)
	}
	return nil
}

// isSnapshotPath reports whether p, cleaned by cleanScope, names a
// snapshot folder (current or legacy) rather than a folder above one.
func isSnapshotPath(p string) bool {
	parts := strings.Split(p, "/")
	return len(parts) == depthSnapshot && parts[1] == "users" || len(parts) == 2 && parts[1] != "users"
}
