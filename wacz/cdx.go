package wacz

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"container/heap"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/folio-archive/folio/warc"
)

// The CDXJ index: one line per record a replay looks up, "<SURT>
// <14-digit time> {json}", sorted. Lines are sorted in runs of runLines
// kept in memory and spilled to scratch files, then merged, so memory does
// not grow with the collection. An index of more than blockLines lines is
// written compressed (ZipNum): index.cdx.gz of gzip blocks of blockLines
// lines, and index.idx naming the first key and place of each block.
var (
	runLines   = 100_000 // (variables: the tests make them small)
	blockLines = 3000
)

// indexed are the record types a replay looks up by URL.
var indexed = map[string]bool{"response": true, "revisit": true, "resource": true}

// cdxFields are a CDXJ line's JSON, in pywb's order and shapes (numbers
// as strings).
type cdxFields struct {
	URL      string `json:"url"`
	Mime     string `json:"mime,omitempty"`
	Status   string `json:"status,omitempty"`
	Digest   string `json:"digest,omitempty"`
	Length   string `json:"length"`
	Offset   string `json:"offset"`
	Filename string `json:"filename"`
}

// cdxLine is the CDXJ line of r of the WARC file name in the WACZ, "" for
// a record replay does not look up.
func cdxLine(r warc.Record, name string) string {
	if !indexed[r.Type] || r.URI == "" || r.Date.IsZero() {
		return ""
	}
	f := cdxFields{URL: r.URI, Mime: r.Mime, Digest: r.Digest, Length: strconv.FormatInt(r.Length, 10),
		Offset: strconv.FormatInt(r.Offset, 10), Filename: name}
	if r.Type == "revisit" {
		f.Mime = "warc/revisit"
	}
	if r.Status > 0 {
		f.Status = strconv.Itoa(r.Status)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(f) // cannot fail: strings only
	return warc.SURT(r.URI) + " " + r.Date.UTC().Format("20060102150405") + " " + strings.TrimSuffix(b.String(), "\n")
}

// sorter sorts CDXJ lines in bounded memory.
type sorter struct {
	dir   string   // scratch folder for the runs
	lines []string // the run in memory
	runs  []string // spilled runs
	n     int      // lines added
}

func (s *sorter) add(lines []string) error {
	for _, l := range lines {
		s.lines = append(s.lines, l)
		s.n++
		if len(s.lines) == runLines {
			if err := s.spill(); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *sorter) spill() error {
	slices.Sort(s.lines)
	p := filepath.Join(s.dir, fmt.Sprintf("run-%d.cdxj", len(s.runs)))
	f, err := os.Create(p)
	if err != nil {
		return fmt.Errorf("write %s: %w", p, err)
	}
	w := bufio.NewWriter(f)
	for _, l := range s.lines {
		w.WriteString(l)
		w.WriteByte('\n')
	}
	err = w.Flush()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", p, err)
	}
	s.runs = append(s.runs, p)
	s.lines = s.lines[:0]
	return nil
}

// each calls fn with every line in order.
func (s *sorter) each(fn func(string) error) error {
	slices.Sort(s.lines)
	if len(s.runs) == 0 {
		for _, l := range s.lines {
			if err := fn(l); err != nil {
				return err
			}
		}
		return nil
	}
	if len(s.lines) > 0 {
		if err := s.spill(); err != nil {
			return err
		}
	}
	h := &runHeap{}
	for _, p := range s.runs {
		f, err := os.Open(p)
		if err != nil {
			return fmt.Errorf("read %s: %w", p, err)
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		if sc.Scan() {
			heap.Push(h, &run{sc: sc, line: sc.Text()})
		} else if err := sc.Err(); err != nil {
			return fmt.Errorf("read %s: %w", p, err)
		}
	}
	for h.Len() > 0 {
		r := (*h)[0]
		if err := fn(r.line); err != nil {
			return err
		}
		if r.sc.Scan() {
			r.line = r.sc.Text()
			heap.Fix(h, 0)
		} else {
			if err := r.sc.Err(); err != nil {
				return fmt.Errorf("read index run: %w", err)
			}
			heap.Pop(h)
		}
	}
	return nil
}

type run struct {
	sc   *bufio.Scanner
	line string
}

type runHeap []*run

func (h runHeap) Len() int           { return len(h) }
func (h runHeap) Less(i, j int) bool { return h[i].line < h[j].line }
func (h runHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *runHeap) Push(x any)        { *h = append(*h, x.(*run)) }
func (h *runHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// writeIndex writes the sorted index into the scratch folder and returns
// the files made, by their path in the WACZ: indexes/index.cdx, or
// indexes/index.cdx.gz and indexes/index.idx.
func (s *sorter) writeIndex() (map[string]string, error) {
	if s.n <= blockLines {
		p := filepath.Join(s.dir, "index.cdx")
		err := writeScratch(p, func(w io.Writer) error {
			return s.each(func(l string) error {
				_, err := io.WriteString(w, l+"\n")
				return err
			})
		})
		return map[string]string{"indexes/index.cdx": p}, err
	}
	gzPath, idxPath := filepath.Join(s.dir, "index.cdx.gz"), filepath.Join(s.dir, "index.idx")
	err := writeScratch(gzPath, func(gzw io.Writer) error {
		return writeScratch(idxPath, func(idx io.Writer) error {
			meta, _ := json.Marshal(map[string]string{"format": "cdxj-gzip-1.0", "filename": "index.cdx.gz"})
			if _, err := fmt.Fprintf(idx, "!meta 0 %s\n", meta); err != nil {
				return err
			}
			var (
				block bytes.Buffer
				zw    = gzip.NewWriter(&block)
				first string
				lines int
				off   int64
			)
			flush := func() error {
				if lines == 0 {
					return nil
				}
				if err := zw.Close(); err != nil {
					return err
				}
				sum := sha256.Sum256(block.Bytes())
				key := first
				if i := strings.Index(first, " {"); i >= 0 {
					key = first[:i]
				}
				loc, _ := json.Marshal(struct {
					Offset   int64  `json:"offset"`
					Length   int    `json:"length"`
					Digest   string `json:"digest"`
					Filename string `json:"filename"`
				}{off, block.Len(), "sha256:" + hex.EncodeToString(sum[:]), "index.cdx.gz"})
				if _, err := fmt.Fprintf(idx, "%s %s\n", key, loc); err != nil {
					return err
				}
				n, err := gzw.Write(block.Bytes())
				off += int64(n)
				block.Reset()
				zw.Reset(&block)
				lines = 0
				return err
			}
			err := s.each(func(l string) error {
				if lines == 0 {
					first = l
				}
				zw.Write([]byte(l + "\n")) // into memory
				if lines++; lines == blockLines {
					return flush()
				}
				return nil
			})
			if err == nil {
				err = flush()
			}
			return err
		})
	})
	return map[string]string{"indexes/index.cdx.gz": gzPath, "indexes/index.idx": idxPath}, err
}

// writeScratch writes a scratch file through a buffer.
func writeScratch(p string, write func(io.Writer) error) error {
	f, err := os.Create(p)
	if err != nil {
		return fmt.Errorf("write %s: %w", p, err)
	}
	w := bufio.NewWriterSize(f, 256<<10)
	err = write(w)
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", p, err)
	}
	return nil
}
