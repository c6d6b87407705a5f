package engine

// The sessions of these engines run statements of a database/sql/driver
// connection directly, without database/sql's pool, whose locking and
// conversions would cost driver CPU per statement.

import (
	"context"
	sqldriver "database/sql/driver"
	"errors"
	"fmt"
	"io"
	"time"
)

// sqlQueryer is a driver statement that can be queried with a context.
type sqlQueryer interface {
	sqldriver.Stmt
	sqldriver.StmtQueryContext
}

// SQLStmt executes a prepared driver statement and reads its whole result,
// reusing its buffers from one execution to the next.
type SQLStmt struct {
	st   sqlQueryer
	dest []sqldriver.Value
	args []sqldriver.NamedValue
}

// NewSQLStmt wraps st, which must be a sqlQueryer.
func NewSQLStmt(st sqldriver.Stmt) (*SQLStmt, error) {
	q, ok := st.(sqlQueryer)
	if !ok {
		return nil, errors.New("the driver's statements cannot be queried with a context")
	}
	return &SQLStmt{st: q}, nil
}

// query executes the statement with args (by ordinal).
func (s *SQLStmt) query(ctx context.Context, args []any) (sqldriver.Rows, error) {
	s.args = s.args[:0]
	for i, a := range args {
		v, err := sqldriver.DefaultParameterConverter.ConvertValue(a)
		if err != nil {
			return nil, fmt.Errorf("argument %d: %w", i+1, err)
		}
		s.args = append(s.args, sqldriver.NamedValue{Ordinal: i + 1, Value: v})
	}
	return s.st.QueryContext(ctx, s.args)
}

// Exec executes the statement with args (by ordinal) and reads every row.
func (s *SQLStmt) Exec(ctx context.Context, args ...any) error {
	rows, err := s.query(ctx, args)
	if err != nil {
		return err
	}
	if n := len(rows.Columns()); cap(s.dest) < n {
		s.dest = make([]sqldriver.Value, n)
	}
	return SQLDrain(rows, s.dest[:len(rows.Columns())])
}

// QueryRows executes the statement and returns its columns and rows as
// text, NULL as nil: what a pgbench script's \gset stores.
func (s *SQLStmt) QueryRows(ctx context.Context, args ...any) ([]string, [][]*string, error) {
	rows, err := s.query(ctx, args)
	if err != nil {
		return nil, nil, err
	}
	return SQLTextRows(rows)
}

// SQLTextRows reads rows' columns and every row as text, NULL as nil, and
// closes rows.
func SQLTextRows(rows sqldriver.Rows) ([]string, [][]*string, error) {
	defer rows.Close()
	cols := rows.Columns()
	var out [][]*string
	dest := make([]sqldriver.Value, len(cols))
	for {
		if err := rows.Next(dest); err != nil {
			if errors.Is(err, io.EOF) {
				return cols, out, nil
			}
			return nil, nil, err
		}
		row := make([]*string, len(cols))
		for i, v := range dest {
			if v == nil {
				continue
			}
			var text string
			switch v := v.(type) {
			case []byte:
				text = string(v)
			case time.Time:
				text = v.Format("2006-01-02 15:04:05.999999")
			default:
				text = fmt.Sprint(v)
			}
			row[i] = &text
		}
		out = append(out, row)
	}
}

// Close closes the driver statement.
func (s *SQLStmt) Close() error { return s.st.Close() }

// SQLDrain reads every row into dest (made when nil) and closes rows.
func SQLDrain(rows sqldriver.Rows, dest []sqldriver.Value) error {
	if dest == nil {
		dest = make([]sqldriver.Value, len(rows.Columns()))
	}
	for {
		if err := rows.Next(dest); err != nil {
			if errors.Is(err, io.EOF) {
				return rows.Close()
			}
			rows.Close()
			return err
		}
	}
}
