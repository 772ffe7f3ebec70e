package gen

import (
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/folio-archive/folio/archive"
)

func (g *snapGen) processRecord(res result, bin binRecord) []byte {
	var w pyWriter
	w.str("type", "Process")
	w.str("schema_version", archive.SchemaVersion)
	w.str("id", res.ProcessID)
	w.str("machine_id", g.mach.id)
	w.strs("cmd", res.Cmd)
	w.str("pwd", res.Pwd)
	w.str("status", "exited")
	code := 0
	if res.Status == archive.StatusFailed {
		code = 1
	}
	w.int("exit_code", int64(code))
	w.str("started_at", archive.IsoTime(res.StartTS))
	if res.EndTS.IsZero() {
		w.null("ended_at")
	} else {
		w.str("ended_at", archive.IsoTime(res.EndTS))
	}
	w.str("binary_id", bin.id)
	w.int("pid", int64(1000+g.r.IntN(60000)))
	w.int("timeout", 120)
	return w.bytes()
}

func (g *snapGen) crawlRecord(user string) []byte {
	var w pyWriter
	w.str("type", "Crawl")
	w.str("schema_version", archive.SchemaVersion)
	w.str("id", g.snap.CrawlID)
	w.str("urls", g.snap.URL)
	w.str("status", "sealed")
	w.int("max_depth", 0)
	w.str("tags_str", archive.TagString(g.snap.Tags))
	w.str("label", "")
	w.str("created_at", archive.IsoTime(g.snap.CreatedAt.Add(-time.Second)))
	w.str("created_by", user)
	return w.bytes()
}

// machine is the capturing machine shared by every snapshot of a run: its
// Binary records are the same lines in every index.jsonl.
type machine struct {
	id       string
	binaries map[string]binRecord
}

type binRecord struct {
	id, abspath, version string
	line                 []byte
}

func newMachine(seed uint64) *machine {
	r := rand.New(rand.NewPCG(seed, 1<<63))
	ids := rngReader{r}
	at := DefaultBase.Add(-DefaultSpan)
	m := &machine{id: archive.NewID(at, ids), binaries: map[string]binRecord{}}
	for _, b := range []struct{ name, path, version, provider string }{
		{"chromium", "/usr/bin/chromium", "126.0.6478.126", "apt"},
		{"node", "/usr/bin/node", "22.12.0", "env"},
		{"python", "/usr/bin/python3", "3.11.2", "env"},
		{"wget", "/usr/bin/wget", "1.21.3", "apt"},
	} {
		id := archive.NewID(at, ids)
		var w pyWriter
		w.str("type", "Binary")
		w.str("schema_version", archive.SchemaVersion)
		w.str("id", id)
		w.str("machine_id", m.id)
		w.str("name", b.name)
		w.str("binproviders", "env,apt,brew")
		w.raw("overrides", "{}")
		w.str("binprovider", b.provider)
		w.str("abspath", b.path)
		w.str("version", b.version)
		w.str("sha256", "")
		w.str("status", "installed")
		m.binaries[b.name] = binRecord{id: id, abspath: b.path, version: b.version, line: w.bytes()}
	}
	return m
}

// pyWriter builds one JSON object in Python's json.dumps style (", " and
// ": " separators, non-ASCII escaped) for records folio keeps verbatim.
type pyWriter struct {
	b []byte
}

func (w *pyWriter) key(k string) {
	if len(w.b) == 0 {
		w.b = append(w.b, '{')
	} else {
		w.b = append(w.b, ", "...)
	}
	w.b = appendPyString(w.b, k)
	w.b = append(w.b, ": "...)
}

func (w *pyWriter) str(k, v string) { w.key(k); w.b = appendPyString(w.b, v) }
func (w *pyWriter) int(k string, v int64) {
	w.key(k)
	w.b = strconv.AppendInt(w.b, v, 10)
}
func (w *pyWriter) null(k string)   { w.key(k); w.b = append(w.b, "null"...) }
func (w *pyWriter) raw(k, v string) { w.key(k); w.b = append(w.b, v...) }
func (w *pyWriter) bytes() []byte   { return append(w.b, '}') }
func (w *pyWriter) strs(k string, v []string) {
	w.key(k)
	w.b = append(w.b, '[')
	for i, s := range v {
		if i > 0 {
			w.b = append(w.b, ", "...)
		}
		w.b = appendPyString(w.b, s)
	}
	w.b = append(w.b, ']')
}

// appendPyString escapes like Python's ensure_ascii encoder.
func appendPyString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	u := func(b []byte, c rune) []byte {
		return append(b, '\\', 'u', hex[c>>12&15], hex[c>>8&15], hex[c>>4&15], hex[c&15])
	}
	b = append(b, '"')
	for _, c := range s {
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', byte(c))
		case c == '\n':
			b = append(b, `\n`...)
		case c == '\r':
			b = append(b, `\r`...)
		case c == '\t':
			b = append(b, `\t`...)
		case c == '\b':
			b = append(b, `\b`...)
		case c == '\f':
			b = append(b, `\f`...)
		case c >= 0x20 && c < 0x7f:
			b = append(b, byte(c))
		case c > 0xffff:
			c -= 0x10000
			b = u(u(b, 0xd800+c>>10), 0xdc00+c&0x3ff)
		default:
			b = u(b, c)
		}
	}
	return append(b, '"')
}
