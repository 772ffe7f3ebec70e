package capture

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/folio-archive/folio/archive"
)

func snap(url string) *snapshot { return &snapshot{rec: archive.Snapshot{URL: url}} }

// Domains take turns, and no domain has more than the limit running.
func TestQueueTakesDomainsInTurn(t *testing.T) {
	q := newQueue(1)
	for _, u := range []string{"http://a.test/1", "http://a.test/2", "http://a.test/3", "http://b.test/1", "http://c.test/1"} {
		q.push(snap(u))
	}
	var order []string
	for range 3 {
		s, ok := q.next()
		if !ok {
			t.Fatal("queue ended early")
		}
		order = append(order, s.rec.URL)
	}
	if want := []string{"http://a.test/1", "http://b.test/1", "http://c.test/1"}; !equal(order, want) {
		t.Errorf("first three %v, want %v", order, want)
	}
	// a.test is at its limit: next blocks until it is done.
	got := make(chan *snapshot)
	go func() {
		s, _ := q.next()
		got <- s
	}()
	select {
	case s := <-got:
		t.Fatalf("next returned %s while a.test was at its limit", s.rec.URL)
	case <-time.After(50 * time.Millisecond):
	}
	q.done(snap("http://a.test/1"))
	if s := <-got; s.rec.URL != "http://a.test/2" {
		t.Errorf("after a.test/1 finished: %s", s.rec.URL)
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Workers end when nothing is queued or running, also when running work
// queues more; the limit holds throughout.
func TestQueueLimitAndEnd(t *testing.T) {
	q := newQueue(2)
	for range 10 {
		q.push(snap("http://a.test/x"))
	}
	var running, peak, served atomic.Int64
	var wg sync.WaitGroup
	for range 5 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				s, ok := q.next()
				if !ok {
					return
				}
				n := running.Add(1)
				for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
				}
				time.Sleep(time.Millisecond)
				if served.Add(1) == 3 {
					q.push(snap("http://b.test/child")) // a capture queues a link
				}
				running.Add(-1)
				q.done(s)
			}
		}()
	}
	wg.Wait()
	if served.Load() != 11 {
		t.Errorf("served %d, want 11", served.Load())
	}
	if peak.Load() > 3 { // two of a.test, one of b.test
		t.Errorf("peak %d running", peak.Load())
	}
}
