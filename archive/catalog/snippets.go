package catalog

import (
	"context"
	"encoding/json"
	"fmt"
)

// snippetRow is an entry waiting for its snippet.
type snippetRow struct {
	e     Entry
	rowid int64
}

// maxSnippetBatch is how many rows get their snippets in one batch (their
// texts are copied), and snippetBatch the size of a query's batches.
const maxSnippetBatch = 200

func snippetBatch(limit int) int {
	if limit > 0 {
		return min(limit, maxSnippetBatch)
	}
	return maxSnippetBatch
}

// The snippets of a batch are made in a table of their own, in the
// connection's temp database: the rows' columns are copied there from
// search, the expression is matched again in that table and snippet()
// (up to 16 words of the best-matching column around the match) runs on
// its rows. A snippet depends on its row alone (the row's text and where
// the expression matches in it), so it comes out the same as in search,
// whose match of a prefix expands it over the doclists of every
// snapshot's text (for a common prefix, most of a search's time, and
// again for each row matched by rowid) and whose match of a row by rowid
// seeks in each term's doclist. Matching a batch's rows alone costs next
// to nothing.
const (
	snippetName   = `folio_snippets`
	snippetCreate = `CREATE VIRTUAL TABLE temp.` + snippetName + ` USING fts5(` + searchColumns + `)`
	snippetFill   = `INSERT INTO temp.` + snippetName + ` (rowid, title, url, tags, notes, body)
		SELECT rowid, title, url, tags, notes, body FROM main.search WHERE rowid IN (SELECT value FROM json_each(?))`
	snippetMake = `SELECT rowid, snippet(` + snippetName + `, -1, char(2), char(3), '…', 16) FROM temp.` + snippetName + `
		WHERE ` + snippetName + ` MATCH ?`
	snippetDrop = `DROP TABLE IF EXISTS temp.` + snippetName
)

// snippets makes the snippets of the rows in one batch and hands the
// entries to fn in their order.
func (c *Catalog) snippets(ctx context.Context, q Query, rows []snippetRow, fn func(Entry) error) error {
	got, err := c.makeSnippets(ctx, q, rows)
	if err != nil {
		return err
	}
	for _, r := range rows {
		r.e.Snippet = got[r.rowid]
		if err := fn(r.e); err != nil {
			return err
		}
	}
	return nil
}

// makeSnippets returns the snippets of rows by rowid.
func (c *Catalog) makeSnippets(ctx context.Context, q Query, rows []snippetRow) (map[int64]string, error) {
	ids := make([]int64, len(rows))
	for i := range rows {
		ids[i] = rows[i].rowid
	}
	list, err := json.Marshal(ids)
	if err != nil {
		return nil, err
	}
	conn, err := c.db.Conn(ctx) // the temp table lives in one connection
	if err != nil {
		return nil, fmt.Errorf("query catalog %s: %w", c.path, err)
	}
	defer conn.Close()
	// Made anew each time: a batch cut short by an error leaves no rows
	// behind for the next one.
	for _, stmt := range []string{`PRAGMA temp_store = MEMORY`, snippetDrop, snippetCreate} {
		if _, err := conn.ExecContext(ctx, stmt); err != nil {
			return nil, fmt.Errorf("query catalog %s: %w", c.path, err)
		}
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), snippetDrop)
	if _, err := conn.ExecContext(ctx, snippetFill, string(list)); err != nil {
		return nil, fmt.Errorf("query catalog %s: %w", c.path, err)
	}
	res, err := conn.QueryContext(ctx, snippetMake, q.Search)
	if err != nil {
		return nil, c.queryError(q, err)
	}
	defer res.Close()
	got := make(map[int64]string, len(rows))
	for res.Next() {
		var id int64
		var snip string
		if err := res.Scan(&id, &snip); err != nil {
			return nil, fmt.Errorf("query catalog %s: %w", c.path, err)
		}
		got[id] = snip
	}
	if err := res.Err(); err != nil {
		return nil, c.queryError(q, err)
	}
	return got, nil
}
