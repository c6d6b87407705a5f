// What the adapters built on database/sql (MariaDB, SQL Server) do
// alike: a connection of their own, the dataset's rows counted, a
// workload's set-up run, and their sessions' statements.

package engine

import (
	"context"
	"database/sql"
	"fmt"
)

// SQLConn takes one connection from pool, a pool opened for it alone: done
// closes both. server names the server in the error ("mariadb").
func SQLConn(ctx context.Context, pool *sql.DB, server string) (conn *sql.Conn, done func() error, err error) {
	conn, err = pool.Conn(ctx)
	if err != nil {
		pool.Close()
		return nil, nil, fmt.Errorf("connect to %s: %w", server, err)
	}
	return conn, func() error { conn.Close(); return pool.Close() }, nil
}

// SQLRowCounter counts a table's rows in pool, its name quoted by quote: how
// dataset.Verify reads a table.
func SQLRowCounter(pool *sql.DB, quote func(string) string) func(context.Context, string) (int64, error) {
	return func(ctx context.Context, table string) (n int64, err error) {
		err = pool.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+quote(table)).Scan(&n)
		return n, err
	}
}

// SQLSetup runs a workload's set-up statements on pool, in order, until one
// fails.
func SQLSetup(ctx context.Context, pool *sql.DB, stmts []string) error {
	for _, st := range stmts {
		if _, err := pool.ExecContext(ctx, st); err != nil {
			return fmt.Errorf("workload set-up: %s: %w", st, err)
		}
	}
	return nil
}
