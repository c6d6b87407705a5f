package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/obsbench/obsbench/internal/engine/servertest"
	"github.com/obsbench/obsbench/internal/pgbench"
)

// The driver's session speaks the protocol itself: errors arrive as
// *pgconn.PgError with their SQLSTATE, leave the session usable, and a
// cancelled context interrupts a statement that does not return.
func TestSessionProtocol(t *testing.T) {
	ctx := context.Background()
	sess := servertest.Session(t, newServer(t))

	var pgErr *pgconn.PgError
	if _, err := sess.Prepare(ctx, "SELECT * FROM no_such_table"); !errors.As(err, &pgErr) || pgErr.Code != "42P01" {
		t.Errorf("Prepare(bad table) = %v; want SQLSTATE 42P01", err)
	}
	div := servertest.Prepare(t, sess, "SELECT 10 / $1::int")
	if err := div.Exec(ctx, 2); err != nil {
		t.Errorf("Exec(2) = %v", err)
	}
	if err := div.Exec(ctx, 0); !errors.As(err, &pgErr) || pgErr.Code != "22012" {
		t.Errorf("Exec(0) = %v; want SQLSTATE 22012 (division by zero)", err)
	}
	// Large results are read whole, across many reads.
	big := servertest.Prepare(t, sess, "SELECT repeat('x', 1000) FROM generate_series(1, $1::int)")
	if err := big.Exec(ctx, 5000); err != nil {
		t.Errorf("Exec(5000 rows) = %v", err)
	}
	if err := div.Exec(ctx, nil); err != nil {
		t.Errorf("Exec(NULL) = %v; want the session usable after an error", err)
	}

	sleep := servertest.Prepare(t, sess, "SELECT pg_sleep(30)")
	cctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := sleep.Exec(cctx); err == nil {
		t.Error("Exec(pg_sleep(30)) with a 300ms context = nil; want an error")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("cancelled Exec returned after %v; want about 300ms", d)
	}
}

// QueryRows returns a result's columns and rows as text, NULL as nil, and
// leaves the session in sync for the next statement.
func TestSessionQueryRows(t *testing.T) {
	ctx := context.Background()
	st := servertest.Prepare(t, servertest.Session(t, newServer(t)), "SELECT $1::int AS a, NULL::text AS b, 'x' AS c UNION ALL SELECT 2, 'y', NULL")
	cols, got := servertest.RowsText(t, st, 7)
	if fmt.Sprint(cols, got) != "[a b c] [7 NULL x 2 y NULL]" {
		t.Errorf("QueryRows = %v %v", cols, got)
	}
	if _, _, err := st.(pgbench.RowStmt).QueryRows(ctx, "no"); err == nil {
		t.Error("QueryRows with a bad argument succeeded")
	}
	if err := st.Exec(ctx, 1); err != nil {
		t.Errorf("the session after a failed query: %v", err)
	}
}
