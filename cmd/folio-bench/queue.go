package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/capture"
	"github.com/folio-archive/folio/fixtures"
	"github.com/folio-archive/folio/queue"
)

func init() {
	suites = append(suites, Suite{
		Name: "queue",
		Doc:  "claims per second of the job queue (SQLite; PostgreSQL with FOLIO_BENCH_QUEUE_URL), and folio worker ×1, 2, 4 beside add --parallel 1, 2, 4",
		Run:  runQueue,
	})
}

// queueClaims is how many empty jobs the claim measurement works through.
const queueClaims = 2000

// runQueue measures the queue itself (jobs claimed and completed per
// second by one worker with 8 slots whose capture does nothing), on the
// embedded SQLite queue and, when FOLIO_BENCH_QUEUE_URL names an empty
// PostgreSQL database, on PostgreSQL; then pages per second of k folio
// worker processes (one capture each) over 20 fixture pages with every
// built-in plugin, beside add --parallel k of the same pages, so the
// queue's overhead is the ratio.
func runQueue(b *B) error {
	claims := []struct{ name, url string }{{"SQLite", ""}}
	if pg := os.Getenv("FOLIO_BENCH_QUEUE_URL"); pg != "" {
		claims = append(claims, struct{ name, url string }{"PostgreSQL", pg})
	} else {
		b.Fail("queue claims, PostgreSQL", fmt.Errorf("set FOLIO_BENCH_QUEUE_URL=postgres://… (an empty database) to measure it"))
	}
	for _, c := range claims {
		// River's default pause between claims (100 ms for 8 slots) beside
		// a 1 ms one: the second shows what the database itself allows.
		for _, cooldown := range []time.Duration{0, time.Millisecond} {
			per, err := claimTime(b, c.url, cooldown)
			pause := "River's default fetch cooldown"
			if cooldown > 0 {
				pause = "fetch cooldown " + cooldown.String()
			}
			row := Row{Work: fmt.Sprintf("queue claims, %d empty jobs, %s, %s (per claim)", queueClaims, c.name, pause), Value: per, Err: err}
			if err == nil {
				row.Note = fmt.Sprintf("%.0f claims/s", 1/per)
			}
			b.Add(row)
		}
	}

	srv, err := fixtures.Start()
	if err != nil {
		return err
	}
	defer srv.Close()
	urls := pageURLs(srv, "queue")
	data := filepath.Join(b.Work, "queue-data")
	defer os.RemoveAll(data)
	fresh := func(enqueue bool) func() error {
		return func() error {
			if err := os.RemoveAll(data); err != nil {
				return err
			}
			if err := b.FolioCmd(data, "init", "-q").Run(); err != nil {
				return err
			}
			if !enqueue {
				return nil
			}
			return b.FolioCmd(data, append([]string{"add", "-q", "--enqueue-only"}, urls...)...).Run()
		}
	}
	perPage := func(m Measure) float64 { return m.Wall.Seconds() / capturePages }
	for _, k := range []int{1, 2, 4} {
		workers := Step{Setup: fresh(true), Cmd: func() *exec.Cmd {
			// k processes on this machine, each with its Chromium, as k machines would run them.
			line := fmt.Sprintf("%q --data-dir %q worker -q --drain -j 1", b.Folio, data)
			script := strings.Repeat(line+" &\n", k) + "wait\n"
			cmd := exec.CommandContext(b.Ctx, "sh", "-c", script)
			cmd.Env = append(os.Environ(), "FOLIO_DATA_DIR="+data)
			return cmd
		}}
		add := Step{Setup: fresh(false), Cmd: func() *exec.Cmd {
			return b.FolioCmd(data, append([]string{"add", "-q", "--parallel", fmt.Sprint(k), "--per-domain", "0"}, urls...)...)
		}}
		w, a, err := b.Interleave(workers, add)
		row := Row{Work: fmt.Sprintf("folio worker ×%d, %d pages, all built-in plugins (per page)", k, capturePages),
			Value: perPage(w.Measure), Err: err, Baseline: perPage(a.Measure), BaselineName: fmt.Sprintf("add --parallel %d per page", k)}
		if err == nil {
			row.Note = fmt.Sprintf("%.2f pages/s (add: %.2f); includes each worker's start and its --drain check; worker %s; add %s",
				capturePages/w.Wall.Seconds(), capturePages/a.Wall.Seconds(), w.text(), a.text())
		}
		b.Add(row)
	}
	return nil
}

// claimTime is the time per job of one worker completing queueClaims
// jobs whose capture returns at once.
func claimTime(b *B, url string, cooldown time.Duration) (float64, error) {
	dir, err := os.MkdirTemp(b.Work, "queue-claims-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	if _, err := archive.Init(dir, false); err != nil {
		return 0, err
	}
	c, err := archive.Open(dir)
	if err != nil {
		return 0, err
	}
	var done atomic.Int64
	ctx, cancel := context.WithCancel(b.Ctx)
	defer cancel()
	q, err := queue.Open(ctx, c, queue.Options{URL: url, Concurrency: 8, FetchCooldown: cooldown, Capture: func(context.Context, capture.Pending) error {
		if done.Add(1) == queueClaims {
			cancel()
		}
		return nil
	}})
	if err != nil {
		return 0, err
	}
	defer q.Close()
	jobs := make([]capture.Pending, queueClaims)
	run := time.Now().UnixNano() // a shared database may hold the jobs of an earlier run
	for i := range jobs {
		jobs[i] = capture.Pending{ID: fmt.Sprintf("bench-%d-%d", run, i), Dir: "none"}
	}
	if _, err := q.Enqueue(ctx, jobs); err != nil {
		return 0, err
	}
	start := time.Now()
	if err := q.Run(ctx); err != nil && ctx.Err() == nil {
		return 0, err
	}
	if n := done.Load(); n < queueClaims {
		return 0, fmt.Errorf("%d of %d jobs claimed before the run was stopped", n, queueClaims)
	}
	return time.Since(start).Seconds() / queueClaims, nil
}
