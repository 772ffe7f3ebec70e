package plugins

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/klauspost/compress/gzip"
	"github.com/nlnwa/gowarc/v3"

	"github.com/folio-archive/folio/archive"
)

// Recorder keeps the HTTP exchanges of one snapshot's capture — those of
// its browser tab (see record_tab.go) and those folio's plugins make
// themselves through Job.HTTP — until the warc plugin writes them as a
// WARC file. Request and response heads are held in memory; bodies past
// spoolAbove bytes go to files in a temp folder inside the snapshot
// folder (swept after a crash like every temp file there), so a large
// page costs disk, not memory. Close removes that folder.
type Recorder struct {
	dir   string // the spool folder
	now   func() time.Time
	start time.Time

	mu        sync.Mutex
	exchanges []*exchange
	closed    bool
	pending   sync.WaitGroup // body reads still running
	stopTab   func()         // stops listening to the tab
	spools    atomic.Int64
}

// spoolAbove is the size past which a body is kept on disk while it is
// recorded (gowarc buffers a record the same way when it is written).
const spoolAbove = 1 << 20

// readWholeUpTo bounds a body read whole, in memory, because Chromium
// could not stream it: the memory of a capture stays bounded by it, not
// by the size of the page's resources.
const readWholeUpTo = 16 << 20

// exchange is one request and its response, written as a request and a
// response record.
type exchange struct {
	url       string
	date      time.Time
	reqHead   []byte // request line and headers, ending with the empty line
	reqBody   []byte
	respHead  func(size int64) []byte // status line and headers for a body of size bytes
	ip        string
	settle    func() // sets the heads once the recording stopped
	body      body
	done      bool // the response is complete (a body that never ended is left out)
	skip      bool // not recorded: a range response, a failed load
	truncated string
	via       string // how the body was read: viaStream, viaWhole, viaNone
}

// How a tab's response body was read (exchange.via): streamed as it
// arrived, or read whole once it had (Network.getResponseBody, the body
// held in memory at once, which is why only small bodies are read so),
// or not read since it was too large to read whole.
const (
	viaStream = "stream"
	viaWhole  = "whole"
	viaNone   = "none"
)

// body is a response body as it is recorded: in memory up to spoolAbove,
// then in a spool file.
type body struct {
	rec  *Recorder
	mem  bytes.Buffer
	file *os.File
	size int64
	err  error
}

func (b *body) Write(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if b.file == nil && b.mem.Len()+len(p) > spoolAbove {
		b.file, b.err = b.rec.spoolFile()
		if b.err == nil {
			_, b.err = b.file.Write(b.mem.Bytes())
			b.mem = bytes.Buffer{}
		}
		if b.err != nil {
			return 0, b.err
		}
	}
	var n int
	if b.file != nil {
		n, b.err = b.file.Write(p)
	} else {
		n, _ = b.mem.Write(p)
	}
	b.size += int64(n)
	return n, b.err
}

// reset empties the body.
func (b *body) reset() {
	b.mem.Reset()
	if b.file != nil {
		b.err = b.file.Truncate(0)
		if b.err == nil {
			_, b.err = b.file.Seek(0, io.SeekStart)
		}
	}
	b.size = 0
}

// reader reads the recorded body from its start.
func (b *body) reader() (io.Reader, error) {
	if b.err != nil {
		return nil, b.err
	}
	if b.file == nil {
		return bytes.NewReader(b.mem.Bytes()), nil
	}
	return io.NewSectionReader(b.file, 0, b.size), nil
}

// NewRecorder starts a recorder whose spool folder is made inside the
// snapshot folder dir.
func NewRecorder(dir string, now func() time.Time) (*Recorder, error) {
	spool, err := os.MkdirTemp(dir, ".warc"+archive.TempMarker)
	if err != nil {
		return nil, fmt.Errorf("make the WARC spool folder in %s: %w", dir, err)
	}
	if now == nil {
		now = time.Now
	}
	return &Recorder{dir: spool, now: now, start: now()}, nil
}

func (r *Recorder) spoolFile() (*os.File, error) {
	n := r.spools.Add(1) // r.mu may be held: a body is written under it
	f, err := os.OpenFile(filepath.Join(r.dir, "body-"+strconv.FormatInt(n, 10)), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("spool a response body: %w", err)
	}
	return f, nil
}

// add registers a new exchange, in the order records are written.
func (r *Recorder) add(ex *exchange) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return false
	}
	ex.body.rec = r
	r.exchanges = append(r.exchanges, ex)
	return true
}

// stop ends the recording: events of the tab are no longer taken, the
// body reads still running are waited for (each bounded by a minute and
// the tab's life), then the tab is no longer listened to.
func (r *Recorder) stop() {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	r.pending.Wait()
	r.mu.Lock()
	stopTab := r.stopTab
	r.stopTab = nil
	r.mu.Unlock()
	if stopTab != nil {
		stopTab()
	}
}

// complete counts the exchanges complete so far.
func (r *Recorder) complete() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, ex := range r.exchanges {
		if ex.done && !ex.skip {
			n++
		}
	}
	return n
}

// Close stops the recording and removes the spool folder.
func (r *Recorder) Close() error {
	r.stop()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, ex := range r.exchanges {
		if ex.body.file != nil {
			ex.body.file.Close()
		}
	}
	r.exchanges = nil
	return os.RemoveAll(r.dir)
}

// Software names this folio in the warcinfo record.
func Software() string {
	v := "(devel)"
	if bi, ok := debug.ReadBuildInfo(); ok {
		v = bi.Main.Version
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && (v == "" || v == "(devel)") && len(s.Value) >= 12 {
				v = s.Value[:12]
			}
		}
	}
	return "folio/" + v
}

// warcinfo says what the file holds and how.
const warcinfoText = "format: WARC File Format 1.1\r\n" +
	"conformsTo: http://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/\r\n" +
	"description: the requests and responses of one folio capture: the page's browser tab (every frame and resource) " +
	"and the fetches folio's plugins made themselves\r\n" +
	"x-folio-bodies: response bodies are stored as the browser decoded them; Content-Encoding and Transfer-Encoding " +
	"are dropped and Content-Length gives the stored length. Redirects are response records without a body; " +
	"range (206) responses, data: URLs and loads that never finished are left out; a body past 16 MiB that the browser " +
	"could not stream is left out of its record, marked WARC-Truncated.\r\n"

// recordOpts are the options of every record folio writes: WARC/1.1,
// sha256 digests computed, blocks past spoolAbove buffered in the spool
// folder.
func (r *Recorder) recordOpts() []gowarc.WarcRecordOption {
	return []gowarc.WarcRecordOption{
		gowarc.WithVersion(gowarc.V1_1), gowarc.WithDefaultDigestAlgorithm("sha256"), gowarc.WithAddMissingDigest(true),
		gowarc.WithBufferTmpDir(r.dir), gowarc.WithBufferMaxMemBytes(spoolAbove),
		gowarc.WithSpecViolationPolicy(gowarc.ErrFail), gowarc.WithSyntaxErrorPolicy(gowarc.ErrFail),
	}
}

func recordID() string { return "<urn:uuid:" + uuid.NewString() + ">" }

// gowarcMu serializes the writing of WARC files: gowarc v3.1.0 sets
// uuid's global pool flag (uuid.EnableRandPool) each time it makes
// record options, a write the race detector rightly reports when two
// snapshots write their WARCs at once.
var gowarcMu sync.Mutex

// WriteTo writes the WARC file: a warcinfo record, then a request and a
// response record per complete exchange, each one gzip member. It
// returns how many exchanges it wrote.
func (r *Recorder) WriteTo(ctx context.Context, w io.Writer, filename string) (int, error) {
	r.stop()
	gowarcMu.Lock()
	defer gowarcMu.Unlock()
	gz, _ := gzip.NewWriterLevel(w, gzip.DefaultCompression)
	m := gowarc.NewMarshaler()
	put := func(b gowarc.WarcRecordBuilder) error {
		rec, _, err := b.Build()
		if err != nil {
			return fmt.Errorf("build a WARC record: %w", err)
		}
		defer rec.Close()
		gz.Reset(w)
		if _, _, err := m.Marshal(gz, rec, 0); err != nil {
			return err
		}
		return gz.Close()
	}
	infoID := recordID()
	info := gowarc.NewRecordBuilder(gowarc.Warcinfo, r.recordOpts()...)
	info.AddWarcHeader(gowarc.WarcRecordID, infoID)
	info.AddWarcHeaderTime(gowarc.WarcDate, r.start)
	info.AddWarcHeader(gowarc.WarcFilename, filename)
	info.AddWarcHeader(gowarc.ContentType, gowarc.ApplicationWarcFields)
	info.WriteString("software: " + Software() + "\r\n" + warcinfoText)
	if err := put(info); err != nil {
		return 0, err
	}
	var list []*exchange
	r.mu.Lock()
	for _, ex := range r.exchanges {
		if ex.done && ex.settle != nil {
			ex.settle()
		}
		if ex.done && !ex.skip && ex.respHead != nil {
			list = append(list, ex)
		}
	}
	r.mu.Unlock()
	n := 0
	for _, ex := range list {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		body, err := ex.body.reader()
		if err != nil {
			return n, err
		}
		reqID, respID := recordID(), recordID()
		head := func(b gowarc.WarcRecordBuilder, id, other, msgtype string) {
			b.AddWarcHeader(gowarc.WarcRecordID, id)
			b.AddWarcHeaderTime(gowarc.WarcDate, ex.date)
			b.AddWarcHeader(gowarc.WarcTargetURI, ex.url)
			b.AddWarcHeader(gowarc.WarcWarcinfoID, infoID)
			b.AddWarcHeader(gowarc.WarcConcurrentTo, other)
			b.AddWarcHeader(gowarc.ContentType, "application/http;msgtype="+msgtype)
		}
		req := gowarc.NewRecordBuilder(gowarc.Request, r.recordOpts()...)
		head(req, reqID, respID, "request")
		req.Write(ex.reqHead)
		req.Write(ex.reqBody)
		if err := put(req); err != nil {
			return n, fmt.Errorf("%s: %w", ex.url, err)
		}
		resp := gowarc.NewRecordBuilder(gowarc.Response, r.recordOpts()...)
		head(resp, respID, reqID, "response")
		if ex.ip != "" {
			resp.AddWarcHeader(gowarc.WarcIPAddress, ex.ip)
		}
		if ex.truncated != "" {
			resp.AddWarcHeader(gowarc.WarcTruncated, ex.truncated)
		}
		resp.Write(ex.respHead(ex.body.size))
		if _, err := resp.ReadFrom(body); err != nil {
			resp.Close()
			return n, err
		}
		if err := put(resp); err != nil {
			return n, fmt.Errorf("%s: %w", ex.url, err)
		}
		n++
	}
	return n, nil
}

// dropped are the response headers that no longer describe a body stored
// decoded; Content-Length is written again with the stored length.
var dropped = map[string]bool{"content-encoding": true, "transfer-encoding": true, "content-length": true}

// writeHeaders appends name: value lines, in sorted order, skipping HTTP/2
// pseudo-headers and, when drop is set, the dropped headers. A value
// holding several lines (how Chromium joins repeated headers) becomes
// one line each.
func writeHeaders(b *bytes.Buffer, h map[string][]string, drop bool) {
	names := make([]string, 0, len(h))
	for k := range h {
		if strings.HasPrefix(k, ":") || drop && dropped[strings.ToLower(k)] {
			continue
		}
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		for _, v := range h[k] {
			for _, line := range strings.Split(v, "\n") {
				b.WriteString(k + ": " + strings.TrimRight(line, "\r") + "\r\n")
			}
		}
	}
}

// responseHead is a status line and headers for a stored body of size
// bytes: raw, the header text as received (HTTP/1.x), is used when there
// is one, else the status and the header map.
func responseHead(raw, proto string, status int, statusText string, h map[string][]string, size int64) []byte {
	var b bytes.Buffer
	if raw != "" {
		lines := strings.Split(strings.TrimRight(raw, "\r\n"), "\n")
		b.WriteString(strings.TrimRight(lines[0], "\r") + "\r\n")
		for _, line := range lines[1:] {
			line = strings.TrimRight(line, "\r")
			name, _, _ := strings.Cut(line, ":")
			if line == "" || dropped[strings.ToLower(strings.TrimSpace(name))] {
				continue
			}
			b.WriteString(line + "\r\n")
		}
	} else {
		if statusText == "" {
			statusText = http.StatusText(status)
		}
		fmt.Fprintf(&b, "%s %d %s\r\n", proto, status, statusText)
		writeHeaders(&b, h, true)
	}
	b.WriteString("Content-Length: " + strconv.FormatInt(size, 10) + "\r\n\r\n")
	return b.Bytes()
}

// requestHead is a request line and headers.
func requestHead(method, target, proto string, h map[string][]string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %s %s\r\n", method, target, proto)
	writeHeaders(&b, h, false)
	b.WriteString("\r\n")
	return b.Bytes()
}
