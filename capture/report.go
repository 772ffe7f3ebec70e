package capture

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/plugins"
)

// failures says how many snapshots failed and how many are partial.
func (s *Stats) failures() string {
	var parts []string
	if s.Failed > 0 {
		parts = append(parts, plural(s.Failed, "snapshot")+" failed (nothing archived)")
	}
	if s.Partial > 0 {
		parts = append(parts, plural(s.Partial, "snapshot")+" partial (archived, some plugin failed)")
	}
	return strings.Join(parts, ", ")
}

// plural says "1 snapshot" or "3 snapshots".
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// WriteTable writes the run's summary: what was added, and per plugin how
// many results of each status.
func (s *Stats) WriteTable(w io.Writer, err error) error {
	var b strings.Builder
	switch {
	case err == nil:
		b.WriteString("[√] Add complete\n")
	case errors.Is(err, context.Canceled):
		b.WriteString("[!] Add interrupted: finished snapshots are sealed, the rest wait for 'folio add --resume'\n")
	case errors.Is(err, archive.ErrPartial) && s.Failed+s.Partial == 0:
		fmt.Fprintf(&b, "[X] Add finished: %s could not be given a folder\n", plural(s.Refused, "URL"))
	case errors.Is(err, archive.ErrPartial):
		fmt.Fprintf(&b, "[X] Add finished: %s\n", s.failures())
	default:
		b.WriteString("[X] Add stopped by an error\n")
	}
	row := func(k string, v any) { fmt.Fprintf(&b, "    %-18s %v\n", k+":", v) }
	row("Created", s.Created)
	if s.Refused > 0 {
		row("Refused", s.Refused)
	}
	if s.Resumed > 0 {
		row("Resumed", s.Resumed)
	}
	if s.Updated > 0 {
		row("Updated", s.Updated)
	}
	row("Sealed", s.Sealed)
	row("Failed", s.Failed)
	row("Partial", s.Partial)
	if s.Queued > 0 {
		row("Left queued", s.Queued)
	}
	if s.Existing > 0 {
		row("Already present", s.Existing)
	}
	if s.Invalid > 0 {
		row("Invalid input", s.Invalid)
	}
	if s.SourceFile != "" {
		row("Input kept in", s.SourceFile)
	}
	switch {
	case s.Failed > 0:
		row("Retry with", "folio update --status failed")
	case s.Partial > 0:
		row("Retry with", "folio update --status partial")
	}
	writePluginTable(&b, s.Results)
	_, werr := io.WriteString(w, b.String())
	return werr
}

// writePluginTable writes how many results of each status every plugin
// had, for the summaries of add and update.
func writePluginTable(b *strings.Builder, results map[string]map[string]int) {
	if len(results) > 0 {
		names := make([]string, 0, len(results))
		for n := range results {
			names = append(names, n)
		}
		sort.Strings(names)
		statuses := []string{plugins.Succeeded, plugins.NoResults, plugins.Skipped, plugins.Failed}
		fmt.Fprintf(b, "\n    %-14s", "PLUGIN")
		for _, st := range statuses {
			fmt.Fprintf(b, " %10s", strings.ToUpper(st))
		}
		b.WriteByte('\n')
		for _, n := range names {
			fmt.Fprintf(b, "    %-14s", n)
			for _, st := range statuses {
				fmt.Fprintf(b, " %10d", results[n][st])
			}
			b.WriteByte('\n')
		}
	}
}
