package gen

import (
	"hash/fnv"
	"strconv"
	"strings"
)

// A plain page is what the demo shows: a title, URL and tags such as a
// real archive holds, instead of the hostile values the tests need.
type plainPage struct {
	title, url string
	tags       []string
}

// plainTopics are the subjects of the plain pages.
var plainTopics = []string{
	"Lighthouse", "Fog signal", "Tide", "Harbour", "Lightship", "Fresnel lens", "Breakwater",
	"Sea chart", "Semaphore", "Morse code", "Shipping forecast", "Coastal erosion",
	"Sextant", "Marine chronometer", "Buoy", "Pilot boat", "Trade winds", "Gulf Stream",
}

// plainSites turn a topic into a page of a site people archive.
var plainSites = []struct {
	title func(topic string) string
	url   func(slug, under string) string
	tags  []string
}{
	{func(t string) string { return t + " - Wikipedia" },
		func(_, u string) string { return "https://en.wikipedia.org/wiki/" + u }, []string{"reference"}},
	{func(t string) string { return "A short history of the " + strings.ToLower(t) },
		func(s, _ string) string { return "https://www.historyextra.com/period/" + s + "-history/" }, []string{"history", "long read"}},
	{func(t string) string { return t + " | National Maritime Museum" },
		func(s, _ string) string { return "https://www.rmg.co.uk/stories/topics/" + s }, []string{"museum"}},
	{func(t string) string { return "How does a " + strings.ToLower(t) + " work?" },
		func(s, _ string) string { return "https://www.explainthatstuff.com/" + s + ".html" }, []string{"science"}},
	{func(t string) string { return "Ask HN: Best books about the " + strings.ToLower(t) + "?" },
		func(s, _ string) string {
			return "https://news.ycombinator.com/item?id=" + strconv.Itoa(39000000+itemNumber(s))
		}, nil},
	{func(t string) string { return "The " + strings.ToLower(t) + " in photographs" },
		func(s, _ string) string { return "https://www.theguardian.com/artanddesign/gallery/" + s }, []string{"photography", "news"}},
}

// plainPageFor is plain page i: every topic on every site, in turn.
func plainPageFor(i int) plainPage {
	topic := plainTopics[i%len(plainTopics)]
	site := plainSites[(i/len(plainTopics)+i)%len(plainSites)]
	slug := strings.ToLower(strings.ReplaceAll(topic, " ", "-"))
	under := strings.ReplaceAll(topic, " ", "_")
	p := plainPage{title: site.title(topic), url: site.url(slug, under), tags: site.tags}
	if round := i / (len(plainTopics) * len(plainSites)); round > 0 {
		p.url += "#" + strconv.Itoa(round) // a later capture of the same page
	}
	return p
}

// itemNumber is a stable number for a slug, a forum's item id.
func itemNumber(slug string) int {
	h := fnv.New32a()
	h.Write([]byte(slug))
	return int(h.Sum32() % 1000000)
}
