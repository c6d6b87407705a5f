package postgres_test

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/obsbench/obsbench/internal/engine/postgres"
	"github.com/obsbench/obsbench/internal/engine/servertest"
	"github.com/obsbench/obsbench/internal/server"
)

// syncStandby starts a managed PostgreSQL and its synchronous standby,
// behind a link that adds delay each way, both stopped when the test
// ends; it returns them and a session on the primary, in which it made
// the table t (v int).
func syncStandby(ctx context.Context, t *testing.T, delay time.Duration) (*postgres.Instance, *postgres.Standby, *pgx.Conn) {
	t.Helper()
	pg := servertest.Postgres(t)
	sb, err := pg.StartStandby(ctx, server.CompanionOptions{Sync: true, Delay: delay, Log: t.Logf})
	sb = servertest.Started(t, "StartStandby", sb, err)
	conn := servertest.Connect(ctx, t, pg.DSN("postgres"))
	t.Cleanup(func() { conn.Close(context.Background()) })
	if _, err := conn.Exec(ctx, "CREATE TABLE t (v int)"); err != nil {
		t.Fatal(err)
	}
	return pg, sb, conn
}

// The standby is really synchronous: a commit on the primary blocks,
// waiting in IPC:SyncRep, while the standby's WAL receiver is stopped, and
// completes once it runs again.
func TestStandbyIsSynchronous(t *testing.T) {
	ctx := servertest.Within(t, 3*time.Minute)
	pg, sb, conn := syncStandby(ctx, t, 0)
	var names string
	if err := conn.QueryRow(ctx, "SELECT current_setting('synchronous_standby_names')").Scan(&names); err != nil || names != postgres.StandbyName {
		t.Fatalf("synchronous_standby_names = %q, %v; want %s", names, err, postgres.StandbyName)
	}

	pid, err := sb.WalReceiverPID(ctx)
	if err != nil || pid == 0 {
		t.Fatalf("WAL receiver pid = %d, %v", pid, err)
	}
	servertest.SyncCommit{
		Pause:  func() error { return syscall.Kill(pid, syscall.SIGSTOP) },
		Resume: func() error { return syscall.Kill(pid, syscall.SIGCONT) },
		Commit: func() error {
			c, err := pgx.Connect(ctx, pg.DSN("postgres"))
			if err != nil {
				return err
			}
			defer c.Close(ctx)
			_, err = c.Exec(ctx, "INSERT INTO t VALUES (1)")
			return err
		},
		Waiting: func() (n int, err error) {
			err = conn.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'SyncRep'").Scan(&n)
			return n, err
		},
		Paused: "the standby's WAL receiver was stopped", WaitsFor: "in IPC:SyncRep", Resumed: "the WAL receiver resumed",
	}.Check(t)

	// After a restart of the primary (before every run), the standby is
	// synchronous again.
	servertest.RestartPrimary(ctx, t, pg, sb)
	servertest.StopRemoves(t, sb, sb.SocketDir())
}

// With a delayed link, a synchronous commit takes at least the round trip
// the relay adds: the WAL goes to the standby and the confirmation back.
func TestStandbyDelayedLink(t *testing.T) {
	ctx := servertest.Within(t, 3*time.Minute)
	const delay = 50 * time.Millisecond
	_, _, conn := syncStandby(ctx, t, delay)
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
