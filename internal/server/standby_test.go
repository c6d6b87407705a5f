package server_test

import (
	"context"
	"errors"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/obsbench/obsbench/internal/server"
	"github.com/obsbench/obsbench/internal/server/servertest"
)

// The standby is really synchronous: a commit on the primary blocks,
// waiting in IPC:SyncRep, while the standby's WAL receiver is stopped, and
// completes once it runs again.
func TestStandbyIsSynchronous(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	pg := servertest.Postgres(t)
	sb, err := pg.StartStandby(ctx, server.CompanionOptions{Sync: true, Log: t.Logf})
	if err != nil {
		t.Fatalf("StartStandby: %v", err)
	}
	defer sb.Stop()

	conn, err := pgx.Connect(ctx, pg.DSN("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE TABLE t (v int)"); err != nil {
		t.Fatal(err)
	}
	var names string
	if err := conn.QueryRow(ctx, "SELECT current_setting('synchronous_standby_names')").Scan(&names); err != nil || names != server.StandbyName {
		t.Fatalf("synchronous_standby_names = %q, %v; want %s", names, err, server.StandbyName)
	}

	pid, err := sb.WalReceiverPID(ctx)
	if err != nil || pid == 0 {
		t.Fatalf("WAL receiver pid = %d, %v", pid, err)
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stopped := true
	defer func() {
		if stopped {
			syscall.Kill(pid, syscall.SIGCONT)
		}
	}()
	done := make(chan error, 1)
	go func() {
		c, err := pgx.Connect(ctx, pg.DSN("postgres"))
		if err != nil {
			done <- err
			return
		}
		defer c.Close(ctx)
		_, err = c.Exec(ctx, "INSERT INTO t VALUES (1)")
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("the commit completed (err %v) while the standby's WAL receiver was stopped", err)
	case <-time.After(2 * time.Second):
	}
	var waiting int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'SyncRep'").Scan(&waiting); err != nil {
		t.Fatal(err)
	}
	if waiting != 1 {
		t.Errorf("%d sessions wait in IPC:SyncRep; want the blocked commit", waiting)
	}
	if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	stopped = false
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("commit after the WAL receiver resumed: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the commit did not complete within 30s after the WAL receiver resumed")
	}

	// After a restart of the primary (before every run), the standby is
	// synchronous again.
	if err := pg.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if err := sb.WaitStreaming(ctx); err != nil {
		t.Fatal(err)
	}
	dir := sb.SocketDir()
	if err := sb.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("standby directory %s still there after Stop: %v", dir, err)
	}
}

// With a delayed link, a synchronous commit takes at least the round trip
// the relay adds: the WAL goes to the standby and the confirmation back.
func TestStandbyDelayedLink(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	pg := servertest.Postgres(t)
	const delay = 50 * time.Millisecond
	sb, err := pg.StartStandby(ctx, server.CompanionOptions{Sync: true, Delay: delay, Log: t.Logf})
	if err != nil {
		t.Fatalf("StartStandby: %v", err)
	}
	defer sb.Stop()
	conn, err := pgx.Connect(ctx, pg.DSN("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE TABLE t (v int)"); err != nil {
		t.Fatal(err)
	}
	fastest := time.Hour
	for i := range 5 {
		began := time.Now()
		if _, err := conn.Exec(ctx, "INSERT INTO t VALUES ($1)", i); err != nil {
			t.Fatal(err)
		}
		fastest = min(fastest, time.Since(began))
	}
	if fastest < 2*delay {
		t.Errorf("fastest synchronous commit took %v; want at least the relay's round trip %v", fastest, 2*delay)
	}
	// Asynchronous commit on the same link does not wait for it.
	if _, err := conn.Exec(ctx, "SET synchronous_commit = local"); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	if _, err := conn.Exec(ctx, "INSERT INTO t VALUES (0)"); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(began); d >= 2*delay {
		t.Errorf("commit with synchronous_commit=local took %v; want less than the relay's round trip %v", d, 2*delay)
	}
}
