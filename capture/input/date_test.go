package input

import (
	"testing"
	"time"
)

func TestEpochDate(t *testing.T) {
	when := time.Date(2024, 4, 2, 18, 5, 0, 0, time.UTC)
	tests := []struct {
		v    float64
		want time.Time
	}{
		{1712081100, when},
		{1712081100.5, when.Add(500 * time.Millisecond)},
		{1712081100000, when},
		{1712081100000000, when},
		{1712081100 - macEpoch, when},
		{788918400, time.Date(1995, 1, 1, 0, 0, 0, 0, time.UTC)},
		{2082758399, time.Date(2035, 12, 31, 23, 59, 59, 0, time.UTC)},
		{3000000000, time.Time{}},
		{0, time.Time{}},
		{-5, time.Time{}},
	}
	for _, tt := range tests {
		if got := epochDate(tt.v); !got.Equal(tt.want) {
			t.Errorf("epochDate(%v) = %v, want %v", tt.v, got, tt.want)
		}
	}
}

func TestTextDates(t *testing.T) {
	when := time.Date(2024, 4, 2, 18, 5, 0, 0, time.UTC)
	tests := []struct {
		parse func(string) time.Time
		in    string
		want  time.Time
	}{
		{rfc822Date, "Tue, 02 Apr 2024 18:05:00 GMT", when},
		{rfc822Date, "Tue, 2 Apr 2024 18:05:00 +0000", when},
		{rfc822Date, "Tue, 02 Apr 2024 14:05:00 EDT", when},
		{rfc822Date, "Tue, 02 Apr 2024 10:05:00 pst", when},
		{rfc822Date, "02 Apr 2024 20:05 +0200", when},
		{rfc822Date, "Tue, 02 Apr 24 18:05:00 Z", when},
		{rfc822Date, "2 April 2024 18:05:00 +0000", when},
		{rfc822Date, "Tue, 02 Apr 2024 18:05:00 XYZ", when},
		{rfc822Date, "2024-04-02T18:05:00Z", when},
		{rfc822Date, "yesterday", time.Time{}},
		{isoDate, "2024-04-02T18:05:00Z", when},
		{isoDate, "2024-04-02T20:05:00.000+02:00", when},
		{isoDate, "2024-04-02T18:05:00", when},
		{isoDate, "2024-04-02T18:05:00+0000", when},
		{isoDate, "2024-04-02 18:05:00", when},
		{isoDate, "2024-04-02 18:05:00.123456", when.Add(123456 * time.Microsecond)},
		{isoDate, "2024-04-02 19:05:00+01:00", when},
		{isoDate, "2024-04-02", time.Date(2024, 4, 2, 0, 0, 0, 0, time.UTC)},
		{isoDate, "02/04/2024", time.Time{}},
		{epochString, " 1712081100 ", when},
		{epochString, "nope", time.Time{}},
	}
	for _, tt := range tests {
		if got := tt.parse(tt.in); !got.Equal(tt.want) {
			t.Errorf("parse %q = %v, want %v", tt.in, got, tt.want)
		}
	}
}
