package warc

import "testing"

func TestSURT(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"http://www.archive.org/goo/?a=2&b&a=1", "org,archive)/goo?a=1&a=2&b"},
		{"https://Example.COM/", "com,example)/"},
		{"https://example.com", "com,example)/"},
		{"http://example.com:80/a", "com,example)/a"},
		{"https://example.com:443/a", "com,example)/a"},
		{"http://example.com:8080/a", "com,example:8080)/a"},
		{"http://127.0.0.1:41234/page.html", "1,0,0,127:41234)/page.html"},
		{"http://user:pw@www2.example.com/Path/To/?Q=1#frag", "com,example)/path/to?q=1"},
		{"http://example.com/a%20b?x=%2F", "com,example)/a%20b?x=%2f"},
		{"http://[::1]:8000/x", "[::1]:8000)/x"},
		{"http://example.com/?", "com,example)/"},
		{"dns:example.com", "dns:example.com"},
		{"urn:X-Test", "urn:x-test"},
	} {
		if got := SURT(c.in); got != c.want {
			t.Errorf("SURT(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
