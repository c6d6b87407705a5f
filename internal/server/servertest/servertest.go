// Package servertest starts real managed servers for tests. The tests come
// in two tiers: go test -short runs the first, which needs neither root nor
// a database package (the runner's logic is tested against the in-memory
// target, internal/engine/enginetest), and skips every test that starts a real
// server, here, before any binary is looked for. Without -short nothing
// skips: the README's test command installs the engines, so a missing one
// is a failure, not a reason to pass silently.
package servertest

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/obsbench/obsbench/internal/server"
)

// SkipShort skips t under go test -short: t starts a real database
// server, which is the second tier's. Without -short it does nothing. Every helper here calls it first; a test
// that starts a server by other means calls it itself, before anything
// else.
func SkipShort(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a real database server: second tier, not run with -short")
	}
}

// Postgres starts a managed PostgreSQL that is stopped and removed when the
// test ends.
func Postgres(t testing.TB) *server.Postgres {
	t.Helper()
	return PostgresWith(t, nil)
}

// PostgresWith is Postgres with settings added to postgresql.conf.
func PostgresWith(t testing.TB, settings map[string]string) *server.Postgres {
	t.Helper()
	SkipShort(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	pg, err := server.StartPostgres(ctx, server.PostgresOptions{Log: t.Logf, Settings: settings})
	if err != nil {
		t.Fatalf("start managed postgres (make test installs it): %v", err)
	}
	t.Cleanup(func() {
		if err := pg.Stop(); err != nil {
			t.Errorf("stop managed postgres: %v", err)
		}
	})
	return pg
}

// MariaDB starts a managed MariaDB, with options added to its option file,
// that is stopped and removed when the test ends.
func MariaDB(t testing.TB, options map[string]string) *server.MariaDB {
	t.Helper()
	SkipShort(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	m, err := server.StartMariaDB(ctx, server.MariaDBOptions{Log: t.Logf, Settings: options})
	if err != nil {
		t.Fatalf("start managed mariadb (make test installs it): %v", err)
	}
	t.Cleanup(func() {
		if err := m.Stop(); err != nil {
			t.Errorf("stop managed mariadb: %v", err)
		}
	})
	return m
}

// OpenMariaDB opens database db of m as root, the password in the driver's
// configuration; the pool is closed when the test ends.
func OpenMariaDB(t testing.TB, m *server.MariaDB, db string) *sql.DB {
	t.Helper()
	c, err := mysql.NewConnector(m.Config(db))
	if err != nil {
		t.Fatal(err)
	}
	pool := sql.OpenDB(c)
	t.Cleanup(func() { pool.Close() })
	return pool
}
