package input

import (
	"errors"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxURLBytes is the longest URL folio accepts.
const maxURLBytes = 2048

// Validate checks one URL as folio accepts it, as ArchiveBox does: http
// or https with a host, or file with an absolute path on this machine (no
// host, or localhost); no white space or control characters, valid UTF-8,
// at most 2048 bytes. It returns the URL trimmed of surrounding space and
// otherwise unchanged.
func Validate(raw string) (string, error) {
	s, u, err := check(raw)
	if err != nil {
		return "", err
	}
	if strings.EqualFold(u.Scheme, "file") {
		if h := u.Host; h != "" && !strings.EqualFold(h, "localhost") {
			return "", errors.New("a file URL of another machine (" + h + "); only local files can be captured")
		}
		if !strings.HasPrefix(u.Path, "/") {
			return "", errors.New("a file URL without an absolute path")
		}
		return s, nil
	}
	return web(s, u, "not an http(s) or file URL")
}

// ValidateWeb is Validate for http(s) URLs alone: the links a captured
// page holds, which must never lead a capture to the local disk.
func ValidateWeb(raw string) (string, error) {
	s, u, err := check(raw)
	if err != nil {
		return "", err
	}
	return web(s, u, "not an http(s) URL")
}

func check(raw string) (string, *url.URL, error) {
	s := strings.TrimSpace(raw)
	switch {
	case s == "":
		return "", nil, errors.New("empty URL")
	case len(s) > maxURLBytes:
		return "", nil, errors.New("longer than 2048 bytes")
	case !utf8.ValidString(s):
		return "", nil, errors.New("not valid UTF-8")
	case strings.IndexFunc(s, unicode.IsSpace) >= 0:
		return "", nil, errors.New("contains whitespace")
	case strings.IndexFunc(s, unicode.IsControl) >= 0:
		return "", nil, errors.New("contains a control character")
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", nil, errors.New("malformed URL")
	}
	return s, u, nil
}

func web(s string, u *url.URL, notWeb string) (string, error) {
	if scheme := strings.ToLower(u.Scheme); scheme != "http" && scheme != "https" {
		return "", errors.New(notWeb)
	}
	if u.Hostname() == "" {
		return "", errors.New("no host")
	}
	return s, nil
}
