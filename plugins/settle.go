package plugins

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// After the load event a page is read only once it is quiet: no request
// in flight and none started or ended, and no node added, removed or
// changed in its document, for quietWindow. It is then scrolled through
// once, a viewport at a time (lazy loaders and loading=lazy images start
// when they come into view), put back where it was, and waited for again
// (for scrolledWindow from the end of the scroll: what scrolling started
// has begun by then, and the page was quiet before).
// CHROME_SETTLE_TIMEOUT bounds all of it: a page that never goes quiet (a
// long poll, an animation that rewrites the DOM) is read when it runs out.
const (
	quietWindow    = 500 * time.Millisecond
	scrolledWindow = 250 * time.Millisecond
	maxScrolls     = 50 // viewports scrolled through at most
)

// SettleTimeout is CHROME_SETTLE_TIMEOUT: how long at most a loaded page
// is waited for to go quiet and scrolled through. 0 reads the page at its
// load event.
func (c Config) SettleTimeout() (time.Duration, error) {
	v := strings.TrimSpace(c.values["CHROME_SETTLE_TIMEOUT"])
	if v == "" {
		return 5 * time.Second, nil
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f < 0 {
		return 0, fmt.Errorf("CHROME_SETTLE_TIMEOUT=%q: want a number of seconds (0 reads the page at its load event)", v)
	}
	return time.Duration(f * float64(time.Second)), nil
}

// traffic follows a tab's requests, of every frame, from its Network
// events.
type traffic struct {
	mu       sync.Mutex
	inflight map[network.RequestID]bool
	last     time.Time // when a request last started or ended
	seq      int       // counts those events
	changed  chan struct{}
}

func newTraffic() *traffic {
	return &traffic{inflight: map[network.RequestID]bool{}, last: time.Now(), changed: make(chan struct{}, 1)}
}

// event notes a Network event (others are ignored).
func (t *traffic) event(ev any) {
	var id network.RequestID
	start := false
	switch ev := ev.(type) {
	case *network.EventRequestWillBeSent:
		id, start = ev.RequestID, true
	case *network.EventLoadingFinished:
		id = ev.RequestID
	case *network.EventLoadingFailed:
		id = ev.RequestID
	default:
		return
	}
	t.mu.Lock()
	if start {
		t.inflight[id] = true
	} else {
		delete(t.inflight, id)
	}
	t.last = time.Now()
	t.seq++
	t.mu.Unlock()
	select {
	case t.changed <- struct{}{}:
	default:
	}
}

// touch counts now as the last request event.
func (t *traffic) touch() {
	t.mu.Lock()
	t.last = time.Now()
	t.mu.Unlock()
}

// idle waits until no request is in flight and none started or ended for
// window, and returns the event count then; false when the deadline or
// ctx came first.
func (t *traffic) idle(ctx context.Context, window time.Duration, deadline time.Time) (int, bool) {
	for {
		t.mu.Lock()
		busy, since, seq := len(t.inflight) > 0, time.Since(t.last), t.seq
		t.mu.Unlock()
		if !busy && since >= window {
			return seq, true
		}
		wait := time.Until(deadline)
		if wait <= 0 {
			return seq, false
		}
		if !busy && window-since < wait {
			wait = window - since
		}
		timer := time.NewTimer(wait)
		select {
		case <-t.changed:
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			return seq, false
		}
		timer.Stop()
	}
}

func (t *traffic) count() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.seq
}

// settleJS runs in folio's isolated world of the page: it notes when the
// document last changed (from the moment it runs) and defines the two
// waits settle awaits. Nothing of it is visible to the page's scripts.
const settleJS = `(() => {
	if (globalThis.folioSettle) return;
	let last = performance.now();
	new MutationObserver(() => { last = performance.now(); })
		.observe(document, {subtree: true, childList: true, characterData: true});
	// quiet resolves once the document has not changed for ms, or after
	// cap ms; true when it went quiet.
	const quiet = (ms, cap) => new Promise(resolve => {
		const end = performance.now() + cap;
		const check = () => {
			const now = performance.now();
			if (now - last >= ms || now >= end) return resolve(now - last >= ms);
			setTimeout(check, Math.min(ms - (now - last), end - now));
		};
		check();
	});
	// frame resolves after the next rendering update (when intersection
	// observers have run), or after 500 ms in a tab that does not render.
	const frame = () => new Promise(resolve => {
		const t = setTimeout(resolve, 500);
		requestAnimationFrame(() => requestAnimationFrame(() => { clearTimeout(t); resolve(); }));
	});
	// scroll goes through the page a viewport at a time and back to where
	// it was; true when the page was taller than the viewport.
	const scroll = async (steps, cap) => {
		const el = document.scrollingElement || document.documentElement;
		const x = scrollX, y = scrollY, h = innerHeight;
		if (!el || h <= 0 || el.scrollHeight <= h) return false;
		const end = performance.now() + cap;
		for (let i = 1; i <= steps && i * h < el.scrollHeight && performance.now() < end; i++) {
			scrollTo({left: x, top: i * h, behavior: "instant"});
			await frame();
		}
		scrollTo({left: x, top: y, behavior: "instant"});
		await frame();
		return true;
	};
	globalThis.folioSettle = {quiet, scroll};
})()`

// settle waits for the loaded page to go quiet, scrolls it through and
// waits again, all within limit. It fails only when ctx ends: a page that
// cannot be watched or scrolled (it navigated away, say) is read as it is.
func settle(ctx, tab context.Context, net *traffic, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	sctx, cancel := context.WithDeadline(tab, deadline)
	defer cancel()
	defer context.AfterFunc(ctx, cancel)()
	main := cdp.FrameID(chromedp.FromContext(tab).Target.TargetID)
	w, err := chromedp.Call(sctx, page.CreateIsolatedWorld, page.CreateIsolatedWorldParams{FrameID: main, WorldName: worldName})
	if err == nil {
		_, err = eval[any](sctx, w.ExecutionContextID, settleJS)
	}
	quiet := func(window time.Duration) {
		for {
			seq, ok := net.idle(sctx, window, deadline)
			if !ok {
				return
			}
			if err == nil {
				left := time.Until(deadline).Milliseconds()
				calm, qerr := eval[bool](sctx, w.ExecutionContextID, fmt.Sprintf("folioSettle.quiet(%d, %d)", window.Milliseconds(), left))
				if qerr != nil || !calm {
					return
				}
			}
			if net.count() == seq {
				return
			}
		}
	}
	quiet(quietWindow)
	if err == nil && time.Now().Before(deadline) {
		left := time.Until(deadline).Milliseconds()
		scrolled, _ := eval[bool](sctx, w.ExecutionContextID, fmt.Sprintf("folioSettle.scroll(%d, %d)", maxScrolls, left))
		if scrolled {
			net.touch()
			quiet(scrolledWindow)
		}
	}
	return ctx.Err()
}

// eval evaluates a script in an execution context, awaiting its promise.
func eval[T any](ctx context.Context, w runtime.ExecutionContextID, js string) (T, error) {
	return chromedp.Run(ctx, chromedp.Evaluate[T](js, chromedp.EvalAwaitPromise, func(p *runtime.EvaluateParams) { p.ContextID = w }))
}
