package plugins

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"
)

// NewHTTPClient is the client of the plugins that fetch over HTTP
// (favicon, staticfile, singlefile's resources): TIMEOUT per request,
// TLS checked unless CHECK_SSL_VALIDITY is false, at most 10 redirects.
func NewHTTPClient(cfg Config) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if !cfg.Bool("CHECK_SSL_VALIDITY", true) {
		tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // the user asked for it
	}
	tr.MaxIdleConnsPerHost = 8
	return &http.Client{Transport: tr, Timeout: cfg.GlobalTimeout()}
}

// fetched is one HTTP response body read whole.
type fetched struct {
	URL         string // after redirects
	Status      int
	ContentType string // media type without parameters, lower case
	Body        []byte
	Header      http.Header
}

// get fetches url with the configured User-Agent, reading at most max
// bytes of body (a larger body is an error).
func get(ctx context.Context, job *Job, url string, max int64) (*fetched, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", job.Config.Get("USER_AGENT"))
	resp, err := job.HTTP.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", url, err)
	}
	if int64(len(body)) > max {
		return nil, fmt.Errorf("%s is larger than %d bytes", url, max)
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	return &fetched{URL: resp.Request.URL.String(), Status: resp.StatusCode, ContentType: strings.ToLower(ct),
		Body: body, Header: resp.Header}, nil
}

// withTimeout bounds one request by d inside ctx.
func withTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < d {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, d)
}
