package server_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"

	"github.com/obsbench/obsbench/internal/server/servertest"
)

// A copy holds what the server held when it was made, answers on a port
// and socket of its own, is a server of its own (a write to one is not
// seen by the other; it is not in recovery), and leaves nothing behind
// when stopped.
func TestStartCopy(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	pg := servertest.Postgres(t)
	exec := func(dsn, sql string) {
		t.Helper()
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	count := func(dsn string) (n int, recovery bool) {
		t.Helper()
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		if err := conn.QueryRow(ctx, "SELECT count(*), pg_is_in_recovery() FROM t").Scan(&n, &recovery); err != nil {
			t.Fatal(err)
		}
		return n, recovery
	}
	exec(pg.DSN("postgres"), "CREATE TABLE t AS SELECT g FROM generate_series(1, 1000) g")

	cp, err := pg.StartCopy(ctx, t.Logf)
	if err != nil {
		t.Fatalf("StartCopy: %v", err)
	}
	defer cp.Stop()
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
	dir := cp.SocketDir()
	if err := cp.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s left after Stop (%v)", dir, err)
	}
}

// A MariaDB copy, made while the server is stopped, holds what the
// server held, runs beside it on a socket and port of its own with the
// same root password, is a server of its own, and leaves nothing behind;
// the server runs again after the copy.
func TestStartCopyMariaDB(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	m := servertest.MariaDB(t, nil)
	do := func(cfg *mysql.Config, q string) int {
		t.Helper()
		c, err := mysql.NewConnector(cfg)
		if err != nil {
			t.Fatal(err)
		}
		db := sql.OpenDB(c)
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
	if err != nil {
		t.Fatalf("StartCopy: %v", err)
	}
	defer cp.Stop()
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
	dir := filepath.Dir(cp.Socket())
	if err := cp.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s left after Stop (%v)", dir, err)
	}
}
