// Package driverstmt runs statements of a database/sql/driver connection
// directly, without database/sql's pool, whose locking and conversions
// would cost driver CPU per statement: the sessions of the engines whose
// Go driver is a database/sql driver (MariaDB's, SQL Server's).
package driverstmt

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
)

// Queryer is a driver statement that can be queried with a context.
type Queryer interface {
	driver.Stmt
	driver.StmtQueryContext
}

// Stmt executes a prepared driver statement and reads its whole result,
// reusing its buffers from one execution to the next.
type Stmt struct {
	st   Queryer
	dest []driver.Value
	args []driver.NamedValue
}

// New wraps st, which must be a Queryer.
func New(st driver.Stmt) (*Stmt, error) {
	q, ok := st.(Queryer)
	if !ok {
		return nil, errors.New("the driver's statements cannot be queried with a context")
	}
	return &Stmt{st: q}, nil
}

// Exec executes the statement with args (by ordinal) and reads every row.
func (s *Stmt) Exec(ctx context.Context, args ...any) error {
	s.args = s.args[:0]
	for i, a := range args {
		v, err := driver.DefaultParameterConverter.ConvertValue(a)
		if err != nil {
			return fmt.Errorf("argument %d: %w", i+1, err)
		}
		s.args = append(s.args, driver.NamedValue{Ordinal: i + 1, Value: v})
	}
	rows, err := s.st.QueryContext(ctx, s.args)
	if err != nil {
		return err
	}
	if n := len(rows.Columns()); cap(s.dest) < n {
		s.dest = make([]driver.Value, n)
	}
	return Drain(rows, s.dest[:len(rows.Columns())])
}

// Close closes the driver statement.
func (s *Stmt) Close() error { return s.st.Close() }

// Drain reads every row into dest (made when nil) and closes rows.
func Drain(rows driver.Rows, dest []driver.Value) error {
	if dest == nil {
		dest = make([]driver.Value, len(rows.Columns()))
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
