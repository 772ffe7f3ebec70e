package catalog

import (
	"bytes"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"folio/plugins"
)

// MaxText is how much capture text is indexed per snapshot: the first
// MiB of its text files together; the rest is not searchable.
const MaxText = 1 << 20

// maxHTML is how much of readability/content.html is read to find its
// text when there is no content.txt.
const maxHTML = 4 << 20

// Text files of a snapshot folder that search indexes, in the order their
// text is joined. readability/content.html stands in, stripped of its
// tags, when there is no content.txt. Legacy folders (ArchiveBox 0.7 and
// older) keep htmltotext's output at the top of the folder.
const (
	textReadability = "readability/content.txt"
	htmlReadability = "readability/content.html"
	textHTMLToText  = "htmltotext/htmltotext.txt"
	textLegacy      = "htmltotext.txt"
)

// textFiles returns the text files of a folder of the layout to stat and
// read: content.html only when content.txt is absent.
func textFiles(layoutName string, readabilityAbsent bool) []string {
	files := []string{textReadability, textHTMLToText}
	if readabilityAbsent {
		files[0] = htmlReadability
	}
	if layoutName == LayoutLegacy {
		files[1] = textLegacy
	}
	return files
}

// textStamp encodes size, mtime and inode of the folder's text files
// with lstat calls only (two for most folders), so that a reindex reads
// text again exactly when one of them changed. An absent file is "-". It
// also reports whether content.txt is absent.
func textStamp(absDir, layoutName string) (string, bool) {
	var st unix.Stat_t
	base := absDir + string(filepath.Separator)
	err := unix.Lstat(base+textReadability, &st)
	absent := err != nil
	b := appendStat(nil, &st, err)
	for _, name := range textFiles(layoutName, absent)[1:] {
		b = append(b, '|')
		b = appendStamp(b, base+name, &st)
	}
	if absent {
		// content.html then stands in: its stamp follows.
		b = append(b, '|')
		b = appendStamp(b, base+htmlReadability, &st)
	}
	return string(b), absent
}

// readText reads the folder's text files, at most MaxText bytes in all,
// joined by newlines (readabilityAbsent as textStamp found it). Absent
// files are skipped; others that cannot be read are problems. Bytes that
// are not valid UTF-8 are replaced. Of content.html, which loses its tags,
// at most maxHTML bytes are read.
func readText(absDir, relDir, layoutName string, readabilityAbsent bool) (string, []Problem) {
	var (
		out      []byte
		problems []Problem
	)
	for _, name := range textFiles(layoutName, readabilityAbsent) {
		if len(out) >= MaxText {
			break
		}
		limit := int64(MaxText - len(out))
		if name == htmlReadability {
			limit = maxHTML
		}
		_, data, err := readHead(filepath.Join(absDir, filepath.FromSlash(name)), limit)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			problems = append(problems, Problem{relJoin(relDir, name), err})
			continue
		}
		if name == htmlReadability {
			data = []byte(plugins.HTMLText(string(data)))
		}
		if len(out) > 0 {
			out = append(out, '\n')
		}
		out = append(out, data[:min(len(data), MaxText-len(out))]...)
	}
	out = bytes.TrimSpace(out)
	if !utf8.Valid(out) {
		return strings.ToValidUTF8(string(out), "\uFFFD"), problems
	}
	return string(out), problems
}
