package export

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/folio-archive/folio/archive"
)

func shardPath(n int) string { return SiteDir + "/search/" + strconv.Itoa(n) + ".js" }

// textShardPath holds the captured text of root page n's snapshots, which
// the filter box loads only when asked to search it.
func textShardPath(n int) string { return SiteDir + "/text/" + strconv.Itoa(n) + ".js" }

// maxShardText is how much of a snapshot's captured text the export's
// text search holds: the start of the page, enough for what it is about,
// small enough that a page of 250 snapshots loads in a moment.
const maxShardText = 4 << 10

// shardRow is one snapshot in the search data, everything its row on a
// root page shows, every link relative to the export root: fields (see
// the shard* indexes, which folio.js reads by the same numbers), then
// [[plugin, icon, href], …] of its file icons.
type shardRow struct {
	fields [shardFields]string
	icons  []iconView
}

// The fields of a shardRow, in order.
const (
	shardHref             = iota // the snapshot's page
	shardTitle                   // as the row shows it
	shardURL                     //
	shardTags                    // comma separated
	shardState                   // the state's class (stateOf)
	shardSaved                   // "date time"
	shardSize                    //
	shardLabel                   // the state's words
	shardPreview                 // the preview image, "" for none
	shardPreviewFallbacks        // comma separated
	shardFavicon                 //
	shardFaviconFallbacks        //
	shardFullTitle               // the tooltip of a shortened title
	shardLinkable                // "1" when the URL is http(s)
	shardOutputs                 // count
	shardFailures                // count
	shardStatus                  // the record's status (sealed, queued…)
	shardPending                 // "1" while still to capture
	shardFields
)

// shardRowOf is row's entry in the search data; from is the folder of
// the page row was made for.
func (s *site) shardRowOf(it *item, row *rowView, snap *archive.Snapshot, f *files, outs []output, from string) shardRow {
	r := shardRow{icons: row.Icons}
	preview, previewFallbacks, favicon, faviconFallbacks := row.Preview, row.PreviewFallbacks, row.Favicon, row.FaviconFallbacks
	if from != "" { // links from the root, not from the page's folder
		if !row.Pending {
			preview, previewFallbacks = candidates(f, "", previewFiles...)
		}
		favicon, faviconFallbacks = candidates(f, "", faviconFiles...)
		r.icons = icons(outs, it.Dir, "")
	}
	r.fields = [shardFields]string{
		shardHref: fromRoot(row.Href), shardTitle: row.Title, shardURL: snap.URL, shardTags: archive.TagString(snap.Tags),
		shardState: row.State, shardSaved: row.Date + " " + row.Time, shardSize: row.Size, shardLabel: row.StatusLabel,
		shardPreview: fromRoot(preview), shardPreviewFallbacks: fromRoot(previewFallbacks),
		shardFavicon: fromRoot(favicon), shardFaviconFallbacks: fromRoot(faviconFallbacks),
		shardFullTitle: row.FullTitle, shardOutputs: strconv.Itoa(row.Outputs), shardFailures: strconv.Itoa(row.Failures),
		shardStatus: row.Status,
	}
	if from != "" {
		r.fields[shardHref] = fromRoot(relHref("", it.Dir+"/"+RootPage))
	}
	if row.Linkable {
		r.fields[shardLinkable] = "1"
	}
	if row.Pending {
		r.fields[shardPending] = "1"
	}
	return r
}

// fromRoot drops the "./" of links made from the export root, in a list
// of them separated by commas too: the filter box puts the root page's
// way to the root in front.
func fromRoot(hrefs string) string {
	return strings.ReplaceAll(strings.TrimPrefix(hrefs, "./"), ",./", ",")
}

func (s *site) writeShard(n int, rows []shardRow) (wrote bool, err error) {
	b := shardJS("folioSearch", n, len(rows), func(b *bytes.Buffer, i int) {
		b.WriteByte('[')
		for _, f := range rows[i].fields {
			appendJSString(b, f)
			b.WriteByte(',')
		}
		b.WriteByte('[')
		for j, ic := range rows[i].icons {
			if j > 0 {
				b.WriteByte(',')
			}
			b.WriteByte('[')
			appendJSString(b, ic.Plugin)
			b.WriteByte(',')
			appendJSString(b, ic.Icon)
			b.WriteByte(',')
			appendJSString(b, fromRoot(ic.Href))
			b.WriteByte(']')
		}
		b.WriteString("]]")
	})
	defer putBuffer(b)
	return s.writeGenerated(shardPath(n), b.Bytes())
}

// shardJS is the script of a shard: fn.add(n, [row, …]); with each row
// written by row, in a buffer of the pool (putBuffer it once written: a
// search shard of 250 rows is 300 KB, grown anew it cost 1 MB).
func shardJS(fn string, n, rows int, row func(b *bytes.Buffer, i int)) *bytes.Buffer {
	b := getBuffer()
	b.WriteString(fn)
	b.WriteString(".add(")
	b.WriteString(strconv.Itoa(n))
	b.WriteString(", [")
	for i := range rows {
		if i > 0 {
			b.WriteString(",\n")
		}
		row(b, i)
	}
	b.WriteString("]);\n")
	return b
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
	defer putBuffer(b)
	// A page whose rows changed mostly keeps its texts: the file is left
	// alone then.
	return s.writeChanged(textShardPath(n), b.Bytes())
}

// appendJSString writes s as a JavaScript string literal that is also
// valid JSON, with <, >, & and the line separators escaped, and a byte
// that is not UTF-8 written as U+FFFD. Runs that need no escape are
// copied whole: the search and text shards of 100k snapshots hold some
// 150 MB of such strings.
func appendJSString(b *bytes.Buffer, s string) {
	const hex = "0123456789abcdef"
	b.WriteByte('"')
	done := 0 // s[done:i] is to be copied as it is
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if jsPlain[c] {
				i++
				continue
			}
			b.WriteString(s[done:i])
			if c == '"' || c == '\\' {
				b.WriteByte('\\')
				b.WriteByte(c)
			} else {
				b.WriteString(`\u00`)
				b.WriteByte(hex[c>>4])
				b.WriteByte(hex[c&0xf])
			}
			i++
			done = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == 0x2028 || r == 0x2029:
			b.WriteString(s[done:i])
			b.WriteString(`\u202`)
			b.WriteByte(hex[r&0xf])
		case r == utf8.RuneError && size == 1:
			b.WriteString(s[done:i])
			b.WriteRune(utf8.RuneError)
		default:
			i += size
			continue
		}
		i += size
		done = i
	}
	b.WriteString(s[done:])
	b.WriteByte('"')
}

// jsPlain marks the ASCII bytes appendJSString copies as they are.
var jsPlain = func() (t [utf8.RuneSelf]bool) {
	for c := byte(0x20); c < 0x7f; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()
