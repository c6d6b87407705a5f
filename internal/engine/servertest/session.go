package servertest

import (
	"context"
	"testing"

	"github.com/obsbench/obsbench/internal/driver"
	"github.com/obsbench/obsbench/internal/workload"
)

// Dialer is an adapter's server as Session uses it.
type Dialer interface {
	Dial(ctx context.Context) (driver.Session, error)
}

// Session opens a session of the driver on s, closed when the test ends.
func Session(t testing.TB, s Dialer) driver.Session {
	t.Helper()
	sess, err := s.Dial(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close(context.Background()) })
	return sess
}

// Prepare prepares sql on sess.
func Prepare(t testing.TB, sess workload.Conn, sql string) workload.Stmt {
	t.Helper()
	st, err := sess.Prepare(context.Background(), sql)
	if err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	return st
}

// RowsText runs st's QueryRows with args and returns the result's columns
// and its values, row after row, as text (NULL as "NULL").
func RowsText(t testing.TB, st workload.Stmt, args ...any) (cols, values []string) {
	t.Helper()
	q, ok := st.(interface {
		QueryRows(ctx context.Context, args ...any) (columns []string, rows [][]*string, err error)
	})
	if !ok {
		t.Fatal("the session's statements do not return rows")
	}
	cols, rows, err := q.QueryRows(context.Background(), args...)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		for _, v := range r {
			if v == nil {
				values = append(values, "NULL")
			} else {
				values = append(values, *v)
			}
		}
	}
	return cols, values
}

// RunWorkload runs wl as cfg says on sessions of dial.
func RunWorkload(t testing.TB, dial driver.Dialer, cfg driver.Config, wl workload.Meta) driver.Result {
	t.Helper()
	res, err := driver.Run(context.Background(), cfg, dial, wl.New())
	if err != nil {
		t.Fatalf("%s: driver.Run: %v", wl.Description, err)
	}
	return res
}
