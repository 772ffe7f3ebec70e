package main

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/archive/catalog"
)

// hiddenSnapshot is a folder of removed/hidden.jsonl with what its index
// says of it, for matching a selection.
type hiddenSnapshot struct {
	archive.Hidden
	snap  archive.Snapshot
	state string
}

// unhideSelected brings back the removed (hidden) snapshots the selection
// picks, as remove picks them in the catalog: PATTERNs by --filter-type
// (a pattern under exact also matches the folder path remove printed),
// --tag, --status, --before, --after, or --all. A selection that matches
// no removed snapshot is an error.
func unhideSelected(cmd *cobra.Command, e *env, coll *archive.Collection, sel *selection) error {
	hidden, err := coll.HiddenList()
	if err != nil {
		return err
	}
	match, err := hiddenMatcher(sel.q)
	if err != nil {
		return err
	}
	var dirs []string
	for _, h := range hidden {
		hs := hiddenSnapshot{Hidden: h, snap: archive.Snapshot{ID: h.ID, URL: h.URL}}
		if ix, _, err := archive.ReadIndex(filepath.Join(coll.Dir, filepath.FromSlash(h.Dir))); err == nil {
			if s, ok := ix.Snapshot(); ok {
				hs.snap = s
				hs.state = archive.StateOf(s, archive.Standing(ix.Results()))
			}
		}
		if match(hs) {
			dirs = append(dirs, h.Dir)
		}
	}
	if len(dirs) == 0 {
		what := "the selection"
		if len(sel.q.Patterns) > 0 {
			what = strings.Join(sel.q.Patterns, " ")
		}
		return fmt.Errorf("no removed snapshot matches %s: --unhide takes the folders or URLs remove printed (%s lists them)", what, archive.HiddenFile)
	}
	return unhide(cmd, e, coll, dirs)
}

// hiddenMatcher is q as a test of one hidden snapshot.
func hiddenMatcher(q *catalog.Query) (func(hiddenSnapshot) bool, error) {
	var res []*regexp.Regexp
	if q.FilterType == catalog.FilterRegex {
		for _, p := range q.Patterns {
			re, err := regexp.Compile("(?i)" + p)
			if err != nil {
				return nil, usagef("regex %q: %v", p, err)
			}
			res = append(res, re)
		}
	}
	pattern := func(h hiddenSnapshot, i int, p string) bool {
		url := h.snap.URL
		switch q.FilterType {
		case catalog.FilterSubstring:
			return strings.Contains(strings.ToLower(url), strings.ToLower(p))
		case catalog.FilterRegex:
			return res[i].MatchString(url)
		case catalog.FilterDomain:
			for _, scheme := range []string{"http://", "https://", "ftp://"} {
				if strings.HasPrefix(strings.ToLower(url), strings.ToLower(scheme+p)) {
					return true
				}
			}
			return false
		case catalog.FilterTag:
			return slices.Contains(h.snap.Tags, p)
		case catalog.FilterTimestamp:
			return h.snap.Timestamp == p
		}
		return url == p || h.Dir == strings.TrimSuffix(filepath.ToSlash(p), "/")
	}
	return func(h hiddenSnapshot) bool {
		if len(q.Patterns) > 0 && !slices.ContainsFunc(q.Patterns, func(p string) bool {
			return pattern(h, slices.Index(q.Patterns, p), p)
		}) {
			return false
		}
		for _, t := range q.Tags {
			if !slices.Contains(h.snap.Tags, strings.TrimSpace(t)) {
				return false
			}
		}
		if q.Status != "" && q.Status != h.snap.Status && q.Status != h.state {
			return false
		}
		when := h.snap.BookmarkedAt
		if when.IsZero() {
			when = h.snap.CreatedAt
		}
		return (q.Before.IsZero() || when.Before(q.Before)) && (q.After.IsZero() || when.After(q.After))
	}, nil
}
