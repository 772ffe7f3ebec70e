package input

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// JSON keys read for each field, first match wins.
var (
	jsonURLKeys   = []string{"href", "url", "URL"}
	jsonTitleKeys = []string{"title", "description", "name"}
	jsonDateKeys  = []string{"bookmarked_at", "timestamp", "time", "created_at", "created", "date", "bookmarked", "saved"}
)

// jsonl reads one JSON object a line, skipping blank lines and # comments.
func (p *parser) jsonl(data []byte) {
	lines(data, func(n int, line []byte) {
		line = bytes.TrimSpace(line)
		if isComment(line) {
			return
		}
		p.jsonRecord(n, line)
	})
}

// jsonRecord reads one JSON object (a line of JSON Lines, an element of
// a JSON array) that starts on line n.
func (p *parser) jsonRecord(n int, line []byte) {
	var obj map[string]any
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	if err := dec.Decode(&obj); err != nil || obj == nil || dec.More() {
		p.skip(n, string(line), "not a JSON object")
		return
	}
	if typ, ok := obj["type"]; ok && typ != "Snapshot" {
		p.skip(n, string(line), fmt.Sprintf("record of type %v", typ))
		return
	}
	url, ok := firstString(obj, jsonURLKeys)
	if !ok {
		p.skip(n, string(line), "no url field")
		return
	}
	title, _ := firstString(obj, jsonTitleKeys)
	p.add(Item{
		URL:          url,
		Title:        title,
		Tags:         jsonTags(obj["tags"]),
		BookmarkedAt: jsonDate(obj),
		Line:         n,
	})
}

// firstString returns the first non-empty string value among keys.
func firstString(obj map[string]any, keys []string) (string, bool) {
	for _, k := range keys {
		if s, ok := obj[k].(string); ok && strings.TrimSpace(s) != "" {
			return s, true
		}
	}
	return "", false
}

// jsonDate returns the first date among jsonDateKeys that reads as one: an
// ISO 8601 string, or a number (or numeric string) of unix seconds,
// milliseconds or microseconds.
func jsonDate(obj map[string]any) time.Time {
	for _, k := range jsonDateKeys {
		var t time.Time
		switch v := obj[k].(type) {
		case json.Number:
			t = epochString(v.String())
		case string:
			if t = isoDate(v); t.IsZero() {
				t = epochString(v)
			}
		}
		if !t.IsZero() {
			return t
		}
	}
	return time.Time{}
}

// jsonTags reads tags given as a list of strings or as one string, split on
// commas when it has any, else on white space.
func jsonTags(v any) []string {
	switch v := v.(type) {
	case []any:
		var tags []string
		for _, t := range v {
			if s, ok := t.(string); ok {
				tags = append(tags, s)
			}
		}
		return tags
	case string:
		if strings.Contains(v, ",") {
			return strings.Split(v, ",")
		}
		return strings.Fields(v)
	}
	return nil
}
