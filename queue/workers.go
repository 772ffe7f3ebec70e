package queue

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/jackc/pgx/v5"
	"golang.org/x/sys/unix"

	"github.com/folio-archive/folio/archive"
)

// The workers lock keeps a plain 'folio add', which captures on its own
// machine, apart from the workers of the queue, so a snapshot is never
// captured by both: each running worker holds it shared for its whole
// life, an add that captures holds it exclusive for its whole run. On one
// machine it is an flock in .folio/; with a shared queue it is also a
// PostgreSQL advisory lock, held by a session of its own (a killed
// worker's session ends, and its hold with it).
const workersLock = archive.StateDir + "/workers.lock"

// workersKey is the workers lock's advisory key.
const workersKey int64 = 0x666f6c696f03

// Attend takes the workers lock shared for a worker's life, calling
// waiting first when an add capturing on this machine holds it (the
// worker then waits for that add to finish). url is the queue's URL
// ("" for the embedded queue).
func Attend(ctx context.Context, c *archive.Collection, url string, waiting func()) (release func(), err error) {
	once := onlyOnce(waiting)
	f, err := lockWaiting(ctx, c.Path(workersLock), unix.LOCK_SH, once)
	if err != nil {
		return nil, err
	}
	if !Shared(url) {
		return func() { f.Close() }, nil
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("connect to the queue: %w", err)
	}
	if err := advisoryLock(ctx, conn, workersKey, true, once); err != nil {
		conn.Close(context.Background())
		f.Close()
		return nil, fmt.Errorf("lock the workers in the queue: %w", err)
	}
	return func() {
		conn.Close(context.Background()) // ends the session, which releases its lock
		f.Close()
	}, nil
}

// CaptureHere takes the workers lock exclusively for an add that
// captures on this machine, when no worker holds it: ok is false (and
// release nil) when workers are running on the queue, whose snapshots
// they may be capturing. Workers that start meanwhile wait for release.
func CaptureHere(ctx context.Context, c *archive.Collection, url string) (release func(), ok bool, err error) {
	if url != "" && !Shared(url) {
		return nil, false, fmt.Errorf("queue %q: want postgres://…", url)
	}
	path := c.Path(workersLock)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, false, fmt.Errorf("open lock %s: %w", path, err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("lock %s: %w", path, err)
	}
	if url == "" {
		return func() { f.Close() }, true, nil
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		f.Close()
		return nil, false, fmt.Errorf("connect to the queue: %w", err)
	}
	var got bool
	if err := conn.QueryRow(ctx, "SELECT pg_try_advisory_lock($1)", workersKey).Scan(&got); err != nil || !got {
		conn.Close(context.Background())
		f.Close()
		if err != nil {
			return nil, false, fmt.Errorf("lock the workers in the queue: %w", err)
		}
		return nil, false, nil
	}
	return func() {
		conn.Close(context.Background())
		f.Close()
	}, true, nil
}
