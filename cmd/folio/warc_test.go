package main_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/nlnwa/gowarc/v3"

	"github.com/folio-archive/folio/fixtures"
)

// warcRecord is one record of a WARC file as the tests read it: its
// header, its block and, for HTTP records, the payload after the HTTP
// head.
type warcRecord struct {
	header  *gowarc.WarcFields
	typ     string
	block   []byte
	head    string // the HTTP head, for request and response records
	payload []byte
}

// readWARC reads a .warc.gz member by member, failing the test unless
// every gzip member holds exactly one record that gowarc parses with
// strict validation and whose block and payload digests are right.
func readWARC(t *testing.T, path string) []warcRecord {
	t.Helper()
	data := mustRead(t, path)
	br := bytes.NewReader(data)
	zr, err := gzip.NewReader(br)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var out []warcRecord
	for {
		zr.Multistream(false)
		member, err := io.ReadAll(zr)
		if err != nil {
			t.Fatalf("%s: member %d: %v", path, len(out), err)
		}
		u := gowarc.NewUnmarshaler(gowarc.WithStrictValidation())
		rec, _, _, err := u.Unmarshal(bufio.NewReader(bytes.NewReader(member)))
		if err != nil {
			t.Fatalf("%s: member %d: %v", path, len(out), err)
		}
		if _, err := rec.ValidateDigest(); err != nil {
			t.Fatalf("%s: member %d: %v", path, len(out), err)
		}
		rec.Close()
		// The block follows the WARC header's empty line and ends before
		// the closing CRLF CRLF; one record fills the member.
		at := bytes.Index(member, []byte("\r\n\r\n")) + 4
		if !bytes.HasSuffix(member, []byte("\r\n\r\n")) {
			t.Fatalf("%s: member %d does not end with its record", path, len(out))
		}
		r := warcRecord{header: rec.WarcHeader(), typ: rec.Type().String(), block: member[at : len(member)-4]}
		if n, _ := r.header.GetInt64(gowarc.ContentLength); n != int64(len(r.block)) {
			t.Fatalf("%s: member %d holds %d bytes after its header, Content-Length says %d (more than one record?)", path, len(out), len(r.block), n)
		}
		if d := sha256.Sum256(r.block); r.header.Get(gowarc.WarcBlockDigest) != "sha256:"+hex.EncodeToString(d[:]) {
			t.Errorf("%s: %s %s: block digest %s", path, r.typ, r.header.Get(gowarc.WarcTargetURI), r.header.Get(gowarc.WarcBlockDigest))
		}
		if r.typ == "request" || r.typ == "response" {
			i := bytes.Index(r.block, []byte("\r\n\r\n"))
			r.head, r.payload = string(r.block[:i+4]), r.block[i+4:]
			if d := sha256.Sum256(r.payload); r.header.Get(gowarc.WarcPayloadDigest) != "sha256:"+hex.EncodeToString(d[:]) {
				t.Errorf("%s: %s %s: payload digest %s", path, r.typ, r.header.Get(gowarc.WarcTargetURI), r.header.Get(gowarc.WarcPayloadDigest))
			}
		}
		out = append(out, r)
		if err := zr.Reset(br); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("%s: after member %d: %v", path, len(out), err)
		}
	}
	return out
}

// warcioModule is the npm warcio package `make deps` installs for the
// tests, skipped loudly outside CI when it is missing.
func warcioModule(t *testing.T) string {
	t.Helper()
	return filepath.Join(waczTools(t, "warcio"), "node_modules", "warcio")
}

func TestAddRecordsWARC(t *testing.T) {
	srv := fixtureServer(t)
	dir := newCollection(t)
	page := srv.URL + "/warc.html"
	if stdout, stderr, code := runFolio(t, "add", "-D", dir, page); code != 0 {
		t.Fatalf("add exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	s := snapshots(t, dir)[0]
	res := s.results["warc"]
	if res.Status != "succeeded" || !regexp.MustCompile(`^warc/\d{10}\.warc\.gz$`).MatchString(res.OutputStr) ||
		res.HookName != "on_Snapshot__90_warc" || len(res.OutputFiles) != 1 {
		t.Fatalf("warc result %+v", res)
	}
	path := filepath.Join(s.dir, res.OutputStr)
	if hashes := string(mustRead(t, filepath.Join(s.dir, "hashes/hashes.json"))); !strings.Contains(hashes, `"path": "`+res.OutputStr+`"`) {
		t.Errorf("hashes.json does not list %s", res.OutputStr)
	}
	if left, _ := filepath.Glob(filepath.Join(s.dir, ".*folio-tmp-*")); len(left) > 0 {
		t.Errorf("temp files left in the snapshot: %v", left)
	}
	recs := readWARC(t, path)
	if recs[0].typ != "warcinfo" || !strings.Contains(string(recs[0].block), "software: folio/") ||
		!strings.Contains(string(recs[0].block), "stored as the browser decoded them") {
		t.Fatalf("first record %s:\n%s", recs[0].typ, recs[0].block)
	}
	infoID := recs[0].header.Get(gowarc.WarcRecordID)
	byID := map[string]warcRecord{}
	responses := map[string][]warcRecord{}
	for _, r := range recs[1:] {
		if r.header.Get(gowarc.WarcWarcinfoID) != infoID || r.header.Get(gowarc.WarcDate) == "" || r.header.Get(gowarc.WarcTargetURI) == "" {
			t.Errorf("%s record %s lacks WARC-Warcinfo-ID, WARC-Date or WARC-Target-URI", r.typ, r.header.Get(gowarc.WarcRecordID))
		}
		byID[r.header.Get(gowarc.WarcRecordID)] = r
		if r.typ == "response" {
			uri := strings.TrimPrefix(r.header.Get(gowarc.WarcTargetURI), srv.URL)
			responses[uri] = append(responses[uri], r)
		}
	}
	// Every response is linked to its request and back.
	for _, r := range recs[1:] {
		other, ok := byID[r.header.Get(gowarc.WarcConcurrentTo)]
		if !ok || other.header.Get(gowarc.WarcConcurrentTo) != r.header.Get(gowarc.WarcRecordID) ||
			other.typ == r.typ || other.header.Get(gowarc.WarcTargetURI) != r.header.Get(gowarc.WarcTargetURI) {
			t.Errorf("%s %s is not linked to its %s by WARC-Concurrent-To", r.typ, r.header.Get(gowarc.WarcTargetURI), other.typ)
		}
	}
	// The page, its stylesheet, font, background and image, the XHR and
	// posted fragment, the framed page behind the redirect and its script,
	// and the favicon folio fetched itself: each with the bytes served.
	for uri, file := range map[string]string{
		"/warc.html": "warc.html", "/style.css": "style.css", "/fonts/fixture-sans.ttf": "fonts/fixture-sans.ttf",
		"/paper.png": "paper.png", "/image.png": "image.png", "/warc-fragment.html": "warc-fragment.html",
		"/warc-fragment.html?posted=1": "warc-fragment.html", "/index.html": "index.html", "/script.js": "script.js",
		"/favicon.ico": "favicon.ico",
	} {
		want, err := fixtures.Read(file, srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		got := responses[uri]
		if len(got) == 0 {
			t.Errorf("no response record for %s", uri)
			continue
		}
		for _, r := range got {
			if !strings.HasPrefix(r.head, "HTTP/1.1 200 OK\r\n") || !bytes.Equal(r.payload, want) {
				t.Errorf("%s: head %q, %d bytes, want 200 and the %d bytes served", uri, r.head, len(r.payload), len(want))
			}
			if !strings.Contains(r.head, "X-Fixture: folio\r\n") || !strings.Contains(r.head, "Content-Length: "+strconv.Itoa(len(want))+"\r\n") {
				t.Errorf("%s: head lacks the server's headers or the stored length:\n%s", uri, r.head)
			}
		}
	}
	redirect := responses["/redirect/1"]
	if len(redirect) != 1 || !strings.HasPrefix(redirect[0].head, "HTTP/1.1 302 Found\r\n") ||
		!strings.Contains(redirect[0].head, "Location: /index.html\r\n") || len(redirect[0].payload) != 0 {
		t.Errorf("redirect records: %+v", redirect)
	}
	posted := responses["/warc-fragment.html?posted=1"]
	if len(posted) > 0 {
		req := byID[posted[0].header.Get(gowarc.WarcConcurrentTo)]
		if !strings.HasPrefix(req.head, "POST /warc-fragment.html?posted=1 HTTP/1.1\r\n") || string(req.payload) != "lamp=fresnel&order=1" {
			t.Errorf("POST request record:\n%s%s", req.head, req.payload)
		}
	}
	if req := byID[responses["/warc.html"][0].header.Get(gowarc.WarcConcurrentTo)]; !strings.HasPrefix(req.head, "GET /warc.html HTTP/1.1\r\n") ||
		!strings.Contains(req.head, "User-Agent: ") || !strings.Contains(req.head, "Host: "+strings.TrimPrefix(srv.URL, "http://")+"\r\n") {
		t.Errorf("page request record:\n%s", req.head)
	}

	// An independent reader parses every record and verifies its digests.
	cmd := exec.Command("node", "testdata/warcio-check.cjs", warcioModule(t), path)
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		errors.As(err, &ee)
		t.Fatalf("warcio: %v\n%s", err, ee.Stderr)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(recs) {
		t.Fatalf("warcio read %d records, Go read %d", len(lines), len(recs))
	}
	for i, line := range lines {
		var r struct {
			Type, URI string
			Status    int
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil || r.Type != recs[i].typ {
			t.Errorf("warcio record %d: %s (want a %s)", i, line, recs[i].typ)
		}
	}
}

func TestAddWithoutWARC(t *testing.T) {
	srv := fixtureServer(t)
	for _, env := range []string{"WARC_ENABLED=false", "SAVE_WARC=False"} {
		t.Run(env, func(t *testing.T) {
			dir := newCollection(t)
			if stdout, stderr, code := runFolioEnv(t, []string{env}, "add", "-D", dir, srv.URL+"/warc.html"); code != 0 {
				t.Fatalf("add exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
			}
			s := snapshots(t, dir)[0]
			if r, ok := s.results["warc"]; ok {
				t.Errorf("%s: a warc result: %+v", env, r)
			}
			if _, err := os.Stat(filepath.Join(s.dir, "warc")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s: warc/ was written (%v)", env, err)
			}
			if s.results["singlefile"].Status != "succeeded" {
				t.Errorf("%s: the other plugins did not run: %+v", env, s.results["singlefile"])
			}
		})
	}
}

// A body larger than what the recorder keeps in memory is spooled to disk
// and still recorded byte for byte; the spool leaves nothing behind, not
// even in hashes.json.
func TestAddRecordsLargeBodyWARC(t *testing.T) {
	// An image the browser shows, followed by 3 MB it reads and ignores.
	img, err := fixtures.Read("image.png", "")
	if err != nil {
		t.Fatal(err)
	}
	big := make([]byte, len(img)+3<<20+17)
	rng := rand.New(rand.NewPCG(7, 11))
	for i := range big {
		big[i] = byte(rng.Uint32())
	}
	copy(big, img)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/page.html", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, `<!DOCTYPE html><html><head><title>Big</title></head><body><h1>A large image</h1><img src="/big.png"></body></html>`)
	})
	mux.HandleFunc("/big.png", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Write(big)
	})
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	base := "http://" + ln.Addr().String()

	dir := newCollection(t)
	if stdout, stderr, code := runFolio(t, "add", "-D", dir, "--plugins", "warc,hashes", base+"/page.html"); code != 0 {
		t.Fatalf("add exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	s := snapshots(t, dir)[0]
	res := s.results["warc"]
	if res.Status != "succeeded" {
		t.Fatalf("warc result %+v", res)
	}
	var got []byte
	for _, r := range readWARC(t, filepath.Join(s.dir, res.OutputStr)) {
		if r.typ == "response" && r.header.Get(gowarc.WarcTargetURI) == base+"/big.png" {
			got = r.payload
		}
	}
	if !bytes.Equal(got, big) {
		t.Errorf("the large body was recorded as %d bytes, want the %d served", len(got), len(big))
	}
	var hashes struct{ Files []struct{ Path string } }
	if err := json.Unmarshal(mustRead(t, filepath.Join(s.dir, "hashes/hashes.json")), &hashes); err != nil {
		t.Fatal(err)
	}
	for _, f := range hashes.Files {
		if f.Path != res.OutputStr && f.Path != "index.jsonl" {
			t.Errorf("hashes.json lists %s", f.Path)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(s.dir, ".*")); len(left) > 0 {
		t.Errorf("left in the snapshot: %v", left)
	}
}
