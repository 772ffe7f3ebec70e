package plugins

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"
)

// Browser is the one Chromium of a capture run: launched once (or attached
// to CHROME_CDP_URL), one tab per snapshot. A browser that dies is started
// again for the snapshots that follow; the tabs it held fail.
type Browser struct {
	cfg Config

	mu          sync.Mutex
	ctx         context.Context // the browser's first target; ends with the browser
	cancel      func()
	profile     string   // the temporary user data dir folio made
	profileLock *os.File // holds the flock that says the profile is in use
	launches    int
	lastStarted time.Time
}

// FindChromium returns CHROME_BINARY, else the first Chromium found on
// PATH ("" when there is none).
func FindChromium(cfg Config) string {
	if b := cfg.Get("CHROME_BINARY"); b != "" {
		if p, err := exec.LookPath(b); err == nil {
			return p
		}
		return ""
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// errTabLost is why a snapshot's browser plugins fail when its browser
// dies (crashes, is killed or closed) while it loads the page or after.
var errTabLost = errors.New("the browser tab crashed or closed")

// ErrNoBrowser means no Chromium could be found or attached to.
var ErrNoBrowser = errors.New("no Chromium found: install Debian's chromium package, or set CHROME_BINARY or CHROME_CDP_URL")

// StartBrowser launches Chromium (or attaches to CHROME_CDP_URL).
func StartBrowser(cfg Config) (*Browser, error) {
	b := &Browser{cfg: cfg}
	if err := b.start(); err != nil {
		return nil, err
	}
	return b, nil
}

func (b *Browser) start() error {
	var alloc context.Context
	var cancelAlloc context.CancelFunc
	if u := b.cfg.Get("CHROME_CDP_URL"); u != "" {
		alloc, cancelAlloc = remote.NewAllocator(context.Background(), u)
	} else {
		exe := FindChromium(b.cfg)
		if exe == "" {
			return ErrNoBrowser
		}
		w, h, err := b.cfg.Resolution("screenshot")
		if err != nil {
			return err
		}
		profile, lock, err := newProfile()
		if err != nil {
			return err
		}
		opts := []chromedp.ExecAllocatorOption{
			chromedp.ExecPath(exe), chromedp.Headless, chromedp.DisableGPU, chromedp.NoFirstRun,
			chromedp.NoDefaultBrowserCheck, chromedp.UserDataDir(profile), chromedp.WindowSize(w, h),
			chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
			chromedp.Flag("disable-sync", true), chromedp.Flag("disable-extensions", true),
			chromedp.Flag("disable-dev-shm-usage", true), chromedp.Flag("hide-scrollbars", true),
			chromedp.Flag("mute-audio", true), chromedp.Flag("disable-quic", true),
			// Frames of other sites run in the page's process, where one
			// DevTools session reads and watches them all (Page.Capture,
			// settle). The profile is folio's own and empty: there is no
			// reader's data for a page to reach across sites.
			chromedp.Flag("disable-features", "IsolateOrigins,site-per-process"),
			chromedp.Flag("disable-site-isolation-trials", true),
			chromedp.UserAgent(b.cfg.Get("USER_AGENT")),
		}
		if !b.cfg.Bool("CHECK_SSL_VALIDITY", true) {
			opts = append(opts, chromedp.IgnoreCertErrors)
		}
		extra, err := b.cfg.ChromeArgsExtra()
		if err != nil {
			return err
		}
		for _, a := range extra {
			name, value, hasValue := strings.Cut(strings.TrimPrefix(a, "--"), "=")
			if hasValue {
				opts = append(opts, chromedp.Flag(name, value))
			} else {
				opts = append(opts, chromedp.Flag(name, true))
			}
		}
		if os.Geteuid() == 0 || !b.cfg.Bool("CHROME_SANDBOX", true) {
			opts = append(opts, chromedp.NoSandbox)
		}
		alloc, cancelAlloc = chromedp.NewExecAllocator(context.Background(), opts...)
		b.profile, b.profileLock = profile, lock
	}
	ctx, cancel := chromedp.NewContext(alloc)
	if err := chromedp.Do(ctx); err != nil { // start it, with no deadline bound to its life
		cancel()
		cancelAlloc()
		b.removeProfile()
		return fmt.Errorf("start Chromium: %w", err)
	}
	b.ctx = ctx
	b.cancel = func() { cancel(); cancelAlloc() }
	b.launches++
	b.lastStarted = time.Now()
	return nil
}

func (b *Browser) removeProfile() {
	if b.profile != "" {
		os.RemoveAll(b.profile)
		b.profileLock.Close()
		b.profile, b.profileLock = "", nil
	}
}

// Launches counts how often the browser was started (1 + restarts).
func (b *Browser) Launches() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.launches
}

// tab opens a new tab, starting the browser again first when it died.
// A browser that died a moment ago may not have said so yet (its context
// ends when its process is reaped): when opening the tab fails and the
// browser's context ends soon after, it is started again once.
func (b *Browser) tab() (context.Context, context.CancelFunc, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for retried := false; ; retried = true {
		if b.ctx == nil || b.ctx.Err() != nil {
			if b.cancel != nil {
				b.cancel()
				b.removeProfile()
			}
			if err := b.start(); err != nil {
				return nil, nil, err
			}
		}
		ctx, cancel := chromedp.NewContext(b.ctx)
		err := chromedp.Do(ctx) // open the tab with no deadline
		if err == nil {
			return ctx, cancel, nil
		}
		cancel()
		if retried || !endsSoon(b.ctx) {
			return nil, nil, fmt.Errorf("open a browser tab: %w", err)
		}
	}
}

// endsSoon reports whether ctx ends within a few seconds: the time a
// killed browser's process takes to be reaped.
func endsSoon(ctx context.Context) bool {
	t := time.NewTimer(5 * time.Second)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return true
	case <-t.C:
		return false
	}
}

// Close stops the browser (or detaches from an attached one).
func (b *Browser) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cancel != nil {
		if b.ctx != nil && b.ctx.Err() == nil {
			tctx, tcancel := context.WithTimeout(b.ctx, 10*time.Second)
			_ = chromedp.Cancel(tctx)
			tcancel()
		}
		b.cancel()
		b.cancel = nil
	}
	b.removeProfile()
	return nil
}

// Page is a snapshot's tab after its one navigation, shared by every
// browser plugin of the snapshot.
type Page struct {
	ctx    context.Context
	cancel context.CancelFunc

	URL        string
	FinalURL   string
	Status     int64
	StatusText string
	MimeType   string
	// RequestHeaders and ResponseHeaders are those of the main document's
	// final (non-redirect) response.
	RequestHeaders  map[string]any
	ResponseHeaders map[string]any
	// Err is why the page could not be loaded; plugins then fail with it.
	Err error

	htmlOnce sync.Once
	html     string
	htmlErr  error
}

// Load opens a tab and navigates it to url, waiting for the load event at
// most cfg's CHROME_PAGELOAD_TIMEOUT, with cfg's viewport; then for the
// page to settle and be scrolled through (see settle, at most
// CHROME_SETTLE_TIMEOUT), then CHROME_DELAY_AFTER_LOAD. The returned
// Page is never nil; its Err says what went wrong.
func (b *Browser) Load(ctx context.Context, url string, cfg Config) *Page {
	p := &Page{URL: url}
	tab, cancel, err := b.tab()
	if err != nil {
		p.Err = err
		return p
	}
	p.ctx, p.cancel = tab, cancel
	startRecording(ctx, tab) // the warc plugin's recorder, when it runs
	w, h, err := cfg.Resolution("screenshot")
	if err != nil {
		p.Err = err
		return p
	}
	main := cdp.FrameID(chromedp.FromContext(tab).Target.TargetID)
	var mu sync.Mutex
	requests := map[network.RequestID]network.Headers{}
	net := newTraffic()
	lctx, stop := context.WithCancel(tab)
	defer stop()
	if err := chromedp.Listen(lctx, func(ev any) {
		net.event(ev)
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *network.EventRequestWillBeSent:
			if ev.Type == network.ResourceTypeDocument && ev.FrameID == main && ev.Request != nil {
				requests[ev.RequestID] = ev.Request.Headers
			}
		case *network.EventResponseReceived:
			if ev.Type == network.ResourceTypeDocument && ev.FrameID == main && ev.Response != nil &&
				(ev.Response.Status < 300 || ev.Response.Status >= 400) {
				r := ev.Response
				p.FinalURL, p.Status, p.StatusText, p.MimeType = r.URL, r.Status, r.StatusText, r.MimeType
				p.ResponseHeaders = headerMap(r.Headers)
				p.RequestHeaders = headerMap(requests[ev.RequestID])
				if len(r.RequestHeaders) > 0 {
					p.RequestHeaders = headerMap(r.RequestHeaders)
				}
			}
		}
	}); err != nil {
		p.Err = fmt.Errorf("listen to the tab: %w", err)
		return p
	}
	timeout := cfg.PageLoadTimeout()
	nctx, ncancel := context.WithTimeout(tab, timeout)
	defer ncancel()
	defer context.AfterFunc(ctx, ncancel)()
	_, err = chromedp.Call(nctx, network.Enable, network.EnableParams{})
	if err == nil {
		_, err = chromedp.Call(nctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: keepDrawingsJS})
	}
	if err == nil {
		_, err = chromedp.Run(nctx, chromedp.EmulateViewport(int64(w), int64(h)))
	}
	if err == nil {
		_, err = chromedp.Run(nctx, chromedp.NavigateResponse(url))
	}
	mu.Lock()
	status := p.Status
	mu.Unlock()
	switch {
	case err == nil:
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
		p.Err = fmt.Errorf("the page did not finish loading within %s (CHROME_PAGELOAD_TIMEOUT)", timeout)
		// Stop what is still loading so the tab can be closed quietly.
		sctx, scancel := context.WithTimeout(tab, 2*time.Second)
		_, _ = chromedp.Call(sctx, page.StopLoading, cdp.Empty{})
		scancel()
	case ctx.Err() != nil:
		p.Err = ctx.Err()
	case tab.Err() != nil || errors.Is(err, context.Canceled):
		// ctx is not done, so a cancellation came from the browser's
		// side: chromedp reports a lost connection as one, sometimes
		// before the tab's context is canceled.
		p.Err = errTabLost
	default:
		p.Err = fmt.Errorf("load %s: %s", url, loadError(err))
	}
	if p.Err == nil && status >= 400 {
		p.Err = fmt.Errorf("the page answered HTTP %d %s", status, p.StatusText)
	}
	if p.Err == nil {
		if limit, err := cfg.SettleTimeout(); err != nil {
			p.Err = err
		} else if limit > 0 {
			p.Err = settle(ctx, tab, net, limit)
		}
	}
	if p.Err == nil {
		if d, ok := cfg.seconds("CHROME_DELAY_AFTER_LOAD"); ok {
			select {
			case <-time.After(d):
			case <-ctx.Done():
				p.Err = ctx.Err()
			}
		}
	}
	if p.Err != nil && p.Err != errTabLost && p.Lost(ctx) {
		p.Err = errTabLost // the browser died while the page settled
	}
	return p
}

// Lost reports whether the tab's browser died (crashed, was killed or
// closed) while ctx, the capture's, is still running: the tab's context
// ended, or asking the browser for its version fails other than by
// timing out. A browser that only answers slowly is not lost. Whenever the browser dies, during
// the load or the plugins, what fails says errTabLost.
func (p *Page) Lost(ctx context.Context) bool {
	if p == nil || p.ctx == nil || ctx.Err() != nil {
		return false
	}
	if p.ctx.Err() == nil {
		pctx, cancel := context.WithTimeout(p.ctx, 5*time.Second)
		_, err := chromedp.CallBrowser(pctx, cdpbrowser.GetVersion, cdp.Empty{})
		cancel()
		switch {
		case err == nil:
			return false
		case !errors.Is(err, context.DeadlineExceeded) || p.ctx.Err() != nil:
			// chromedp reports the lost connection before it ends the
			// tab's context.
			return ctx.Err() == nil
		}
	}
	return p.ctx.Err() != nil && ctx.Err() == nil
}

// loadError turns Chromium's navigation error into one plain phrase.
func loadError(err error) string {
	s := err.Error()
	if i := strings.Index(s, "net::"); i >= 0 {
		s = s[i:]
	}
	return s
}

func headerMap(h network.Headers) map[string]any {
	out := make(map[string]any, len(h))
	for k, v := range h {
		out[k] = v
	}
	return out
}

// Context returns the tab's context, bounded by parent's deadline, for
// plugin actions; ok is false when the page is not loaded.
func (p *Page) Context(parent context.Context) (context.Context, context.CancelFunc, bool) {
	if p == nil || p.ctx == nil || p.Err != nil || p.ctx.Err() != nil {
		return nil, nil, false
	}
	var ctx context.Context
	var cancel context.CancelFunc
	if dl, ok := parent.Deadline(); ok {
		ctx, cancel = context.WithDeadline(p.ctx, dl)
	} else {
		ctx, cancel = context.WithCancel(p.ctx)
	}
	stop := context.AfterFunc(parent, cancel)
	return ctx, func() { stop(); cancel() }, true
}

// HTML is the rendered DOM with its doctype, read once and shared by the
// plugins that work on it (dom, singlefile, readability, htmltotext).
func (p *Page) HTML(ctx context.Context) (string, error) {
	p.htmlOnce.Do(func() {
		tctx, cancel, ok := p.Context(ctx)
		if !ok {
			p.htmlErr = pageErr(p)
			return
		}
		defer cancel()
		p.html, p.htmlErr = chromedp.Run(tctx, chromedp.Evaluate[string](`(() => {
			const d = document.doctype;
			const dt = d ? "<!DOCTYPE " + d.name + (d.publicId ? ' PUBLIC "' + d.publicId + '"' : "") +
				(d.systemId ? ' "' + d.systemId + '"' : "") + ">\n" : "";
			return dt + document.documentElement.outerHTML;
		})()`))
	})
	return p.html, p.htmlErr
}

// Close closes the tab.
func (p *Page) Close() {
	if p != nil && p.cancel != nil {
		p.cancel()
	}
}
