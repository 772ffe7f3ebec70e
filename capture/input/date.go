package input

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// Dates outside [minDate, maxDate) are taken as a wrong guess of the unit.
var (
	minDate = time.Date(1995, 1, 1, 0, 0, 0, 0, time.UTC)
	maxDate = time.Date(2036, 1, 1, 0, 0, 0, 0, time.UTC)
)

// macEpoch is 2001-01-01 in unix seconds, the epoch of Safari and Mac
// bookmark dates.
const macEpoch = 978307200

// epochDate reads a number of unix seconds, milliseconds or microseconds, or
// Mac-2001 seconds, whichever lands in 1995-2035 (tried in that order). It
// returns the zero time when none does.
func epochDate(v float64) time.Time {
	if math.IsNaN(v) || v <= 0 {
		return time.Time{}
	}
	for _, c := range []struct{ scale, offset float64 }{
		{1, 0}, {1e3, 0}, {1e6, 0}, {1, macEpoch},
	} {
		sec := v/c.scale + c.offset
		if sec < float64(minDate.Unix()) || sec >= float64(maxDate.Unix()) {
			continue
		}
		whole, frac := math.Modf(sec)
		return time.Unix(int64(whole), int64(frac*1e9)).UTC()
	}
	return time.Time{}
}

// epochString is epochDate for text such as "1712081100" or "1712081100.5".
func epochString(s string) time.Time {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		return time.Time{}
	}
	return epochDate(v)
}

// isoLayouts are the ISO 8601 shapes folio reads. Fractional seconds need no
// layout of their own: time.Parse accepts them after the seconds.
var isoLayouts = []string{
	time.RFC3339,
	"2006-01-02T15:04:05Z0700",
	"2006-01-02T15:04:05",
	"2006-01-02T15:04Z07:00",
	"2006-01-02T15:04",
	"2006-01-02 15:04:05Z07:00",
	"2006-01-02 15:04:05 Z07:00",
	"2006-01-02 15:04:05 -0700",
	"2006-01-02 15:04:05",
	"2006-01-02 15:04",
	"2006-01-02",
}

// isoDate reads an ISO 8601 or RFC 3339 date; one without a zone is UTC.
// It returns the zero time when s is none of those.
func isoDate(s string) time.Time {
	s = strings.TrimSpace(s)
	for _, layout := range isoLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t
		}
	}
	return time.Time{}
}

// rfc822Zones are the zone names of RFC 822 and the US ones feeds use; Go
// alone would read "EST" as UTC unless the local zone happens to know it.
var rfc822Zones = map[string]string{
	"UT": "+0000", "UTC": "+0000", "GMT": "+0000", "Z": "+0000",
	"EST": "-0500", "EDT": "-0400", "CST": "-0600", "CDT": "-0500",
	"MST": "-0700", "MDT": "-0600", "PST": "-0800", "PDT": "-0700",
}

// rfc822Layouts follow the weekday, which rfc822Date drops first.
var rfc822Layouts = []string{
	"2 Jan 2006 15:04:05 -0700",
	"2 Jan 2006 15:04 -0700",
	"2 Jan 06 15:04:05 -0700",
	"2 Jan 06 15:04 -0700",
	"2 January 2006 15:04:05 -0700",
	"2 Jan 2006 15:04:05 MST",
	"2 Jan 2006 15:04:05",
	"2 Jan 2006",
}

// rfc822Date reads an RSS pubDate: RFC 822 or RFC 1123 with or without the
// weekday, with a numeric or named zone, two- or four-digit year. It falls
// back to ISO 8601, which some feeds use, and returns the zero time when s
// is neither.
func rfc822Date(s string) time.Time {
	fields := strings.Fields(s)
	if len(fields) > 0 && strings.HasSuffix(fields[0], ",") {
		fields = fields[1:]
	}
	if n := len(fields); n > 0 {
		if off, ok := rfc822Zones[strings.ToUpper(fields[n-1])]; ok {
			fields[n-1] = off
		}
	}
	norm := strings.Join(fields, " ")
	for _, layout := range rfc822Layouts {
		// In UTC an unknown zone name reads as +0000 whatever the local zone.
		if t, err := time.ParseInLocation(layout, norm, time.UTC); err == nil {
			return t
		}
	}
	return isoDate(s)
}
