package warc

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	gowarc "github.com/nlnwa/gowarc/v3"
)

// members writes each record (WARC version v, digests with alg) as its
// own gzip member and returns the file and where each member starts.
func members(t *testing.T, v *gowarc.WarcVersion, alg string, bodies ...string) ([]byte, []int64) {
	t.Helper()
	var out bytes.Buffer
	var offs []int64
	for i, body := range bodies {
		b := gowarc.NewRecordBuilder(gowarc.Response, gowarc.WithVersion(v), gowarc.WithDefaultDigestAlgorithm(alg),
			gowarc.WithAddMissingDigest(true), gowarc.WithAddMissingContentLength(true), gowarc.WithAddMissingRecordId(true))
		b.WriteString("HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: " + itoa(len(body)) + "\r\n\r\n" + body)
		b.AddWarcHeaderTime(gowarc.WarcDate, time.Date(2024, 5, 1, 12, 0, i, 0, time.UTC))
		b.AddWarcHeader(gowarc.WarcTargetURI, "http://example.com/"+itoa(i))
		b.AddWarcHeader(gowarc.ContentType, "application/http;msgtype=response")
		rec, _, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		offs = append(offs, int64(out.Len()))
		zw := gzip.NewWriter(&out)
		if _, _, err := gowarc.NewMarshaler().Marshal(zw, rec, 0); err != nil {
			t.Fatal(err)
		}
		zw.Close()
		rec.Close()
	}
	return out.Bytes(), offs
}

func itoa(n int) string { return strconv.Itoa(n) }

func write(t *testing.T, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "x.warc.gz")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestReadOffsetsAndFields(t *testing.T) {
	data, offs := members(t, gowarc.V1_1, "sha256", "one", "two two", "three")
	var got []Record
	n, err := Read(write(t, data), true, func(r Record) error { got = append(got, r); return nil })
	if err != nil || n != 3 {
		t.Fatalf("Read: %d records, %v", n, err)
	}
	for i, r := range got {
		end := int64(len(data))
		if i+1 < len(offs) {
			end = offs[i+1]
		}
		if r.Offset != offs[i] || r.Offset+r.Length != end {
			t.Errorf("record %d at %d+%d, its member is %d..%d", i, r.Offset, r.Length, offs[i], end)
		}
		if r.Type != "response" || r.Status != 200 || r.Mime != "text/plain" || r.URI != "http://example.com/"+itoa(i) ||
			!strings.HasPrefix(r.Digest, "sha256:") || r.Date.Second() != i {
			t.Errorf("record %d: %+v", i, r)
		}
	}
}

// TestReadVerifiesLegacyDigests: ArchiveBox's wget wrote WARC/1.0 with sha1
// digests in base32; a body changed after they were written is caught,
// and a file cut short is an error naming the record, never a panic.
func TestReadVerifiesLegacyDigests(t *testing.T) {
	data, offs := members(t, gowarc.V1_0, "sha1", "alpha", "bravo")
	p := write(t, data)
	if n, err := Read(p, true, nil); err != nil || n != 2 {
		t.Fatalf("sound legacy WARC: %d records, %v", n, err)
	}
	// Change "bravo" to "BRAVO" inside the second member.
	var fixed bytes.Buffer
	zr, _ := gzip.NewReader(bytes.NewReader(data[offs[1]:]))
	plain := new(bytes.Buffer)
	plain.ReadFrom(zr)
	fixed.Write(data[:offs[1]])
	zw := gzip.NewWriter(&fixed)
	zw.Write(bytes.Replace(plain.Bytes(), []byte("bravo"), []byte("BRAVO"), 1))
	zw.Close()
	_, err := Read(write(t, fixed.Bytes()), true, nil)
	if err == nil || !strings.Contains(err.Error(), "record 2") || !strings.Contains(err.Error(), "digest") {
		t.Errorf("tampered record: %v, want a digest error naming record 2", err)
	}
	if n, err := Read(write(t, fixed.Bytes()), false, nil); err != nil || n != 2 {
		t.Errorf("without verify the tampered file reads: %d, %v", n, err)
	}
	for _, cut := range []int{len(data) - 1, len(data) - 30, int(offs[1]) + 12, 3} {
		_, err := Read(write(t, data[:cut]), false, nil)
		if err == nil || !strings.Contains(err.Error(), "x.warc.gz") {
			t.Errorf("cut at %d of %d: %v, want an error naming the file", cut, len(data), err)
		}
	}
	if _, err := Read(write(t, []byte("not a warc at all, just text\n")), false, nil); err == nil {
		t.Error("a text file reads as a WARC")
	}
}

// TestReadWholeGzipAndPlain: a WARC gzipped whole (one member, several
// records) has every record read and verified, marked Shared; an
// uncompressed WARC has its records at their offsets.
func TestReadWholeGzipAndPlain(t *testing.T) {
	data, offs := members(t, gowarc.V1_1, "sha256", "one", "two two", "three")
	var plain bytes.Buffer
	for i := range offs {
		end := int64(len(data))
		if i+1 < len(offs) {
			end = offs[i+1]
		}
		zr, err := gzip.NewReader(bytes.NewReader(data[offs[i]:end]))
		if err != nil {
			t.Fatal(err)
		}
		plain.ReadFrom(zr)
	}
	var whole bytes.Buffer
	zw := gzip.NewWriter(&whole)
	zw.Write(plain.Bytes())
	zw.Close()
	var got []Record
	n, err := Read(write(t, whole.Bytes()), true, func(r Record) error { got = append(got, r); return nil })
	if err != nil || n != 3 {
		t.Fatalf("whole-gzipped WARC: %d records, %v", n, err)
	}
	for _, r := range got {
		if !r.Shared || r.Offset != 0 || r.Length != int64(whole.Len()) {
			t.Errorf("a record of a whole-gzipped WARC: %+v", r)
		}
	}
	got = nil
	p := filepath.Join(t.TempDir(), "x.warc")
	os.WriteFile(p, plain.Bytes(), 0o644)
	if n, err := Read(p, true, func(r Record) error { got = append(got, r); return nil }); err != nil || n != 3 {
		t.Fatalf("plain WARC: %d records, %v", n, err)
	}
	for i, r := range got {
		if r.Shared || !bytes.HasPrefix(plain.Bytes()[r.Offset:], []byte("WARC/1.1\r\n")) || r.URI != "http://example.com/"+itoa(i) {
			t.Errorf("plain record %d: %+v", i, r)
		}
		if i+1 < len(got) && r.Offset+r.Length != got[i+1].Offset {
			t.Errorf("plain record %d ends at %d, the next starts at %d", i, r.Offset+r.Length, got[i+1].Offset)
		}
	}
}
