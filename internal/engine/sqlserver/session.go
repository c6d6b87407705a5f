package sqlserver

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"

	"github.com/obsbench/obsbench/internal/workload"
)

// Session is one client session of the driver: a go-mssqldb connection
// used at its driver level, without database/sql's pool. A statement with
// parameters is sent as an RPC (sp_executesql), one without as a batch.
type Session struct {
	conn driver.Conn
}

// Connect opens a driver session on the dataset's database.
func (s *Server) Connect(ctx context.Context) (*Session, error) {
	c, err := s.connector(s.database, driverApp)
	if err != nil {
		return nil, err
	}
	conn, err := c.Connect(ctx)
	if err != nil {
		return nil, fmt.Errorf("connect to sqlserver: %w", err)
	}
	return &Session{conn: conn}, nil
}

// Prepare readies sql, written in the workloads' portable form, in
// T-SQL (Translate).
func (c *Session) Prepare(ctx context.Context, sql string) (workload.Stmt, error) {
	t := Translate(sql)
	st, err := c.conn.(driver.ConnPrepareContext).PrepareContext(ctx, t)
	if err != nil {
		return nil, fmt.Errorf("prepare %q: %w", t, err)
	}
	q, ok := st.(stmtQueryer)
	if !ok {
		return nil, errors.New("sqlserver: the driver's statements cannot be queried with a context")
	}
	return &stmt{st: q}, nil
}

// ExecSQL runs sql once as a batch and reads every row (workload.Execer).
// go-mssqldb sends a statement without parameters as a batch.
func (c *Session) ExecSQL(ctx context.Context, sql string) error {
	st, err := c.Prepare(ctx, sql)
	if err != nil {
		return err
	}
	defer st.(*stmt).st.Close()
	return st.Exec(ctx)
}

// Close ends the session.
func (c *Session) Close(context.Context) error { return c.conn.Close() }

// Dialect names the SQL dialect of the session's server.
func (c *Session) Dialect() string { return "sqlserver" }

type stmtQueryer interface {
	driver.Stmt
	driver.StmtQueryContext
}

type stmt struct {
	st   stmtQueryer
	dest []driver.Value
	args []driver.NamedValue
}

// Exec executes the statement and reads every row. Parameters go by
// ordinal: go-mssqldb names them @p1, @p2 (what Translate wrote).
func (s *stmt) Exec(ctx context.Context, args ...any) error {
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
	return drain(rows, s.dest[:len(rows.Columns())])
}

// drain reads every row into dest (made when nil) and closes rows.
func drain(rows driver.Rows, dest []driver.Value) error {
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
