package catalog

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
)

// SortRank is the Query.Sort of search results: best match first.
const SortRank = "rank"

// Snippet markers: Entry.Snippet holds each matched word between
// SnippetOpen and SnippetClose, for callers to show as they like.
const (
	SnippetOpen  = "\x02"
	SnippetClose = "\x03"
)

// rankSQL scores a search match with bm25, lower being better. The
// column weights put a word in the title above one in the URL or the
// tags, those above the notes, and all of them above the capture text,
// which is long and holds most words. (Called by name, it is faster than
// the same function set as the table's rank.)
const rankSQL = `bm25(search, 10.0, 4.0, 4.0, 2.0, 1.0)`

// metaRankSQL is rankSQL in metasearch, which has no text column.
const metaRankSQL = `bm25(metasearch, 10.0, 4.0, 4.0, 2.0)`

// MatchWords turns what a user types into an FTS5 query: every word
// must appear, in any column; "quoted words" must appear together, in
// that order; a word ending in * matches as a prefix. Everything else is
// taken literally, so "c++", "don't" or "AND" never read as query
// syntax. Words without a letter or digit (punctuation, emoji) index as
// nothing and are dropped; "" means nothing was left to search for.
func MatchWords(s string) string {
	var terms []string
	for s = strings.TrimSpace(s); s != ""; s = strings.TrimSpace(s) {
		var word string
		if s[0] == '"' {
			end := strings.IndexByte(s[1:], '"')
			if end < 0 {
				word, s = s[1:], ""
			} else {
				word, s = s[1:1+end], s[2+end:]
			}
		} else if end := strings.IndexFunc(s, unicode.IsSpace); end < 0 {
			word, s = s, ""
		} else {
			word, s = s[:end], s[end:]
		}
		prefix := strings.HasSuffix(word, "*")
		word = strings.TrimRight(word, "*")
		if strings.IndexFunc(word, isTokenChar) < 0 {
			continue
		}
		term := `"` + strings.ReplaceAll(word, `"`, `""`) + `"`
		if prefix {
			term += "*"
		}
		terms = append(terms, term)
	}
	return strings.Join(terms, " ")
}

// isTokenChar reports whether unicode61 keeps r in a token: letters,
// digits and private-use characters.
func isTokenChar(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Co, r)
}

// SearchError is a Query.Search expression SQLite could not run. It
// wraps ErrQuery.
type SearchError struct {
	Expr   string // the expression
	Reason string // SQLite's words, such as `syntax error near "AND"`
}

func (e *SearchError) Error() string {
	return fmt.Sprintf("%v: search %q: %s", ErrQuery, e.Expr, e.Reason)
}

func (e *SearchError) Unwrap() error { return ErrQuery }

// searchError makes the error SQLite gives for a query it cannot parse
// (SQLITE_ERROR, "SQL logic error: … (1)") a SearchError. Other errors
// (I/O, a busy or corrupt file) give nil: they are not the user's query.
func searchError(expr string, err error) error {
	msg, ok := strings.CutPrefix(err.Error(), "SQL logic error: ")
	if !ok {
		return nil
	}
	if i := strings.LastIndex(msg, " ("); i > 0 && strings.HasSuffix(msg, ")") {
		msg = msg[:i]
	}
	return &SearchError{Expr: expr, Reason: strings.TrimPrefix(msg, "fts5: ")}
}

// Texts returns the start of the captured text the search index holds
// for each of the snapshot folders dirs, at most max bytes of it (cut at
// a character), keyed by folder; folders without text are left out. The
// static export's text search ships these.
func (c *Catalog) Texts(ctx context.Context, dirs []string, max int) (map[string]string, error) {
	out := map[string]string{}
	if len(dirs) == 0 {
		return out, nil
	}
	list, err := json.Marshal(dirs)
	if err != nil {
		return nil, err
	}
	// substr counts characters; a byte cap is applied after.
	rows, err := c.db.QueryContext(ctx, `SELECT s.dir, substr(t.body, 1, ?2) FROM snapshots s
		JOIN search t ON t.rowid = s.rowid
		WHERE s.dir IN (SELECT value FROM json_each(?1)) AND t.body != ''`, string(list), max)
	if err != nil {
		return nil, fmt.Errorf("read catalog %s: %w", c.path, err)
	}
	defer rows.Close()
	for rows.Next() {
		var dir, text string
		if err := rows.Scan(&dir, &text); err != nil {
			return nil, fmt.Errorf("read catalog %s: %w", c.path, err)
		}
		if len(text) > max {
			text = strings.ToValidUTF8(text[:max], "") // drops a character cut in two
		}
		out[dir] = text
	}
	return out, rows.Err()
}
