// Package servertest is the kit of the tests that use a real managed
// server: it starts them, holds the steps the engine adapters' tests take
// alike, and runs commands as another account. The tests come in two
// tiers: go test -short runs the first, which needs neither root nor
// a database package (the runner's logic is tested against the in-memory
// target, internal/engine/enginetest), and skips every test that starts a real
// server, here, before any binary is looked for. Without -short nothing
// skips: the README's test command installs the engines, so a missing one
// is a failure, not a reason to pass silently.
package servertest

import (
	"context"
	"database/sql"
	"os"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"

	"github.com/obsbench/obsbench/internal/engine/mariadb"
	"github.com/obsbench/obsbench/internal/engine/postgres"
)

// SkipShort skips t under go test -short: t starts a real database
// server, which is the second tier's. Without -short it does nothing. Every helper here calls it first; a test
// that starts a server by other means calls it itself, before anything
// else.
func SkipShort(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a real database server or acts as another account (root): second tier, not run with -short")
	}
}

// Postgres starts a managed PostgreSQL that is stopped and removed when the
// test ends.
func Postgres(t testing.TB) *postgres.Instance {
	t.Helper()
	return PostgresWith(t, nil)
}

// PostgresWith is Postgres with settings added to postgresql.conf.
func PostgresWith(t testing.TB, settings map[string]string) *postgres.Instance {
	t.Helper()
	return start(t, "postgres", func(ctx context.Context) (*postgres.Instance, error) {
		return postgres.Start(ctx, postgres.InstanceOptions{Log: t.Logf, Settings: settings, Getenv: os.Getenv})
	})
}

// MariaDB starts a managed MariaDB, with options added to its option file,
// that is stopped and removed when the test ends.
func MariaDB(t testing.TB, options map[string]string) *mariadb.Instance {
	t.Helper()
	return start(t, "mariadb", func(ctx context.Context) (*mariadb.Instance, error) {
		return mariadb.Start(ctx, mariadb.InstanceOptions{Log: t.Logf, Settings: options, Getenv: os.Getenv})
	})
}

// start starts the managed server what with run, given two minutes, and
// stops it when the test ends.
func start[S interface{ Stop() error }](t testing.TB, what string, run func(context.Context) (S, error)) S {
	t.Helper()
	SkipShort(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := run(ctx)
	if err != nil {
		t.Fatalf("start managed %s (make test installs it): %v", what, err)
	}
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Errorf("stop managed %s: %v", what, err)
		}
	})
	return s
}

// OpenMariaDB opens database db of m as root, the password in the driver's
// configuration; the pool is closed when the test ends.
func OpenMariaDB(t testing.TB, m *mariadb.Instance, db string) *sql.DB {
	t.Helper()
	pool := Open(t, m.Config(db))
	t.Cleanup(func() { pool.Close() })
	return pool
}

// Open opens a pool on the MariaDB connection cfg, or fails the test; the
// caller closes it.
func Open(t testing.TB, cfg *mysql.Config) *sql.DB {
	t.Helper()
	c, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return sql.OpenDB(c)
}

// Connect opens a PostgreSQL session at dsn, or fails the test; the caller
// closes it.
func Connect(ctx context.Context, t testing.TB, dsn string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	return conn
}
