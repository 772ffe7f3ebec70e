package export

import (
	"bytes"
	"encoding/json"
	"testing"
)

// jsStringRunes is appendJSString rune by rune, as it was written first:
// the reference the run-copying one must match byte for byte.
func jsStringRunes(b *bytes.Buffer, s string) {
	const hex = "0123456789abcdef"
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == '<' || r == '>' || r == '&' || r == 0x2028 || r == 0x2029 || r == 0x7f:
			b.WriteString(`\u`)
			b.WriteByte(hex[r>>12&0xf])
			b.WriteByte(hex[r>>8&0xf])
			b.WriteByte(hex[r>>4&0xf])
			b.WriteByte(hex[r&0xf])
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
}

var jsStringSeeds = []string{
	"", "plain words", `a "quoted" \ path`, "<script>&amp;</script>", "tab\tnew\nline\x00\x1f\x7f",
	"münchen – café ☕ 𝄞", "line\u2028sep\u2029para", "bad \xff\xfe bytes \xe2\x82", "\xef\xbf\xbd kept", "cut \xe2\x80",
	"\u2027\u202a", "ends with \\",
}

func TestAppendJSString(t *testing.T) {
	for _, s := range jsStringSeeds {
		sameAsReference(t, "appendJSString", appendJSString, jsStringRunes, s)
		var got bytes.Buffer
		appendJSString(&got, s)
		var back string
		if err := json.Unmarshal(got.Bytes(), &back); err != nil {
			t.Errorf("appendJSString(%q) = %s: not JSON: %v", s, got.String(), err)
		}
	}
}

func FuzzAppendJSString(f *testing.F) {
	for _, s := range jsStringSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sameAsReference(t, "appendJSString", appendJSString, jsStringRunes, s)
	})
}

// sameAsReference checks that esc writes s as ref, the form that wrote a
// byte or rune at a time, does.
func sameAsReference(t *testing.T, name string, esc, ref func(*bytes.Buffer, string), s string) {
	t.Helper()
	var got, want bytes.Buffer
	esc(&got, s)
	ref(&want, s)
	if got.String() != want.String() {
		t.Fatalf("%s(%q) = %q, want %q", name, s, got.String(), want.String())
	}
}
