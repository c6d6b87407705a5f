package mariadb_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/obsbench/obsbench/internal/engine/servertest"
)

// A MariaDB copy, made while the server is stopped, holds what the
// server held, runs beside it on a socket and port of its own with the
// same root password, is a server of its own, and leaves nothing behind;
// the server runs again after the copy.
func TestStartCopyMariaDB(t *testing.T) {
	ctx := servertest.Within(t, 3*time.Minute)
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
	cp = servertest.Started(t, "StartCopy", cp, err)
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
	servertest.StopRemoves(t, cp, filepath.Dir(cp.Socket()))
}
