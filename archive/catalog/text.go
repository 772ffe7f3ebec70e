package catalog

import (
	"bytes"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"github.com/folio-archive/folio/htmltext"
	"github.com/folio-archive/folio/internal/rawsys"
)

// MaxText is how much capture text is indexed per snapshot: the first
// MiB of its text; the rest is not searchable.
const MaxText = 1 << 20

// maxHTML is how much of readability/content.html is read to find its
// text when there is no content.txt.
const maxHTML = 4 << 20

// Text files of a snapshot folder that search indexes. Like ArchiveBox's
// own search index, folio indexes one text per snapshot, the first of
// these that exists: readability's text (the article), else htmltotext's
// (the whole page; at the top of a legacy ArchiveBox 0.7 folder), else
// readability's HTML stripped of its tags. Indexing both texts of a page
// would index most words twice and halve the speed of a reindex.
const (
	textReadability = "readability/content.txt"
	htmlReadability = "readability/content.html"
	textHTMLToText  = "htmltotext/htmltotext.txt"
	textLegacy      = "htmltotext.txt"
)

// textFiles lists the candidates of a folder of the layout, best first.
func textFiles(layoutName string) []string {
	if layoutName == LayoutLegacy {
		return []string{textReadability, textLegacy, htmlReadability}
	}
	return []string{textReadability, textHTMLToText, htmlReadability}
}

// textStamp finds the folder's text file with lstat calls only (one for
// most folders) and encodes the stat of each candidate up to it: size,
// mtime and inode, "-" for an absent one. A reindex reads the text again
// exactly when the stamp changed: the file changed, or a better one
// appeared. It returns the file found, "" when there is none.
func textStamp(absDir, layoutName string) (stamp, file string) {
	return textStampAt(unix.AT_FDCWD, absDir, layoutName)
}

// textStampAt is textStamp of the folder dir below the open directory
// dirfd (or from the working directory, unix.AT_FDCWD): a stat relative
// to a folder the walk holds open looks up fewer path components.
func textStampAt(dirfd int, dir, layoutName string) (stamp, file string) {
	var st unix.Stat_t
	var b []byte
	base := dir + string(filepath.Separator)
	for i, name := range textFiles(layoutName) {
		if i > 0 {
			b = append(b, '|')
		}
		err := rawsys.Lstatat(dirfd, base+name, &st)
		b = appendStat(b, &st, err)
		if err == nil {
			return string(b), name
		}
	}
	return string(b), ""
}

// readText reads the first MaxText bytes of the folder's text file name
// (as textStamp found it; "" means none), stripping the tags of
// readability's HTML, of which at most maxHTML bytes are read. A file
// gone since is no text; one that cannot be read is a problem. Bytes
// that are not valid UTF-8 are replaced.
func readText(absDir, relDir, name string) (string, []Problem) {
	if name == "" {
		return "", nil
	}
	limit := int64(MaxText)
	if name == htmlReadability {
		limit = maxHTML
	}
	_, data, err := readHead(filepath.Join(absDir, filepath.FromSlash(name)), limit)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", nil
	case err != nil:
		return "", []Problem{{relJoin(relDir, name), err}}
	}
	if name == htmlReadability {
		data = []byte(htmltext.Of(string(data)))
	}
	data = bytes.TrimSpace(data[:min(len(data), MaxText)])
	if !utf8.Valid(data) {
		return strings.ToValidUTF8(string(data), "\uFFFD"), nil
	}
	return string(data), nil
}
