package plugins

import (
	"io"
	"net/http"
	"sync"
)

// Client returns a client like c whose exchanges r records: the fetches
// folio's plugins make outside the tab (the favicon, a static file,
// singlefile's resources) go into the same WARC as the tab's.
func (r *Recorder) Client(c *http.Client) *http.Client {
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	cc := *c
	cc.Transport = &recordingTransport{rec: r, base: base}
	return &cc
}

// recordingTransport records each round trip: its request when it is
// sent, its response body as the caller reads it. A body closed before
// its end is recorded as far as it was read, marked WARC-Truncated.
type recordingTransport struct {
	rec  *Recorder
	base http.RoundTripper
}

func (t *recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	date := t.rec.now()
	resp, err := t.base.RoundTrip(req)
	if err != nil || (req.URL.Scheme != "http" && req.URL.Scheme != "https") || resp.StatusCode == http.StatusPartialContent {
		return resp, err
	}
	h := req.Header.Clone()
	if h.Get("Host") == "" {
		h.Set("Host", req.Host)
		if req.Host == "" {
			h.Set("Host", req.URL.Host)
		}
	}
	proto := "HTTP/1.1"
	if resp.ProtoMajor == 1 && resp.ProtoMinor == 0 {
		proto = "HTTP/1.0"
	}
	status, text := resp.StatusCode, http.StatusText(resp.StatusCode)
	if len(resp.Status) > 4 {
		text = resp.Status[4:]
	}
	header := resp.Header.Clone()
	ex := &exchange{url: req.URL.String(), date: date, reqHead: requestHead(req.Method, req.URL.RequestURI(), proto, h),
		respHead: func(size int64) []byte { return responseHead("", proto, status, text, header, size) }}
	if !t.rec.add(ex) {
		return resp, nil
	}
	resp.Body = &recordingBody{ReadCloser: resp.Body, ex: ex}
	return resp, nil
}

// recordingBody copies what the caller reads into the exchange's body.
type recordingBody struct {
	io.ReadCloser
	ex   *exchange
	once sync.Once
}

func (b *recordingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.ex.body.Write(p[:n])
	}
	if err == io.EOF {
		b.finish("")
	}
	return n, err
}

func (b *recordingBody) Close() error {
	b.finish("length")
	return b.ReadCloser.Close()
}

// finish marks the exchange complete, truncated as given when the body
// was not read to its end.
func (b *recordingBody) finish(truncated string) {
	b.once.Do(func() {
		b.ex.body.rec.mu.Lock()
		b.ex.done, b.ex.truncated = true, truncated
		b.ex.body.rec.mu.Unlock()
	})
}
