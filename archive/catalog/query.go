package catalog

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/folio-archive/folio/archive"
)

// Entry is one cataloged snapshot folder.
type Entry struct {
	Dir      string           // snapshot folder, slash path relative to the data dir
	Layout   string           // LayoutCurrent or LayoutLegacy
	User     string           // owner for the current layout, "" for legacy folders
	Snapshot archive.Snapshot // the first Snapshot record (or index.json for legacy folders)
	Results  []archive.Result // filled only when Query.WithResults, read from the index file
	// ResultsErr says why Results could not be read (with WithResults).
	ResultsErr error

	IndexFile  string // "index.jsonl", "index.json", or "" for a legacy folder without index
	IndexSize  int64  // of the index file the entry was read from
	IndexMTime time.Time

	// Record is the Snapshot record in the canonical per-snapshot shape
	// (ArchiveBox's Snapshot.to_json, Python JSON style, one line without
	// "\n"). Callers may stream it without encoding anything.
	Record      []byte
	NumOutputs  int // succeeded results
	NumFailures int // failed results

	// With Query.Snippets: words around the match, matched words between
	// SnippetOpen and SnippetClose, and the match's bm25 score (lower is
	// better).
	Snippet string
	Rank    float64

	// TextStamp identifies the captured text the search index holds for
	// the snapshot ("" when it holds none), as Texts returns it: it
	// changes when the text does.
	TextStamp string
}

// Filter types of Query.FilterType, as ArchiveBox's list --filter-type.
const (
	FilterExact     = "exact"     // url equals the pattern
	FilterSubstring = "substring" // url contains the pattern, ignoring ASCII case
	FilterRegex     = "regex"     // url matches the pattern (Go syntax), ignoring case
	FilterDomain    = "domain"    // url starts with http(s)/ftp://<pattern>, ignoring ASCII case
	FilterTag       = "tag"       // the snapshot has a tag named pattern
	FilterTimestamp = "timestamp" // timestamp equals the pattern
)

// Query selects and orders snapshots. The zero Query selects everything,
// newest first.
type Query struct {
	Patterns   []string // any may match; none means all
	FilterType string   // how Patterns match; default FilterSubstring
	Tags       []string // every one must be present
	Status     string   // snapshot status (queued, started, sealed, paused)
	Before     time.Time
	After      time.Time // compared with bookmarked_at (else the timestamp), exclusive
	// Dirs, when not nil, restricts the selection to these snapshot
	// folders (an empty list selects nothing): with Changed, the rows a
	// change feed names.
	Dirs []string
	// Search, when not "", selects the snapshots whose title, URL, tags,
	// notes or capture text match this FTS5 query (MatchWords makes one
	// from plain words). Sort SortRank puts the best matches first.
	Search string
	// Snippets fills Entry.Snippet and Entry.Rank; it needs Search.
	Snippets    bool
	Sort        string // a SortFields name, "-" prefix for descending; default newest first
	Limit       int    // 0 means all
	WithResults bool   // fill Entry.Results
	// RecordOnly fills only Dir, Layout, User, IndexFile, Record,
	// NumOutputs, NumFailures and Snapshot.URL: the fast path for
	// streaming records.
	RecordOnly bool
}

// Statuses are the snapshot statuses ArchiveBox writes. A Query.Status
// outside them must be one some snapshot of the catalog has.
func Statuses() []string { return []string{"queued", "started", "sealed", "paused", "backoff"} }

// checkStatus fails with ErrQuery for a status no snapshot can have: not
// one of Statuses and not found in the catalog.
func (c *Catalog) checkStatus(ctx context.Context, status string) error {
	if status == "" || slices.Contains(Statuses(), status) {
		return nil
	}
	var one int
	err := c.db.QueryRowContext(ctx, `SELECT 1 FROM snapshots WHERE status = ? LIMIT 1`, status).Scan(&one)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("%w: --status %q: unknown (want one of %s)", ErrQuery, status, strings.Join(Statuses(), ", "))
	case err != nil:
		return fmt.Errorf("query catalog %s: %w", c.path, err)
	}
	return nil
}

// ErrQuery is wrapped by errors about a Query that cannot run: an unknown
// filter type or sort field, or an invalid regular expression.
var ErrQuery = errors.New("invalid query")

// sortColumns maps Query.Sort names to SQL order terms.
var sortColumns = map[string]string{
	"bookmarked_at": "s.sort_time %[1]s, s.dir %[1]s",
	"created_at":    "s.created_at %[1]s, s.dir %[1]s",
	"timestamp":     "CAST(s.timestamp AS REAL) %[1]s, s.timestamp %[1]s, s.dir %[1]s",
	"url":           "s.url %[1]s, s.dir %[1]s",
	"title":         "s.title %[1]s, s.dir %[1]s",
	"status":        "s.status %[1]s, s.dir %[1]s",
	"id":            "s.id %[1]s, s.dir %[1]s",
	"dir":           "s.dir %[1]s",
	"archive_size":  "s.archive_size %[1]s, s.dir %[1]s",
}

// SortFields lists the names Query.Sort accepts.
func SortFields() []string {
	return []string{"bookmarked_at", "created_at", "timestamp", "url", "title", "status", "id", "dir", "archive_size"}
}

// FilterTypes lists the names Query.FilterType accepts.
func FilterTypes() []string {
	return []string{FilterExact, FilterSubstring, FilterRegex, FilterDomain, FilterTag, FilterTimestamp}
}

// compiled is a Query turned into SQL plus the filters SQL cannot do.
type compiled struct {
	from  string // the tables, after FROM
	rank  string // the rank of a search match, with SortRank
	where []string
	args  []any
	order string
	regex []*regexp.Regexp
	// tiered: rankBy ranks in the search table alone, metadata matches
	// first (see rankBy).
	tiered bool
}

// Validate reports whether q can run.
func (q Query) Validate() error {
	_, err := q.compile()
	return err
}

func likeEscape(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return r.Replace(s)
}

func (q Query) compile() (*compiled, error) {
	c := &compiled{from: "snapshots s"}
	if q.Search != "" {
		c.from = "snapshots s JOIN search ON search.rowid = s.rowid"
		c.where = append(c.where, "search MATCH ?")
		c.args = append(c.args, q.Search)
	}
	ft := q.FilterType
	if ft == "" {
		ft = FilterSubstring
	}
	if len(q.Patterns) > 0 {
		var or []string
		for _, p := range q.Patterns {
			switch ft {
			case FilterExact:
				or = append(or, `s.url = ?`)
				c.args = append(c.args, p)
			case FilterSubstring:
				or = append(or, `s.url LIKE ? ESCAPE '\'`)
				c.args = append(c.args, "%"+likeEscape(p)+"%")
			case FilterDomain:
				for _, scheme := range []string{"http://", "https://", "ftp://"} {
					or = append(or, `s.url LIKE ? ESCAPE '\'`)
					c.args = append(c.args, likeEscape(scheme+p)+"%")
				}
			case FilterTag:
				or = append(or, `EXISTS (SELECT 1 FROM tags t WHERE t.name = ? AND t.snap = s.rowid)`)
				c.args = append(c.args, p)
			case FilterTimestamp:
				if _, err := strconv.ParseFloat(p, 64); err != nil {
					return nil, fmt.Errorf("%w: -f timestamp %q: want a timestamp such as 1609459200.123456", ErrQuery, p)
				}
				or = append(or, `s.timestamp = ?`)
				c.args = append(c.args, p)
			case FilterRegex:
				re, err := regexp.Compile("(?i)" + p)
				if err != nil {
					if _, perr := regexp.Compile(p); perr != nil {
						err = perr // its message quotes the pattern as typed
					}
					return nil, fmt.Errorf("%w: regex %q: %v", ErrQuery, p, err)
				}
				c.regex = append(c.regex, re)
			default:
				return nil, fmt.Errorf("%w: --filter-type %q: unknown (want one of %s)", ErrQuery, ft, strings.Join(FilterTypes(), ", "))
			}
		}
		if len(or) > 0 {
			c.where = append(c.where, "("+strings.Join(or, " OR ")+")")
		}
	} else if !validFilter(ft) {
		return nil, fmt.Errorf("%w: --filter-type %q: unknown (want one of %s)", ErrQuery, ft, strings.Join(FilterTypes(), ", "))
	}
	for _, t := range q.Tags {
		c.where = append(c.where, `EXISTS (SELECT 1 FROM tags t WHERE t.name = ? AND t.snap = s.rowid)`)
		c.args = append(c.args, strings.TrimSpace(t))
	}
	if q.Dirs != nil {
		list, err := json.Marshal(q.Dirs)
		if err != nil {
			return nil, fmt.Errorf("%w: folders: %v", ErrQuery, err)
		}
		c.where = append(c.where, `s.dir IN (SELECT value FROM json_each(?))`)
		c.args = append(c.args, string(list))
	}
	if q.Status != "" {
		c.where = append(c.where, `s.status = ?`)
		c.args = append(c.args, q.Status)
	}
	if !q.Before.IsZero() {
		c.where = append(c.where, `s.sort_time < ?`)
		c.args = append(c.args, q.Before.UnixMicro())
	}
	if !q.After.IsZero() {
		c.where = append(c.where, `s.sort_time > ?`)
		c.args = append(c.args, q.After.UnixMicro())
	}
	field, dir := strings.TrimPrefix(q.Sort, "-"), "ASC"
	if strings.HasPrefix(q.Sort, "-") {
		dir = "DESC"
	}
	if q.Sort == "" {
		field, dir = "bookmarked_at", "DESC"
	}
	if (q.Sort == SortRank || q.Snippets) && q.Search == "" {
		return nil, fmt.Errorf("%w: ranking and snippets need a search", ErrQuery)
	}
	if q.Sort == SortRank {
		c.rankBy(q)
		return c, c.checkLimit(q)
	}
	tmpl, ok := sortColumns[field]
	if !ok {
		return nil, fmt.Errorf("%w: --sort %q: unknown field (want one of %s, - before one for descending)", ErrQuery, field, strings.Join(SortFields(), ", "))
	}
	c.order = fmt.Sprintf(tmpl, dir)
	return c, c.checkLimit(q)
}

// rankBy orders search matches best first. When the match is the only
// filter and the query has a limit, the matches are ranked and cut in the
// search table alone, and only the rows kept are joined with snapshots.
// There the ranking comes in two tiers, as the weights mean it: the
// snapshots whose title, URL, tags or notes match come first, then those
// whose captured text alone does, each tier by bm25. The second tier is
// ranked only when the first has fewer rows than the limit, so a common
// word ranks the few thousand snapshots with it in their titles, not the
// tens of thousands with it in their text.
func (c *compiled) rankBy(q Query) {
	if len(c.where) == 1 && len(c.regex) == 0 && q.Limit > 0 {
		c.from = fmt.Sprintf(`(SELECT rowid, rank, tier FROM (
				SELECT rowid, %[1]s AS rank, 0 AS tier FROM search WHERE search MATCH %[2]s ORDER BY rank LIMIT %[3]d)
			UNION ALL SELECT rowid, rank, tier FROM (
				SELECT rowid, %[1]s AS rank, 1 AS tier FROM search WHERE search MATCH ?
				AND rowid NOT IN (SELECT rowid FROM search WHERE search MATCH %[2]s) ORDER BY rank LIMIT %[3]d)
			LIMIT %[3]d) m
			JOIN snapshots s ON s.rowid = m.rowid`, rankSQL, metadataMatch, q.Limit)
		c.args = []any{q.Search, q.Search, q.Search} // the where's match, used three times
		c.where = nil
		c.tiered = true
		c.rank, c.order = "m.rank", "m.tier, m.rank, s.dir"
		return
	}
	c.rank, c.order = rankSQL, rankSQL+", s.dir"
}

// metadataMatch restricts a search expression (the parameter) to the
// columns other than the captured text.
const metadataMatch = `'{title url tags notes} : (' || ? || ')'`

func (c *compiled) checkLimit(q Query) error {
	if q.Limit < 0 {
		return fmt.Errorf("%w: --limit %d: at least 0 (0: all)", ErrQuery, q.Limit)
	}
	return nil
}

func validFilter(ft string) bool {
	for _, f := range FilterTypes() {
		if f == ft {
			return true
		}
	}
	return false
}

func (c *compiled) whereSQL() string {
	if len(c.where) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(c.where, " AND ")
}

// match applies the filters SQL does not.
func (c *compiled) match(url string) bool {
	if len(c.regex) == 0 {
		return true
	}
	for _, re := range c.regex {
		if re.MatchString(url) {
			return true
		}
	}
	return false
}

const entryColumns = `s.dir, s.layout, s.user, s.index_file, s.index_size, s.index_mtime, s.id,
	s.crawl_id, s.url, s.title, s.tags, s.timestamp, s.bookmarked_at, s.created_at, s.depth,
	s.status, s.fs_version, s.archive_size, s.notes, s.schema_version, s.num_outputs,
	s.num_failures, s.record, s.text_stamp`

const recordColumns = `s.dir, s.layout, s.user, s.index_file, s.url, s.num_outputs, s.num_failures, s.record`

// Each calls fn for every snapshot q selects, in q's order, streaming rows
// from the catalog: memory does not grow with the collection. An error
// from fn stops the iteration and is returned.
//
// With q.WithResults, each entry's results are read from its index file
// (the catalog counts results but does not store them), several files at
// a time, and entries are still delivered in order.
func (c *Catalog) Each(ctx context.Context, q Query, fn func(Entry) error) error {
	cq, err := q.compile()
	if err != nil {
		return err
	}
	if err := c.checkStatus(ctx, q.Status); err != nil {
		return err
	}
	if !q.WithResults {
		return c.scan(ctx, q, cq, fn)
	}
	return c.eachWithResults(ctx, q, cq, fn)
}

// eachWithResults runs scan in one goroutine, reads the results of the
// entries in a pool of workers, and calls fn in scan order.
func (c *Catalog) eachWithResults(ctx context.Context, q Query, cq *compiled, fn func(Entry) error) error {
	type pending struct {
		e    Entry
		done chan struct{}
	}
	workers := runtime.GOMAXPROCS(0)
	window := 8 * workers
	order := make(chan *pending, window)
	work := make(chan *pending, window)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		defer close(order)
		defer close(work)
		return c.scan(gctx, q, cq, func(e Entry) error {
			p := &pending{e: e, done: make(chan struct{})}
			for _, ch := range []chan *pending{order, work} {
				select {
				case ch <- p:
				case <-gctx.Done():
					return gctx.Err()
				}
			}
			return nil
		})
	})
	for range workers {
		g.Go(func() error {
			for p := range work {
				p.e.Results, p.e.ResultsErr = c.readResults(p.e)
				close(p.done)
			}
			return nil
		})
	}
	g.Go(func() error {
		for p := range order {
			select {
			case <-p.done:
			case <-gctx.Done():
				return gctx.Err()
			}
			if err := fn(p.e); err != nil {
				return err
			}
		}
		return nil
	})
	return g.Wait()
}

// readResults reads an entry's ArchiveResult records from its folder, as
// Reindex does.
func (c *Catalog) readResults(e Entry) ([]archive.Result, error) {
	name := e.Dir[strings.LastIndexByte(e.Dir, '/')+1:]
	r := readFolder(c.coll.Dir, folder{dir: e.Dir, layout: e.Layout, user: e.User, name: name}, true)
	if !r.ok {
		if len(r.problems) > 0 {
			return nil, r.problems[0]
		}
		return nil, fmt.Errorf("%s: %w", e.Dir, ErrNoIndex)
	}
	ix, _ := archive.ParseIndex(r.results)
	return append(ix.Results(), r.legacyResults...), nil
}

func (c *Catalog) scan(ctx context.Context, q Query, cq *compiled, fn func(Entry) error) error {
	cols := entryColumns
	if q.RecordOnly {
		cols = recordColumns
	}
	var (
		snippet *sql.Stmt
		batch   []snippetRow // with a small limit, the rows whose snippets one query makes
	)
	if q.Snippets {
		cols += ", s.rowid, " + cmp.Or(cq.rank, rankSQL)
		if q.Limit > 0 && q.Limit <= maxSnippetBatch && len(cq.regex) == 0 {
			batch = make([]snippetRow, 0, q.Limit)
		} else {
			var err error
			if snippet, err = c.db.PrepareContext(ctx, snippetSQL); err != nil {
				return c.queryError(q, err)
			}
			defer snippet.Close()
		}
	}
	if cq.tiered {
		// The tiers wrap the expression in a column filter; a mistake in
		// it is reported as the user wrote it, not as wrapped.
		var one int
		err := c.db.QueryRowContext(ctx, `SELECT 1 FROM search WHERE search MATCH ? LIMIT 1`, q.Search).Scan(&one)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return c.queryError(q, err)
		}
	}
	query := `SELECT ` + cols + ` FROM ` + cq.from + cq.whereSQL() + ` ORDER BY ` + cq.order
	if q.Limit > 0 && len(cq.regex) == 0 {
		query += fmt.Sprintf(` LIMIT %d`, q.Limit)
	}
	rows, err := c.db.QueryContext(ctx, query, cq.args...)
	if err != nil {
		return c.queryError(q, err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var (
			e                   Entry
			s                   = &e.Snapshot
			rowid               int64
			mtime               int64
			tags                string
			bookmarked, created sql.NullInt64
		)
		dest := []any{&e.Dir, &e.Layout, &e.User, &e.IndexFile, &e.IndexSize, &mtime, &s.ID,
			&s.CrawlID, &s.URL, &s.Title, &tags, &s.Timestamp, &bookmarked, &created, &s.Depth,
			&s.Status, &s.FSVersion, &s.ArchiveSize, &s.Notes, &s.SchemaVersion, &e.NumOutputs,
			&e.NumFailures, &e.Record, &e.TextStamp}
		if q.RecordOnly {
			dest = []any{&e.Dir, &e.Layout, &e.User, &e.IndexFile, &s.URL, &e.NumOutputs, &e.NumFailures, &e.Record}
		}
		if q.Snippets {
			dest = append(dest, &rowid, &e.Rank)
		}
		if err := rows.Scan(dest...); err != nil {
			return fmt.Errorf("query catalog %s: %w", c.path, err)
		}
		if !cq.match(s.URL) {
			continue
		}
		if !q.RecordOnly {
			s.Tags = archive.SplitTags(tags)
			s.BookmarkedAt, s.CreatedAt = fromMicros(bookmarked), fromMicros(created)
		}
		if mtime != 0 {
			e.IndexMTime = time.Unix(0, mtime)
		}
		if batch != nil {
			batch = append(batch, snippetRow{e, rowid})
			if n++; q.Limit > 0 && n >= q.Limit {
				break
			}
			continue
		}
		if snippet != nil {
			if err := snippet.QueryRowContext(ctx, q.Search, rowid).Scan(&e.Snippet); err != nil {
				return c.queryError(q, err)
			}
		}
		if err := fn(e); err != nil {
			return err
		}
		if n++; q.Limit > 0 && n >= q.Limit {
			break
		}
	}
	if err := rows.Err(); err != nil {
		return c.queryError(q, err)
	}
	if batch != nil {
		rows.Close()
		return c.snippets(ctx, q, batch, fn)
	}
	return nil
}

// snippetRow is an entry waiting for its snippet.
type snippetRow struct {
	e     Entry
	rowid int64
}

// maxSnippetBatch is how many rows get their snippets from one query: the
// query goes through every match once (a prefix query expands its
// prefix once, not once a row), so it is for a limit of a page or so.
const maxSnippetBatch = 200

// snippets makes the snippets of the rows in one query and hands the
// entries to fn in their order.
func (c *Catalog) snippets(ctx context.Context, q Query, rows []snippetRow, fn func(Entry) error) error {
	ids := make([]int64, len(rows))
	for i := range rows {
		ids[i] = rows[i].rowid
	}
	list, err := json.Marshal(ids)
	if err != nil {
		return err
	}
	// +rowid: the match goes through its rows once and the list filters
	// them; a plain rowid IN would run the match again for every id.
	res, err := c.db.QueryContext(ctx, `SELECT rowid, snippet(search, -1, char(2), char(3), '…', 16) FROM search
		WHERE search MATCH ? AND +rowid IN (SELECT value FROM json_each(?))`, q.Search, string(list))
	if err != nil {
		return c.queryError(q, err)
	}
	got := make(map[int64]string, len(rows))
	for res.Next() {
		var id int64
		var snip string
		if err := res.Scan(&id, &snip); err != nil {
			res.Close()
			return fmt.Errorf("query catalog %s: %w", c.path, err)
		}
		got[id] = snip
	}
	if err := res.Err(); err != nil {
		res.Close()
		return c.queryError(q, err)
	}
	res.Close()
	for _, r := range rows {
		r.e.Snippet = got[r.rowid]
		if err := fn(r.e); err != nil {
			return err
		}
	}
	return nil
}

// queryError wraps an error of a catalog query, as ErrQuery when it is
// about q's search expression.
func (c *Catalog) queryError(q Query, err error) error {
	if q.Search != "" {
		if serr := searchError(q.Search, err); serr != nil {
			return serr
		}
	}
	return fmt.Errorf("query catalog %s: %w", c.path, err)
}

// Count returns how many snapshots q selects (ignoring Sort).
func (c *Catalog) Count(ctx context.Context, q Query) (int, error) {
	cq, err := q.compile()
	if err != nil {
		return 0, err
	}
	if err := c.checkStatus(ctx, q.Status); err != nil {
		return 0, err
	}
	if len(cq.regex) > 0 {
		n := 0
		rows, err := c.db.QueryContext(ctx, `SELECT s.url FROM `+cq.from+cq.whereSQL(), cq.args...)
		if err != nil {
			return 0, c.queryError(q, err)
		}
		defer rows.Close()
		for rows.Next() {
			var u string
			if err := rows.Scan(&u); err != nil {
				return 0, fmt.Errorf("query catalog %s: %w", c.path, err)
			}
			if cq.match(u) {
				n++
			}
		}
		if err := rows.Err(); err != nil {
			return 0, c.queryError(q, err)
		}
		if q.Limit > 0 {
			n = min(n, q.Limit)
		}
		return n, nil
	}
	var n int
	from := cq.from
	if q.Search != "" && len(cq.where) == 1 {
		from = "search" // the match is the only filter: no join needed
	}
	if err := c.db.QueryRowContext(ctx, `SELECT count(*) FROM `+from+cq.whereSQL(), cq.args...).Scan(&n); err != nil {
		return 0, c.queryError(q, err)
	}
	if q.Limit > 0 {
		n = min(n, q.Limit)
	}
	return n, nil
}

// Stats summarises the catalog.
type Stats struct {
	Snapshots     int            // cataloged snapshot folders
	ByStatus      map[string]int // snapshot status ("" for records without one)
	ByLayout      map[string]int // LayoutCurrent, LayoutLegacy
	ByUser        map[string]int // current-layout folders per owner
	LegacyNoIndex int            // legacy folders without a usable index file
	Results       int            // ArchiveResult records
	Succeeded     int            // results with status succeeded
	Failed        int            // results with status failed
	Tags          int            // distinct tag names
	ArchiveSize   int64          // sum of the snapshots' archive_size
	BuiltAt       time.Time      // last build from scratch; zero if never built
	UpdatedAt     time.Time      // last completed reindex; zero if never
}

// Stats counts what the catalog holds.
func (c *Catalog) Stats(ctx context.Context) (Stats, error) {
	st := Stats{ByStatus: map[string]int{}, ByLayout: map[string]int{}, ByUser: map[string]int{}}
	wrap := func(err error) error { return fmt.Errorf("read catalog %s: %w", c.path, err) }
	groups := []struct {
		query string
		into  map[string]int
	}{
		{`SELECT status, count(*) FROM snapshots GROUP BY status`, st.ByStatus},
		{`SELECT layout, count(*) FROM snapshots GROUP BY layout`, st.ByLayout},
		{`SELECT user, count(*) FROM snapshots WHERE layout = 'current' GROUP BY user`, st.ByUser},
	}
	for _, g := range groups {
		rows, err := c.db.QueryContext(ctx, g.query)
		if err != nil {
			return st, wrap(err)
		}
		for rows.Next() {
			var k string
			var n int
			if err := rows.Scan(&k, &n); err != nil {
				rows.Close()
				return st, wrap(err)
			}
			g.into[k] = n
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return st, wrap(err)
		}
	}
	var size sql.NullInt64
	if err := c.db.QueryRowContext(ctx, `SELECT count(*), sum(archive_size), count(*) FILTER (WHERE layout = 'legacy' AND index_file = '') FROM snapshots`).Scan(&st.Snapshots, &size, &st.LegacyNoIndex); err != nil {
		return st, wrap(err)
	}
	st.ArchiveSize = size.Int64
	var results, outputs, failures sql.NullInt64
	if err := c.db.QueryRowContext(ctx, `SELECT sum(num_results), sum(num_outputs), sum(num_failures) FROM snapshots`).Scan(&results, &outputs, &failures); err != nil {
		return st, wrap(err)
	}
	st.Results, st.Succeeded, st.Failed = int(results.Int64), int(outputs.Int64), int(failures.Int64)
	if err := c.db.QueryRowContext(ctx, `SELECT count(DISTINCT name) FROM tags`).Scan(&st.Tags); err != nil {
		return st, wrap(err)
	}
	var err error
	if st.BuiltAt, err = c.meta(ctx, metaBuilt); err != nil {
		return st, err
	}
	if st.UpdatedAt, err = c.meta(ctx, metaUpdated); err != nil {
		return st, err
	}
	return st, nil
}
