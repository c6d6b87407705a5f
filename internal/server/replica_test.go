package server_test

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/obsbench/obsbench/internal/server"
	"github.com/obsbench/obsbench/internal/server/servertest"
)

// The replica is really semi-synchronous: a commit on the primary blocks,
// waiting for the replica's acknowledgement, while the replica's I/O
// thread is stopped, and completes once it runs again; the row reaches the
// replica.
func TestReplicaIsSemiSynchronous(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	m := servertest.MariaDB(t, nil)
	r, err := m.StartReplica(ctx, server.CompanionOptions{Sync: true, Log: t.Logf})
	if err != nil {
		t.Fatalf("StartReplica: %v", err)
	}
	defer r.Stop()
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
	replica := servertest.OpenMariaDB(t, r.MariaDB, "mysql")
	if _, err := replica.ExecContext(ctx, "STOP SLAVE IO_THREAD"); err != nil {
		t.Fatal(err)
	}
	stopped := true
	defer func() {
		if stopped {
			replica.ExecContext(ctx, "START SLAVE IO_THREAD")
		}
	}()
	done := make(chan error, 1)
	go func() {
		_, err := db.ExecContext(ctx, "INSERT INTO t.t VALUES (1)")
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("the commit completed (err %v) while the replica's I/O thread was stopped; the primary's semi-synchronous state: %s", err, semiSyncStatus(ctx, db))
	case <-time.After(2 * time.Second):
	}
	var waiting int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE STATE LIKE '%semi-sync ACK%'").Scan(&waiting); err != nil {
		t.Fatal(err)
	}
	if waiting != 1 {
		t.Errorf("%d sessions wait for the semi-sync acknowledgement; want the blocked commit", waiting)
	}
	if _, err := replica.ExecContext(ctx, "START SLAVE IO_THREAD"); err != nil {
		t.Fatal(err)
	}
	stopped = false
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("commit after the replica resumed: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the commit did not complete within 30s after the replica resumed")
	}
	var yes string
	if err := db.QueryRowContext(ctx, "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'RPL_SEMI_SYNC_MASTER_STATUS'").Scan(&yes); err != nil || yes != "ON" {
		t.Errorf("primary semi-sync status %q, %v; want ON (not fallen back to asynchronous)", yes, err)
	}

	// The row is on the replica.
	rdb := servertest.OpenMariaDB(t, r.MariaDB, "mysql")
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
	if err := m.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if err := r.WaitStreaming(ctx); err != nil {
		t.Fatal(err)
	}
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
