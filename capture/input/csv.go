package input

import (
	"bytes"
	"encoding/csv"
	"errors"
	"io"
	"strings"
)

// CSV columns read for each field (header names, any case), first match
// wins: Pocket's export (title,url,time_added,tags,status, tags joined by
// "|") and Instapaper's (URL,Title,Selection,Folder,Timestamp) among them.
var (
	csvURLKeys   = []string{"url", "href", "link"}
	csvTitleKeys = []string{"title", "name", "description"}
	csvDateKeys  = []string{"time_added", "bookmarked_at", "timestamp", "time", "created_at", "created", "date", "added"}
	csvTagKeys   = []string{"tags", "tag", "folder"}
)

var errNoURLColumn = errors.New("not a CSV file with a header row naming a url column")

// csvHeader returns the column index of each field of a CSV header
// line; ok is false when the line names no URL column.
func csvHeader(line []byte) (cols map[string]int, ok bool) {
	r := csv.NewReader(bytes.NewReader(line))
	r.LazyQuotes = true
	names, err := r.Read()
	if err != nil || len(names) < 2 {
		return nil, false
	}
	cols = map[string]int{}
	for _, field := range []struct {
		name string
		keys []string
	}{{"url", csvURLKeys}, {"title", csvTitleKeys}, {"date", csvDateKeys}, {"tags", csvTagKeys}} {
		for _, k := range field.keys {
			if i := indexFold(names, k); i >= 0 {
				cols[field.name] = i
				break
			}
		}
	}
	_, ok = cols["url"]
	return cols, ok
}

func indexFold(names []string, key string) int {
	for i, n := range names {
		if strings.EqualFold(strings.TrimSpace(n), key) {
			return i
		}
	}
	return -1
}

// csvRows reads a CSV file whose first content line is a header naming a
// url column. Tags are split on "|" when the cell has one (Pocket), else
// on commas; dates are unix times or ISO 8601. A malformed row is skipped
// and reported.
func (p *parser) csvRows(data []byte) error {
	header := firstContentLine(data)
	cols, ok := csvHeader(header)
	if !ok {
		return errNoURLColumn
	}
	start := bytes.Index(data, header) + len(header)
	headerLine := lineAt(data, int64(start))
	r := csv.NewReader(bytes.NewReader(data[start:]))
	r.FieldsPerRecord, r.LazyQuotes = -1, true
	cell := func(row []string, field string) string {
		if i, ok := cols[field]; ok && i < len(row) {
			return row[i]
		}
		return ""
	}
	for {
		row, err := r.Read()
		if err == io.EOF {
			return nil
		}
		line, _ := r.FieldPos(0)
		line += headerLine - 1
		if err != nil {
			p.skip(line, strings.Join(row, ","), "malformed CSV row")
			continue
		}
		if len(row) == 1 && strings.TrimSpace(row[0]) == "" {
			continue
		}
		date := cell(row, "date")
		at := isoDate(date)
		if at.IsZero() {
			at = epochString(date)
		}
		p.add(Item{URL: cell(row, "url"), Title: cell(row, "title"), Tags: csvTags(cell(row, "tags")), BookmarkedAt: at, Line: line})
	}
}

func csvTags(s string) []string {
	if strings.Contains(s, "|") {
		return strings.Split(s, "|")
	}
	return strings.Split(s, ",")
}
