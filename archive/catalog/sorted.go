package catalog

import (
	"context"
	"database/sql"
	"fmt"
)

// sorted reads the rows of a query ordered by their first column, a
// folder path, one at a time: a walk that visits folders in the same
// order meets each row when it reaches its folder, and holds no more of
// the catalog than the rows of the folder it is in.
type sorted[T any] struct {
	path string // the catalog's, for errors
	rows *sql.Rows
	scan func(*sql.Rows) (string, T, error)
	key  string // the current row's folder; "" when done
	val  T
	done bool
	n    int // rows read
	err  error
}

func openSorted[T any](ctx context.Context, c *Catalog, query string, scan func(*sql.Rows) (string, T, error)) (*sorted[T], error) {
	rows, err := c.db.QueryContext(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("read catalog %s: %w", c.path, err)
	}
	s := &sorted[T]{path: c.path, rows: rows, scan: scan}
	s.next()
	return s, s.err
}

// next moves to the following row.
func (s *sorted[T]) next() {
	if s.done {
		return
	}
	if !s.rows.Next() {
		s.done, s.key = true, ""
		if err := s.rows.Err(); err != nil {
			s.err = fmt.Errorf("read catalog %s: %w", s.path, err)
		}
		return
	}
	var err error
	if s.key, s.val, err = s.scan(s.rows); err != nil {
		s.done, s.key = true, ""
		s.err = fmt.Errorf("read catalog %s: %w", s.path, err)
		return
	}
	s.n++
}

// skipTo hands every row before key to fn and stops at the first row at
// or after it ("" for key: every row left).
func (s *sorted[T]) skipTo(key string, fn func(string, T)) {
	for !s.done && (key == "" || s.key < key) {
		fn(s.key, s.val)
		s.next()
	}
}

// at reports the current row when its folder is key, and moves past it.
func (s *sorted[T]) at(key string) (T, bool) {
	if s.done || s.key != key {
		var zero T
		return zero, false
	}
	v := s.val
	s.next()
	return v, true
}

// below hands fn the rows of the folders below dir (keys with dir + "/"
// as their prefix), the cursor standing at the first of them.
func (s *sorted[T]) below(dir string, fn func(string, T)) {
	end := dir + "0" // "0" follows "/"
	for !s.done && s.key < end {
		fn(s.key, s.val)
		s.next()
	}
}

func (s *sorted[T]) close() error {
	s.done = true
	return s.rows.Close()
}
