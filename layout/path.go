package layout

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"
)

// Bucket returns the YYYYMMDD date folder of t in UTC (Python's
// strftime("%Y%m%d") on an aware UTC datetime), or "unknown" for the zero
// time. Like glibc's strftime, years below 1000 are not zero-padded.
func Bucket(t time.Time) string {
	if t.IsZero() {
		return "unknown"
	}
	t = t.UTC()
	return fmt.Sprintf("%d%02d%02d", t.Year(), int(t.Month()), t.Day())
}

// SnapshotDir returns the folder of a snapshot in the current layout,
// relative to the data directory:
// archive/users/<user>/snapshots/<Bucket(date)>/<Domain(url)>/<id>.
// date is bookmarked_at, else created_at. id must be a compact id and user a
// safe component.
func SnapshotDir(user string, date time.Time, url, id string) (string, error) {
	if err := checkOwner(user, id); err != nil {
		return "", fmt.Errorf("snapshot dir: %w", err)
	}
	return path.Join("archive/users", user, "snapshots", Bucket(date), Domain(url), id), nil
}

// CrawlDir returns the folder of a crawl, relative to the data directory:
// archive/users/<user>/crawls/<Bucket(created)>/<domain>/<id>, where domain is
// Domain of the first line of urls (split on "\n", Python-stripped) that is
// not empty and does not start with '#', or "unknown".
func CrawlDir(user string, created time.Time, urls, id string) (string, error) {
	if err := checkOwner(user, id); err != nil {
		return "", fmt.Errorf("crawl dir: %w", err)
	}
	return path.Join("archive/users", user, "crawls", Bucket(created), CrawlDomain(urls), id), nil
}

// CrawlDomain returns the domain folder of a crawl's urls field.
func CrawlDomain(urls string) string {
	for _, line := range strings.Split(urls, "\n") {
		line = pyStrip(line)
		if line != "" && !strings.HasPrefix(line, "#") {
			return Domain(line)
		}
	}
	return "unknown"
}

// LegacyDir returns archive/<timestamp>, the folder of a snapshot whose
// fs version IsLegacyFSVersion. The timestamp is used verbatim and must be a
// safe component.
func LegacyDir(timestamp string) (string, error) {
	if !Component(timestamp) {
		return "", fmt.Errorf("legacy dir: unsafe timestamp %q", timestamp)
	}
	return "archive/" + timestamp, nil
}

func checkOwner(user, id string) error {
	if !Component(user) {
		return fmt.Errorf("unsafe user name %q", user)
	}
	if !IsCompactID(id) {
		return fmt.Errorf("id %q is not 32 lowercase hex digits", id)
	}
	return nil
}

// Component reports whether s can be used as one path component: non-empty,
// at most 255 bytes, valid UTF-8, no '/' or NUL, and not "." or "..".
func Component(s string) bool {
	return s != "" && len(s) <= 255 && s != "." && s != ".." &&
		utf8.ValidString(s) && !strings.ContainsAny(s, "/\x00")
}

// ErrUnsafePath is returned by Join and JoinNoSymlinks for a path that could
// leave its root.
var ErrUnsafePath = errors.New("unsafe path")

// Join joins rel, a slash-separated path read from untrusted data, under
// root. It fails with ErrUnsafePath when rel is empty or names root itself
// ("."), is absolute, contains a NUL or a ".." element, is not local on this
// OS (filepath.IsLocal), or would otherwise escape root lexically.
func Join(root, rel string) (string, error) {
	fail := func(why string) (string, error) {
		return "", fmt.Errorf("join %q: %s: %w", rel, why, ErrUnsafePath)
	}
	switch {
	case rel == "":
		return fail("empty")
	case strings.IndexByte(rel, 0) >= 0:
		return fail("contains NUL")
	case strings.HasPrefix(rel, "/"):
		return fail("absolute")
	}
	for _, e := range strings.Split(rel, "/") {
		if e == ".." {
			return fail(`contains ".."`)
		}
	}
	local := filepath.FromSlash(rel)
	if !filepath.IsLocal(local) {
		return fail("not local")
	}
	if path.Clean(rel) == "." {
		return fail("names the root itself")
	}
	root = filepath.Clean(root)
	p := filepath.Join(root, local)
	if !within(root, p) {
		return fail("escapes root")
	}
	return p, nil
}

// within reports whether p is strictly below root (both clean).
func within(root, p string) bool {
	if root == string(filepath.Separator) {
		return len(p) > 1 && strings.HasPrefix(p, root)
	}
	return strings.HasPrefix(p, root+string(filepath.Separator))
}

// maxLinks bounds symlink resolution, like the kernel's ELOOP limit.
const maxLinks = 40

// JoinNoSymlinks is Join plus a walk of the existing components of the result
// with os.Lstat: a symlink is followed (os.Readlink, relative targets resolved
// against its folder, ".." applied to the already-resolved folder) and the
// path is refused with ErrUnsafePath if any link leads outside root or the
// chain is longer than 40 links. Symlinks that stay inside root are allowed.
// Use it before reading, copying or linking a file named by untrusted data.
// Components that do not exist end the walk. Root itself is trusted and not
// inspected; an absolute link target is compared lexically with root, so
// pass an absolute root. The check is not atomic with the later use: it
// guards against data, not against a concurrent attacker on the same disk.
func JoinNoSymlinks(root, rel string) (string, error) {
	p, _, _, err := walkNoSymlinks(root, rel)
	if err != nil && p != "" {
		return p, nil // a missing component ends the walk
	}
	return p, err
}

// StatNoSymlinks is JoinNoSymlinks that also returns what the path names,
// from the walk's own lstat calls, without another stat: the FileInfo of
// the file or folder at the end of any symlinks, or an error wrapping
// fs.ErrNotExist when a component does not exist.
func StatNoSymlinks(root, rel string) (string, fs.FileInfo, error) {
	p, _, fi, err := walkNoSymlinks(root, rel)
	if err != nil {
		return "", nil, err
	}
	return p, fi, nil
}

// ResolveNoSymlinks is StatNoSymlinks for a path that must exist whole,
// returning where it really is: the path below root with every symlink
// resolved, slash-separated ("." for root itself), each of its components
// a real file or folder, and what it names. Name rules that must hold for
// the data actually read apply to this path, not to rel, which a symlink
// can make look harmless.
func ResolveNoSymlinks(root, rel string) (string, fs.FileInfo, error) {
	_, cur, fi, err := walkNoSymlinks(root, rel)
	if err != nil {
		return "", nil, err
	}
	r, err := filepath.Rel(filepath.Clean(root), cur)
	if err != nil {
		return "", nil, fmt.Errorf("join %q: %w", rel, err)
	}
	return filepath.ToSlash(r), fi, nil
}

// walkNoSymlinks checks rel below root as JoinNoSymlinks says and returns
// the lexical join, the resolved path (absolute, below or at root, no
// symlink in it) and its lstat (from the walk's own calls unless the walk
// ended on ".." or on root itself). A missing component is an error
// wrapping fs.ErrNotExist returned with the join.
func walkNoSymlinks(root, rel string) (string, string, fs.FileInfo, error) {
	p, err := Join(root, rel)
	if err != nil {
		return "", "", nil, err
	}
	root = filepath.Clean(root)
	fail := func(why string) (string, string, fs.FileInfo, error) {
		return "", "", nil, fmt.Errorf("join %q: %s: %w", rel, why, ErrUnsafePath)
	}
	cur := root // resolved, symlink-free, at or below root
	var last fs.FileInfo
	todo := strings.Split(filepath.ToSlash(rel), "/")
	links := 0
	for len(todo) > 0 {
		e := todo[0]
		todo = todo[1:]
		switch e {
		case "", ".":
			continue
		case "..":
			if cur == root {
				return fail("symlink leads outside root")
			}
			cur, last = filepath.Dir(cur), nil
			continue
		}
		next := filepath.Join(cur, e)
		fi, err := os.Lstat(next)
		if errors.Is(err, fs.ErrNotExist) {
			return p, "", nil, fmt.Errorf("join %q: %w", rel, err)
		}
		if err != nil {
			return "", "", nil, fmt.Errorf("join %q: %w", rel, err)
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur, last = next, fi
			continue
		}
		last = nil
		links++
		if links > maxLinks {
			return fail("too many symlinks")
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", "", nil, fmt.Errorf("join %q: %w", rel, err)
		}
		if target == "" {
			return fail("empty symlink")
		}
		if filepath.IsAbs(target) {
			t := filepath.Clean(target)
			if t != root && !within(root, t) {
				return fail(fmt.Sprintf("symlink %s -> %s leads outside root", next, target))
			}
			r, _ := filepath.Rel(root, t)
			cur = root
			target = r
		}
		todo = append(strings.Split(filepath.ToSlash(target), "/"), todo...)
	}
	if last == nil {
		if last, err = os.Lstat(cur); err != nil {
			return "", "", nil, fmt.Errorf("join %q: %w", rel, err)
		}
	}
	return p, cur, last, nil
}
