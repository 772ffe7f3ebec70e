package wacz

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/folio-archive/folio/warc"
)

func TestCDXLine(t *testing.T) {
	r := warc.Record{Offset: 10, Length: 200, Type: "response", URI: "https://www.Example.com/a/?b=2&a=1",
		Date: time.Date(2024, 5, 1, 12, 3, 4, 0, time.UTC), Mime: "text/html", Status: 200, Digest: "sha256:abc"}
	want := `com,example)/a?a=1&b=2 20240501120304 {"url":"https://www.Example.com/a/?b=2&a=1","mime":"text/html","status":"200","digest":"sha256:abc","length":"200","offset":"10","filename":"x.warc.gz"}`
	if got := cdxLine(r, "x.warc.gz"); got != want {
		t.Errorf("cdxLine:\n got %s\nwant %s", got, want)
	}
	for _, typ := range []string{"request", "warcinfo", "metadata"} {
		r.Type = typ
		if got := cdxLine(r, "x.warc.gz"); got != "" {
			t.Errorf("a %s record is indexed: %s", typ, got)
		}
	}
}

// TestIndexSortsInRunsAndWritesZipNum: more lines than fit in a run are
// spilled, merged in order, and written as gzip blocks that index.idx
// locates by their first key.
func TestIndexSortsInRunsAndWritesZipNum(t *testing.T) {
	defer func(r, b int) { runLines, blockLines = r, b }(runLines, blockLines)
	runLines, blockLines = 7, 5
	var lines []string
	for i := range 53 {
		lines = append(lines, fmt.Sprintf("com,example)/%03d 20240501120000 {\"url\":\"http://example.com/%03d\"}", (i*37)%53, (i*37)%53))
	}
	rand.Shuffle(len(lines), func(i, j int) { lines[i], lines[j] = lines[j], lines[i] })
	s := &sorter{dir: t.TempDir()}
	for i := 0; i < len(lines); i += 4 {
		if err := s.add(lines[i:min(i+4, len(lines))]); err != nil {
			t.Fatal(err)
		}
	}
	if len(s.runs) == 0 {
		t.Fatal("nothing was spilled")
	}
	files, err := s.writeIndex()
	if err != nil {
		t.Fatal(err)
	}
	gz, _ := os.ReadFile(files["indexes/index.cdx.gz"])
	idx, _ := os.ReadFile(files["indexes/index.idx"])
	il := strings.Split(strings.TrimSpace(string(idx)), "\n")
	if il[0] != `!meta 0 {"filename":"index.cdx.gz","format":"cdxj-gzip-1.0"}` || len(il) != 1+11 {
		t.Fatalf("index.idx:\n%s", idx)
	}
	var got []string
	for _, l := range il[1:] {
		key, js, _ := strings.Cut(l, " {")
		var loc struct {
			Offset, Length   int
			Digest, Filename string
		}
		json.Unmarshal([]byte("{"+js), &loc)
		block := gz[loc.Offset : loc.Offset+loc.Length]
		sum := sha256.Sum256(block)
		if loc.Digest != "sha256:"+hex.EncodeToString(sum[:]) || loc.Filename != "index.cdx.gz" {
			t.Errorf("idx line %q: digest or filename wrong", l)
		}
		zr, err := gzip.NewReader(bytes.NewReader(block))
		if err != nil {
			t.Fatal(err)
		}
		zr.Multistream(false)
		plain, _ := io.ReadAll(zr)
		sc := bufio.NewScanner(bytes.NewReader(plain))
		first := true
		for sc.Scan() {
			if first && !strings.HasPrefix(sc.Text(), key+" {") {
				t.Errorf("block at %d starts with %q, idx says %q", loc.Offset, sc.Text(), key)
			}
			first = false
			got = append(got, sc.Text())
		}
	}
	slices.Sort(lines)
	if !slices.Equal(got, lines) {
		t.Errorf("the blocks hold %d lines, not the %d sorted ones", len(got), len(lines))
	}
}
