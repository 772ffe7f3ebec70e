package migrate

import (
	"crypto/sha256"
	"encoding/hex"
	"html"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/layout"
)

// cleanTitle normalises a title candidate as ArchiveBox's reconciliation
// does: stripped non-empty lines joined with a space, HTML entities
// decoded; it reports false for titles ArchiveBox rejects: empty,
// "pending...", "no title found", "unable to detect page title" (any case),
// the URL itself, anything starting with http:// or https://, and paths
// ending in .txt.
func cleanTitle(title, url string) (string, bool) {
	var parts []string
	for _, l := range strings.Split(html.UnescapeString(title), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			parts = append(parts, l)
		}
	}
	t := strings.Join(parts, " ")
	low := strings.ToLower(t)
	switch {
	case t == "", low == "pending...", low == "no title found", low == "unable to detect page title",
		t == strings.TrimSpace(url),
		strings.HasPrefix(low, "http://"), strings.HasPrefix(low, "https://"),
		strings.Contains(t, "/") && strings.HasSuffix(low, ".txt"):
		return "", false
	}
	return t, true
}

// bestTitle keeps the longest valid candidate (the first on a tie); "" when
// none is valid.
func bestTitle(url string, candidates ...string) string {
	best := ""
	for _, c := range candidates {
		if t, ok := cleanTitle(c, url); ok && utf8.RuneCountInString(t) > utf8.RuneCountInString(best) {
			best = t
		}
	}
	return best
}

// resultTitle is the newest succeeded title result's output, the fallback
// when no index or database title is valid.
func resultTitle(url string, rs []archive.Result) string {
	var newest *archive.Result
	for i := range rs {
		r := &rs[i]
		if r.Plugin == "title" && r.Status == archive.StatusSucceeded && r.OutputStr != "" {
			if newest == nil || !r.StartTS.Before(newest.StartTS) {
				newest = r
			}
		}
	}
	if newest == nil {
		return ""
	}
	return bestTitle(url, newest.OutputStr)
}

// sqliteReal is SQLite's CAST(text AS REAL): the longest numeric prefix
// after leading spaces, 0 when there is none.
func sqliteReal(s string) float64 {
	s = strings.TrimLeft(s, " \t\n\r\f\v")
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	digits := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
		digits++
	}
	if i < len(s) && s[i] == '.' {
		j := i + 1
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
			digits++
		}
		i = j
	}
	if digits == 0 {
		return 0
	}
	end := i
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		k := j
		for k < len(s) && s[k] >= '0' && s[k] <= '9' {
			k++
		}
		if k > j {
			end = k
		}
	}
	f, err := strconv.ParseFloat(strings.TrimSuffix(s[:end], "."), 64)
	if err != nil {
		return 0
	}
	return f
}

// legacyBookmarkedAt is bookmarked_at of a 0.4-0.7 row after ArchiveBox's
// 0.9 migration: datetime(timestamp, 'unixepoch') (whole seconds) when
// CAST(timestamp AS REAL) lies in [788918400, 2082758400], else added, else
// now.
func legacyBookmarkedAt(ts string, added, now time.Time) time.Time {
	f := sqliteReal(ts)
	if f >= layout.MinLegacyTimestamp && f <= layout.MaxLegacyTimestamp {
		return time.Unix(int64(math.Floor(f)), 0).UTC()
	}
	if !added.IsZero() {
		return added
	}
	return now
}

// snapshotStatus normalises a snapshot's lifecycle status: the four states
// are kept, anything else (including none, as in 0.4-0.7 databases that
// had no status column) is sealed, which is what ArchiveBox's migration
// leaves.
func snapshotStatus(s string) string {
	switch s = strings.ToLower(strings.TrimSpace(s)); s {
	case "queued", "started", "sealed", "paused":
		return s
	}
	return "sealed"
}

// collapseResults keeps one result per (plugin, hook_name): the later one
// (by start_ts; by position when the times are equal or missing), so a
// failed try followed by a successful retry becomes one succeeded result.
// The order of first appearance is kept.
func collapseResults(rs []archive.Result) []archive.Result {
	out := make([]archive.Result, 0, len(rs))
	for _, r := range rs {
		// A snapshot has a handful of results: a linear search beats a map.
		i := slices.IndexFunc(out, func(o archive.Result) bool { return o.Plugin == r.Plugin && o.HookName == r.HookName })
		if i < 0 {
			out = append(out, r)
			continue
		}
		if !r.StartTS.Before(out[i].StartTS) || r.StartTS.IsZero() || out[i].StartTS.IsZero() {
			out[i] = r
		}
	}
	return out
}

// mergeResults combines database results (all kept, they are the truth)
// with results from the folder's index, collapsed per (plugin, hook_name):
// an index result whose key the database has (or, for a legacy entry
// without hook_name, whose plugin it has) only fills fields the newest
// database row of that key leaves empty; the others are added. Every
// result gets snapshot id sid, a normalised status and an id: its own,
// else one derived from the snapshot and the result, the same on every
// scan, so a rerun after an interrupted migration names the results it
// already wrote the same way.
func mergeResults(sid string, db, idx []archive.Result) []archive.Result {
	out := make([]archive.Result, len(db), len(db)+len(idx))
	copy(out, db)
	if len(idx) > 0 {
		for _, r := range collapseResults(idx) {
			// The newest database row of the same (plugin, hook_name);
			// legacy index entries name no hook and describe the plugin's
			// result, whatever hook the database recorded.
			i := lastIndex(out[:len(db)], func(o archive.Result) bool { return o.Plugin == r.Plugin && o.HookName == r.HookName })
			if i < 0 && r.HookName == "" {
				i = lastIndex(out[:len(db)], func(o archive.Result) bool { return o.Plugin == r.Plugin })
			}
			if i >= 0 {
				fillResult(&out[i], r)
				continue
			}
			out = append(out, r)
		}
	}
	for i := range out {
		r := &out[i]
		r.SnapshotID = sid
		if id, ok := layout.ParseID(r.ID); ok {
			r.ID = id
		} else {
			r.ID = derivedID(sid, "index", r.Plugin, r.HookName, archive.IsoTime(r.StartTS), strconv.Itoa(i))
		}
		r.Status = archive.NormalizeStatus(r.Status)
		r.Plugin = truncPlugin(r.Plugin)
	}
	if len(db) > 0 {
		sortResults(out)
	}
	return out
}

func fillResult(dst *archive.Result, src archive.Result) {
	if dst.OutputStr == "" {
		dst.OutputStr = src.OutputStr
	}
	if len(dst.Cmd) == 0 {
		dst.Cmd = src.Cmd
	}
	if dst.Pwd == "" {
		dst.Pwd = src.Pwd
	}
	if dst.CmdVersion == "" {
		dst.CmdVersion = src.CmdVersion
	}
	if dst.StartTS.IsZero() {
		dst.StartTS = src.StartTS
	}
	if dst.EndTS.IsZero() {
		dst.EndTS = src.EndTS
	}
	if len(dst.OutputFiles) == 0 {
		dst.OutputFiles = src.OutputFiles
	}
	if len(dst.OutputJSON) == 0 {
		dst.OutputJSON = src.OutputJSON
	}
}

// waybackURL recovers the original URL from the first line of
// archive.org.txt: "https://web.archive.org/web/<ts>/<original>", also
// "<ts>id_/<original>" and similar forms with one more segment. It returns
// "" when the line is not a Wayback URL with an http(s) original.
func waybackURL(firstLine string) string {
	l := strings.TrimSpace(firstLine)
	low := strings.ToLower(l)
	if !strings.HasPrefix(low, "http://") && !strings.HasPrefix(low, "https://") {
		return ""
	}
	i := strings.Index(low, "://web.archive.org/web/")
	if i < 0 {
		return ""
	}
	rest := l[i+len("://web.archive.org/web/"):]
	for tries := 0; tries < 2; tries++ {
		seg, after, ok := strings.Cut(rest, "/")
		if !ok || seg == "" {
			return ""
		}
		rest = after
		lr := strings.ToLower(rest)
		if strings.HasPrefix(lr, "http://") || strings.HasPrefix(lr, "https://") {
			return rest
		}
	}
	return ""
}

// truncPlugin cuts a plugin name to the 32 characters of the plugin column.
func truncPlugin(p string) string {
	n := 0
	for i := range p {
		if n == 32 {
			return p[:i]
		}
		n++
	}
	return p
}

// derivedID makes a stable id for a record that has none: the first 16
// bytes of sha256 over its parts, marked as an RFC 9562 version 8 UUID.
func derivedID(parts ...string) string {
	h := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	h[6] = 0x80 | h[6]&0x0f
	h[8] = 0x80 | h[8]&0x3f
	return hex.EncodeToString(h[:16])
}

func lastIndex(rs []archive.Result, match func(archive.Result) bool) int {
	for i := len(rs) - 1; i >= 0; i-- {
		if match(rs[i]) {
			return i
		}
	}
	return -1
}
