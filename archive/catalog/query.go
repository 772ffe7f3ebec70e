package catalog

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/folio-archive/folio/archive"
)

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
	Status     string   // a status of Statuses: the record's lifecycle status, or a derived state
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
	Layout      string // LayoutCurrent or LayoutLegacy: only the snapshots of that layout; "" any
	WithResults bool   // fill Entry.Results
	// RecordOnly fills only Dir, Layout, User, IndexFile, Record,
	// NumOutputs, NumFailures, State and Snapshot.URL: the fast path for
	// streaming records.
	RecordOnly bool
}

// Statuses are the words Query.Status takes: the lifecycle statuses
// ArchiveBox writes in a Snapshot record, and the states of a finished
// snapshot (archive.States), which select by Entry.State. A Query.Status
// outside them must be one some snapshot of the catalog has.
func Statuses() []string {
	return []string{"queued", "started", "paused", "backoff", "sealed",
		archive.StateArchived, archive.StatePartial, archive.StateFailed}
}

// StatusMeanings says what each of Statuses selects, for --help.
func StatusMeanings() []string {
	return []string{
		"queued (waiting to be captured)",
		"started (being captured, or a capture cut short)",
		"paused", "backoff (waiting to retry)",
		"sealed (capture finished: archived, partial and failed together)",
		"archived (finished, some content kept, no plugin failed)",
		"partial (finished, some content kept, some plugin failed)",
		"failed (finished, nothing kept: every capture method that ran failed or found nothing; only bookkeeping such as hashes succeeded)",
	}
}

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
		col := `s.status = ?`
		if slices.Contains(archive.States(), q.Status) {
			col = `s.state = ?`
		}
		c.where = append(c.where, col)
		c.args = append(c.args, q.Status)
	}
	switch q.Layout {
	case "":
	case LayoutCurrent, LayoutLegacy:
		c.where = append(c.where, `s.layout = ?`)
		c.args = append(c.args, q.Layout)
	default:
		return nil, fmt.Errorf("%w: layout %q: unknown (want %s or %s)", ErrQuery, q.Layout, LayoutCurrent, LayoutLegacy)
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
// search tables alone, and only the rows kept are joined with snapshots.
// There the ranking comes in two tiers, as the weights mean it: the
// snapshots whose title, URL, tags or notes match come first, then those
// whose captured text alone does, each tier by bm25. The second tier is
// ranked only when the first has fewer rows than the limit, so a common
// word ranks the few thousand snapshots with it in their titles, not the
// tens of thousands with it in their text. The first tier of plain words
// (MatchWords) is ranked in metasearch, which holds no capture text; an
// FTS5 expression, which may name the body column, in search.
func (c *compiled) rankBy(q Query) {
	if len(c.where) == 1 && len(c.regex) == 0 && q.Limit > 0 {
		first, in := fmt.Sprintf(`SELECT rowid, %s AS rank, 0 AS tier FROM search WHERE search MATCH %s`, rankSQL, metadataMatch),
			`SELECT rowid FROM search WHERE search MATCH `+metadataMatch
		if plainMatch(q.Search) {
			first, in = `SELECT rowid, `+metaRankSQL+` AS rank, 0 AS tier FROM metasearch WHERE metasearch MATCH ?`,
				`SELECT rowid FROM metasearch WHERE metasearch MATCH ?`
		}
		c.from = fmt.Sprintf(`(SELECT rowid, rank, tier FROM (%[1]s ORDER BY rank LIMIT %[4]d)
			UNION ALL SELECT rowid, rank, tier FROM (
				SELECT rowid, %[3]s AS rank, 1 AS tier FROM search WHERE search MATCH ?
				AND rowid NOT IN (%[2]s) ORDER BY rank LIMIT %[4]d)
			LIMIT %[4]d) m
			JOIN snapshots s ON s.rowid = m.rowid`, first, in, rankSQL, q.Limit)
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

// plainMatch reports whether expr is made of quoted phrases only, each
// maybe a prefix, as MatchWords writes them: an expression that names no
// column, so metasearch, which has no body column, can run it.
func plainMatch(expr string) bool {
	for expr != "" {
		if expr[0] != '"' {
			return false
		}
		i := 1
		for {
			j := strings.IndexByte(expr[i:], '"')
			if j < 0 {
				return false
			}
			i += j + 1
			if i < len(expr) && expr[i] == '"' { // "" inside a phrase
				i++
				continue
			}
			break
		}
		if i < len(expr) && expr[i] == '*' {
			i++
		}
		expr = expr[i:]
		if expr == "" {
			return true
		}
		if expr[0] != ' ' {
			return false
		}
		expr = expr[1:]
	}
	return false
}

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
