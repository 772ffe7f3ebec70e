package queue

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// Status is what the queue holds: jobs by state, the captures under way
// with the worker that claimed each, the jobs waiting for a retry or
// given up with their last error, and each worker's recent rate.
type Status struct {
	Shared   bool           `json:"shared"` // PostgreSQL, not the embedded SQLite queue
	ByState  map[string]int `json:"by_state"`
	Running  []Job          `json:"running"`
	Retrying []Job          `json:"retrying"`
	Failed   []Job          `json:"failed"`
	// Rate is snapshots captured per minute by each worker over the
	// last RateWindow.
	Rate map[string]float64 `json:"per_worker_per_minute"`
}

// Job is one capture job.
type Job struct {
	SnapshotID string    `json:"snapshot_id"`
	Dir        string    `json:"dir"`
	Worker     string    `json:"worker,omitempty"` // the worker that claimed it last
	Attempt    int       `json:"attempt"`
	Since      time.Time `json:"since"` // claimed (running), next try (retrying), given up (failed)
	Error      string    `json:"error,omitempty"`
}

// RateWindow is the span of Status.Rate.
const RateWindow = 5 * time.Minute

// listLimit bounds each list of Status.
const listLimit = 100

// Status reads the queue's state; now dates the rate window.
func (q *Queue) Status(ctx context.Context, now time.Time) (*Status, error) {
	st := &Status{Shared: q.pool != nil, ByState: map[string]int{}, Rate: map[string]float64{}}
	rows, err := q.db.QueryContext(ctx, "SELECT state, count(*) FROM river_job WHERE kind = '"+kind+"' GROUP BY state")
	if err != nil {
		return nil, fmt.Errorf("read the queue: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var state string
		var n int
		if err := rows.Scan(&state, &n); err != nil {
			return nil, fmt.Errorf("read the queue: %w", err)
		}
		st.ByState[state] = n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the queue: %w", err)
	}
	lists := []struct {
		to     *[]Job
		states []rivertype.JobState
	}{
		{&st.Running, []rivertype.JobState{rivertype.JobStateRunning}},
		{&st.Retrying, []rivertype.JobState{rivertype.JobStateRetryable}},
		{&st.Failed, []rivertype.JobState{rivertype.JobStateDiscarded, rivertype.JobStateCancelled}},
	}
	for _, l := range lists {
		jobs, err := q.client.list(ctx, river.NewJobListParams().Kinds(kind).States(l.states...).First(listLimit))
		if err != nil {
			return nil, fmt.Errorf("read the queue: %w", err)
		}
		for _, j := range jobs {
			*l.to = append(*l.to, jobOf(j))
		}
	}
	done, err := q.client.list(ctx, river.NewJobListParams().Kinds(kind).States(rivertype.JobStateCompleted).
		OrderBy(river.JobListOrderByFinalizedAt, river.SortOrderDesc).First(10000))
	if err != nil {
		return nil, fmt.Errorf("read the queue: %w", err)
	}
	for _, j := range done {
		if j.FinalizedAt == nil || now.Sub(*j.FinalizedAt) > RateWindow {
			break
		}
		st.Rate[lastWorker(j)] += 1 / RateWindow.Minutes()
	}
	return st, nil
}

func jobOf(j *rivertype.JobRow) Job {
	out := Job{Worker: lastWorker(j), Attempt: j.Attempt}
	var args captureArgs
	if err := json.Unmarshal(j.EncodedArgs, &args); err == nil {
		out.SnapshotID, out.Dir = args.SnapshotID, args.Dir
	}
	switch {
	case j.State == rivertype.JobStateRunning && j.AttemptedAt != nil:
		out.Since = *j.AttemptedAt
	case j.State == rivertype.JobStateRetryable:
		out.Since = j.ScheduledAt
	case j.FinalizedAt != nil:
		out.Since = *j.FinalizedAt
	}
	if n := len(j.Errors); n > 0 {
		out.Error = j.Errors[n-1].Error
	}
	return out
}

func lastWorker(j *rivertype.JobRow) string {
	if n := len(j.AttemptedBy); n > 0 {
		return j.AttemptedBy[n-1]
	}
	return ""
}

// Live counts the jobs not yet done or given up: waiting, scheduled,
// retrying or under way.
func (s *Status) Live() int {
	n := 0
	for _, state := range []string{"available", "pending", "running", "retryable", "scheduled"} {
		n += s.ByState[state]
	}
	return n
}

// Workers lists the workers of Rate, by name.
func (s *Status) Workers() []string {
	out := make([]string, 0, len(s.Rate))
	for w := range s.Rate {
		out = append(out, w)
	}
	sort.Strings(out)
	return out
}
