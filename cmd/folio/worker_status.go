package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/queue"
)

// queueStatus reads the collection's job queue for status, read-only (no
// migration, no write): the shared one its config or $QUEUE_URL names,
// else the embedded one if a worker or add --enqueue-only made it; nil
// when there is none (or it holds no tables yet). An error means the
// queue could not be read (unreachable, say): status reports the rest.
func queueStatus(ctx context.Context, coll *archive.Collection) (*queue.Status, error) {
	cfg, err := captureConfig(coll, 0)
	if err != nil {
		return nil, err
	}
	url := queueURL("", cfg.Get("QUEUE_URL"))
	if url == "" {
		if _, err := os.Stat(coll.Path(queue.File)); errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
	}
	ctx, cancel := context.WithTimeout(ctx, queueReadTimeout)
	defer cancel()
	q, err := queue.Open(ctx, coll, queue.Options{URL: url, ReadOnly: true})
	if errors.Is(err, queue.ErrNoQueue) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer q.Close()
	return q.Status(ctx, time.Now())
}

// queueReadTimeout bounds status's wait for an unreachable queue.
const queueReadTimeout = 10 * time.Second

// printQueue writes the queue part of status.
func printQueue(w io.Writer, st *queue.Status, now time.Time) {
	where := "embedded (.folio/queue.sqlite3)"
	if st.Shared {
		where = "shared (PostgreSQL)"
	}
	fmt.Fprintf(w, "queue              %s: %s\n", where, counts(st.ByState))
	for _, j := range st.Running {
		fmt.Fprintf(w, "  running          %s by %s, attempt %d, for %s\n", j.Dir, j.Worker, j.Attempt, now.Sub(j.Since).Round(time.Second))
	}
	for _, j := range st.Retrying {
		fmt.Fprintf(w, "  retrying         %s after attempt %d (%s)\n", j.Dir, j.Attempt, j.Error)
	}
	for _, j := range st.Failed {
		fmt.Fprintf(w, "  failed           %s after %d attempts (%s)\n", j.Dir, j.Attempt, j.Error)
	}
	for _, name := range st.Workers() {
		fmt.Fprintf(w, "  worker           %s: %.1f snapshots a minute over the last %s\n", name, st.Rate[name], queue.RateWindow)
	}
}
