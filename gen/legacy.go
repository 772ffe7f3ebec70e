package gen

import (
	"bytes"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	_ "modernc.org/sqlite" // registers the "sqlite" driver (pure Go, no cgo)

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/layout"
)

// Legacy collection versions gen.Legacy writes.
const (
	Legacy04     = "0.4"        // core_snapshot.tags string column, Link index.json
	Legacy0424   = "0.4.24"     // core_tag tables, no core_archiveresult
	Legacy07     = "0.7"        // core_archiveresult with extractor/output/cmd/pwd
	Legacy08     = "0.8"        // bookmarked_at, crawls with dashed ids, UUID-keyed tags
	Legacy09Dash = "0.9-dashed" // 0.9 dev: users/ tree with dashed ids, crawls, machine_process
)

// LegacyVersions lists every version Legacy writes.
var LegacyVersions = []string{Legacy04, Legacy0424, Legacy07, Legacy08, Legacy09Dash}

// Edge names one of the edge cases of the formats spec §7 that Legacy can
// add to a collection. Each adds fixed folders and rows whose expected
// outcome the manifest records.
type Edge string

// Edge cases.
const (
	// EdgeFloatSiblings: folders 1508259732 (database row) and 1508259732.0
	// (no row) of the same URL stay two snapshots (§7.7).
	EdgeFloatSiblings Edge = "float-siblings"
	// EdgeIndexFloat: folder 1508259800 whose index.json says
	// "1508259800.0" keeps the folder name (§7.6).
	EdgeIndexFloat Edge = "index-float"
	// EdgeTruncated: folder 1767000340 (index "1767000340") and a row
	// 1767000340.624737 of the same URL are NOT matched, as the folder name
	// is a valid timestamp (§7.8, §3.4).
	EdgeTruncated Edge = "truncated"
	// EdgeTruncatedSpace: folder "1767000341 " (trailing space; index
	// "1767000341") IS matched by URL and prefix to row 1767000341.5.
	EdgeTruncatedSpace Edge = "truncated-space"
	// EdgeNoIndex: folder 1400000000 with outputs but no index file and a
	// database row migrates with the row's metadata (§7.13).
	EdgeNoIndex Edge = "no-index"
	// EdgeOrphan: folder 1710000000 with an index.json and no row is
	// imported (§3.5).
	EdgeOrphan Edge = "orphan"
	// EdgeWayback: folder 1339747993 with a corrupt index.json and an
	// archive.org.txt Wayback URL keeps its timestamp and recovers the URL
	// (§7.12).
	EdgeWayback Edge = "wayback"
	// EdgeGarbage: folders 1111111111 and 1111111112 with nothing
	// recoverable go to invalid/ (§7.14).
	EdgeGarbage Edge = "garbage"
	// EdgeCompatSymlinks: archive/1399999999 -> users/... (an already
	// migrated snapshot; removed), a broken one and one pointing outside
	// archive/users (both kept) (§7.25).
	EdgeCompatSymlinks Edge = "compat-symlinks"
	// EdgeHello: archive/hello/ is not a timestamp and stays (§3.9).
	EdgeHello Edge = "hello"
	// EdgeDSStore: archive/.DS_Store stays (§7.26).
	EdgeDSStore Edge = "ds-store"
	// EdgeRowNoFolder: rows 1450000000 and 1450000001.5 have no folder;
	// each still becomes a snapshot.
	EdgeRowNoFolder Edge = "row-no-folder"
	// EdgeOutOfRange: row 20240101120000.000000 (ArchiveBox's test seeds)
	// with a folder of that name: the row keeps its timestamp, buckets by
	// added and takes the folder, which is its archive/<timestamp>.
	// Without a database the folder holds no record and stays (§7.10a).
	EdgeOutOfRange Edge = "out-of-range"
	// EdgeForeignJSONL: folder 1720000000 whose index.jsonl holds only
	// {"type":"Process","id":"incomplete"}: metadata from index.json, the
	// line kept (§7.11).
	EdgeForeignJSONL Edge = "foreign-jsonl"
	// EdgeTitles: row 1300000001 with a title and an index.json title
	// null; row 1300000002 titled "pending..." with a good index title
	// (§7.15).
	EdgeTitles Edge = "titles"
	// EdgeCollision: row 1700000000 of url A and folder 1700000000 whose
	// index.json names url B: B is imported as 1700000000.000001 and A
	// keeps its timestamp without a folder (§7.9).
	EdgeCollision Edge = "collision"
)

// AllEdges lists every edge case.
var AllEdges = []Edge{EdgeFloatSiblings, EdgeIndexFloat, EdgeTruncated, EdgeTruncatedSpace,
	EdgeNoIndex, EdgeOrphan, EdgeWayback, EdgeGarbage, EdgeCompatSymlinks, EdgeHello, EdgeDSStore,
	EdgeRowNoFolder, EdgeOutOfRange, EdgeForeignJSONL, EdgeTitles, EdgeCollision}

// LegacyOptions configure Legacy.
type LegacyOptions struct {
	Version string // one of LegacyVersions
	N       int    // ordinary snapshots (each a row and a folder)
	Files   int    // files per ordinary snapshot folder, at least 8 (default 10)
	Size    int    // bytes of each payload file (default 1024)
	Seed    uint64
	Edges   []Edge
	// NoDB writes folders only (no index.sqlite3); edge cases that need a
	// row then describe folders without one.
	NoDB bool
	// Plain gives the ordinary snapshots believable titles, URLs and tags
	// (for the demo).
	Plain bool
	// WAL leaves the database in WAL mode with its last rows only in
	// index.sqlite3-wal (not checkpointed) and an -shm beside it.
	WAL bool
}

// LegacyManifest is what Legacy wrote and what a migration must make of it.
type LegacyManifest struct {
	Dir       string
	Version   string
	Snapshots []ExpectedSnapshot
	// Invalid are the legacy folders (archive/<name>) that must end in
	// invalid/<YYYYMMDD>/<name>, with their files.
	Invalid []ExpectedFolder
	// Untouched are archive/ entries the migration must leave as they are
	// (archive/hello, archive/.DS_Store, out-of-range folders, symlinks
	// that do not point into archive/users), with their files.
	Untouched []ExpectedFolder
	// Symlinks are archive/<timestamp> symlinks the migration removes.
	Symlinks []string
	// Current counts snapshots already in the current layout.
	Current int
	// Superusers and UserOne describe auth_user ("" / nil without a DB).
	UserOne    string
	Superusers []string
}

// ExpectedSnapshot is one snapshot the migrated collection must hold.
type ExpectedSnapshot struct {
	ID        string // compact id; "" when the migration assigns a new one
	User      string
	URL       string
	Timestamp string
	Title     string // "" for none
	Tags      []string
	Date      string // YYYYMMDD bucket of the target folder
	Status    string
	Source    string // folder it comes from ("archive/<name>", a dashed dir) or ""
	Edge      Edge   // the edge case it belongs to, "" for ordinary snapshots
	// Tree is every entry of Source, relative to it.
	Tree Tree
}

// ExpectedFolder is a folder (or symlink) with its content.
type ExpectedFolder struct {
	Path string // slash path relative to the data dir
	Tree Tree
}

// Tree is the content of a folder: sha256 of every regular file, the
// target of every symlink, and every directory (also empty ones), by slash
// path relative to the folder.
type Tree struct {
	Files    map[string]string
	Symlinks map[string]string
	Dirs     []string
}

// ReadTree records the tree under root. A symlink root is recorded as
// Symlinks[""].
func ReadTree(root string) (Tree, error) {
	t := Tree{Files: map[string]string{}, Symlinks: map[string]string{}}
	st, err := os.Lstat(root)
	if err != nil {
		return t, err
	}
	if st.Mode()&fs.ModeSymlink != 0 {
		target, err := os.Readlink(root)
		t.Symlinks[""] = target
		return t, err
	}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if rel == "." {
			return nil
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			t.Symlinks[rel] = target
		case d.IsDir():
			t.Dirs = append(t.Dirs, rel)
		case d.Type().IsRegular():
			sum, err := fileSHA256(p)
			if err != nil {
				return err
			}
			t.Files[rel] = sum
		default:
			return fmt.Errorf("%s: special file", p)
		}
		return nil
	})
	sort.Strings(t.Dirs)
	return t, err
}

func fileSHA256(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Diff lists how got differs from t (missing, changed or extra entries);
// nil when equal.
func (t Tree) Diff(got Tree) []string {
	var out []string
	for p, sum := range t.Files {
		switch g, ok := got.Files[p]; {
		case !ok:
			out = append(out, "missing file "+p)
		case g != sum:
			out = append(out, "changed file "+p)
		}
	}
	for p, target := range t.Symlinks {
		switch g, ok := got.Symlinks[p]; {
		case !ok:
			out = append(out, "missing symlink "+p)
		case g != target:
			out = append(out, fmt.Sprintf("symlink %s -> %s, want -> %s", p, g, target))
		}
	}
	have := map[string]bool{}
	for _, d := range got.Dirs {
		have[d] = true
	}
	for _, d := range t.Dirs {
		if !have[d] {
			out = append(out, "missing dir "+d)
		}
	}
	sort.Strings(out)
	return out
}

// legacyGen holds the state of one Legacy run.
type legacyGen struct {
	o     LegacyOptions
	dir   string
	rnd   *rand.Rand
	m     *LegacyManifest
	rows  []*lgRow
	users []lgUser
	crawl []*lgCrawl
	tags  map[string]string // name -> id (0.8: uuid)
	now   time.Time
}

type lgUser struct {
	id    int
	name  string
	super bool
}

type lgCrawl struct {
	id      string // as stored (dashed in 0.8)
	user    int
	created time.Time
	urls    []string
	label   string
	dir     string // 0.9: its dashed folder
}

// lgRow is one core_snapshot row to insert.
type lgRow struct {
	id        string // as stored: 32 hex, or dashed for some 0.8 rows
	url       string
	ts        string
	title     sql.NullString
	tags      []string
	added     time.Time
	bookmark  time.Time
	crawl     *lgCrawl // 0.8/0.9; nil = NULL
	status    string
	fsVersion string
	results   []lgResult
}

type lgResult struct {
	id         string
	plugin     string
	cmd        []string
	pwd        string
	cmdVersion string
	output     string
	status     string
	start, end time.Time
}

// Legacy writes a legacy ArchiveBox collection of version o.Version into dir
// (created if needed; it must not hold a collection already) and returns its
// manifest. The same options give the same bytes.
func Legacy(dir string, o LegacyOptions) (*LegacyManifest, error) {
	if o.Files == 0 {
		o.Files = 10
	}
	if o.Files < 8 {
		o.Files = 8
	}
	if o.Size <= 0 {
		o.Size = 1024
	}
	valid := false
	for _, v := range LegacyVersions {
		valid = valid || v == o.Version
	}
	if !valid {
		return nil, fmt.Errorf("legacy collection: unknown version %q (want one of %s)", o.Version, strings.Join(LegacyVersions, ", "))
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	for _, sub := range []string{"archive", "sources", "logs"} {
		if err := os.MkdirAll(filepath.Join(abs, sub), 0o755); err != nil {
			return nil, err
		}
	}
	g := &legacyGen{o: o, dir: abs, rnd: rand.New(rand.NewPCG(o.Seed, 0x1e9ac7)),
		m: &LegacyManifest{Dir: abs, Version: o.Version}, tags: map[string]string{},
		now: time.Date(2026, 9, 1, 12, 0, 0, 0, time.UTC)}
	if err := g.build(); err != nil {
		return nil, fmt.Errorf("legacy collection %s: %w", abs, err)
	}
	return g.m, nil
}

func (g *legacyGen) hasDB() bool { return !g.o.NoDB }

func (g *legacyGen) edge(e Edge) bool {
	for _, x := range g.o.Edges {
		if x == e {
			return true
		}
	}
	return false
}

func (g *legacyGen) v(vs ...string) bool {
	for _, v := range vs {
		if g.o.Version == v {
			return true
		}
	}
	return false
}

// uuid returns a random version-4 UUID as 32 hex digits.
func (g *legacyGen) uuid() string {
	var b [16]byte
	for i := 0; i < 16; i += 8 {
		u := g.rnd.Uint64()
		for j := 0; j < 8; j++ {
			b[i+j] = byte(u >> (8 * j))
		}
	}
	b[6] = 0x40 | b[6]&0x0f
	b[8] = 0x80 | b[8]&0x3f
	return hex.EncodeToString(b[:])
}

// storedID is how the version's database writes an id: 0.8 rows carry
// dashed UUIDs (the uuid/abid churn), the others 32 hex.
func (g *legacyGen) storedID(compact string, i int) string {
	if g.v(Legacy08) && i%2 == 0 {
		return layout.Dashed(compact)
	}
	return compact
}

func (g *legacyGen) build() error {
	g.users = []lgUser{{1, "admin", true}}
	switch g.o.Version {
	case Legacy07:
		g.users = append(g.users, lgUser{2, "editor", true})
	case Legacy08, Legacy09Dash:
		g.users = append(g.users, lgUser{2, "bob", false})
	}
	if g.hasDB() {
		g.m.UserOne = "admin"
		for _, u := range g.users {
			if u.super {
				g.m.Superusers = append(g.m.Superusers, u.name)
			}
		}
	}
	if g.v(Legacy08, Legacy09Dash) && g.hasDB() {
		g.crawl = []*lgCrawl{
			{id: g.crawlID(), user: 2, created: time.Date(2024, 3, 1, 9, 0, 0, 0, time.UTC), label: "bob's crawl"},
			{id: g.crawlID(), user: 1, created: time.Date(2024, 3, 2, 9, 0, 0, 0, time.UTC), label: "admin's crawl"},
		}
	}
	for i := 0; i < g.o.N; i++ {
		if err := g.ordinary(i); err != nil {
			return err
		}
	}
	if err := g.edges(); err != nil {
		return err
	}
	if g.hasDB() {
		if err := g.writeDB(); err != nil {
			return err
		}
	}
	return g.finish()
}

func (g *legacyGen) crawlID() string {
	id := g.uuid()
	if g.v(Legacy08) {
		return layout.Dashed(id)
	}
	return id
}

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
	files := []struct {
		name string
		data []byte
	}{
		{"screenshot.png", append([]byte("\x89PNG\r\n\x1a\n"), g.payload(g.o.Size)...)},
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

// edgeRow adds a database row (when the collection has a database) for an
// edge case. It returns the compact id.
func (g *legacyGen) edgeRow(u, ts, title string, bookmark time.Time, withFolder bool) (*lgRow, string) {
	id := g.uuid()
	r := &lgRow{id: g.storedID(id, len(g.rows)), url: u, ts: ts, added: bookmark.Add(time.Minute), bookmark: bookmark,
		status: "sealed", fsVersion: "0.8.0"}
	if title != "" {
		r.title = sql.NullString{String: title, Valid: true}
	}
	if g.v(Legacy09Dash) {
		r.crawl = g.crawl[1]
		r.crawl.urls = append(r.crawl.urls, u)
	}
	pwd := "/data/archive/" + ts
	if withFolder {
		r.results = g.results(r, pwd)
		if title == "" {
			r.results = r.results[1:]
		}
	}
	g.rows = append(g.rows, r)
	return r, id
}

// rowUser is the owner ArchiveBox gives an edge row.
func (g *legacyGen) rowUser() string { return "admin" }

// orphanUser is the owner of a folder without a row: the only superuser,
// else system.
func (g *legacyGen) orphanUser() string {
	if len(g.m.Superusers) == 1 {
		return g.m.Superusers[0]
	}
	return "system"
}

// simpleFolder writes a small legacy folder with an index.json for url/ts.
func (g *legacyGen) simpleFolder(name, u, indexTS string, title any) error {
	rel := "archive/" + name
	if err := g.write(rel+"/output.html", []byte("<p>"+u+"</p>")); err != nil {
		return err
	}
	if err := g.write(rel+"/favicon.ico", g.payload(64)); err != nil {
		return err
	}
	if u == "" {
		return nil
	}
	link := map[string]any{"schema": "Link", "url": u, "timestamp": indexTS, "title": title, "tags": "edge",
		"history": map[string]any{}, "custom_legacy_metadata": map[string]any{"must": "survive"}}
	return g.write(rel+"/index.json", pyIndentJSON(link))
}

func (g *legacyGen) expect(e ExpectedSnapshot) { g.m.Snapshots = append(g.m.Snapshots, e) }

func tsTime(sec int64, micro int) time.Time { return time.Unix(sec, int64(micro)*1000).UTC() }

func (g *legacyGen) edges() error {
	db := g.hasDB()
	ou := g.orphanUser()
	ruser := g.rowUser()
	sealed := "sealed"
	if g.edge(EdgeFloatSiblings) {
		u := "https://siblings.example.com/"
		if err := g.simpleFolder("1508259732", u, "1508259732", "Integer sibling"); err != nil {
			return err
		}
		if err := g.simpleFolder("1508259732.0", u, "1508259732.0", "Float sibling"); err != nil {
			return err
		}
		e1 := ExpectedSnapshot{User: ou, URL: u, Timestamp: "1508259732", Title: "Integer sibling", Tags: []string{"edge"},
			Date: "20171017", Status: sealed, Source: "archive/1508259732", Edge: EdgeFloatSiblings}
		if db {
			_, id := g.edgeRow(u, "1508259732", "Integer sibling", tsTime(1508259732, 0), true)
			e1.ID, e1.User = id, ruser
			e1.Tags = []string{"edge"}
		}
		g.expect(e1)
		g.expect(ExpectedSnapshot{User: ou, URL: u, Timestamp: "1508259732.0", Title: "Float sibling", Tags: []string{"edge"},
			Date: "20171017", Status: sealed, Source: "archive/1508259732.0", Edge: EdgeFloatSiblings})
	}
	if g.edge(EdgeIndexFloat) {
		u := "https://float-index.example.com/"
		if err := g.simpleFolder("1508259800", u, "1508259800.0", "Float in index"); err != nil {
			return err
		}
		e := ExpectedSnapshot{User: ou, URL: u, Timestamp: "1508259800", Title: "Float in index", Tags: []string{"edge"},
			Date: "20171017", Status: sealed, Source: "archive/1508259800", Edge: EdgeIndexFloat}
		if db {
			_, e.ID = g.edgeRow(u, "1508259800", "", tsTime(1508259800, 0), true)
			e.User = ruser
		}
		g.expect(e)
	}
	if g.edge(EdgeTruncated) {
		u := "https://truncated.example.com/"
		if err := g.simpleFolder("1767000340", u, "1767000340", "Truncated folder"); err != nil {
			return err
		}
		g.expect(ExpectedSnapshot{User: ou, URL: u, Timestamp: "1767000340", Title: "Truncated folder", Tags: []string{"edge"},
			Date: "20251229", Status: sealed, Source: "archive/1767000340", Edge: EdgeTruncated})
		if db {
			_, id := g.edgeRow(u, "1767000340.624737", "Truncated row", tsTime(1767000340, 0), false)
			g.expect(ExpectedSnapshot{ID: id, User: ruser, URL: u, Timestamp: "1767000340.624737", Title: "Truncated row",
				Date: "20251229", Status: sealed, Edge: EdgeTruncated})
		}
	}
	if g.edge(EdgeTruncatedSpace) {
		u := "https://truncated-space.example.com/"
		name := "1767000341 "
		if err := g.simpleFolder(name, u, "1767000341", "Truncated with space"); err != nil {
			return err
		}
		e := ExpectedSnapshot{User: ou, URL: u, Timestamp: "1767000341", Title: "Truncated with space", Tags: []string{"edge"},
			Date: "20251229", Status: sealed, Source: "archive/" + name, Edge: EdgeTruncatedSpace}
		if db {
			_, e.ID = g.edgeRow(u, "1767000341.5", "", tsTime(1767000341, 0), true)
			e.User, e.Timestamp = ruser, "1767000341.5"
		}
		g.expect(e)
	}
	if g.edge(EdgeNoIndex) && db {
		u := "https://no-index.example.com/"
		if err := g.simpleFolder("1400000000", "", "", nil); err != nil {
			return err
		}
		_, id := g.edgeRow(u, "1400000000", "No index row", tsTime(1400000000, 0), false)
		g.expect(ExpectedSnapshot{ID: id, User: ruser, URL: u, Timestamp: "1400000000", Title: "No index row",
			Date: "20140513", Status: sealed, Source: "archive/1400000000", Edge: EdgeNoIndex})
	}
	if g.edge(EdgeOrphan) {
		u := "https://orphan.example.com/"
		if err := g.simpleFolder("1710000000", u, "1710000000", "Orphan folder"); err != nil {
			return err
		}
		g.expect(ExpectedSnapshot{User: ou, URL: u, Timestamp: "1710000000", Title: "Orphan folder", Tags: []string{"edge"},
			Date: "20240309", Status: sealed, Source: "archive/1710000000", Edge: EdgeOrphan})
	}
	if g.edge(EdgeWayback) {
		u := "http://www.wired.com/2017/05/the-wayback-machine/"
		rel := "archive/1339747993"
		if err := g.write(rel+"/index.json", []byte("{\"schema\": \"Link\", \"url\": ")); err != nil {
			return err
		}
		if err := g.write(rel+"/archive.org.txt", []byte("https://web.archive.org/web/20170531210128/"+u+"\n")); err != nil {
			return err
		}
		if err := g.write(rel+"/output.html", []byte("<p>wired</p>")); err != nil {
			return err
		}
		g.expect(ExpectedSnapshot{User: ou, URL: u, Timestamp: "1339747993", Date: "20120615", Status: sealed,
			Source: rel, Edge: EdgeWayback})
	}
	if g.edge(EdgeGarbage) {
		if err := g.write("archive/1111111111/random.dat", g.payload(100)); err != nil {
			return err
		}
		if err := g.write("archive/1111111112/archive.org.txt", []byte("not archived\n")); err != nil {
			return err
		}
		if err := g.write("archive/1111111112/index.json", nil); err != nil {
			return err
		}
		for _, n := range []string{"archive/1111111111", "archive/1111111112"} {
			g.m.Invalid = append(g.m.Invalid, ExpectedFolder{Path: n})
		}
	}
	if g.edge(EdgeCompatSymlinks) {
		if err := g.currentSnapshot(); err != nil {
			return err
		}
		if err := os.Symlink("users/system/snapshots/20140513/missing.example.com/00000000000000000000000000000000",
			filepath.Join(g.dir, "archive", "1399999998")); err != nil {
			return err
		}
		if err := os.Symlink("../sources", filepath.Join(g.dir, "archive", "1399999997")); err != nil {
			return err
		}
		g.m.Untouched = append(g.m.Untouched, ExpectedFolder{Path: "archive/1399999998"}, ExpectedFolder{Path: "archive/1399999997"})
	}
	if g.edge(EdgeHello) {
		if err := g.write("archive/hello/readme.txt", []byte("not a snapshot\n")); err != nil {
			return err
		}
		g.m.Untouched = append(g.m.Untouched, ExpectedFolder{Path: "archive/hello"})
	}
	if g.edge(EdgeDSStore) {
		if err := g.write("archive/.DS_Store", g.payload(32)); err != nil {
			return err
		}
		g.m.Untouched = append(g.m.Untouched, ExpectedFolder{Path: "archive/.DS_Store"})
	}
	if g.edge(EdgeRowNoFolder) && db {
		for _, ts := range []string{"1450000000", "1450000001.5"} {
			u := "https://row-no-folder.example.com/" + ts
			_, id := g.edgeRow(u, ts, "Row without folder", tsTime(1450000000, 0), false)
			g.expect(ExpectedSnapshot{ID: id, User: ruser, URL: u, Timestamp: ts, Title: "Row without folder",
				Date: layout.Bucket(tsTime(1450000000, 0)), Status: sealed, Edge: EdgeRowNoFolder})
		}
	}
	if g.edge(EdgeOutOfRange) {
		name := "20240101120000.000000"
		if err := g.write("archive/"+name+"/output.html", []byte("<p>seed</p>")); err != nil {
			return err
		}
		if db {
			u := "https://out-of-range.example.com/"
			added := time.Date(2024, 1, 1, 12, 0, 0, 0, time.UTC)
			r, id := g.edgeRow(u, name, "Seed row", added, false)
			r.added = added
			g.expect(ExpectedSnapshot{ID: id, User: ruser, URL: u, Timestamp: name, Title: "Seed row",
				Date: "20240101", Status: sealed, Source: "archive/" + name, Edge: EdgeOutOfRange})
		} else {
			g.m.Untouched = append(g.m.Untouched, ExpectedFolder{Path: "archive/" + name})
		}
	}
	if g.edge(EdgeForeignJSONL) {
		u := "https://foreign.example.com/"
		if err := g.simpleFolder("1720000000", u, "1720000000", "Foreign lines"); err != nil {
			return err
		}
		if err := g.write("archive/1720000000/index.jsonl", []byte("{\"type\":\"Process\",\"id\":\"incomplete\"}\n")); err != nil {
			return err
		}
		g.expect(ExpectedSnapshot{User: ou, URL: u, Timestamp: "1720000000", Title: "Foreign lines", Tags: []string{"edge"},
			Date: "20240703", Status: sealed, Source: "archive/1720000000", Edge: EdgeForeignJSONL})
	}
	if g.edge(EdgeTitles) && db {
		u1, u2 := "https://titles.example.com/1", "https://titles.example.com/2"
		if err := g.simpleFolder("1300000001", u1, "1300000001", nil); err != nil {
			return err
		}
		if err := g.simpleFolder("1300000002", u2, "1300000002", "Good Index Title"); err != nil {
			return err
		}
		_, id1 := g.edgeRow(u1, "1300000001", "Title From DB", tsTime(1300000001, 0), false)
		_, id2 := g.edgeRow(u2, "1300000002", "pending...", tsTime(1300000002, 0), false)
		g.expect(ExpectedSnapshot{ID: id1, User: ruser, URL: u1, Timestamp: "1300000001", Title: "Title From DB", Tags: []string{"edge"},
			Date: "20110313", Status: sealed, Source: "archive/1300000001", Edge: EdgeTitles})
		g.expect(ExpectedSnapshot{ID: id2, User: ruser, URL: u2, Timestamp: "1300000002", Title: "Good Index Title", Tags: []string{"edge"},
			Date: "20110313", Status: sealed, Source: "archive/1300000002", Edge: EdgeTitles})
	}
	if g.edge(EdgeCollision) && db {
		ua, ub := "https://collision-a.example.com/", "https://collision-b.example.com/"
		if err := g.simpleFolder("1700000000", ub, "1700000000", "Collision B"); err != nil {
			return err
		}
		_, id := g.edgeRow(ua, "1700000000", "Collision A", tsTime(1700000000, 0), false)
		g.expect(ExpectedSnapshot{ID: id, User: ruser, URL: ua, Timestamp: "1700000000", Title: "Collision A",
			Date: "20231114", Status: sealed, Edge: EdgeCollision})
		g.expect(ExpectedSnapshot{User: ou, URL: ub, Timestamp: "1700000000.000001", Title: "Collision B", Tags: []string{"edge"},
			Date: "20231114", Status: sealed, Source: "archive/1700000000", Edge: EdgeCollision})
	}
	return nil
}

// currentSnapshot writes a snapshot already at the current layout and a
// compatibility symlink archive/1399999999 pointing at it.
func (g *legacyGen) currentSnapshot() error {
	id := g.uuid()
	u := "https://current.example.com/"
	rel := path.Join("archive/users/system/snapshots/20140513/current.example.com", id)
	ix, _ := archive.ParseIndex(nil)
	ix.SetSnapshot(archive.Snapshot{ID: id, URL: u, Timestamp: "1399999999", Title: "Already current",
		BookmarkedAt: tsTime(1399999999, 0), CreatedAt: tsTime(1399999999, 0), Status: "sealed", FSVersion: layout.Current})
	if err := g.write(rel+"/index.jsonl", ix.Bytes()); err != nil {
		return err
	}
	if err := g.write(rel+"/output.html", []byte("<p>current</p>")); err != nil {
		return err
	}
	if err := os.Symlink(strings.TrimPrefix(rel, "archive/"), filepath.Join(g.dir, "archive", "1399999999")); err != nil {
		return err
	}
	g.m.Symlinks = append(g.m.Symlinks, "archive/1399999999")
	g.m.Current++
	return nil
}

// finish records the trees of every expected folder and gives the legacy
// folders distinct mtimes (newest = highest index) so the drain order is
// reproducible.
func (g *legacyGen) finish() error {
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range g.m.Snapshots {
		e := &g.m.Snapshots[i]
		if e.Source == "" {
			continue
		}
		p := filepath.Join(g.dir, filepath.FromSlash(e.Source))
		t, err := ReadTree(p)
		if err != nil {
			return err
		}
		e.Tree = t
		mt := base.Add(time.Duration(i) * time.Second)
		if err := os.Chtimes(p, mt, mt); err != nil {
			return err
		}
	}
	for _, list := range [][]ExpectedFolder{g.m.Invalid, g.m.Untouched} {
		for i := range list {
			t, err := ReadTree(filepath.Join(g.dir, filepath.FromSlash(list[i].Path)))
			if err != nil {
				return err
			}
			list[i].Tree = t
		}
	}
	return nil
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
