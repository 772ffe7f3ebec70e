package export

import (
	"bytes"
	"context"
	"strconv"
	"strings"
)

func shardPath(n int) string { return SiteDir + "/search/" + strconv.Itoa(n) + ".js" }

// textShardPath holds the captured text of root page n's snapshots, which
// the filter box loads only when asked to search it.
func textShardPath(n int) string { return SiteDir + "/text/" + strconv.Itoa(n) + ".js" }

// maxShardText is how much of a snapshot's captured text the export's
// text search holds: the start of the page, enough for what it is about,
// small enough that a page of 250 snapshots loads in a moment.
const maxShardText = 4 << 10

// shardRow is one snapshot in the search data:
// [href from the root, title, url, tags, status, saved, size, status label].
type shardRow [8]string

func (s *site) writeShard(n int, rows []shardRow) error {
	b := shardJS("folioSearch", n, len(rows), func(b *bytes.Buffer, i int) {
		b.WriteByte('[')
		for j, f := range rows[i] {
			if j > 0 {
				b.WriteByte(',')
			}
			appendJSString(b, f)
		}
		b.WriteByte(']')
	})
	return s.writeGenerated(shardPath(n), b.Bytes())
}

// shardJS is the script of a shard: fn.add(n, [row, …]); with each row
// written by row.
func shardJS(fn string, n, rows int, row func(b *bytes.Buffer, i int)) *bytes.Buffer {
	var b bytes.Buffer
	b.WriteString(fn)
	b.WriteString(".add(")
	b.WriteString(strconv.Itoa(n))
	b.WriteString(", [")
	for i := range rows {
		if i > 0 {
			b.WriteString(",\n")
		}
		row(&b, i)
	}
	b.WriteString("]);\n")
	return &b
}

// writeTextShard writes the captured text of page n's snapshots, as the
// catalog's search index holds it, in the order of the page's rows:
// folioText.add(n, ["text", …]), lower-cased with runs of white space made
// one space, the first maxShardText bytes of each.
func (s *site) writeTextShard(ctx context.Context, n int, items []item) error {
	dirs := make([]string, len(items))
	for i := range items {
		dirs[i] = items[i].Dir
	}
	texts, err := s.cat.Texts(ctx, dirs, 2*maxShardText)
	if err != nil {
		return err
	}
	b := shardJS("folioText", n, len(dirs), func(b *bytes.Buffer, i int) {
		t := strings.ToLower(strings.Join(strings.Fields(texts[dirs[i]]), " "))
		if len(t) > maxShardText {
			t = strings.ToValidUTF8(t[:maxShardText], "")
		}
		appendJSString(b, t)
	})
	// A page whose rows changed mostly keeps its texts: the file is left
	// alone then.
	return s.writeChanged(textShardPath(n), b.Bytes())
}

// appendJSString writes s as a JavaScript string literal that is also
// valid JSON, with <, >, & and the line separators escaped.
func appendJSString(b *bytes.Buffer, s string) {
	const hex = "0123456789abcdef"
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == '<' || r == '>' || r == '&' || r == 0x2028 || r == 0x2029 || r == 0x7f:
			b.WriteString(`\u`)
			b.WriteByte(hex[r>>12&0xf])
			b.WriteByte(hex[r>>8&0xf])
			b.WriteByte(hex[r>>4&0xf])
			b.WriteByte(hex[r&0xf])
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
}
