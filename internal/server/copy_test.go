package server_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/obsbench/obsbench/internal/server/servertest"
)

// A copy holds what the server held when it was made, answers on a port
// and socket of its own, is a server of its own (a write to one is not
// seen by the other; it is not in recovery), and leaves nothing behind
// when stopped.
func TestStartCopy(t *testing.T) {
	ctx := within(t, 3*time.Minute)
	pg := servertest.Postgres(t)
	exec := func(dsn, sql string) {
		t.Helper()
		conn := servertest.Connect(ctx, t, dsn)
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	count := func(dsn string) (n int, recovery bool) {
		t.Helper()
		conn := servertest.Connect(ctx, t, dsn)
		defer conn.Close(ctx)
		if err := conn.QueryRow(ctx, "SELECT count(*), pg_is_in_recovery() FROM t").Scan(&n, &recovery); err != nil {
			t.Fatal(err)
		}
		return n, recovery
	}
	exec(pg.DSN("postgres"), "CREATE TABLE t AS SELECT g FROM generate_series(1, 1000) g")

	cp, err := pg.StartCopy(ctx, t.Logf)
	cp = started(t, "StartCopy", cp, err)
	if cp.Port() == pg.Port() || cp.SocketDir() == pg.SocketDir() || cp.DataDir() == pg.DataDir() {
		t.Fatalf("copy on port %d, socket %s, data %s; the server's are %d, %s, %s", cp.Port(), cp.SocketDir(), cp.DataDir(), pg.Port(), pg.SocketDir(), pg.DataDir())
	}
	if n, rec := count(cp.DSN("postgres")); n != 1000 || rec {
		t.Fatalf("copy: %d rows, in recovery %v; want 1000 and a server of its own", n, rec)
	}
	exec(cp.DSN("postgres"), "INSERT INTO t VALUES (0)")
	if n, _ := count(pg.DSN("postgres")); n != 1000 {
		t.Errorf("the server has %d rows after a write to the copy; want 1000", n)
	}
	stopRemoves(t, cp, cp.SocketDir())
}

// A MariaDB copy, made while the server is stopped, holds what the
// server held, runs beside it on a socket and port of its own with the
// same root password, is a server of its own, and leaves nothing behind;
// the server runs again after the copy.
func TestStartCopyMariaDB(t *testing.T) {
	ctx := within(t, 3*time.Minute)
	m := servertest.MariaDB(t, nil)
	do := func(cfg *mysql.Config, q string) int {
		t.Helper()
		db := servertest.Open(t, cfg)
		defer db.Close()
		if !strings.HasPrefix(q, "SELECT") {
			if _, err := db.ExecContext(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			return 0
		}
		var n int
		if err := db.QueryRowContext(ctx, q).Scan(&n); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return n
	}
	do(m.Config("mysql"), "CREATE DATABASE copytest")
	do(m.Config("copytest"), "CREATE TABLE t ENGINE=InnoDB AS SELECT seq FROM seq_1_to_1000")

	cp, err := m.StartCopy(ctx, t.Logf)
	cp = started(t, "StartCopy", cp, err)
	if cp.Port() == m.Port() || cp.Socket() == m.Socket() || cp.DataDir() == m.DataDir() {
		t.Fatalf("copy on port %d, socket %s, data %s; the server's are %d, %s, %s", cp.Port(), cp.Socket(), cp.DataDir(), m.Port(), m.Socket(), m.DataDir())
	}
	if n := do(cp.Config("copytest"), "SELECT count(*) FROM t"); n != 1000 {
		t.Fatalf("copy: %d rows; want 1000", n)
	}
	do(cp.Config("copytest"), "INSERT INTO t VALUES (0)")
	if n := do(m.Config("copytest"), "SELECT count(*) FROM t"); n != 1000 {
		t.Errorf("the server has %d rows after a write to the copy; want 1000", n)
	}
	stopRemoves(t, cp, filepath.Dir(cp.Socket()))
}
