package postgres

import (
	"context"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/obsbench/obsbench/internal/workload"
)

// Session is one client session of the driver. It uses pgconn, pgx's
// low-level layer, directly: the driver only needs to run prepared
// statements and read their results, and skipping row decoding keeps the
// driver's CPU per statement close to pgbench's.
type Session struct {
	conn *pgconn.PgConn
	n    int
}

// Connect opens a driver session on the dataset database.
func (s *Server) Connect(ctx context.Context) (*Session, error) {
	cfg, err := pgconn.ParseConfig(s.dsn)
	if err != nil {
		return nil, fmt.Errorf("parse dsn: %w", err)
	}
	cfg.RuntimeParams["application_name"] = "obsbench-driver"
	conn, err := pgconn.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect driver session: %w", err)
	}
	return &Session{conn: conn}, nil
}

// Prepare prepares sql under a name of the session's own.
func (c *Session) Prepare(ctx context.Context, sql string) (workload.Stmt, error) {
	c.n++
	name := "obsbench_" + strconv.Itoa(c.n)
	if _, err := c.conn.Prepare(ctx, name, sql, nil); err != nil {
		return nil, fmt.Errorf("prepare: %w", err)
	}
	return &stmt{conn: c.conn, name: name}, nil
}

// Close ends the session.
func (c *Session) Close(ctx context.Context) error { return c.conn.Close(ctx) }

type stmt struct {
	conn *pgconn.PgConn
	name string
}

// Exec runs the statement with its arguments in text format and reads the
// whole result.
func (s *stmt) Exec(ctx context.Context, args ...any) error {
	var params [][]byte
	if len(args) > 0 {
		params = make([][]byte, len(args))
		for i, a := range args {
			if a != nil {
				params[i] = []byte(fmt.Sprint(a))
			}
		}
	}
	_, err := s.conn.ExecPrepared(ctx, s.name, params, nil, nil).Close()
	return err
}
