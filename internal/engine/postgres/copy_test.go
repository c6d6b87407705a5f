package postgres_test

import (
	"testing"
	"time"

	"github.com/obsbench/obsbench/internal/engine/servertest"
)

// A copy holds what the server held when it was made, answers on a port
// and socket of its own, is a server of its own (a write to one is not
// seen by the other; it is not in recovery), and leaves nothing behind
// when stopped.
func TestStartCopy(t *testing.T) {
	ctx := servertest.Within(t, 3*time.Minute)
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
	cp = servertest.Started(t, "StartCopy", cp, err)
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
	servertest.StopRemoves(t, cp, cp.SocketDir())
}
