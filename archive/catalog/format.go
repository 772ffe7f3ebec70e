package catalog

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/folio-archive/folio/archive"
)

// Output formats of a listing.
const (
	FormatJSONL = "jsonl" // one canonical Snapshot record per line
	FormatJSON  = "json"  // a JSON array, indent 4, sorted keys (ArchiveBox's --json style)
	FormatCSV   = "csv"   // RFC 4180: a header row, then one row per snapshot, UTF-8 text cells
)

// recordFields are the keys of the canonical Snapshot record.
var recordFields = []string{"type", "schema_version", "id", "crawl_id", "url", "title", "tags",
	"bookmarked_at", "created_at", "timestamp", "depth", "status", "fs_version", "archive_size",
	"output_size", "notes"}

// entryFields are CSV fields that come from the catalog, not the record.
var entryFields = []string{"dir", "archive_path", "layout", "user", "num_outputs", "num_failures", "state"}

// CSVFields lists the field names a CSV listing accepts.
func CSVFields() []string { return append(append([]string(nil), recordFields...), entryFields...) }

// Writer writes entries in one output format. It buffers its output and
// flushes after the first entry, so the first line shows at once, and at
// Close.
type Writer struct {
	w      *bufio.Writer
	format string
	fields []string
	n      int
}

// NewWriter returns a Writer for format; fields are the CSV columns and
// must be empty for the other formats.
func NewWriter(w io.Writer, format string, fields []string) (*Writer, error) {
	switch format {
	case FormatJSONL, FormatJSON:
		if len(fields) > 0 {
			return nil, fmt.Errorf("%w: fields are only for CSV output", ErrQuery)
		}
	case FormatCSV:
		if len(fields) == 0 {
			return nil, fmt.Errorf("%w: CSV output needs at least one field (any of %s)", ErrQuery, strings.Join(CSVFields(), ", "))
		}
		valid := map[string]bool{}
		for _, f := range CSVFields() {
			valid[f] = true
		}
		for _, f := range fields {
			if !valid[f] {
				return nil, fmt.Errorf("%w: unknown CSV field %q (want any of %s)", ErrQuery, f, strings.Join(CSVFields(), ", "))
			}
		}
	default:
		return nil, fmt.Errorf("%w: unknown output format %q", ErrQuery, format)
	}
	return &Writer{w: bufio.NewWriterSize(w, 64<<10), format: format, fields: fields}, nil
}

// Write writes one entry.
func (w *Writer) Write(e Entry) error {
	var err error
	switch w.format {
	case FormatJSONL:
		w.w.Write(e.Record)
		err = w.w.WriteByte('\n')
	case FormatJSON:
		err = w.writeJSON(e)
	case FormatCSV:
		err = w.writeCSV(e)
	}
	if err != nil {
		return err
	}
	if w.n++; w.n == 1 {
		return w.w.Flush()
	}
	return nil
}

// Close ends the output (the closing bracket of a JSON array) and flushes.
func (w *Writer) Close() error {
	switch w.format {
	case FormatJSON:
		if w.n == 0 {
			w.w.WriteString("[]\n")
		} else {
			w.w.WriteString("\n]\n")
		}
	case FormatCSV:
		if w.n == 0 {
			w.writeHeader()
		}
	}
	return w.w.Flush()
}

func (w *Writer) writeHeader() {
	w.w.WriteString(strings.Join(w.fields, ","))
	w.w.WriteString("\r\n")
}

// recordValues splits a record into its keys and raw values without
// decoding them: the values are already in Python's JSON style.
func recordValues(e Entry) (map[string]json.RawMessage, error) {
	obj, err := archive.ParseObject(e.Record)
	if err != nil {
		return nil, fmt.Errorf("decode catalog record of %s: %w", e.Dir, err)
	}
	m := make(map[string]json.RawMessage, len(obj))
	for _, member := range obj {
		m[member.Key] = member.Value
	}
	return m, nil
}

func (w *Writer) writeJSON(e Entry) error {
	m, err := recordValues(e)
	if err != nil {
		return err
	}
	if w.n == 0 {
		w.w.WriteString("[\n")
	} else {
		w.w.WriteString(",\n")
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	w.w.WriteString("    {")
	for i, k := range keys {
		if i > 0 {
			w.w.WriteByte(',')
		}
		w.w.WriteString("\n        ")
		w.w.Write(archive.AppendPyString(nil, k))
		w.w.WriteString(": ")
		w.w.Write(m[k]) // scalar values, already in Python style
	}
	if len(keys) > 0 {
		w.w.WriteString("\n    ")
	}
	_, err = w.w.WriteString("}")
	return err
}

func (w *Writer) writeCSV(e Entry) error {
	m, err := recordValues(e)
	if err != nil {
		return err
	}
	if w.n == 0 {
		w.writeHeader()
	}
	for i, f := range w.fields {
		if i > 0 {
			w.w.WriteByte(',')
		}
		var cell string
		switch f {
		case "dir", "archive_path":
			cell = e.Dir
		case "layout":
			cell = e.Layout
		case "state":
			cell = e.State
		case "user":
			cell = e.User
		case "num_outputs":
			cell = strconv.Itoa(e.NumOutputs)
		case "num_failures":
			cell = strconv.Itoa(e.NumFailures)
		default:
			cell = csvText(m[f])
		}
		writeCSVCell(w.w, cell)
	}
	_, err = w.w.WriteString("\r\n")
	return err
}

// csvText is a record value as a spreadsheet shows it: a string as its
// text, a number or boolean as written, a missing or null value empty (a
// spreadsheet would show "null" as text), a list or object as JSON.
func csvText(v json.RawMessage) string {
	switch {
	case len(v) == 0 || string(v) == "null":
		return ""
	case v[0] == '"':
		var s string
		if json.Unmarshal(v, &s) == nil {
			return s
		}
	}
	return string(v)
}

// writeCSVCell writes one cell as RFC 4180 has it: in double quotes, with
// its quotes doubled, when it holds a comma, a quote, a line break or
// space at an end; as it is otherwise. Line breaks inside stay as they are.
func writeCSVCell(w *bufio.Writer, s string) {
	if s == "" || (!strings.ContainsAny(s, ",\"\r\n") && strings.TrimSpace(s) == s) {
		w.WriteString(s)
		return
	}
	w.WriteByte('"')
	w.WriteString(strings.ReplaceAll(s, `"`, `""`))
	w.WriteByte('"')
}
