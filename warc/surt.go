package warc

import (
	"net"
	"net/url"
	"regexp"
	"sort"
	"strings"
)

// wwwPrefix is the "www." (or "www2." ...) SURT drops from a host.
var wwwPrefix = regexp.MustCompile(`^www\d*\.`)

// SURT returns the Sort-friendly URI Reordering Transform of an http(s)
// URL as pywb and warcio's indexers write it in CDXJ keys: scheme,
// user info, fragment and a default port dropped; the host lowercased,
// without "www.", its labels reversed and joined with commas (an IPv4
// address too); ")" then the path and query lowercased, a trailing slash
// dropped unless the path is "/", the query's arguments sorted. A URL of
// another scheme, or one that does not parse, is returned lowercased.
// (The session-id stripping of Python's surt is not done.)
func SURT(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return strings.ToLower(raw)
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	port := u.Port()
	if (u.Scheme == "http" && port == "80") || (u.Scheme == "https" && port == "443") {
		port = ""
	}
	var b strings.Builder
	if ip := net.ParseIP(host); ip != nil && ip.To4() == nil {
		b.WriteString("[" + host + "]") // IPv6: kept as written
	} else {
		labels := strings.Split(wwwPrefix.ReplaceAllString(host, ""), ".")
		for i := len(labels) - 1; i >= 0; i-- {
			b.WriteString(labels[i])
			if i > 0 {
				b.WriteByte(',')
			}
		}
	}
	if port != "" {
		b.WriteString(":" + port)
	}
	b.WriteByte(')')
	p := strings.ToLower(u.EscapedPath())
	if p == "" {
		p = "/"
	}
	if len(p) > 1 {
		p = strings.TrimSuffix(p, "/")
	}
	b.WriteString(p)
	if q := strings.ToLower(u.RawQuery); q != "" {
		args := strings.Split(q, "&")
		sort.Strings(args)
		b.WriteString("?" + strings.Join(args, "&"))
	}
	return b.String()
}
