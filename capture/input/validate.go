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

// Validate checks one URL as folio accepts it: http or https, with a host,
// no white space or control characters, valid UTF-8, at most 2048 bytes.
// It returns the URL trimmed of surrounding space and otherwise unchanged.
func Validate(raw string) (string, error) {
	s := strings.TrimSpace(raw)
	switch {
	case s == "":
		return "", errors.New("empty URL")
	case len(s) > maxURLBytes:
		return "", errors.New("longer than 2048 bytes")
	case !utf8.ValidString(s):
		return "", errors.New("not valid UTF-8")
	case strings.IndexFunc(s, unicode.IsSpace) >= 0:
		return "", errors.New("contains whitespace")
	case strings.IndexFunc(s, unicode.IsControl) >= 0:
		return "", errors.New("contains a control character")
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", errors.New("malformed URL")
	}
	if scheme := strings.ToLower(u.Scheme); scheme != "http" && scheme != "https" {
		return "", errors.New("not an http(s) URL")
	}
	if u.Hostname() == "" {
		return "", errors.New("no host")
	}
	return s, nil
}
