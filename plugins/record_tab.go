package plugins

import (
	"context"
	"net/url"
	"strings"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// recorderKey carries a job's Recorder in the context its page is loaded
// with, so that Browser.Load can start recording before it navigates.
type recorderKey struct{}

func withRecorder(ctx context.Context, r *Recorder) context.Context {
	return context.WithValue(ctx, recorderKey{}, r)
}

// startRecording listens to the tab for the Recorder ctx carries, if any;
// without one it does nothing.
func startRecording(ctx, tab context.Context) {
	if r, ok := ctx.Value(recorderKey{}).(*Recorder); ok && r != nil {
		r.listen(tab)
	}
}

// tabExchange is an exchange of the tab while it is recorded: which hop
// of its request it is, and how its body is being read.
type tabExchange struct {
	*exchange
	id       network.RequestID
	req      *tabRequest
	hop      int
	method   string
	target   string
	reqH     network.Headers
	resp     *network.Response
	stream   int // streamAsking, streamOn, streamRefused
	queued   [][]byte
	finished bool
	received int64 // the body's length as Chromium reported it, decoded
}

const (
	streamAsking = iota + 1
	streamOn
	streamRefused
)

// tabRequest is what Chromium said about one request id: its hops (a
// redirect makes a new one) and the ExtraInfo events, matched to the
// hops in order.
type tabRequest struct {
	hops      []*tabExchange
	reqExtra  []network.Headers
	respExtra []*network.EventResponseReceivedExtraInfo
}

// listen records every request of the tab, in every frame: the raw
// headers from the ExtraInfo events where Chromium sends them; bodies
// streamed as they arrive (Network.streamResourceContent) or, for a
// response that could not be streamed, read once it has finished
// (Network.getResponseBody) when it is small.
//
// Streaming must be on before the first byte of a body reaches the page,
// or those bytes are missed: on a fast network the body is often there
// before Chromium answers. So each response is held (the Fetch domain,
// at the response stage) until streaming is on, then let through. Every
// held response is let through, whatever happens, or the page would hang.
func (r *Recorder) listen(tab context.Context) {
	lctx, cancel := context.WithCancel(tab)
	reqs := map[network.RequestID]*tabRequest{}
	get := func(id network.RequestID) *tabRequest {
		tr := reqs[id]
		if tr == nil {
			tr = &tabRequest{}
			reqs[id] = tr
		}
		return tr
	}
	last := func(id network.RequestID) *tabExchange {
		if tr := reqs[id]; tr != nil && len(tr.hops) > 0 {
			return tr.hops[len(tr.hops)-1]
		}
		return nil
	}
	intercept := false
	early := map[network.RequestID]*fetch.EventRequestPaused{}
	err := chromedp.Listen(lctx, func(ev any) {
		r.mu.Lock()
		defer r.mu.Unlock()
		if ev, ok := ev.(*fetch.EventRequestPaused); ok {
			r.paused(lctx, ev, last(ev.NetworkID), early)
			return
		}
		if r.closed {
			return
		}
		switch ev := ev.(type) {
		case *network.EventRequestWillBeSent:
			if pe := early[ev.RequestID]; pe != nil {
				// The response came before the page told of its
				// request: it is handled once this hop is known.
				delete(early, ev.RequestID)
				defer func() { r.paused(lctx, pe, last(ev.RequestID), nil) }()
			}
			tr := get(ev.RequestID)
			if ev.RedirectResponse != nil {
				if prev := last(ev.RequestID); prev != nil && prev.resp == nil {
					prev.resp = ev.RedirectResponse
					prev.finish()
				}
			}
			if ev.Request == nil || !recordable(ev.Request.URL) {
				return
			}
			u, _ := url.Parse(ev.Request.URL)
			ex := &tabExchange{exchange: &exchange{url: ev.Request.URL, date: wallTime(ev.WallTime, r.now)},
				id: ev.RequestID, req: tr, hop: len(tr.hops), method: ev.Request.Method, target: u.RequestURI(), reqH: ev.Request.Headers}
			for _, e := range ev.Request.PostDataEntries {
				ex.reqBody = append(ex.reqBody, e.Bytes...)
			}
			tr.hops = append(tr.hops, ex)
			ex.body.rec = r
			r.exchanges = append(r.exchanges, ex.exchange)
			if ex.hop == 0 && !intercept {
				// Without responses held, asking before the response
				// comes misses the least data.
				r.askStream(lctx, ex, nil)
			}
			if ev.Request.HasPostData && len(ex.reqBody) == 0 {
				r.async(lctx, func(ctx context.Context) {
					res, err := chromedp.Call(ctx, network.GetRequestPostData, network.GetRequestPostDataParams{RequestID: ex.id})
					if err == nil {
						r.mu.Lock()
						ex.reqBody = res.PostData
						r.mu.Unlock()
					}
				})
			}
		case *network.EventRequestWillBeSentExtraInfo:
			tr := get(ev.RequestID)
			tr.reqExtra = append(tr.reqExtra, ev.Headers)
		case *network.EventResponseReceivedExtraInfo:
			tr := get(ev.RequestID)
			tr.respExtra = append(tr.respExtra, ev)
		case *network.EventResponseReceived:
			ex := last(ev.RequestID)
			if ex == nil || ex.resp != nil || ev.Response == nil {
				return
			}
			ex.resp = ev.Response
			if ev.Response.Status == 206 {
				ex.skip = true
				return
			}
			if ex.stream == 0 || ex.stream == streamRefused && !ex.finished {
				r.askStream(lctx, ex, nil) // a response that was not held
			}
		case *network.EventDataReceived:
			ex := last(ev.RequestID)
			if ex == nil {
				return
			}
			ex.received += ev.DataLength
			switch ex.stream {
			case streamAsking:
				if len(ev.Data) > 0 {
					ex.queued = append(ex.queued, ev.Data)
				}
			case streamOn:
				if len(ev.Data) > 0 {
					ex.body.Write(ev.Data)
				}
			}
		case *network.EventLoadingFinished:
			ex := last(ev.RequestID)
			if ex == nil || ex.resp == nil {
				return
			}
			ex.finished = true
			switch ex.stream {
			case streamOn:
				ex.streamed(r, lctx)
			case streamRefused:
				r.readBody(lctx, ex)
			}
		case *network.EventLoadingFailed:
			if ex := last(ev.RequestID); ex != nil {
				ex.skip = true
			}
		}
	})
	if err != nil {
		cancel()
		return
	}
	// Held at the response stage, a request has been sent (so the page
	// knows it and can stream it) and none of its body has moved yet.
	ectx, ecancel := context.WithTimeout(lctx, 10*time.Second)
	_, err = chromedp.Call(ectx, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{{URLPattern: "*", RequestStage: fetch.RequestStageResponse}}})
	ecancel()
	r.mu.Lock()
	intercept = err == nil
	r.stopTab = func() {
		if intercept {
			// Lets through whatever is still held.
			dctx, dcancel := context.WithTimeout(lctx, 5*time.Second)
			_, _ = chromedp.Call(dctx, fetch.Disable, cdp.Empty{})
			dcancel()
		}
		cancel()
	}
	r.mu.Unlock()
}

// paused handles a response held at the response stage: when it is one
// being recorded, streaming of its body is asked for before it is let
// through; in every case it is let through. r.mu is held.
//
// Fetch's events come from the browser, the Network events from the
// page, so a response may be held before the page's requestWillBeSent
// for it came: let through then, its first bytes would be gone before
// streaming is on. When early is not nil, such a response is parked in
// it until its request is known (listen hands it back), or for
// announceWithin at most (a request the page never tells of).
func (r *Recorder) paused(lctx context.Context, ev *fetch.EventRequestPaused, ex *tabExchange, early map[network.RequestID]*fetch.EventRequestPaused) {
	resume := func() {
		ctx, cancel := context.WithTimeout(lctx, time.Minute)
		defer cancel()
		_, _ = chromedp.Call(ctx, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: ev.RequestID})
	}
	code := ev.ResponseStatusCode
	pass := r.closed || ev.ResponseErrorReason != "" ||
		code >= 300 && code < 400 || code == 206 || code == 204 || ev.ResourceType == network.ResourceTypeDocument
	unknown := ex == nil || ev.Request == nil || ex.url != ev.Request.URL
	if !pass && unknown && early != nil && ev.NetworkID != "" && early[ev.NetworkID] == nil {
		early[ev.NetworkID] = ev
		time.AfterFunc(announceWithin, func() {
			r.mu.Lock()
			defer r.mu.Unlock()
			if early[ev.NetworkID] == ev {
				delete(early, ev.NetworkID)
				r.paused(lctx, ev, nil, nil)
			}
		})
		return
	}
	if pass || unknown || ex.stream != 0 || ex.resp != nil {
		// Not recorded, a redirect (its hop has no body), a body not
		// wanted, or a frame's document (held, it is unknown to the
		// page and Chromium never answers the ask: it is asked for once
		// its response came): let it through at once. Not counted in
		// pending: stop may be waiting for it already.
		go resume()
		return
	}
	r.askStream(lctx, ex, resume)
}

// announceWithin bounds how long a held response waits for the page to
// tell of its request.
const announceWithin = 10 * time.Second

// askStream asks Chromium to stream ex's body in the dataReceived
// events; when it refuses (the request is unknown to the page yet, or
// has finished), the body is read once it has finished. then, when not
// nil, runs once Chromium answered, whatever it answered. r.mu is held.
func (r *Recorder) askStream(lctx context.Context, ex *tabExchange, then func()) {
	ex.stream = streamAsking
	r.async(lctx, func(ctx context.Context) {
		if then != nil {
			defer then() // with a context of its own: ctx may have run out
		}
		res, err := chromedp.Call(ctx, network.StreamResourceContent, network.StreamResourceContentParams{RequestID: ex.id})
		r.mu.Lock()
		defer r.mu.Unlock()
		if err != nil {
			ex.stream, ex.queued = streamRefused, nil
			if ex.finished {
				r.readBody(lctx, ex)
			}
			return
		}
		ex.body.Write(res.BufferedData)
		for _, q := range ex.queued {
			ex.body.Write(q)
		}
		ex.stream, ex.queued = streamOn, nil
		if ex.finished {
			ex.streamed(r, lctx)
		}
	})
}

// async runs f in a goroutine that stop waits for, bounded by ctx and a
// minute.
func (r *Recorder) async(ctx context.Context, f func(context.Context)) {
	r.pending.Add(1)
	go func() {
		defer r.pending.Done()
		tctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		f(tctx)
	}()
}

// streamed completes a streamed response. Chromium may accept to stream
// a response whose data it already passed on, and then streams nothing:
// when the bytes streamed are not the bytes received, the body is read
// whole instead. r.mu is held.
func (ex *tabExchange) streamed(r *Recorder, ctx context.Context) {
	if ex.body.size == ex.received {
		ex.via = viaStream
		ex.finish()
		return
	}
	ex.body.reset()
	r.readBody(ctx, ex)
}

// readBody reads a finished response's body with Network.getResponseBody
// (Chromium keeps it while the tab lives). That holds the body in memory
// at once, so a body past readWholeUpTo is not read: its record says it
// is truncated. The bodies that come here are the few that could not be
// streamed, mostly documents (a frame's document cannot be held while it
// is unknown to the page): a long article runs to a few MiB, which is why
// the bound is well above spoolAbove. r.mu is held.
func (r *Recorder) readBody(ctx context.Context, ex *tabExchange) {
	if ex.received > readWholeUpTo {
		ex.body.reset()
		ex.truncated, ex.via = "unspecified", viaNone
		ex.finish()
		return
	}
	r.async(ctx, func(ctx context.Context) {
		res, err := chromedp.Call(ctx, network.GetResponseBody, network.GetResponseBodyParams{RequestID: ex.id})
		r.mu.Lock()
		defer r.mu.Unlock()
		if err != nil {
			// A response without a body (a 204, a HEAD) has none to give.
			if ex.resp.Status >= 200 && ex.resp.Status != 204 && ex.resp.Status != 304 && ex.method != "HEAD" {
				ex.truncated = "unspecified"
			}
		} else {
			ex.body.Write(res.Body)
			ex.via = viaWhole
		}
		ex.finish()
	})
}

// finish marks the exchange complete; its heads are settled when the
// WARC is written, since an ExtraInfo event may come after the rest.
func (ex *tabExchange) finish() {
	ex.done = true
	ex.settle = ex.heads
}

// heads settles the heads of a complete exchange: the ExtraInfo of its
// hop when Chromium sent one, the Response's headers otherwise.
func (ex *tabExchange) heads() {
	tr, resp := ex.req, ex.resp
	proto := "HTTP/1.1"
	if strings.EqualFold(resp.Protocol, "http/1.0") {
		proto = "HTTP/1.0"
	}
	reqH := ex.reqH
	if ex.hop < len(tr.reqExtra) {
		reqH = tr.reqExtra[ex.hop]
	} else if len(resp.RequestHeaders) > 0 {
		reqH = resp.RequestHeaders
	}
	reqMap := headerLists(reqH)
	if _, ok := reqMap["Host"]; !ok {
		if a, ok := reqMap[":authority"]; ok {
			reqMap["Host"] = a
		} else if u, err := url.Parse(ex.url); err == nil {
			reqMap["Host"] = []string{u.Host}
		}
	}
	ex.reqHead = requestHead(ex.method, ex.target, proto, reqMap)
	raw, status, respH := "", int(resp.Status), resp.Headers
	if ex.hop < len(tr.respExtra) {
		x := tr.respExtra[ex.hop]
		raw, respH = x.HeadersText, x.Headers
		if x.StatusCode != 0 {
			status = int(x.StatusCode)
		}
	}
	if status == 206 {
		ex.skip = true
	}
	text, respMap := resp.StatusText, headerLists(respH)
	ex.respHead = func(size int64) []byte { return responseHead(raw, proto, status, text, respMap, size) }
	ex.ip = resp.RemoteIPAddress
}

// headerLists turns Chromium's header map into lists of values.
func headerLists(h network.Headers) map[string][]string {
	out := make(map[string][]string, len(h))
	for k, v := range h {
		if s, ok := v.(string); ok {
			out[k] = []string{s}
		}
	}
	return out
}

// recordable reports whether a URL's exchange goes into the WARC: http
// and https only (no data:, blob: or about:).
func recordable(u string) bool {
	return strings.HasPrefix(u, "http://") || strings.HasPrefix(u, "https://")
}

// wallTime is a CDP wall time, now when Chromium gave none.
func wallTime(t cdp.TimeSinceEpoch, now func() time.Time) time.Time {
	if f := t.Float64(); f > 0 {
		return time.UnixMicro(int64(f * 1e6)).UTC()
	}
	return now().UTC()
}
