package gen

import (
	"database/sql"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver (pure Go, no cgo)

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
