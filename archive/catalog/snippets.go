package catalog

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

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
	res, err := c.db.QueryContext(ctx, `SELECT rowid, snippet(search, -1, char(2), char(3), '…', 16) FROM search
		WHERE search MATCH ? AND `+snippetRowids(q.Search)+` IN (SELECT value FROM json_each(?))`, q.Search, string(list))
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

// snippetRowids is how the snippet query picks its rows from the match of
// expr. A plain rowid IN runs the match once for each row, each a seek in
// the terms' doclists: for a word in half the snapshots, a tenth of the
// time of going through all its matches. A prefix must be expanded to its
// terms each time the match runs, so an expression with a '*' goes
// through the match once and filters its rows by the list (+rowid, which
// the search table cannot use).
func snippetRowids(expr string) string {
	if strings.Contains(expr, "*") {
		return "+rowid"
	}
	return "rowid"
}
