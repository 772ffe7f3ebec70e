package gen

import (
	"database/sql"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/layout"
)

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
