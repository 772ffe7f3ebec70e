package migrate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/folio-archive/folio/archive"
)

// Stats is what a migration did.
type Stats struct {
	Processed int64 // entries handled (snapshots, invalid folders, symlinks, crawl folders)
	Migrated  int64 // snapshots whose folders moved
	Indexed   int64 // snapshots already at their path whose index.jsonl was rewritten in place
	Created   int64 // snapshots that had no folder (a database row never captured): a new one holds their index.jsonl
	Current   int64 // snapshots already at the current layout
	Symlinks  int64 // archive/<timestamp> symlinks removed
	Invalid   int64 // folders moved to invalid/
	Skipped   int64 // entries left alone (see the plan for why)
	Failed    int64 // entries that failed; their sources are intact
	Crawls    int64 // crawl folders renamed to compact ids
	Merged    int64 // second folders of snapshots merged into the first's destination
	Recovered int64 // interrupted entries of an earlier run finished or rolled back
	Files     int64 // files moved
	Bytes     int64 // bytes moved
	// BytesBy splits Bytes by what moved them: "migrated" snapshots,
	// "merged" second folders, "invalid" folders.
	BytesBy map[string]int64
	// Copied is the part of Bytes that was copied and verified (across
	// filesystems, or merged into a folder); the rest moved by rename.
	Copied int64
	// Failures lists each failed entry with its error.
	Failures []Failure
	// Resume is the --resume value that continues an interrupted run.
	Resume string
}

// Failure is one entry that could not be migrated.
type Failure struct {
	Source string
	Err    error
}

// Work reports whether the run changed anything.
func (s *Stats) Work() int64 {
	return s.Migrated + s.Indexed + s.Created + s.Symlinks + s.Invalid + s.Crawls + s.Merged + s.Recovered
}

// WriteTable writes the final summary table of a run that ended with err
// (what Run returned): its first line says how the run ended.
func (s *Stats) WriteTable(w io.Writer, err error) error {
	rows := []struct {
		k string
		v int64
	}{
		{"Processed", s.Processed}, {"Migrated", s.Migrated}, {"Indexed", s.Indexed}, {"Created", s.Created}, {"Already current", s.Current},
		{"Removed symlinks", s.Symlinks}, {"Invalid", s.Invalid}, {"Skipped", s.Skipped},
		{"Failed", s.Failed},
	}
	var b strings.Builder
	switch {
	case err == nil:
		b.WriteString("[√] Migration complete\n")
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		b.WriteString("[!] Migration interrupted: what is done is consistent\n")
	case errors.Is(err, archive.ErrPartial):
		fmt.Fprintf(&b, "[X] Migration finished with %d failed entries (their folders are intact)\n", s.Failed)
	default:
		b.WriteString("[X] Migration stopped by an error\n")
	}
	for _, r := range rows {
		fmt.Fprintf(&b, "    %-18s %d\n", r.k+":", r.v)
	}
	if s.Crawls > 0 {
		fmt.Fprintf(&b, "    %-18s %d\n", "Renamed crawls:", s.Crawls)
	}
	if s.Merged > 0 {
		fmt.Fprintf(&b, "    %-18s %d\n", "Merged folders:", s.Merged)
	}
	if s.Recovered > 0 {
		fmt.Fprintf(&b, "    %-18s %d\n", "Recovered:", s.Recovered)
	}
	fmt.Fprintf(&b, "    %-18s %s (%d files)\n", "Bytes moved:", archive.HumanBytes(s.Bytes), s.Files)
	if s.Bytes > 0 {
		var parts []string
		for _, k := range []string{"migrated", "merged", "invalid"} {
			if n := s.BytesBy[k]; n > 0 {
				parts = append(parts, k+" "+archive.HumanBytes(n))
			}
		}
		fmt.Fprintf(&b, "    %-18s %s; %s copied and verified, the rest renamed\n", "", strings.Join(parts, ", "), archive.HumanBytes(s.Copied))
	}
	_, werr := io.WriteString(w, b.String())
	return werr
}
