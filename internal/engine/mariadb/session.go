package mariadb

import (
	"context"
	"database/sql/driver"
	"fmt"
	"regexp"

	"github.com/go-sql-driver/mysql"

	"github.com/obsbench/obsbench/internal/engine/driverstmt"
	"github.com/obsbench/obsbench/internal/workload"
)

// Session is one client session of the driver: a connection of
// go-sql-driver/mysql used at its driver level, without database/sql's
// pool, whose locking and conversions would cost driver CPU per statement.
// Statements are server-side prepared statements (binary protocol).
type Session struct {
	conn driver.Conn
}

// Connect opens a driver session on the dataset database.
func (s *Server) Connect(ctx context.Context) (*Session, error) {
	c, err := mysql.NewConnector(s.cfg)
	if err != nil {
		return nil, err
	}
	conn, err := c.Connect(ctx)
	if err != nil {
		return nil, fmt.Errorf("connect to mariadb: %w", err)
	}
	return &Session{conn: conn}, nil
}

// Prepare prepares sql on the server (COM_STMT_PREPARE). Workloads write
// parameters as $1, $2 (PostgreSQL's numbered form, which says which
// argument goes where); MariaDB's are ?, taken in order.
func (c *Session) Prepare(ctx context.Context, sql string) (workload.Stmt, error) {
	sql = placeholders.ReplaceAllString(sql, "?")
	st, err := c.conn.(driver.ConnPrepareContext).PrepareContext(ctx, sql)
	if err != nil {
		return nil, fmt.Errorf("prepare %q: %w", sql, err)
	}
	ds, err := driverstmt.New(st)
	if err != nil {
		return nil, err // not a typed nil in the interface
	}
	return ds, nil
}

// ExecSQL runs sql once as text (COM_QUERY) and reads every row: how a
// replay runs a captured statement, whose parameters the general log has
// already put into its text.
func (c *Session) ExecSQL(ctx context.Context, sql string) error {
	rows, err := c.conn.(driver.QueryerContext).QueryContext(ctx, sql, nil)
	if err != nil {
		return err
	}
	return driverstmt.Drain(rows, nil)
}

// Close ends the session (COM_QUIT).
func (c *Session) Close(context.Context) error { return c.conn.Close() }

// placeholders are numbered parameters; workload SQL uses them in order
// and has no $ elsewhere.
var placeholders = regexp.MustCompile(`\$[0-9]+`)
