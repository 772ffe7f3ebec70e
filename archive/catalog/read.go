package catalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"folio/archive"
	"folio/layout"
)

// Problem is a snapshot folder or index file that could not be read, or
// read only in part.
type Problem struct {
	Path string // slash path relative to the data dir, naming the file when there is one
	Err  error
}

func (p Problem) Error() string { return p.Path + ": " + p.Err.Error() }
func (p Problem) Unwrap() error { return p.Err }

// Reasons a snapshot folder is not cataloged.
var (
	ErrNoIndex    = errors.New("no index.jsonl or index.json in the snapshot folder")
	ErrNoSnapshot = errors.New("no Snapshot record")
	ErrNotRegular = errors.New("not a regular file")
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
	results   []resultRow
	outputs   int
	failures  int
	sortTime  int64
	problems  []Problem
}

type resultRow struct {
	plugin, status, record string
}

// maxLineErrors is how many bad lines of one file are named in its
// Problem; the rest are counted.
const maxLineErrors = 3

// readFolder reads one snapshot folder: the first Snapshot record of
// index.jsonl, else index.json in any of its shapes.
func readFolder(root string, f folder) entryRow {
	r := entryRow{folder: f}
	abs := filepath.Join(root, filepath.FromSlash(f.dir))
	jsonlRel := relJoin(f.dir, archive.IndexFile)
	jsonRel := relJoin(f.dir, archive.LegacyIndexFile)
	// Stat before reading: a write racing with the read then shows up as
	// a change on the next reindex.
	both := statStamp(abs, LayoutLegacy, "")

	var (
		snap      archive.Snapshot
		results   []archive.Result
		have      bool
		noRecord  bool   // index.jsonl exists but holds no Snapshot record
		lineIssue string // bad lines of index.jsonl
	)
	info, data, err := readRegular(filepath.Join(abs, archive.IndexFile))
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		r.problems = append(r.problems, Problem{jsonlRel, err})
	default:
		ix, lineErrs := archive.ParseIndex(data)
		lineIssue = lineProblem(lineErrs)
		if snap, have = ix.Snapshot(); have {
			results = ix.Results()
			r.indexFile = archive.IndexFile
			r.size, r.mtime = info.Size(), info.ModTime().UnixNano()
			if lineIssue != "" {
				r.problems = append(r.problems, Problem{jsonlRel, errors.New(lineIssue)})
			}
		} else {
			noRecord = true
		}
	}
	if !have {
		info, data, err := readRegular(filepath.Join(abs, archive.LegacyIndexFile))
		if err == nil {
			var li *archive.LegacyIndex
			if li, err = archive.ParseLegacyIndex(data); err == nil {
				snap, have = li.Snapshot, true
				if snap.FSVersion == "" {
					snap.FSVersion = li.FSVersion
				}
				results = li.Results
				r.indexFile = archive.LegacyIndexFile
				r.size, r.mtime = info.Size(), info.ModTime().UnixNano()
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
			r.stamp = both
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
	r.stamp = both
	if len(stampFiles(f.layout, r.indexFile)) == 1 {
		r.stamp, _, _ = strings.Cut(both, "|")
	}
	r.record = encodeSnapshot(snap)
	r.sortTime = sortTime(snap)
	r.results = make([]resultRow, 0, len(results))
	for _, res := range results {
		switch archive.NormalizeStatus(res.Status) {
		case archive.StatusSucceeded:
			r.outputs++
		case archive.StatusFailed:
			r.failures++
		}
		r.results = append(r.results, resultRow{plugin: res.Plugin, status: res.Status, record: encodeResult(res)})
	}
	return r
}

// readRegular reads a file that must be a regular file (an index that is a
// symlink could lead anywhere). The FileInfo is taken before the read, so
// a write racing with the read shows up as a change next time.
func readRegular(p string) (os.FileInfo, []byte, error) {
	st, err := os.Lstat(p)
	if err != nil {
		return nil, nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, nil, ErrNotRegular
	}
	data, err := os.ReadFile(p)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return nil, nil, pe.Err
		}
		return nil, nil, err
	}
	return st, data, nil
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
// (ArchiveBox's Snapshot.to_json: its key order, Python JSON style).
func encodeSnapshot(s archive.Snapshot) string {
	ix, _ := archive.ParseIndex(nil)
	ix.SetSnapshot(s)
	return string(bytes.TrimSuffix(ix.Bytes(), []byte("\n")))
}

// encodeResult writes r as a canonical ArchiveResult record on one line.
func encodeResult(r archive.Result) string {
	if bytes.IndexByte(r.OutputJSON, '\n') >= 0 {
		var b bytes.Buffer
		if json.Compact(&b, r.OutputJSON) == nil {
			r.OutputJSON = b.Bytes()
		}
	}
	ix, _ := archive.ParseIndex(nil)
	ix.AddResult(r)
	return string(bytes.TrimSuffix(ix.Bytes(), []byte("\n")))
}

// sortTime is the instant a snapshot sorts and filters by: bookmarked_at,
// else its timestamp, else created_at, in microseconds.
func sortTime(s archive.Snapshot) int64 {
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
