package export

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/folio-archive/folio/layout"
)

// safeChars are the bytes a link keeps unencoded besides ASCII letters and
// digits: ArchiveBox's _STATIC_URL_SAFE set, so folio's links are the ones
// ArchiveBox's static export writes.
const safeChars = "/@-._~!$&'()*+,;="

var safeTable = plainBytes(safeChars)

// plainBytes marks ASCII letters and digits and the bytes of also: the
// bytes an escaper keeps as they are.
func plainBytes(also string) (t [256]bool) {
	for c := 0; c < 256; c++ {
		t[c] = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte(also, byte(c)) >= 0
	}
	return t
}

// Quote percent-encodes p as Python's urllib.parse.quote(p, safe=safeChars)
// does: every byte of the UTF-8 encoding outside the safe set becomes %XX,
// so "%" becomes "%25", " " "%20", "?" "%3F" and "#" "%23".
func Quote(p string) string {
	n := 0
	for i := 0; i < len(p); i++ {
		if !safeTable[p[i]] {
			n++
		}
	}
	if n == 0 {
		return p
	}
	const hex = "0123456789ABCDEF"
	b := make([]byte, 0, len(p)+2*n)
	for i := 0; i < len(p); i++ {
		c := p[i]
		if safeTable[c] {
			b = append(b, c)
			continue
		}
		b = append(b, '%', hex[c>>4], hex[c&15])
	}
	return string(b)
}

// relHref returns the relative link from a page in folder from to the
// file to; both are slash paths relative to the export root ("" is the
// root). The link starts with "./" or "../" and is quoted.
func relHref(from, to string) string {
	// Skip the folders from and to share, a component at a time (to's
	// last component, the file, is never shared); every component of
	// from left is one "../". A page makes dozens of links: no slices.
	f, t := from, to
	fLeft := from != "" // f has a component left (an empty one too)
	for fLeft {
		fc, fRest, fMore := strings.Cut(f, "/")
		tc, tRest, tMore := strings.Cut(t, "/")
		if !tMore || fc != tc {
			break
		}
		f, fLeft, t = fRest, fMore, tRest
	}
	ups := 0
	if fLeft {
		ups = strings.Count(f, "/") + 1
	}
	q := Quote(t)
	var b strings.Builder
	b.Grow(max(2, 3*ups) + len(q))
	if ups == 0 {
		b.WriteString("./")
	}
	for range ups {
		b.WriteString("../")
	}
	b.WriteString(q)
	return b.String()
}

// ErrNotLinkable reports an output path that is not linked: unsafe,
// leaving the snapshot folder (and so maybe the collection) through a
// symlink, or missing on disk.
var ErrNotLinkable = errors.New("not linkable")

// Ref is one file of a snapshot as the export sees it: where it is on
// disk, where it is in the export, and the link to it from a page.
type Ref struct {
	Disk string // absolute path of the file in the collection
	Rel  string // slash path relative to the export root
	Href string // relative, quoted link from the page's folder
	// Query is the part after "?" of a rel that named a file plus a query;
	// it is appended to links unquoted.
	Query string
	Size  int64
}

// From returns the link to the file from a page in folder dir (slash,
// relative to the export root).
func (r Ref) From(dir string) string {
	h := relHref(dir, r.Rel)
	if r.Query != "" {
		h += "?" + r.Query
	}
	return h
}

// Resolve computes an output's file and its link together, so they cannot
// disagree. root is the collection's absolute path, snapDir the snapshot
// folder (slash, relative to root), rel a path relative to the snapshot
// folder as records write it, and from the folder of the page that links
// (slash, relative to the export root, "" for the root). It fails with
// ErrNotLinkable when rel is empty, absolute, contains "..", leaves the
// snapshot folder through a symlink, or names no regular file. A rel whose file
// does not exist but whose part before the first "?" does is linked to that
// file with the query appended unquoted, as ArchiveBox does.
func Resolve(root, snapDir, rel, from string) (Ref, error) {
	snapAbs, err := layout.JoinNoSymlinks(root, snapDir)
	if err != nil {
		return Ref{}, fmt.Errorf("link %q: %w: %w", rel, ErrNotLinkable, err)
	}
	return resolveIn(snapAbs, snapDir, rel, from)
}

// resolveIn is Resolve for a snapshot folder already checked to lie inside
// the collection (snapAbs, its absolute path). Symlinks below it are
// followed only while they stay inside the snapshot folder.
func resolveIn(snapAbs, snapDir, rel, from string) (Ref, error) {
	ref, err := resolveFile(snapAbs, snapDir, rel, from)
	if err == nil || !strings.Contains(rel, "?") {
		return ref, err
	}
	p, q, _ := strings.Cut(rel, "?")
	ref, err2 := resolveFile(snapAbs, snapDir, p, from)
	if err2 != nil {
		return Ref{}, err
	}
	ref.Query = q
	ref.Href += "?" + q
	return ref, nil
}

func resolveFile(snapAbs, snapDir, rel, from string) (Ref, error) {
	rel = strings.TrimPrefix(rel, "./")
	if rel == "" || strings.HasPrefix(rel, "/") {
		return Ref{}, fmt.Errorf("link %q: %w", rel, ErrNotLinkable)
	}
	for _, e := range strings.Split(rel, "/") {
		if e == ".." {
			return Ref{}, fmt.Errorf("link %q: contains ..: %w", rel, ErrNotLinkable)
		}
	}
	full := path.Clean(snapDir + "/" + rel)
	disk, st, err := layout.StatNoSymlinks(snapAbs, rel)
	if errors.Is(err, fs.ErrNotExist) {
		return Ref{}, fmt.Errorf("link %q: missing: %w", rel, ErrNotLinkable)
	}
	if err != nil {
		return Ref{}, fmt.Errorf("link %q: %w: %w", rel, ErrNotLinkable, err)
	}
	if !st.Mode().IsRegular() {
		return Ref{}, fmt.Errorf("link %q: not a regular file: %w", rel, ErrNotLinkable)
	}
	return Ref{Disk: disk, Rel: full, Href: relHref(from, full), Size: st.Size()}, nil
}

// webURL reports whether u is an http or https URL, which the pages show
// as a link; any other original (file:, data:, a bare path) is shown as
// text, since a link to it would lead nowhere or be blanked.
func webURL(u string) bool {
	scheme, _, ok := strings.Cut(u, ":")
	return ok && (strings.EqualFold(scheme, "http") || strings.EqualFold(scheme, "https"))
}
