package queue

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/sys/unix"

	"github.com/folio-archive/folio/archive"
)

// The folder lock keeps workers out of the tree while a command moves
// snapshot folders (update --migrate-only, remove --delete): each capture
// holds it shared, the mover holds it exclusive. On one machine it is a
// pair of flocks in .folio/ (the gate first, so a waiting mover is not
// starved by captures that overlap without end); with a shared queue it
// is also a PostgreSQL advisory lock, which PostgreSQL grants in order
// (a waiting exclusive request holds back later shared ones).
const (
	folderGate  = archive.StateDir + "/folders.gate"
	folderLock  = archive.StateDir + "/folders.lock"
	migrateLock = archive.StateDir + "/queue.migrate.lock"
)

// Advisory lock keys: one queue database serves one collection.
const (
	folderKey  int64 = 0x666f6c696f01 // "folio" 1
	migrateKey int64 = 0x666f6c696f02
)

// pollLock is how often a blocked flock is tried again.
const pollLock = 50 * time.Millisecond

// flock takes how (unix.LOCK_SH or LOCK_EX) on the file at path, waiting
// until ctx is done; the returned file's Close releases it.
func flock(ctx context.Context, path string, how int) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open lock %s: %w", path, err)
	}
	for {
		err := unix.Flock(int(f.Fd()), how|unix.LOCK_NB)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(pollLock):
		}
	}
}

// withLocal runs fn holding the flock on path exclusively.
func withLocal(ctx context.Context, path string, fn func() error) error {
	f, err := flock(ctx, path, unix.LOCK_EX)
	if err != nil {
		return err
	}
	defer f.Close()
	return fn()
}

// withAdvisory runs fn holding the advisory lock key of the database.
func withAdvisory(ctx context.Context, pool *pgxpool.Pool, key int64, fn func() error) error {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", key); err != nil {
		return fmt.Errorf("lock the queue: %w", err)
	}
	defer conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", key)
	return fn()
}

// shareFolders takes the folder lock shared for one capture, calling
// waiting first when a mover holds it; release gives it back.
func (q *Queue) shareFolders(ctx context.Context, waiting func()) (release func(), err error) {
	once := onlyOnce(waiting)
	gate, err := lockWaiting(ctx, q.c.Path(folderGate), unix.LOCK_SH, once)
	if err != nil {
		return nil, err
	}
	lock, err := lockWaiting(ctx, q.c.Path(folderLock), unix.LOCK_SH, once)
	gate.Close()
	if err != nil {
		return nil, err
	}
	if q.pool == nil {
		return func() { lock.Close() }, nil
	}
	conn, err := q.pool.Acquire(ctx)
	if err == nil {
		if err = advisoryLock(ctx, conn, folderKey, true, once); err != nil {
			conn.Release()
		}
	}
	if err != nil {
		lock.Close()
		return nil, fmt.Errorf("lock the folders in the queue: %w", err)
	}
	return func() {
		// Closing the connection would release the lock too; unlocking
		// keeps the pooled connection usable.
		if _, err := conn.Exec(context.Background(), "SELECT pg_advisory_unlock_shared($1)", folderKey); err != nil {
			conn.Conn().Close(context.Background())
		}
		conn.Release()
		lock.Close()
	}, nil
}

// LockFolders takes the folder lock exclusively for a command that moves
// snapshot folders, waiting (until ctx is done) for the captures under
// way to finish; workers start no capture until release. url is the
// queue's URL ("" for the embedded queue: only the local flocks). waiting
// is called once if the lock is not free at once.
func LockFolders(ctx context.Context, c *archive.Collection, url string, waiting func()) (release func(), err error) {
	if url != "" && !Shared(url) {
		return nil, fmt.Errorf("queue %q: want postgres://…", url)
	}
	once := onlyOnce(waiting)
	gate, err := lockWaiting(ctx, c.Path(folderGate), unix.LOCK_EX, once)
	if err != nil {
		return nil, err
	}
	lock, err := lockWaiting(ctx, c.Path(folderLock), unix.LOCK_EX, once)
	if err != nil {
		gate.Close()
		return nil, err
	}
	local := func() { lock.Close(); gate.Close() }
	if url == "" {
		return local, nil
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		local()
		return nil, fmt.Errorf("connect to the queue: %w", err)
	}
	if err := advisoryLock(ctx, conn, folderKey, false, once); err != nil {
		conn.Close(context.Background())
		local()
		return nil, fmt.Errorf("lock the folders in the queue: %w", err)
	}
	return func() {
		conn.Close(context.Background()) // ends the session, which releases its lock
		local()
	}, nil
}

// advisoryLock takes the advisory lock key (shared or exclusive) in the
// session of conn, calling waiting first when it is not free at once.
func advisoryLock(ctx context.Context, conn session, key int64, shared bool, waiting func()) error {
	try, lock := "pg_try_advisory_lock", "pg_advisory_lock"
	if shared {
		try, lock = try+"_shared", lock+"_shared"
	}
	var got bool
	err := conn.QueryRow(ctx, "SELECT "+try+"($1)", key).Scan(&got)
	if err == nil && !got {
		waiting()
		_, err = conn.Exec(ctx, "SELECT "+lock+"($1)", key)
	}
	return err
}

// session is a PostgreSQL connection, pooled or not.
type session interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// lockWaiting takes how (unix.LOCK_SH or LOCK_EX) on the file at path,
// calling waiting first when it is not free at once.
func lockWaiting(ctx context.Context, path string, how int, waiting func()) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open lock %s: %w", path, err)
	}
	if unix.Flock(int(f.Fd()), how|unix.LOCK_NB) == nil {
		return f, nil
	}
	f.Close()
	waiting()
	return flock(ctx, path, how)
}

// onlyOnce returns a function that calls fn (when not nil) the first
// time it is called.
func onlyOnce(fn func()) func() {
	return func() {
		if fn != nil {
			fn()
			fn = nil
		}
	}
}
