package capture

import (
	"context"
	"fmt"
	"path"
	"sync"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/capture/input"
	"github.com/folio-archive/folio/layout"
	"github.com/folio-archive/folio/plugins"
)

// queue hands snapshots to the workers, at most limit of one domain at a
// time, taking domains in turn so one large site does not hold up the
// rest. Workers stop when nothing is queued and nothing is running (a
// running capture may still queue the pages it links to).
type queue struct {
	mu       sync.Mutex
	cond     *sync.Cond
	byDomain map[string][]*snapshot
	domains  []string // domains with queued snapshots, in turn order
	active   map[string]int
	limit    int
	queued   int
	running  int
	stopped  bool
}

func newQueue(limit int) *queue {
	q := &queue{byDomain: map[string][]*snapshot{}, active: map[string]int{}, limit: limit}
	q.cond = sync.NewCond(&q.mu)
	return q
}

func (q *queue) push(s *snapshot) {
	d := layout.Domain(s.rec.URL)
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.byDomain[d]) == 0 {
		q.domains = append(q.domains, d)
	}
	q.byDomain[d] = append(q.byDomain[d], s)
	q.queued++
	q.cond.Broadcast()
}

// next blocks until a snapshot may start; false means the work is done or
// stopped.
func (q *queue) next() (*snapshot, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for {
		if q.stopped || (q.queued == 0 && q.running == 0) {
			return nil, false
		}
		for i, d := range q.domains {
			if q.active[d] >= q.limit {
				continue
			}
			list := q.byDomain[d]
			s := list[0]
			q.byDomain[d] = list[1:]
			q.domains = append(q.domains[:i:i], q.domains[i+1:]...)
			if len(list) > 1 {
				q.domains = append(q.domains, d) // its turn comes again after the others
			}
			q.active[d]++
			q.queued--
			q.running++
			return s, true
		}
		q.cond.Wait()
	}
}

func (q *queue) done(s *snapshot) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.active[layout.Domain(s.rec.URL)]--
	q.running--
	q.cond.Broadcast()
}

func (q *queue) stop() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.stopped = true
	q.cond.Broadcast()
}

// left returns the snapshots still queued.
func (q *queue) left() []*snapshot {
	q.mu.Lock()
	defer q.mu.Unlock()
	var out []*snapshot
	for _, d := range q.domains {
		out = append(out, q.byDomain[d]...)
	}
	return out
}

// captureAll captures snaps (and, with depth 1, the pages they link to)
// with opts.Parallel workers.
func (r *run) captureAll(ctx context.Context, snaps []*snapshot) error {
	q := newQueue(r.opts.PerDomain)
	for _, s := range snaps {
		q.push(s)
	}
	stop := context.AfterFunc(ctx, q.stop)
	defer stop()
	var (
		wg      sync.WaitGroup
		total   = int64(len(snaps))
		done    int64
		countMu sync.Mutex
	)
	r.p.Progress("capture", 0, total)
	for range r.opts.Parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				s, ok := q.next()
				if !ok {
					return
				}
				var children []*snapshot
				r.starting(s)
				if rt := r.retries[s]; rt != nil {
					r.retryOne(ctx, s, rt)
				} else {
					children = r.captureOne(ctx, s)
				}
				r.finished(ctx, s)
				for _, c := range children {
					q.push(c)
				}
				q.done(s)
				countMu.Lock()
				done++
				total += int64(len(children))
				r.p.Progress("capture", done, total)
				countMu.Unlock()
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		r.mu.Lock()
		r.st.Queued += len(q.left())
		r.mu.Unlock()
		return err
	}
	return nil
}

// captureOne runs the plugins over one snapshot and returns the snapshots
// it created for the pages the snapshot links to.
func (r *run) captureOne(ctx context.Context, s *snapshot) []*snapshot {
	err := r.note(s.dir)
	if err == nil {
		err = s.setStatus("started")
	}
	if err != nil {
		r.fail(s, "", err.Error())
		return nil
	}
	job := &plugins.Job{URL: s.rec.URL, Dir: s.abs(), SnapshotID: s.rec.ID, Depth: s.rec.Depth}
	withLinks := s.rec.Depth < r.opts.Depth
	err = r.runner.Capture(ctx, job, withLinks, func(res archive.Result) error {
		r.count(res)
		if err := s.addResult(res); err != nil {
			return err
		}
		return r.fault("result", s.dir)
	})
	if ctx.Err() != nil {
		// Interrupted: what finished is recorded; the rest waits for
		// --resume. The write must happen even though ctx is done.
		if err := s.setStatus("queued"); err != nil {
			r.p.Warnf("%s: %v", s.dir, err)
		}
		r.mu.Lock()
		r.st.Queued++
		r.mu.Unlock()
		return nil
	}
	if err != nil {
		r.p.Warnf("%s: %v", s.dir, err)
		if serr := s.setStatus("queued"); serr != nil {
			r.p.Warnf("%s: %v", s.dir, serr)
		}
		r.fail(s, "", fmt.Sprintf("left queued: %v", err))
		return nil
	}
	switch {
	case s.rec.Title != "":
	case job.Title != "":
		s.rec.Title = job.Title
	case job.Static != "":
		s.rec.Title = path.Base(job.Static) // a file has its name for a title
	}
	if err := s.seal(); err != nil {
		r.fail(s, "", err.Error())
		return nil
	}
	if err := r.fault("sealed", s.dir); err != nil {
		r.fail(s, "", err.Error())
		return nil
	}
	r.mu.Lock()
	r.st.Sealed++
	r.mu.Unlock()
	r.judge(s)
	if !withLinks {
		return nil
	}
	return r.children(s, job.Links)
}

// judge counts a sealed snapshot by its state (its results of this run
// and of earlier ones, for --resume) and names its first standing
// failure: a failed snapshot archived nothing, a partial one kept some
// content.
func (r *run) judge(s *snapshot) {
	s.mu.Lock()
	results := archive.Standing(s.ix.Results())
	state := archive.StateOf(s.rec, results)
	s.mu.Unlock()
	var first *archive.Result
	for i := range results {
		if archive.NormalizeStatus(results[i].Status) == archive.StatusFailed {
			first = &results[i]
			break
		}
	}
	switch {
	case state == archive.StateFailed && first != nil:
		r.fail(s, "", fmt.Sprintf("nothing archived (%s failed: %s)", first.Plugin, first.OutputStr))
	case state == archive.StateFailed:
		r.fail(s, "", "nothing archived: no capture method found anything")
	case state == archive.StatePartial:
		r.p.Warnf("%s: %s failed: %s (%s)", s.rec.URL, first.Plugin, first.OutputStr, s.dir)
		r.mu.Lock()
		r.st.Partial++
		r.mu.Unlock()
	}
}

// fail reports a snapshot that failed (archived nothing, or could not
// be captured), as it happens.
func (r *run) fail(s *snapshot, plugin, reason string) {
	if plugin != "" {
		r.p.Warnf("%s: %s failed: %s (%s)", s.rec.URL, plugin, reason, s.dir)
	} else {
		r.p.Warnf("%s: %s (%s)", s.rec.URL, reason, s.dir)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.st.Failed++
}

// children creates the depth+1 snapshots of the links a page holds that
// this run has not added yet.
func (r *run) children(parent *snapshot, links []string) []*snapshot {
	var items []input.Item
	r.mu.Lock()
	for _, l := range links {
		u, err := input.ValidateWeb(l)
		if err != nil || r.seen[u] {
			continue
		}
		r.seen[u] = true
		items = append(items, input.Item{URL: u, Tags: parent.rec.Tags})
	}
	r.mu.Unlock()
	out, err := r.create(items, parent.rec.Depth+1, parent.rec.CrawlID, parent.crawl)
	if err != nil {
		r.p.Warnf("%s: the pages it links to: %v", parent.dir, err)
	}
	return out
}
