package gen

import (
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/folio-archive/folio/archive"
)

// urlFor is the URL of position j; it depends on the seed and j only, so
// a later snapshot can capture an earlier URL again.
func urlFor(seed uint64, j int) string {
	r := rand.New(rand.NewPCG(^seed, uint64(j)))
	n := strconv.Itoa(j)
	switch roll := r.IntN(1000); {
	case roll < 30:
		return []string{
			"http://localhost:8080/app/item/" + n,
			"https://example.com:8443/secure/" + n,
			"http://127.0.0.1:8000/page/" + n,
			"http://example.com:80/explicit-port/" + n,
			"https://intranet.example.com:0/zero-port/" + n,
		}[r.IntN(5)]
	case roll < 45:
		return []string{
			"http://[::1]:8080/ipv6/" + n,
			"http://[2001:db8::1]/doc/" + n,
			"https://[2001:db8:85a3::8a2e:370:7334]:8443/x?id=" + n,
		}[r.IntN(3)]
	case roll < 75:
		return []string{
			"https://münchen.de/straße/" + n,
			"https://日本語.jp/記事/" + n,
			"https://xn--mnchen-3ya.de/punycode/" + n,
			"https://ÉCOLE.fr/Cours/" + n,
			"https://пример.рф/статья?id=" + n,
		}[r.IntN(5)]
	case roll < 105:
		return []string{
			"https://search.example.com/search?q=go+lang&page=" + n + "&sort=new",
			"https://video.example.com/watch?v=" + n + "&list=PL1#t=42",
			"https://example.com/a/b/?utm_source=rss&utm_medium=feed&id=" + n,
			"https://shop.example.com/item/" + n + "?color=red&size=xl#reviews",
		}[r.IntN(4)]
	case roll < 125:
		return []string{
			"https://example.org/files/100%25%20done/" + n,
			"https://en.example.org/wiki/Caf%C3%A9_" + n,
			"https://example.org/path%2Fwith%2Fslashes/" + n,
		}[r.IntN(3)]
	case roll < 145:
		return []string{
			"file:///home/alice/Documents/report-" + n + ".html",
			"file:///tmp/saved%20page%20" + n + ".htm",
		}[r.IntN(2)]
	case roll < 160:
		return "ftp://ftp.example.org/pub/release-" + n + ".tar.gz"
	case roll < 175:
		return "http://example.com./trailing-dot/" + n
	case roll < 185:
		return "https://user:secret@private.example.com/wiki/" + n
	case roll < 195:
		return "HTTPS://WWW.Example.COM/Upper/Case/" + n
	case roll < 200:
		return "data:text/plain;charset=utf-8,snapshot%20" + n
	}
	host := hosts[int(r.ExpFloat64()*40)%len(hosts)]
	var b strings.Builder
	b.WriteString("https://")
	b.WriteString(host)
	b.WriteByte('/')
	b.WriteString(sections[r.IntN(len(sections))])
	b.WriteByte('/')
	for range 1 + r.IntN(5) {
		b.WriteString(words[r.IntN(len(words))])
		b.WriteByte('-')
	}
	b.WriteString(n)
	if r.IntN(5) == 0 {
		b.WriteString("?ref=feed&id=" + n)
	}
	if r.IntN(10) == 0 {
		b.WriteString("#comments")
	}
	return b.String()
}

var hosts = func() []string {
	subs := []string{"www.", "blog.", "news.", "docs.", "", "m.", "en."}
	tlds := []string{".com", ".org", ".net", ".io", ".dev", ".co.uk", ".de"}
	out := make([]string, 0, 500)
	for k := range 500 {
		out = append(out, subs[k%len(subs)]+words[(k*7)%len(words)]+words[(k*13+3)%len(words)]+tlds[(k/7)%len(tlds)])
	}
	return out
}()

var sections = []string{"articles", "blog", "news", "docs", "wiki", "2019/04", "p", "en-us/library", "r/golang/comments"}

var words = strings.Fields(`archive web page snapshot river mountain coffee garden library
	network kernel compiler rust gopher python database index market weather museum
	history science music travel recipe bread paper bicycle ocean forest planet signal
	window shadow bridge harbor lantern meadow orbit pixel quartz saddle timber velvet
	whistle yellow zephyr amber basil cedar delta ember falcon glacier hazel iris jasper`)

func titleFor(r *rand.Rand, i int) string {
	n := strconv.Itoa(i)
	switch roll := r.IntN(100); {
	case roll < 5:
		return ""
	case roll < 13:
		return []string{
			"Über München — Straßenbahn & Öffis " + n,
			"日本語のページ " + n,
			"Привет, мир: заметка " + n,
			"مرحبا بالعالم " + n,
			"Ελληνικά και ελληνικά " + n,
			"Ça va? Crème brûlée à la française n°" + n,
		}[r.IntN(6)]
	case roll < 18:
		return []string{
			"🚀 Launch day 🎉 " + n,
			"Family 👨‍👩‍👧 and flags 🇯🇵🇫🇷 " + n,
			"math 𝔸𝔹ℂ and 🧪 lab notes " + n,
		}[r.IntN(3)]
	case roll < 23:
		return []string{
			`He said "hello" & 'goodbye' ` + n,
			`C:\Users\alice\path\to\file ` + n,
			`Quotes “curly” ‘single’ «guillemets» ` + n,
		}[r.IntN(3)]
	case roll < 27:
		return []string{
			`<script>alert("xss ` + n + `")</script>`,
			`</title><img src=x onerror=alert(1)> ` + n,
			`{{.Title}} {{template "x"}} ${title} ` + n,
		}[r.IntN(3)]
	case roll < 30:
		var b strings.Builder
		for limit := 300 + r.IntN(3000); b.Len() < limit; {
			b.WriteString(words[r.IntN(len(words))])
			b.WriteByte(' ')
		}
		return strings.TrimSpace(b.String()) + " " + n
	case roll < 32:
		return "Tab\there and a\nnewline " + n
	}
	var b strings.Builder
	for k := range 2 + r.IntN(6) {
		w := words[r.IntN(len(words))]
		if k == 0 {
			w = strings.ToUpper(w[:1]) + w[1:]
		}
		b.WriteString(w)
		b.WriteByte(' ')
	}
	b.WriteString(n)
	if r.IntN(3) == 0 {
		b.WriteString(" | " + []string{"Example News", "The Blog", "Docs", "Wiki"}[r.IntN(4)])
	}
	return b.String()
}

var tagPool = []string{
	"news", "research", "to read", "read later", "golang", "python", "rust", "work",
	"personal", "recipes", "2019", "archive-me", "café", "日本語", "Ünïcode", "emoji 🎉",
	"c++", "c#", "#hashtag", "with  two  spaces", `quote"tag`, "<b>html</b>", "a/b",
	"dots.in.tag", "ñandú", "über", "very long tag name that keeps on going and going",
}

func tagsFor(r *rand.Rand) []string {
	n := 0
	switch roll := r.IntN(100); {
	case roll < 30:
	case roll < 65:
		n = 1
	case roll < 85:
		n = 2
	default:
		n = 3 + r.IntN(3)
	}
	tags := make([]string, 0, n)
	for range n {
		tags = append(tags, tagPool[r.IntN(len(tagPool))])
	}
	return archive.NormalizeTags(tags)
}

var notes = []string{
	"Saved for the **quarterly review**.\n\n- check the numbers\n- compare with last year",
	"Notes with <script>alert('raw html')</script> that must stay inert.",
	"Ünïcode notes — 日本語 and emoji 🎉.",
}
