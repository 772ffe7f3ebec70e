// Package warc reads WARC files, folio's own and those other tools wrote
// (ArchiveBox's wget, ArchiveWeb.page): record by record, with where each
// record lies in the file, so an index can point at it, and with its
// digests checked when asked. It never holds a record's body in memory
// beyond what the WARC library buffers.
package warc

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"mime"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/klauspost/compress/gzip"
	gowarc "github.com/nlnwa/gowarc/v3"
)

// Record is what an index needs of one WARC record.
type Record struct {
	Offset, Length int64  // where the record (its gzip member) lies in the file
	Type           string // warcinfo, request, response, resource, revisit, metadata...
	URI            string // WARC-Target-URI
	Date           time.Time
	Mime           string // the payload's media type, without parameters
	Status         int    // the HTTP status of a response or revisit, 0 otherwise
	Digest         string // WARC-Payload-Digest as written, "" when absent
	// Shared: the record's gzip member holds other records too (a file
	// gzipped whole), so no offset leads to it alone.
	Shared bool
}

// IsWARC reports whether the file name is a WARC file's: .warc or
// .warc.gz.
func IsWARC(name string) bool {
	return strings.HasSuffix(name, ".warc.gz") || strings.HasSuffix(name, ".warc")
}

// Dirs are the folders of a snapshot that hold its WARC files: folio's
// warc/ (also ArchiveBox 0.4-0.6's), and wget/warc/ of ArchiveBox 0.7+.
var Dirs = []string{"warc", "wget/warc"}

// Read reads the WARC file at p (not through a symlink) and calls fn with
// each record, in order. With verify, each record's WARC-Block-Digest and
// WARC-Payload-Digest, where present, are checked (sha1 in base32 as
// older tools wrote them, sha256, md5, sha512 in base16, 32 or 64), and a
// mismatch is an error. A truncated or corrupt file is an error naming
// the record it stopped at, and so is a file without records. Read
// returns the number of records read.
func Read(p string, verify bool, fn func(Record) error) (int, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return 0, fmt.Errorf("open %s: %w", p, err)
	}
	defer f.Close()
	return ReadFrom(f, p, verify, fn)
}

// ReadFrom is Read of an open stream; name is the file's name for errors.
// A compressed file is read gzip member by gzip member, so each record's
// offset and length are those of its member; a member that holds several
// records (a file gzipped whole) has them all read, marked Shared.
func ReadFrom(r io.Reader, name string, verify bool, fn func(Record) error) (int, error) {
	policy := gowarc.ErrIgnore
	if verify {
		policy = gowarc.ErrFail
	}
	opts := []gowarc.WarcRecordOption{gowarc.WithSyntaxErrorPolicy(gowarc.ErrIgnore), gowarc.WithSpecViolationPolicy(policy),
		gowarc.WithUnknownRecordTypePolicy(gowarc.ErrIgnore), gowarc.WithBufferTmpDir(os.TempDir())}
	cr := &counter{r: r}
	br := bufio.NewReaderSize(cr, 64<<10)
	pos := func() int64 { return cr.n - int64(br.Buffered()) }
	fail := func(n int, at int64, err error) error {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			err = errors.New("truncated: the file ends inside the record")
		}
		return fmt.Errorf("read %s: record %d at byte %d: %w", name, n, at, err)
	}
	if magic, _ := br.Peek(2); len(magic) < 2 || magic[0] != 0x1f || magic[1] != 0x8b {
		return readPlain(br, name, opts, fail, fn)
	}
	u := gowarc.NewUnmarshaler(opts...)
	var zr gzip.Reader
	n := 0
	for {
		start := pos()
		if _, err := br.Peek(1); errors.Is(err, io.EOF) {
			if n == 0 {
				return 0, fmt.Errorf("read %s: holds no WARC record", name)
			}
			return n, nil
		}
		if err := zr.Reset(br); err != nil {
			return n, fail(n+1, start, err)
		}
		zr.Multistream(false)
		member := bufio.NewReader(&zr)
		var recs []Record
		for {
			rec, _, _, err := u.Unmarshal(member)
			if err != nil && len(recs) > 0 && errors.Is(err, gowarc.ErrNoRecord) {
				break // blank lines after the member's last record
			}
			if err != nil {
				if rec != nil {
					rec.Close()
				}
				return n, fail(n+len(recs)+1, start, err)
			}
			recs = append(recs, record(rec))
			rec.Close()
			if _, err := member.Peek(1); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				return n, fail(n+len(recs), start, err)
			}
		}
		end := pos()
		for i := range recs {
			recs[i].Offset, recs[i].Length, recs[i].Shared = start, end-start, len(recs) > 1
			n++
			if fn != nil {
				if err := fn(recs[i]); err != nil {
					return n, err
				}
			}
		}
	}
}

// readPlain reads an uncompressed WARC, whose records gowarc finds at
// their offsets.
func readPlain(br *bufio.Reader, name string, opts []gowarc.WarcRecordOption, fail func(int, int64, error) error, fn func(Record) error) (int, error) {
	wr, err := gowarc.NewWarcFileReaderFromStream(br, 0, opts...)
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", name, err)
	}
	defer wr.Close()
	n := 0
	for {
		rec, err := wr.Next()
		if errors.Is(err, io.EOF) && rec.WarcRecord == nil && rec.Size == 0 {
			if n == 0 {
				return 0, fmt.Errorf("read %s: holds no WARC record", name)
			}
			return n, nil
		}
		if err == nil && rec.WarcRecord == nil {
			err = errors.New("no record")
		}
		if err != nil {
			rec.Close()
			return n, fail(n+1, rec.Offset, err)
		}
		out := record(rec.WarcRecord)
		out.Offset, out.Length = rec.Offset, rec.Size
		rec.Close()
		n++
		if fn != nil {
			if err := fn(out); err != nil {
				return n, err
			}
		}
	}
}

type counter struct {
	r io.Reader
	n int64
}

func (c *counter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// record takes what an index needs from w.
func record(w gowarc.WarcRecord) Record {
	h := w.WarcHeader()
	out := Record{Type: w.Type().String(),
		URI: strings.Trim(h.Get(gowarc.WarcTargetURI), "<>"), Digest: h.Get(gowarc.WarcPayloadDigest)}
	out.Date, _ = w.Date()
	ct := h.Get(gowarc.ContentType)
	if b, ok := w.Block().(gowarc.HttpResponseBlock); ok {
		out.Status = b.HttpStatusCode()
		if hh := b.HttpHeader(); hh != nil {
			ct = hh.Get("Content-Type")
		}
	}
	if ct == "" {
		out.Mime = "unk"
	} else if mt, _, err := mime.ParseMediaType(ct); err == nil {
		out.Mime = mt
	} else {
		out.Mime = strings.ToLower(strings.TrimSpace(strings.Split(ct, ";")[0]))
	}
	return out
}

// Count returns the number of records of the WARC file at p.
func Count(p string) (int, error) { return Read(p, false, nil) }
