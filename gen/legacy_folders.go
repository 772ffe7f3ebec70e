package gen

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/layout"
)

var lgDomains = []string{"example.com", "news.example.org:8080", "münchen.de", "blog.example.net", "127.0.0.1:8000"}

// ordinary writes snapshot i: a database row and its folder.
func (g *legacyGen) ordinary(i int) error {
	sec := int64(1600000000 + i*997)
	ts := strconv.FormatInt(sec, 10)
	if i%2 == 1 {
		ts += fmt.Sprintf(".%06d", 100000+i%900000)
	}
	host := lgDomains[i%len(lgDomains)]
	u := fmt.Sprintf("https://%s/page/%d?q=%d", host, i, i%7)
	title := fmt.Sprintf("Page %d — ünïcode “title”", i)
	tags := [][]string{{"news", "tech"}, {"tech"}, nil, {"long read", "ünï"}}[i%4]
	if g.o.Plain {
		p := plainPageFor(i + len(plainTopics)*len(plainSites)/2) // not the pages the current layout gets first
		u, title, tags = p.url, p.title, p.tags
	}
	id := g.uuid()
	r := &lgRow{id: g.storedID(id, i), url: u, ts: ts, title: sql.NullString{String: title, Valid: true}, tags: tags,
		added: time.Unix(sec+30, 0).UTC(), bookmark: time.Unix(sec, 0).UTC(), status: "sealed"}
	user := "admin"
	if len(g.crawl) > 0 {
		switch i % 3 {
		case 0:
			r.crawl = g.crawl[0]
			user = "bob"
		case 1:
			r.crawl = g.crawl[1]
		default:
			if g.v(Legacy09Dash) {
				r.crawl = g.crawl[1]
			}
		}
		if r.crawl != nil {
			r.crawl.urls = append(r.crawl.urls, u)
		}
	}
	if !g.hasDB() {
		user = "system"
	}
	if g.v(Legacy08) && i%5 == 4 {
		r.status = "queued"
	}
	exp := ExpectedSnapshot{ID: id, User: user, URL: u, Timestamp: ts, Title: title, Tags: archive.NormalizeTags(tags),
		Date: layout.Bucket(r.bookmark), Status: r.status}
	if g.v(Legacy08) {
		// ArchiveBox's migration seals a 0.8 row whatever its status
		// (formats spec §4.6).
		exp.Status = "sealed"
	}
	if !g.hasDB() {
		exp.ID, exp.Status = "", "sealed"
		exp.Date = layout.Bucket(time.Unix(sec, 0))
	}
	r.results = g.results(r, "/data/archive/"+ts)
	dashed := g.v(Legacy09Dash) && i%4 != 0 && g.hasDB()
	var rel string
	if dashed {
		r.fsVersion = "0.9.0"
		rel = path.Join("archive/users", user, "snapshots", layout.Bucket(r.bookmark), layout.Domain(u), layout.Dashed(id))
	} else {
		r.fsVersion = "0.8.0"
		rel = "archive/" + ts
	}
	if err := g.outputs(rel, r, dashed); err != nil {
		return err
	}
	if dashed {
		if err := g.dashedIndex(rel, r, id); err != nil {
			return err
		}
		if i%8 == 1 {
			// A compatibility symlink of 0.9 dev, relative.
			if err := os.Symlink(strings.TrimPrefix(rel, "archive/"), filepath.Join(g.dir, "archive", ts)); err != nil {
				return err
			}
			g.m.Symlinks = append(g.m.Symlinks, "archive/"+ts)
		}
		if err := g.crawlLink(r, rel, id); err != nil {
			return err
		}
	} else if err := g.linkIndex(rel, r, id); err != nil {
		return err
	}
	g.rows = append(g.rows, r)
	exp.Source = rel
	g.m.Snapshots = append(g.m.Snapshots, exp)
	return nil
}

// results are the legacy results of a row: a title, a screenshot, and a
// dom capture that failed once and succeeded on retry.
func (g *legacyGen) results(r *lgRow, pwd string) []lgResult {
	t := r.bookmark.Add(10 * time.Second)
	return []lgResult{
		{id: g.uuid(), plugin: "title", cmd: []string{"curl", "-s", r.url}, pwd: pwd, cmdVersion: "7.68.0",
			output: r.title.String, status: "succeeded", start: t, end: t.Add(time.Second)},
		{id: g.uuid(), plugin: "screenshot", cmd: []string{"chromium", "--screenshot", r.url}, pwd: pwd, cmdVersion: "89.0",
			output: "screenshot.png", status: "succeded", start: t.Add(2 * time.Second), end: t.Add(4 * time.Second)},
		{id: g.uuid(), plugin: "dom", cmd: []string{"chromium", "--dump-dom", r.url}, pwd: pwd, cmdVersion: "89.0",
			output: "TimeoutError: Timed out after 60 seconds", status: "failed", start: t.Add(5 * time.Second), end: t.Add(65 * time.Second)},
		{id: g.uuid(), plugin: "dom", cmd: []string{"chromium", "--dump-dom", r.url}, pwd: pwd, cmdVersion: "89.0",
			output: "output.html", status: "succeeded", start: t.Add(70 * time.Second), end: t.Add(72 * time.Second)},
	}
}

func (g *legacyGen) payload(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(g.rnd.Uint32())
	}
	if n >= 2 {
		b[0], b[1] = 0x00, 0xff
	}
	return b
}

func (g *legacyGen) write(rel string, data []byte) error {
	p := filepath.Join(g.dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, data, 0o644)
}

// outputs writes the output files of a snapshot folder: o.Files entries
// counting index files, with binary payloads, unicode and '%' in names,
// nested and empty dirs and a relative symlink.
func (g *legacyGen) outputs(rel string, r *lgRow, dashed bool) error {
	netloc := layout.Netloc(r.url)
	page := []byte("<!doctype html><title>" + r.title.String + "</title><p>archived " + r.url + "</p>\n")
	shot := append([]byte("\x89PNG\r\n\x1a\n"), g.payload(g.o.Size)...)
	if g.o.Plain { // a screenshot that shows a page (drawn after the draw above, so the rest is as without it)
		shot = pagePNG(r.url)
	}
	files := []struct {
		name string
		data []byte
	}{
		{"screenshot.png", shot},
		{"output.html", page},
		{netloc + "/page/index.html", page},
		{"media/vidéo 100% ünï.bin", g.payload(g.o.Size)},
		{"payload.bin", g.payload(g.o.Size)},
		{"archive.org.txt", []byte("https://web.archive.org/web/20210101000000/" + r.url + "\n")},
	}
	if dashed {
		files[0].name = "screenshot/screenshot.png"
		files[1].name = "dom/output.html"
		files[2].name = "wget/" + files[2].name
	}
	for _, f := range files {
		if err := g.write(rel+"/"+f.name, f.data); err != nil {
			return err
		}
	}
	for k := len(files) + 2; k < g.o.Files; k++ {
		if err := g.write(fmt.Sprintf("%s/extra/%02d.bin", rel, k), g.payload(g.o.Size/2)); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(filepath.Join(g.dir, filepath.FromSlash(rel), "git", "objects", "empty"), 0o755); err != nil {
		return err
	}
	return os.Symlink("payload.bin", filepath.Join(g.dir, filepath.FromSlash(rel), "payload-link"))
}

// linkIndex writes a legacy folder's index.json in the Link form, with an
// unknown key that must survive.
func (g *legacyGen) linkIndex(rel string, r *lgRow, id string) error {
	history := map[string]any{}
	for _, res := range r.results {
		entry := map[string]any{"schema": "ArchiveResult", "cmd": res.cmd, "pwd": res.pwd,
			"cmd_version": res.cmdVersion, "output": res.output, "status": res.status,
			"start_ts": archive.IsoTime(res.start), "end_ts": archive.IsoTime(res.end)}
		if l, _ := history[res.plugin].([]any); true {
			history[res.plugin] = append(l, entry)
		}
	}
	var title any
	if r.title.Valid {
		title = r.title.String
	}
	var tags any
	if len(r.tags) > 0 {
		tags = strings.Join(r.tags, ",")
	}
	link := map[string]any{
		"schema": "Link", "url": r.url, "timestamp": r.ts, "title": title, "tags": tags,
		"sources": []string{"sources/1600000000-import.txt"}, "updated": archive.IsoTime(r.added),
		"history":                history,
		"custom_legacy_metadata": map[string]any{"must": "survive", "n": len(g.rows)},
		"archive_path":           "archive/" + r.ts, "base_url": strings.TrimPrefix(r.url, "https://"),
		"domain": layout.Netloc(r.url), "is_archived": true,
	}
	if g.v(Legacy07, Legacy08) {
		link["snapshot_id"] = layout.Dashed(id)
	}
	return g.write(rel+"/index.json", pyIndentJSON(link))
}

// dashedIndex writes a 0.9 dev folder's index.jsonl (dashed ids) and its
// index.json in the to_dict form.
func (g *legacyGen) dashedIndex(rel string, r *lgRow, id string) error {
	ix, _ := archive.ParseIndex(nil)
	snap := archive.Snapshot{ID: layout.Dashed(id), CrawlID: layout.Dashed(lgCompact(r.crawl.id)), URL: r.url,
		Timestamp: r.ts, Title: r.title.String, Tags: r.tags, BookmarkedAt: r.bookmark, CreatedAt: r.added,
		Status: r.status, FSVersion: "0.9.0", SchemaVersion: "0.9.31rc1"}
	ix.SetSnapshot(snap)
	for _, res := range r.results {
		ix.AddResult(archive.Result{ID: layout.Dashed(res.id), SnapshotID: layout.Dashed(id), Plugin: res.plugin,
			HookName: "on_Snapshot__50_" + res.plugin + ".js", Status: archive.NormalizeStatus(res.status),
			OutputStr: res.output, StartTS: res.start, EndTS: res.end, Cmd: res.cmd, SchemaVersion: "0.9.31rc1"})
	}
	ix.Append([]byte(`{"type": "Process", "id": "incomplete"}`))
	if err := g.write(rel+"/index.jsonl", ix.Bytes()); err != nil {
		return err
	}
	d := map[string]any{"TYPE": "core.models.Snapshot", "id": layout.Dashed(id), "url": r.url, "timestamp": r.ts,
		"title": r.title.String, "tags": archive.NormalizeTags(r.tags), "fs_version": "0.9.0",
		"bookmarked_at": archive.IsoTime(r.bookmark), "created_at": archive.IsoTime(r.added), "status": r.status,
		"custom_legacy_metadata": map[string]any{"must": "survive"}}
	return g.write(rel+"/index.json", pyIndentJSON(d))
}

func lgCompact(id string) string {
	c, _ := layout.ParseID(id)
	return c
}

// crawlLink writes the dashed crawl folder of a 0.9 snapshot with its
// relative snapshot symlink.
func (g *legacyGen) crawlLink(r *lgRow, snapRel, id string) error {
	c := r.crawl
	if c.dir == "" {
		user := g.users[c.user-1].name
		c.dir = path.Join("archive/users", user, "crawls", layout.Bucket(c.created), "example.com", layout.Dashed(lgCompact(c.id)))
		if err := os.MkdirAll(filepath.Join(g.dir, filepath.FromSlash(c.dir), "snapshots"), 0o755); err != nil {
			return err
		}
	}
	linkDir := path.Join(c.dir, "snapshots", layout.Domain(r.url))
	if err := os.MkdirAll(filepath.Join(g.dir, filepath.FromSlash(linkDir)), 0o755); err != nil {
		return err
	}
	target, err := filepath.Rel(filepath.Join(g.dir, filepath.FromSlash(linkDir)), filepath.Join(g.dir, filepath.FromSlash(snapRel)))
	if err != nil {
		return err
	}
	return os.Symlink(target, filepath.Join(g.dir, filepath.FromSlash(linkDir), layout.Dashed(id)))
}

// pyIndentJSON encodes v as Python's json.dumps(v, indent=4,
// sort_keys=True) with ensure_ascii: sorted keys (Go sorts map keys),
// "," line ends, ": " after keys and non-ASCII escaped as \uXXXX.
func pyIndentJSON(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "    ")
	if err := enc.Encode(v); err != nil {
		panic("gen: encode index.json: " + err.Error())
	}
	b := bytes.TrimRight(buf.Bytes(), "\n")
	var out []byte
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		switch {
		case r < utf8.RuneSelf:
			out = append(out, b[0])
		case r > 0xffff:
			r -= 0x10000
			out = fmt.Appendf(out, `\u%04x\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
		default:
			out = fmt.Appendf(out, `\u%04x`, r)
		}
		b = b[n:]
	}
	return out
}
