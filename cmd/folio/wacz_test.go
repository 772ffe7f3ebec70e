package main_test

import (
	"archive/zip"
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	gowarc "github.com/nlnwa/gowarc/v3"

	"github.com/folio-archive/folio/archive"
)

// waczMarker is text only the archived page has: replay must show it
// with the site that served it gone.
const waczMarker = "folio-wacz-marker: only the archived page says this"

var waczPNG, _ = base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")

// waczSite serves a page with a stylesheet and an image on loopback.
func waczSite(t *testing.T) *httptest.Server {
	t.Helper()
	files := map[string]struct{ typ, body string }{
		"/page.html": {"text/html; charset=utf-8", `<!DOCTYPE html><html><head><title>WACZ page</title><link rel="stylesheet" href="style.css"></head>` +
			`<body><h1 id="m">` + waczMarker + `</h1><img src="pic.png" alt=""></body></html>`},
		"/style.css": {"text/css", "h1 { color: rgb(1, 2, 3); }"},
		"/pic.png":   {"image/png", string(waczPNG)},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", f.typ)
		w.Header().Set("Content-Length", strconv.Itoa(len(f.body)))
		io.WriteString(w, f.body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// writeWARC fetches urls and writes them as request and response records
// (after a warcinfo) to p, one gzip member per record, in the WARC
// version and with the digest algorithm given (ArchiveBox's wget wrote
// WARC/1.0 with sha1 in base32).
func writeWARC(t *testing.T, p string, v *gowarc.WarcVersion, alg string, urls ...string) {
	t.Helper()
	opts := []gowarc.WarcRecordOption{gowarc.WithVersion(v), gowarc.WithDefaultDigestAlgorithm(alg),
		gowarc.WithAddMissingDigest(true), gowarc.WithAddMissingContentLength(true), gowarc.WithAddMissingRecordId(true)}
	at := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	var out bytes.Buffer
	put := func(typ gowarc.RecordType, uri, ct string, block []byte, extra ...string) string {
		b := gowarc.NewRecordBuilder(typ, opts...)
		b.Write(block)
		b.AddWarcHeaderTime(gowarc.WarcDate, at)
		b.AddWarcHeader(gowarc.ContentType, ct)
		if uri != "" {
			b.AddWarcHeader(gowarc.WarcTargetURI, uri)
		}
		for i := 0; i+1 < len(extra); i += 2 {
			b.AddWarcHeader(extra[i], extra[i+1])
		}
		rec, _, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		defer rec.Close()
		zw := gzip.NewWriter(&out)
		if _, _, err := gowarc.NewMarshaler().Marshal(zw, rec, 0); err != nil {
			t.Fatal(err)
		}
		zw.Close()
		return rec.RecordId()
	}
	put(gowarc.Warcinfo, "", "application/warc-fields", []byte("software: folio test\r\nformat: WARC File Format\r\n"))
	for _, u := range urls {
		req, _ := http.NewRequest("GET", u, nil)
		reqRaw, _ := httputil.DumpRequestOut(req, false)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := httputil.DumpResponse(resp, true)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		id := put(gowarc.Response, u, "application/http;msgtype=response", raw)
		put(gowarc.Request, u, "application/http;msgtype=request", reqRaw, gowarc.WarcConcurrentTo, "<"+id+">")
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// waczSnapshot writes a sealed snapshot of url into the collection dir
// and returns its absolute folder.
func waczSnapshot(t *testing.T, dir, id, url, title string) string {
	t.Helper()
	at := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	s := archive.Snapshot{ID: id, URL: url, Title: title, BookmarkedAt: at, CreatedAt: at, Timestamp: "1714564800." + id[len(id)-1:], Status: "sealed"}
	abs := filepath.Join(dir, "archive/users/system/snapshots/20240501/127.0.0.1", id)
	writeSnapshotIndex(t, abs, s)
	return abs
}

// waczCollection builds a collection of four snapshots of the loopback
// page: folio's warc/ (WARC/1.1, sha256), a migrated ArchiveBox one with
// wget/warc/ (WARC/1.0, sha1 base32), one whose WARC is cut short, and
// one whose WARC has a record whose body was changed after its digests
// were written. It returns the collection, the page URL and the folders.
func waczCollection(t *testing.T) (dir, page string, snaps []string, srv *httptest.Server) {
	t.Helper()
	srv = waczSite(t)
	dir = t.TempDir()
	if _, stderr, code := runFolio(t, "init", "-D", dir); code != 0 {
		t.Fatalf("init: %s", stderr)
	}
	page = srv.URL + "/page.html"
	urls := []string{page, srv.URL + "/style.css", srv.URL + "/pic.png"}
	a := waczSnapshot(t, dir, "0190f0a0b0c0d0e0f0a0b0c0d0e0f0a1", page, "WACZ page")
	writeWARC(t, filepath.Join(a, "warc", "1714564800.warc.gz"), gowarc.V1_1, "sha256", urls...)
	os.MkdirAll(filepath.Join(a, "htmltotext"), 0o755)
	os.WriteFile(filepath.Join(a, "htmltotext", "htmltotext.txt"), []byte(waczMarker+"\n"), 0o644)
	b := waczSnapshot(t, dir, "0190f0a0b0c0d0e0f0a0b0c0d0e0f0a2", page, "WACZ page, by wget")
	writeWARC(t, filepath.Join(b, "wget", "warc", "1714564801.warc.gz"), gowarc.V1_0, "sha1", page)
	c := waczSnapshot(t, dir, "0190f0a0b0c0d0e0f0a0b0c0d0e0f0a3", srv.URL+"/style.css", "cut short")
	cut := filepath.Join(c, "warc", "1714564802.warc.gz")
	writeWARC(t, cut, gowarc.V1_1, "sha256", urls...)
	data := mustRead(t, cut)
	os.WriteFile(cut, data[:len(data)-40], 0o644)
	d := waczSnapshot(t, dir, "0190f0a0b0c0d0e0f0a0b0c0d0e0f0a4", srv.URL+"/pic.png", "tampered")
	bad := filepath.Join(d, "warc", "1714564803.warc.gz")
	writeWARC(t, bad, gowarc.V1_1, "sha256", page)
	os.WriteFile(bad, tamper(t, mustRead(t, bad), waczMarker, strings.ToUpper(waczMarker)), 0o644)
	return dir, page, []string{a, b, c, d}, srv
}

// tamper rewrites the first gzip member holding old with new in its
// place (same length): the file still reads, its digests no longer match.
func tamper(t *testing.T, data []byte, old, new string) []byte {
	t.Helper()
	var out bytes.Buffer
	br := bufio.NewReader(bytes.NewReader(data))
	done := false
	for {
		if _, err := br.Peek(1); err == io.EOF {
			break
		}
		zr, err := gzip.NewReader(br)
		if err != nil {
			t.Fatal(err)
		}
		zr.Multistream(false)
		member, err := io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
		if !done && bytes.Contains(member, []byte(old)) {
			member, done = bytes.Replace(member, []byte(old), []byte(new), 1), true
		}
		zw := gzip.NewWriter(&out)
		zw.Write(member)
		zw.Close()
	}
	if !done {
		t.Fatalf("no record holds %q", old)
	}
	return out.Bytes()
}

// TestExportWACZ: export --wacz packages every readable WARC of the
// selection (folio's and a legacy wget one) stored uncompressed, with a
// CDXJ index whose offsets point at the records, the pages with their
// captured text, and a datapackage whose hashes and sizes match; the
// truncated WARC is left out with one line naming it and exit 3; npm's
// warcio parses every record of every WARC in it.
func TestExportWACZ(t *testing.T) {
	dir, page, _, _ := waczCollection(t)
	out := filepath.Join(t.TempDir(), "out.wacz")
	stdout, stderr, code := runFolio(t, "export", "-D", dir, "--wacz", out)
	if code != 3 {
		t.Fatalf("export --wacz: exit %d, want 3 (one WARC is cut short)\n%s%s", code, stdout, stderr)
	}
	if n := strings.Count(stderr, "1714564802.warc.gz"); n != 1 || !strings.Contains(stderr, "truncated") {
		t.Errorf("the truncated WARC is named once, as truncated:\n%s", stderr)
	}
	if strings.TrimSpace(stdout) != out {
		t.Errorf("stdout %q, want the file", stdout)
	}
	zr, err := zip.OpenReader(out)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	entries := map[string][]byte{}
	for _, f := range zr.File {
		if f.Method != zip.Store || f.Flags&0x8 != 0 {
			t.Errorf("%s is compressed in the zip (method %d) or its sizes follow it (flags %#x); WACZ stores files", f.Name, f.Method, f.Flags)
		}
		if month := f.ModifiedDate >> 5 & 0xf; month < 1 || month > 12 {
			t.Errorf("%s has the MS-DOS date %#x (month %d), which zip tools show as invalid", f.Name, f.ModifiedDate, month)
		}
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		entries[f.Name], err = io.ReadAll(rc)
		if err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
	}
	var warcs []string
	for name := range entries {
		if strings.HasPrefix(name, "archive/") {
			warcs = append(warcs, name)
		}
	}
	if len(warcs) != 3 {
		t.Fatalf("archive/ holds %v, want the three readable WARCs (folio's, wget's, the tampered one)", warcs)
	}
	for _, want := range []string{"datapackage.json", "datapackage-digest.json", "pages/pages.jsonl", "indexes/index.cdx"} {
		if entries[want] == nil {
			t.Errorf("the WACZ has no %s", want)
		}
	}
	// datapackage: every file but itself and its digest, with its hash.
	var dp struct {
		Profile, WACZVersion string
		Resources            []struct {
			Name, Path, Hash string
			Bytes            int64
		}
	}
	json.Unmarshal(entries["datapackage.json"], &dp)
	var dpRaw map[string]any
	json.Unmarshal(entries["datapackage.json"], &dpRaw)
	if dpRaw["profile"] != "data-package" || dpRaw["wacz_version"] != "1.1.1" {
		t.Errorf("datapackage.json: %s", entries["datapackage.json"])
	}
	if len(dp.Resources) != len(entries)-2 {
		t.Errorf("datapackage lists %d files, the zip holds %d besides it", len(dp.Resources), len(entries)-2)
	}
	for _, r := range dp.Resources {
		sum := sha256.Sum256(entries[r.Path])
		if r.Hash != "sha256:"+hex.EncodeToString(sum[:]) || r.Bytes != int64(len(entries[r.Path])) {
			t.Errorf("datapackage says %s is %s, %d bytes; it is sha256:%x, %d", r.Path, r.Hash, r.Bytes, sum, len(entries[r.Path]))
		}
	}
	var digest map[string]string
	json.Unmarshal(entries["datapackage-digest.json"], &digest)
	if sum := sha256.Sum256(entries["datapackage.json"]); digest["hash"] != "sha256:"+hex.EncodeToString(sum[:]) || digest["path"] != "datapackage.json" {
		t.Errorf("datapackage-digest.json %v does not match datapackage.json", digest)
	}
	// The index: sorted, and each line's offset and length hold the record.
	lines := strings.Split(strings.TrimSpace(string(entries["indexes/index.cdx"])), "\n")
	if len(lines) != 5 { // folio's 3 responses, wget's 1, the tampered 1
		t.Errorf("index.cdx has %d lines, want 5:\n%s", len(lines), entries["indexes/index.cdx"])
	}
	for i, l := range lines {
		if i > 0 && lines[i-1] > l {
			t.Errorf("index.cdx is not sorted at line %d", i+1)
		}
		key, js, _ := strings.Cut(l, " {")
		var f struct{ URL, Mime, Status, Digest, Length, Offset, Filename string }
		if err := json.Unmarshal([]byte("{"+js), &f); err != nil {
			t.Fatalf("index line %q: %v", l, err)
		}
		if !strings.HasPrefix(key, "1,0,0,127:") || !strings.HasSuffix(key, " 20240501120000") || f.Status != "200" {
			t.Errorf("index line %q: want a SURT key of the loopback host, the 14-digit time and status 200", l)
		}
		off, _ := strconv.Atoi(f.Offset)
		n, _ := strconv.Atoi(f.Length)
		data := entries["archive/"+f.Filename]
		if data == nil || off+n > len(data) {
			t.Fatalf("index line %q points outside archive/%s", l, f.Filename)
		}
		rd, err := gowarc.NewWarcFileReaderFromStream(bytes.NewReader(data[off:off+n]), 0)
		if err != nil {
			t.Fatal(err)
		}
		rec, err := rd.Next()
		if err != nil || rec.WarcRecord.WarcHeader().Get(gowarc.WarcTargetURI) != f.URL || rec.WarcRecord.Type() != gowarc.Response || rec.Size != int64(n) {
			t.Errorf("index line %q: the bytes at its offset are not its response record (%v)", l, err)
		}
		rec.Close()
		rd.Close()
	}
	// pages.jsonl: the header, then one page per snapshot packaged.
	pl := strings.Split(strings.TrimSpace(string(entries["pages/pages.jsonl"])), "\n")
	if len(pl) != 4 || !strings.Contains(pl[0], `"format":"json-pages-1.0"`) {
		t.Fatalf("pages.jsonl:\n%s", entries["pages/pages.jsonl"])
	}
	withText := 0
	for _, l := range pl[1:] {
		var p struct{ ID, URL, TS, Title, Text string }
		json.Unmarshal([]byte(l), &p)
		if p.ID == "" || p.URL == "" || p.TS != "2024-05-01T12:00:00Z" {
			t.Errorf("page %s: want id, url and ts", l)
		}
		if p.URL == page && strings.Contains(p.Text, waczMarker) {
			withText++
		}
	}
	if withText != 1 {
		t.Errorf("the page with captured text does not carry it:\n%s", entries["pages/pages.jsonl"])
	}
	waczWarcio(t, entries, warcs)
}

// TestVerifyChecksWARCs: verify reads every WARC of the snapshots,
// folio's warc/ and a legacy wget/warc/ (WARC/1.0, sha1 digests in
// base32), and names the one cut short and the one whose record digests
// no longer match, exit 3; the sound ones pass.
func TestVerifyChecksWARCs(t *testing.T) {
	dir, _, _, _ := waczCollection(t)
	vout, verr, code := runFolio(t, "verify", "-D", dir)
	if code != 3 {
		t.Errorf("verify: exit %d, want 3\n%s%s", code, vout, verr)
	}
	all := vout + verr
	for _, want := range []string{"warc/1714564802.warc.gz", "warc/1714564803.warc.gz"} {
		if !strings.Contains(all, want) {
			t.Errorf("verify does not name %s:\n%s", want, all)
		}
	}
	for _, good := range []string{"1714564800.warc.gz", "1714564801.warc.gz"} {
		if strings.Contains(all, good) {
			t.Errorf("verify names the sound %s:\n%s", good, all)
		}
	}
}

// TestServeAndExportShowWARCs: serve answers a byte range of a WACZ with
// 206 and serves a snapshot's .warc.gz as application/warc without
// Content-Encoding (clients must not gunzip it); the export's page of a
// snapshot offers its WARC with size, record count and a relative link,
// and says when a WARC cannot be read.
func TestServeAndExportShowWARCs(t *testing.T) {
	dir, _, snaps, _ := waczCollection(t)
	pub := t.TempDir()
	if err := os.WriteFile(filepath.Join(pub, "out.wacz"), []byte("PK\x03\x04 a zip, for its bytes"), 0o644); err != nil {
		t.Fatal(err)
	}
	base, _ := exportServe(t, pub)
	resp, body := serveGet(t, base+"out.wacz", "Range", "bytes=0-3")
	if resp.StatusCode != 206 || body != "PK\x03\x04" || resp.Header.Get("Content-Range") != "bytes 0-3/25" || resp.Header.Get("Content-Type") != "application/zip" {
		t.Errorf("Range on the WACZ: %d %q %v", resp.StatusCode, body, resp.Header)
	}
	if _, stderr, code := runFolio(t, "export", "-D", dir); code != 0 {
		t.Fatalf("export: %s", stderr)
	}
	cbase, _ := exportServe(t, dir)
	rel, _ := filepath.Rel(dir, snaps[0])
	resp, body = serveGet(t, cbase+filepath.ToSlash(rel)+"/warc/1714564800.warc.gz", "Range", "bytes=0-1", "Accept-Encoding", "gzip")
	if resp.StatusCode != 206 || body != "\x1f\x8b" || resp.Header.Get("Content-Type") != "application/warc" || resp.Header.Get("Content-Encoding") != "" {
		t.Errorf("Range on a WARC: %d %q %v", resp.StatusCode, body, resp.Header)
	}
	// The export's page: the WARC with its size, its record count and a
	// relative download link.
	detail := string(mustRead(t, filepath.Join(snaps[0], "index.html")))
	if !strings.Contains(detail, `<a href="./warc/1714564800.warc.gz" download>`) || !strings.Contains(detail, "7 records") {
		t.Errorf("the snapshot page does not offer the WARC with its 7 records:\n%s", grepLines(detail, "warc"))
	}
	if detail := string(mustRead(t, filepath.Join(snaps[2], "index.html"))); !strings.Contains(detail, "unreadable") {
		t.Errorf("the page of the truncated WARC does not say it is unreadable:\n%s", grepLines(detail, "warc"))
	}
	// A WARC is read once: its count is kept (by size and mtime) for the
	// next exports, --full included.
	cache := filepath.Join(dir, ".folio", "export", "warc-counts")
	counts := string(mustRead(t, cache))
	if !strings.Contains(counts, " 7 \""+filepath.ToSlash(rel)+"/warc/1714564800.warc.gz\"\n") {
		t.Fatalf("warc-counts does not hold the 7 records:\n%s", counts)
	}
	os.WriteFile(cache, []byte(strings.Replace(counts, " 7 \"", " 99 \"", 1)), 0o644)
	if _, stderr, code := runFolio(t, "export", "-D", dir, "--full"); code != 0 {
		t.Fatalf("export --full: %s", stderr)
	}
	if detail := string(mustRead(t, filepath.Join(snaps[0], "index.html"))); !strings.Contains(detail, "99 records") {
		t.Errorf("export --full read the WARC again instead of using its kept count:\n%s", grepLines(detail, "warc"))
	}
}

// waczTools is where 'make deps' installs the npm packages of the WACZ
// tests (warcio, replaywebpage): skipped loudly outside CI when missing.
func waczTools(t *testing.T, pkg string) string {
	t.Helper()
	root, err := filepath.Abs("../../bin/test-tools")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(root, "node_modules", pkg)
	if pkg == "replaywebpage" {
		p = filepath.Join(root, pkg)
	}
	if _, err := os.Stat(p); err == nil {
		if _, err := exec.LookPath("node"); err == nil {
			return root
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("%s is not installed in %s: run 'make deps'", pkg, root)
	}
	t.Skipf("SKIPPING: %s is not installed in %s (run 'make deps'; CI runs this check)", pkg, root)
	return ""
}

// waczWarcio has npm's warcio parse every record of every WARC in the
// WACZ and compares the count with the records gowarc reads.
func waczWarcio(t *testing.T, entries map[string][]byte, warcs []string) {
	t.Helper()
	tools := waczTools(t, "warcio")
	tmp := t.TempDir()
	args := []string{"testdata/warcio-count.cjs"}
	want := map[string]int{}
	for _, name := range warcs {
		p := filepath.Join(tmp, filepath.Base(name))
		os.WriteFile(p, entries[name], 0o644)
		args = append(args, p)
		rd, _ := gowarc.NewWarcFileReaderFromStream(bytes.NewReader(entries[name]), 0)
		for rec, err := range rd.Records() {
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			want[filepath.Base(name)]++
			rec.Close()
		}
	}
	cmd := exec.Command("node", args...)
	cmd.Env = append(os.Environ(), "NODE_PATH="+filepath.Join(tools, "node_modules"))
	got, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("warcio: %v\n%s", err, got)
	}
	for name, n := range want {
		if !strings.Contains(string(got), name+" "+strconv.Itoa(n)+" records\n") {
			t.Errorf("warcio did not read the %d records of %s:\n%s", n, name, got)
		}
	}
}

// TestExportWACZRefusesNothing: a selection without a readable WARC
// writes no WACZ and says why; a file name not ending in .wacz is a usage
// error.
func TestExportWACZRefusesNothing(t *testing.T) {
	dir, _, _, _ := waczCollection(t)
	out := filepath.Join(t.TempDir(), "none.wacz")
	_, stderr, code := runFolio(t, "export", "-D", dir, "--wacz", out, "-f", "exact", "no-such-url")
	if code == 0 {
		t.Errorf("an empty selection: exit 0\n%s", stderr)
	}
	_, stderr, code = runFolio(t, "export", "-D", dir, "--wacz", out, "-f", "substring", "/style.css")
	if code != 1 || !strings.Contains(stderr, "nothing to package") {
		t.Errorf("a selection whose only WARC is cut short: exit %d, want 1 saying nothing is packaged\n%s", code, stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a WACZ was written: %v", err)
	}
	if _, _, code := runFolio(t, "export", "-D", dir, "--wacz", filepath.Join(t.TempDir(), "x.zip")); code != 2 {
		t.Errorf("--wacz x.zip: exit %d, want 2", code)
	}
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(out), "*"))
	if len(left) != 0 {
		t.Errorf("the export left %v beside the WACZ", left)
	}
}
