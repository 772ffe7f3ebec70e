package main_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// pgBin finds a PostgreSQL server program: on PATH, else in Debian's
// versioned folder.
func pgBin(t *testing.T, name string) string {
	t.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/" + name)
	if len(matches) == 0 {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s not found: 'make deps' installs Debian's postgresql", name)
		}
		t.Skipf("SKIPPED LOUDLY: %s not found; install Debian's postgresql ('make deps') to run the PostgreSQL queue tests", name)
	}
	return matches[len(matches)-1]
}

// startPostgres starts a PostgreSQL server of its own in a temp folder,
// listening only on a Unix socket there, with an empty database folio;
// it is stopped when the test ends. It returns the database's URL and a
// function that drops the database and creates it again, empty.
func startPostgres(t *testing.T) (url string, recreate func()) {
	t.Helper()
	initdb, pgctl := pgBin(t, "initdb"), pgBin(t, "pg_ctl")
	// Not t.TempDir: the server's user must reach the folder.
	dir, err := os.MkdirTemp("", "folio-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	var cred *syscall.Credential
	if os.Geteuid() == 0 { // PostgreSQL refuses to run as root
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Fatalf("running as root needs the postgres user: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir = dir
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
	}
	data := filepath.Join(dir, "data")
	run(initdb, "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync")
	run(pgctl, "-D", data, "-w", "-l", filepath.Join(dir, "log"), "-o",
		fmt.Sprintf("-k %s -c listen_addresses='' -F -c max_connections=200", dir), "start")
	t.Cleanup(func() { run(pgctl, "-D", data, "-m", "immediate", "-w", "stop") })
	admin := func(sql string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, fmt.Sprintf("postgres://postgres@/postgres?host=%s", dir))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	admin("CREATE DATABASE folio")
	return fmt.Sprintf("postgres://postgres@/folio?host=%s", dir), func() {
		admin("DROP DATABASE folio WITH (FORCE)")
		admin("CREATE DATABASE folio")
	}
}
