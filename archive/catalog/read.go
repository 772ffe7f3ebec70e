package catalog

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/layout"
)

// Problem is a snapshot folder or index file that could not be read, or
// read only in part.
type Problem struct {
	Path string // slash path relative to the data dir, naming the file when there is one
	Err  error
}

func (p Problem) Error() string { return archive.Printable(p.Path) + ": " + p.Err.Error() }
func (p Problem) Unwrap() error { return p.Err }

// Reasons a snapshot folder is not cataloged.
var (
	// ErrNoIndex: ArchiveBox writes a snapshot folder's index when it seals
	// the snapshot, so a folder without one is a capture it has not
	// finished, or left half-filled; its record is in ArchiveBox's
	// database, from which 'folio update --migrate-only' writes it.
	ErrNoIndex    = errors.New("no index.jsonl or index.json: a snapshot folder ArchiveBox has not sealed (or left half-filled); when index.sqlite3 holds its row, 'folio update --migrate-only' writes its index")
	ErrNoSnapshot = errors.New("no Snapshot record")
	ErrNotRegular = archive.ErrNotRegular
)

// entryRow is a snapshot folder read from disk, ready to be written.
type entryRow struct {
	folder
	ok        bool // false: the folder could not be cataloged
	snap      archive.Snapshot
	indexFile string // the file the Snapshot came from, "" when none
	size      int64
	mtime     int64 // ns
	stamp     string
	record    string
	keep      bool   // collect the ArchiveResult lines into results
	results   []byte // the ArchiveResult records, one per line, when keep
	nresults  int
	// legacyResults are the results read from index.json.
	legacyResults []archive.Result
	// tally holds the standing result of each capture method: the
	// counts and the state come from it.
	tally    archive.Tally
	state    string
	sortTime int64
	problems []Problem
	text     string // capture text for search, when folder.readText
}

// maxLineErrors is how many bad lines of one file are named in its
// Problem; the rest are counted.
const maxLineErrors = 3

// readFolder reads one snapshot folder: the first Snapshot record of
// index.jsonl, else index.json in any of its shapes.
func readFolder(root string, f folder, keepResults bool) entryRow {
	r := entryRow{folder: f, keep: keepResults}
	abs := filepath.Join(root, filepath.FromSlash(f.dir))
	jsonlRel := relJoin(f.dir, archive.IndexFile)
	jsonRel := relJoin(f.dir, archive.LegacyIndexFile)
	// Stat before reading: a write racing with the read then shows up as
	// a change on the next reindex.
	var both string
	if f.layout == LayoutLegacy {
		both = statStamp(abs, LayoutLegacy, "")
	}

	var (
		snap      archive.Snapshot
		results   []archive.Result // from index.json
		have      bool
		noRecord  bool   // index.jsonl exists but holds no Snapshot record
		lineIssue string // bad lines of index.jsonl
	)
	jsonlStat, data, err := readIndexFile(filepath.Join(abs, archive.IndexFile))
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		r.problems = append(r.problems, Problem{jsonlRel, err})
	default:
		var lineErrs []archive.LineError
		if r.keep {
			r.results = make([]byte, 0, len(data))
		}
		snap, have, lineErrs = r.parseIndex(data)
		lineIssue = lineProblem(lineErrs)
		if have {
			r.indexFile = archive.IndexFile
			r.size, r.mtime = jsonlStat.size, jsonlStat.mtime
			if lineIssue != "" {
				r.problems = append(r.problems, Problem{jsonlRel, errors.New(lineIssue)})
			}
		} else {
			noRecord = true
		}
	}
	if !have {
		jsonStat, data, err := readIndexFile(filepath.Join(abs, archive.LegacyIndexFile))
		if err == nil {
			var li *archive.LegacyIndex
			if li, err = archive.ParseLegacyIndex(data); err == nil {
				snap, have = li.Snapshot, true
				if snap.FSVersion == "" {
					snap.FSVersion = li.FSVersion
				}
				if r.nresults == 0 {
					results = li.Results
				}
				r.indexFile = archive.LegacyIndexFile
				r.size, r.mtime = jsonStat.size, jsonStat.mtime
			}
		}
		if noRecord {
			reason := ErrNoSnapshot
			if lineIssue != "" {
				reason = fmt.Errorf("%w (%s)", ErrNoSnapshot, lineIssue)
			}
			if have {
				reason = fmt.Errorf("%w; read index.json instead", reason)
			}
			r.problems = append(r.problems, Problem{jsonlRel, reason})
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			r.problems = append(r.problems, Problem{jsonRel, err})
		}
	}

	switch f.layout {
	case LayoutCurrent:
		if !have {
			if len(r.problems) == 0 {
				r.problems = append(r.problems, Problem{jsonlRel, ErrNoIndex})
			}
			r.stamp = statStamp(abs, f.layout, "")
			return r
		}
		if snap.ID == "" {
			if id, ok := layout.ParseID(f.name); ok {
				snap.ID = id
			}
		}
	case LayoutLegacy:
		// A legacy folder is a snapshot by its name alone, and the name
		// beats whatever timestamp the index holds.
		if ts, ok := layout.BestTimestamp(snap.Timestamp, f.name); ok {
			snap.Timestamp = ts
		}
	}
	r.ok = true
	r.snap = snap
	switch {
	case both != "":
		r.stamp = both
	case r.indexFile == archive.IndexFile:
		r.stamp = jsonlStat.stamp()
	default:
		r.stamp = statStamp(abs, f.layout, r.indexFile)
	}
	r.record = encodeSnapshot(snap)
	r.sortTime = SortTime(snap)
	r.legacyResults = results
	for _, res := range results {
		r.count(res.Plugin, res.HookName, res.Status)
	}
	r.state = r.tally.State(snap.Status)
	if f.readText {
		var ps []Problem
		r.text, ps = readText(abs, f.dir, f.textFile)
		r.problems = append(r.problems, ps...)
	}
	return r
}

func (r *entryRow) addResult(line []byte, info archive.LineInfo) {
	if r.keep {
		if len(r.results) > 0 {
			r.results = append(r.results, '\n')
		}
		r.results = append(r.results, line...)
	}
	r.count(info.Plugin, info.Hook, info.Status)
}

func (r *entryRow) count(plugin, hook, status string) {
	r.nresults++
	r.tally.Add(plugin, hook, status)
}

// parseIndex reads index.jsonl content line by line with the rules of
// archive.ParseIndex: it returns the first Snapshot record, collects the
// ArchiveResult lines verbatim into r.results (when r.keep), and reports
// the lines that are not records. Only the Snapshot record is decoded:
// the catalog stores results as they are and counts them by status.
func (r *entryRow) parseIndex(data []byte) (archive.Snapshot, bool, []archive.LineError) {
	var (
		snapLine []byte
		errs     []archive.LineError
	)
	if len(data) > 0 && data[len(data)-1] == '\n' {
		data = data[:len(data)-1]
	}
	for n := 1; len(data) > 0 || n == 1; n++ {
		raw := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			raw, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		info := archive.ClassifyLine(raw)
		if info.Problem != "" {
			errs = append(errs, archive.LineError{Line: n, Reason: info.Problem})
		}
		switch info.Kind {
		case archive.TypeSnapshot:
			if snapLine == nil {
				snapLine = raw
			}
		case archive.TypeArchiveResult:
			r.addResult(bytes.TrimSpace(raw), info)
		}
	}
	if snapLine == nil {
		return archive.Snapshot{}, false, errs
	}
	snap, ok := archive.DecodeSnapshotLine(snapLine)
	return snap, ok, errs
}

func lineProblem(errs []archive.LineError) string {
	if len(errs) == 0 {
		return ""
	}
	parts := make([]string, 0, maxLineErrors)
	for i, e := range errs {
		if i == maxLineErrors {
			break
		}
		parts = append(parts, e.Error())
	}
	s := strings.Join(parts, "; ")
	if n := len(errs) - maxLineErrors; n > 0 {
		s += fmt.Sprintf(" (and %d more bad lines)", n)
	}
	return s
}

// encodeSnapshot writes s as the canonical per-snapshot Snapshot record
// (ArchiveBox's Snapshot.to_json: its key order, Python JSON style), the
// bytes archive's Index.SetSnapshot writes for a new record; TestEncodeSnapshot
// and FuzzDecodeSnapshot compare the two.
func encodeSnapshot(s archive.Snapshot) string {
	sv := s.SchemaVersion
	if sv == "" {
		sv = archive.SchemaVersion
	}
	b := make([]byte, 0, 512)
	b = append(b, `{"type": "Snapshot", "schema_version": `...)
	b = archive.AppendPyString(b, sv)
	b = append(b, `, "id": `...)
	b = archive.AppendPyString(b, s.ID)
	b = append(b, `, "crawl_id": `...)
	b = appendPyOrNull(b, s.CrawlID)
	b = append(b, `, "url": `...)
	b = archive.AppendPyString(b, s.URL)
	b = append(b, `, "title": `...)
	b = appendPyOrNull(b, s.Title)
	b = append(b, `, "tags": `...)
	b = archive.AppendPyString(b, archive.TagString(s.Tags))
	b = append(b, `, "bookmarked_at": `...)
	b = appendPyTime(b, s.BookmarkedAt)
	b = append(b, `, "created_at": `...)
	b = appendPyTime(b, s.CreatedAt)
	b = append(b, `, "timestamp": `...)
	b = archive.AppendPyString(b, s.Timestamp)
	b = append(b, `, "depth": `...)
	b = strconv.AppendInt(b, int64(s.Depth), 10)
	b = append(b, `, "status": `...)
	b = archive.AppendPyString(b, s.Status)
	b = append(b, `, "fs_version": `...)
	b = archive.AppendPyString(b, s.FSVersion)
	b = append(b, `, "archive_size": `...)
	b = strconv.AppendInt(b, s.ArchiveSize, 10)
	b = append(b, `, "output_size": `...)
	b = strconv.AppendInt(b, s.ArchiveSize, 10)
	if s.Notes != "" {
		b = append(b, `, "notes": `...)
		b = archive.AppendPyString(b, s.Notes)
	}
	return string(append(b, '}'))
}

func appendPyOrNull(b []byte, s string) []byte {
	if s == "" {
		return append(b, "null"...)
	}
	return archive.AppendPyString(b, s)
}

func appendPyTime(b []byte, t time.Time) []byte {
	if t.IsZero() {
		return append(b, "null"...)
	}
	return archive.AppendPyString(b, archive.IsoTime(t))
}

// SortTime is the instant a snapshot sorts and filters by (the
// "bookmarked_at" sort, Before, After): bookmarked_at, else its
// timestamp, else created_at, in microseconds.
func SortTime(s archive.Snapshot) int64 {
	if !s.BookmarkedAt.IsZero() {
		return s.BookmarkedAt.UnixMicro()
	}
	if f, ok := layout.PyFloat(s.Timestamp); ok && f > 0 && f < 1e11 {
		return int64(f * 1e6)
	}
	if !s.CreatedAt.IsZero() {
		return s.CreatedAt.UnixMicro()
	}
	return 0
}
