package catalog

import "testing"

// TestPlainMatch: what MatchWords writes runs in metasearch; anything
// else, which may name a column, does not.
func TestPlainMatch(t *testing.T) {
	for _, words := range []string{"fog", "fog signal", `"fog signal" x`, "pre*", `a"b`, "c++ don't", `say "hi`} {
		if expr := MatchWords(words); !plainMatch(expr) {
			t.Errorf("plainMatch(%s) (MatchWords(%q)) = false", expr, words)
		}
	}
	for _, expr := range []string{"", "fog", `body:"fog"`, `"fog" OR "x"`, `{body} : "fog"`, `"fog"  "x"`, `"fog`, `"fog"x`, `"fog" `, `^"fog"`, `"fog"**`} {
		if plainMatch(expr) {
			t.Errorf("plainMatch(%s) = true", expr)
		}
	}
}

// FuzzPlainMatch: an expression plainMatch lets through is one FTS5 reads
// as phrases only, so it holds no column name: every quote is closed, and
// outside the quotes there are only single spaces and a * after a phrase.
func FuzzPlainMatch(f *testing.F) {
	f.Add("fog signal")
	f.Add(`a"b c*`)
	f.Fuzz(func(t *testing.T, words string) {
		expr := MatchWords(words)
		if expr != "" && !plainMatch(expr) {
			t.Errorf("MatchWords(%q) = %s, not plain", words, expr)
		}
		if !plainMatch(words) {
			return
		}
		in := false
		for i := 0; i < len(words); i++ {
			switch c := words[i]; {
			case c == '"':
				in = !in
			case in:
			case c == ' ' || c == '*':
			default:
				t.Fatalf("plainMatch(%q): %q outside a phrase", words, c)
			}
		}
		if in {
			t.Fatalf("plainMatch(%q): a phrase left open", words)
		}
	})
}
