package archive

import (
	"strconv"
	"unicode/utf8"
)

// Printable returns s as it is when every character of it prints, else
// quoted as Go quotes strings ("a\nb"): a folder name holding a newline
// or a terminal escape must not break or forge a line of output.
func Printable(s string) string {
	if !utf8.ValidString(s) {
		return strconv.Quote(s)
	}
	for _, r := range s {
		if !strconv.IsPrint(r) {
			return strconv.Quote(s)
		}
	}
	return s
}
