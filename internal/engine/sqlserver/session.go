package sqlserver

import (
	"context"
	"database/sql/driver"
	"fmt"

	"github.com/obsbench/obsbench/internal/engine"
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
	ds, err := engine.NewSQLStmt(st)
	if err != nil {
		return nil, err // not a typed nil in the interface
	}
	return ds, nil
}

// ExecSQL runs sql once as a batch and reads every row (workload.Execer).
// go-mssqldb sends a statement without parameters as a batch.
func (c *Session) ExecSQL(ctx context.Context, sql string) error {
	st, err := c.Prepare(ctx, sql)
	if err != nil {
		return err
	}
	defer st.(*engine.SQLStmt).Close()
	return st.Exec(ctx)
}

// ExecText runs sql, in the workloads' portable SQL, once as a batch in
// T-SQL: a statement of pgbench's simple mode, its variables' values
// already in its text.
func (c *Session) ExecText(ctx context.Context, sql string) error { return c.ExecSQL(ctx, sql) }

// QueryText is ExecText that returns the result's columns and rows as
// text, NULL as nil (\gset in simple mode).
func (c *Session) QueryText(ctx context.Context, sql string) ([]string, [][]*string, error) {
	st, err := c.Prepare(ctx, sql)
	if err != nil {
		return nil, nil, err
	}
	defer st.(*engine.SQLStmt).Close()
	return st.(*engine.SQLStmt).QueryRows(ctx)
}

// Close ends the session.
func (c *Session) Close(context.Context) error { return c.conn.Close() }

// Dialect names the SQL dialect of the session's server.
func (c *Session) Dialect() string { return "sqlserver" }
