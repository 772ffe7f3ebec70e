package main

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/gen"
)

func init() {
	suites = append(suites, Suite{
		Name: "search",
		Doc:  "full-text search: reindex with captured text beside one without, and folio search latency over varied queries beside grep",
		Run:  runSearch,
	})
}

// searchTextWords is the length of each generated capture text: two
// files of about 1 KB per snapshot, the size of a short article's text.
const searchTextWords = 150

// runSearch measures the search goals of the live-collection issue on a
// tree whose snapshots carry readability and htmltotext text: a reindex
// into an empty catalog with text beside the same reindex with --no-text,
// a reindex with nothing changed, and the latency of `folio search` (a
// whole process, start-up included) over about 50 queries of five kinds,
// beside grep over the same text files.
func runSearch(b *B) error {
	c, err := b.Current("text", gen.Options{N: b.N, Seed: b.Seed, Minimal: true, Text: true, TextWords: searchTextWords})
	if err != nil {
		return err
	}
	n := count(b.N)
	texts := c.textPaths()
	var textBytes int64
	for _, p := range texts {
		if st, err := os.Stat(p); err == nil {
			textBytes += st.Size()
		}
	}
	b.Logf("%d text files, %.0f MB", len(texts), float64(textBytes)/1e6)
	folio := func(args ...string) func() *exec.Cmd {
		return func() *exec.Cmd { return b.FolioCmd(c.Dir, args...) }
	}
	emptyCatalog := func() error {
		for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
			if err := os.Remove(filepath.Join(c.Dir, archive.CatalogFile+suffix)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("empty the catalog: %w", err)
			}
		}
		return nil
	}
	if _, err := b.Run(b.CatCmd(texts)); err != nil { // warm the page cache
		return err
	}

	noText, err := b.Repeat(emptyCatalog, folio("reindex", "--no-text"))
	if err != nil {
		b.Fail("reindex "+n+", empty catalog, --no-text", err)
		return nil
	}
	withText, err := b.Repeat(emptyCatalog, folio("reindex"))
	b.Add(Row{Work: fmt.Sprintf("reindex %s with text (%.0f MB), empty catalog", n, float64(textBytes)/1e6),
		Value: withText.Wall.Seconds(), Baseline: noText.Wall.Seconds(), BaselineName: "same with --no-text",
		Goal: Goal{MaxRatio: 2}, Note: "cpu " + format(Seconds, withText.CPU.Seconds()), Err: err})
	if err != nil {
		return nil
	}
	cat, err := b.Repeat(nil, func() *exec.Cmd { return b.CatCmd(texts) })
	if err != nil {
		return err
	}
	same, err := b.Repeat(nil, folio("reindex"))
	b.Add(Row{Work: "reindex " + n + " with text, nothing changed", Value: same.Wall.Seconds(),
		Baseline: cat.Wall.Seconds(), BaselineName: "cat of the text files", Goal: Goal{Max: 2}, Err: err})

	queries, err := searchQueries(texts)
	if err != nil {
		return err
	}
	timed := make([]timedQuery, 0, len(queries))
	for _, q := range queries {
		m, err := b.Run(b.FolioCmd(c.Dir, append([]string{"search", "--limit", "20"}, q...)...))
		if err != nil {
			b.Fail("folio search", err)
			return nil
		}
		timed = append(timed, timedQuery{strings.Join(q, " "), m.Wall.Seconds()})
	}
	slices.SortFunc(timed, func(a, b timedQuery) int { return cmp.Compare(a.wall, b.wall) }) // fastest first
	for i := len(timed) - 1; i >= max(0, len(timed)-5); i-- {
		b.Logf("slow query: %s %s", format(Seconds, timed[i].wall), timed[i].q)
	}
	pct := func(p float64) float64 { return timed[min(len(timed)-1, int(float64(len(timed))*p))].wall }
	grep, err := b.Repeat(nil, func() *exec.Cmd { return grepCmd(texts, "n"+fmt.Sprint(b.N/2)) })
	if err != nil {
		return err
	}
	note := fmt.Sprintf("%d queries, process start included", len(timed))
	b.Add(Row{Work: "search " + n + ": p50", Value: pct(0.5), Baseline: grep.Wall.Seconds(), BaselineName: "grep -lw of one word", Note: note})
	b.Add(Row{Work: "search " + n + ": p95", Value: pct(0.95), Baseline: grep.Wall.Seconds(), BaselineName: "grep -lw of one word", Goal: Goal{Max: 0.1}, Note: note})
	b.Add(Row{Work: "search " + n + ": slowest", Value: pct(1), Note: note})
	return nil
}

// timedQuery is one search query and how long folio took to answer it.
type timedQuery struct {
	q    string
	wall float64
}

// textPaths lists the text files of the generated snapshots.
func (c *Collection) textPaths() []string {
	var out []string
	for _, s := range c.Manifest.Snapshots {
		for _, rel := range []string{"readability/content.txt", "htmltotext/htmltotext.txt"} {
			p := filepath.Join(c.Dir, filepath.FromSlash(s.Dir), filepath.FromSlash(rel))
			if _, err := os.Lstat(p); err == nil {
				out = append(out, p)
			}
		}
	}
	return out
}

// grepCmd finds the files holding word, as a user without a search index
// would: grep -lw over every text file, fed the list on stdin (xargs
// exits 123 when some grep found nothing).
func grepCmd(paths []string, word string) *exec.Cmd {
	var list strings.Builder
	for _, p := range paths {
		list.WriteString(p)
		list.WriteByte(0)
	}
	cmd := exec.Command("sh", "-c", `xargs -0 grep -lwF -e "$1"; s=$?; [ $s -eq 0 ] || [ $s -eq 123 ]`, "grep", word)
	cmd.Stdin = strings.NewReader(list.String())
	return cmd
}

// searchQueries makes about 50 queries from words of the collection's
// own text: common words, rare words (each snapshot's number), two words,
// phrases and prefixes, ten of each.
func searchQueries(texts []string) ([][]string, error) {
	if len(texts) == 0 {
		return nil, errors.New("no text files to take search words from")
	}
	freq := map[string]int{}
	var samples [][]string
	for i := 0; i < len(texts) && len(samples) < 40; i += max(1, len(texts)/40) {
		data, err := os.ReadFile(texts[i])
		if err != nil {
			return nil, err
		}
		words := strings.Fields(strings.ToLower(string(data)))
		for _, w := range words {
			freq[strings.Trim(w, ".,")]++
		}
		samples = append(samples, words)
	}
	var common, rare []string
	for w := range freq {
		if strings.HasPrefix(w, "n") && strings.Trim(w[1:], "0123456789") == "" && len(w) > 1 {
			rare = append(rare, w)
		} else if utf8.RuneCountInString(w) > 3 && strings.IndexFunc(w, func(r rune) bool { return !unicode.IsLetter(r) }) < 0 {
			common = append(common, w)
		}
	}
	slices.SortFunc(common, func(a, b string) int { return freq[b] - freq[a] })
	slices.Sort(rare)
	var qs [][]string
	for i := range 10 {
		c1, c2 := common[i%len(common)], common[(i*7+3)%len(common)]
		s := samples[i%len(samples)]
		k := (i * 5) % max(1, len(s)-1)
		qs = append(qs,
			[]string{c1},
			[]string{rare[i*len(rare)/10]},
			[]string{c1, c2},
			[]string{`"` + strings.Trim(s[k], ".,") + " " + strings.Trim(s[k+1], ".,") + `"`},
			[]string{string([]rune(c2)[:3]) + "*"},
		)
	}
	return qs, nil
}
