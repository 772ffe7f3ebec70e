package input

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// errNotJSONArray is the error of a forced JSON input that is not an array
// of objects.
var errNotJSONArray = errors.New("not a JSON array of objects")

// jsonArray reads a JSON array of objects, as Pinboard's JSON export (and
// ArchiveBox's generic JSON parser) gives them; each object is read as a
// JSON Lines record (href, description, time, tags...). An element that is
// not an object is skipped and reported; a malformed document is an error.
func (p *parser) jsonArray(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		return errNotJSONArray
	}
	for dec.More() {
		start := dec.InputOffset()
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return fmt.Errorf("%w: %v", errNotJSONArray, err)
		}
		// The element starts after the separator and blanks that
		// InputOffset still counts before it.
		start += int64(len(data[start:]) - len(bytes.TrimLeft(data[start:], ", \t\r\n")))
		p.jsonRecord(lineAt(data, start), raw)
	}
	if _, err := dec.Token(); err != nil {
		return fmt.Errorf("%w: %v", errNotJSONArray, err)
	}
	return nil
}

// lineAt returns the 1-based line of byte offset off in data.
func lineAt(data []byte, off int64) int {
	return 1 + bytes.Count(data[:min(off, int64(len(data)))], []byte("\n"))
}
