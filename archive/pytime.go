package archive

import (
	"strconv"
	"time"
)

// IsoTime formats t as Python's datetime.isoformat() does for an aware UTC
// datetime: microseconds only when non-zero, offset as +00:00.
func IsoTime(t time.Time) string {
	t = t.UTC()
	if t.Nanosecond()/1000 != 0 {
		return t.Format("2006-01-02T15:04:05.000000") + "+00:00"
	}
	return t.Format("2006-01-02T15:04:05") + "+00:00"
}

// ParseTime accepts what ArchiveBox ever wrote for a datetime: ISO 8601
// with "T" or a space, with or without fractions, with "Z", an offset or
// naive (read as UTC), and unix seconds as a string or number.
func ParseTime(s string) (time.Time, bool) {
	if s == "" || s == "null" || s == "None" {
		return time.Time{}, false
	}
	for _, layout := range timeLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), true
		}
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil && f > 0 && f < 1e11 {
		sec := int64(f)
		return time.Unix(sec, int64((f-float64(sec))*1e6)*1000).UTC(), true
	}
	return time.Time{}, false
}

var timeLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04Z07:00",
	"2006-01-02T15:04",
	"2006-01-02",
}
