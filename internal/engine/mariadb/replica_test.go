package mariadb_test

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/obsbench/obsbench/internal/engine/servertest"
	"github.com/obsbench/obsbench/internal/server"
)

// The replica is really semi-synchronous: a commit on the primary blocks,
// waiting for the replica's acknowledgement, while the replica's I/O
// thread is stopped, and completes once it runs again; the row reaches the
// replica.
func TestReplicaIsSemiSynchronous(t *testing.T) {
	ctx := servertest.Within(t, 4*time.Minute)
	m := servertest.MariaDB(t, nil)
	r, err := m.StartReplica(ctx, server.CompanionOptions{Sync: true, Log: t.Logf})
	r = servertest.Started(t, "StartReplica", r, err)
	db := servertest.OpenMariaDB(t, m, "mysql")
	if _, err := db.ExecContext(ctx, "CREATE DATABASE t"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "CREATE TABLE t.t (v int) ENGINE=InnoDB"); err != nil {
		t.Fatal(err)
	}

	// With its I/O thread stopped the replica neither receives nor
	// acknowledges. (A SIGSTOP of the replica's process was not enough:
	// on a loaded machine a commit sent after it was still acknowledged.)
	replica := servertest.OpenMariaDB(t, r.Instance, "mysql")
	thread := func(verb string) func() error {
		return func() error {
			_, err := replica.ExecContext(ctx, verb+" SLAVE IO_THREAD")
			return err
		}
	}
	servertest.SyncCommit{
		Pause: thread("STOP"), Resume: thread("START"),
		Commit: func() error {
			_, err := db.ExecContext(ctx, "INSERT INTO t.t VALUES (1)")
			return err
		},
		Waiting: func() (n int, err error) {
			err = db.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE STATE LIKE '%semi-sync ACK%'").Scan(&n)
			return n, err
		},
		Paused: "the replica's I/O thread was stopped", WaitsFor: "for the semi-sync acknowledgement", Resumed: "the replica resumed",
		Detail: func() string { return "; the primary's semi-synchronous state: " + semiSyncStatus(ctx, db) },
	}.Check(t)
	var yes string
	if err := db.QueryRowContext(ctx, "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'RPL_SEMI_SYNC_MASTER_STATUS'").Scan(&yes); err != nil || yes != "ON" {
		t.Errorf("primary semi-sync status %q, %v; want ON (not fallen back to asynchronous)", yes, err)
	}

	// The row is on the replica.
	rdb := servertest.OpenMariaDB(t, r.Instance, "mysql")
	deadline := time.Now().Add(30 * time.Second)
	for {
		var n int
		err := rdb.QueryRowContext(ctx, "SELECT COUNT(*) FROM t.t").Scan(&n)
		if err == nil && n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("replica has %d rows (%v); want 1", n, err)
		}
		time.Sleep(100 * time.Millisecond)
	}

	// After a restart of the primary, the replica is back as a
	// semi-synchronous client.
	servertest.RestartPrimary(ctx, t, m, r)
}

// semiSyncStatus is the primary's Rpl_semi_sync_master_* status variables,
// for a failure to show whether the primary had fallen back to
// asynchronous commits, and why.
func semiSyncStatus(ctx context.Context, db *sql.DB) string {
	rows, err := db.QueryContext(ctx, "SELECT VARIABLE_NAME, VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME LIKE 'RPL_SEMI_SYNC_MASTER%' ORDER BY 1")
	if err != nil {
		return err.Error()
	}
	defer rows.Close()
	var parts []string
	for rows.Next() {
		var name, value string
		if rows.Scan(&name, &value) == nil {
			parts = append(parts, fmt.Sprintf("%s=%s", strings.ToLower(strings.TrimPrefix(name, "RPL_SEMI_SYNC_MASTER_")), value))
		}
	}
	return strings.Join(parts, " ")
}
