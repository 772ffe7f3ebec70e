package main

import (
	"errors"
	"strings"

	"github.com/spf13/pflag"

	"github.com/folio-archive/folio/archive/catalog"
)

// selection is the choice of snapshots that list, export and the other
// commands reading the catalog share: PATTERN arguments and the filter
// flags, turned into a catalog.Query.
type selection struct {
	q             *catalog.Query
	before, after string
}

// addSelectionFlags registers the filter flags on f, filling q: how
// PATTERN arguments match, and addFilterFlags.
func addSelectionFlags(f *pflag.FlagSet, q *catalog.Query) *selection {
	f.StringVarP(&q.FilterType, "filter-type", "f", catalog.FilterSubstring, "how patterns match: "+strings.Join(catalog.FilterTypes(), "|"))
	return addFilterFlags(f, q)
}

// addFilterFlags registers the filters on tags, status and time, for
// commands whose arguments are not URL patterns.
func addFilterFlags(f *pflag.FlagSet, q *catalog.Query) *selection {
	s := &selection{q: q}
	f.StringArrayVarP(&q.Tags, "tag", "t", nil, "only snapshots with this tag (repeatable: all must be present)")
	f.StringVarP(&q.Status, "status", "s", "", "only snapshots with this status or state:\n  "+strings.Join(catalog.StatusMeanings(), "\n  "))
	f.StringVar(&s.before, "before", "", "only snapshots bookmarked before this time (unix seconds or ISO date/time)")
	f.StringVar(&s.after, "after", "", "only snapshots bookmarked after this time (unix seconds or ISO date/time)")
	return s
}

// resolve sets the patterns and the times and checks the query; every
// error is a usage error naming the flag.
func (s *selection) resolve(patterns []string) error {
	s.q.Patterns = patterns
	var err error
	if s.q.Before, err = parseWhen("--before", s.before); err != nil {
		return err
	}
	if s.q.After, err = parseWhen("--after", s.after); err != nil {
		return err
	}
	if !s.q.Before.IsZero() && !s.q.After.IsZero() && !s.q.After.Before(s.q.Before) {
		return usagef("--after %s is not before --before %s: no snapshot can match", s.after, s.before)
	}
	return queryUsage(s.q.Validate())
}

// queryUsage makes a catalog.ErrQuery a usage error saying what is wrong
// with the flag or pattern; other errors pass through.
func queryUsage(err error) error {
	if err == nil || !errors.Is(err, catalog.ErrQuery) {
		return err
	}
	return usagef("%s", strings.TrimPrefix(err.Error(), catalog.ErrQuery.Error()+": "))
}

// narrowed reports whether the selection picks less than every snapshot:
// a pattern or a filter was given.
func (s *selection) narrowed() bool {
	q := s.q
	return len(q.Patterns) > 0 || len(q.Tags) > 0 || q.Status != "" || s.before != "" || s.after != ""
}
