package migrate

import (
	"fmt"
	"strings"
	"time"

	"github.com/folio-archive/folio/archive"
)

func parseInt(s string) int64 {
	var n int64
	s = strings.TrimSpace(s)
	if s == "" {
		return 0
	}
	if _, err := fmt.Sscan(s, &n); err != nil {
		var f float64
		if _, err := fmt.Sscan(s, &f); err == nil {
			return int64(f)
		}
	}
	return n
}

// parseDBTime reads a datetime column. Django writes "YYYY-MM-DD
// HH:MM:SS[.ffffff]" in UTC, which is parsed here without allocating;
// every other form goes to archive.ParseTime.
func parseDBTime(s string) (time.Time, bool) {
	if len(s) == 19 || (len(s) > 20 && len(s) <= 26 && s[19] == '.') {
		if t, ok := djangoTime(s); ok {
			return t, true
		}
	}
	return archive.ParseTime(s)
}

func djangoTime(s string) (time.Time, bool) {
	num := func(i, n int) (int, bool) {
		v := 0
		for j := i; j < i+n; j++ {
			c := s[j]
			if c < '0' || c > '9' {
				return 0, false
			}
			v = v*10 + int(c-'0')
		}
		return v, true
	}
	if s[4] != '-' || s[7] != '-' || (s[10] != ' ' && s[10] != 'T') || s[13] != ':' || s[16] != ':' {
		return time.Time{}, false
	}
	var f [6]int
	for i, pos := range [6][2]int{{0, 4}, {5, 2}, {8, 2}, {11, 2}, {14, 2}, {17, 2}} {
		v, ok := num(pos[0], pos[1])
		if !ok {
			return time.Time{}, false
		}
		f[i] = v
	}
	micro := 0
	if len(s) > 20 {
		frac := s[20:]
		v, ok := num(20, len(frac))
		if !ok {
			return time.Time{}, false
		}
		for k := len(frac); k < 6; k++ {
			v *= 10
		}
		micro = v
	}
	if f[1] < 1 || f[1] > 12 || f[2] < 1 || f[2] > 31 || f[3] > 23 || f[4] > 59 || f[5] > 59 {
		return time.Time{}, false
	}
	t := time.Date(f[0], time.Month(f[1]), f[2], f[3], f[4], f[5], micro*1000, time.UTC)
	if t.Day() != f[2] {
		return time.Time{}, false // Feb 30 and the like
	}
	return t, true
}
