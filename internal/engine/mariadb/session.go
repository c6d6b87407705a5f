package mariadb

import (
	"context"
	sqldriver "database/sql/driver"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/obsbench/obsbench/internal/collect"
	obsdriver "github.com/obsbench/obsbench/internal/driver"
	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/workload"
)

// Session is one client session of the driver: a connection of
// go-sql-driver/mysql used at its driver level, without database/sql's
// pool, whose locking and conversions would cost driver CPU per statement.
// Statements are server-side prepared statements (binary protocol).
type Session struct {
	conn     sqldriver.Conn
	sock     *obsdriver.SocketConn // the Unix socket, waited on for input only; nil over TCP
	watched  context.Context
	plain    context.Context // watched without its cancellation
	stop     func() bool
	clock    *collect.TaskClock // the connection's thread's CPU clock, opened when first read
	clockErr error              // why there is no clock: not ours to read, or opening it failed
}

// Connect opens a driver session on the dataset database.
func (s *Server) Connect(ctx context.Context) (*Session, error) {
	ses := &Session{}
	cfg := s.cfg
	if cfg.Net == "unix" {
		cfg = cfg.Clone()
		cfg.DialFunc = func(ctx context.Context, _, addr string) (net.Conn, error) {
			sc, err := dialInputOnly(ctx, addr)
			if err != nil {
				return nil, err
			}
			ses.sock = sc
			return sc, nil
		}
	}
	c, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	conn, err := c.Connect(ctx)
	if err != nil {
		return nil, fmt.Errorf("connect to mariadb: %w", err)
	}
	ses.conn = conn
	// The thread's CPU clock is read only where the server's threads are
	// this machine's: another machine's thread ids name none of this
	// machine's.
	if s.host == nil && !s.onThisMachine(ctx) {
		ses.clockErr = errElsewhere
	}
	return ses, nil
}

// onThisMachine says whether the threads of a server obsbench does not
// manage are this machine's, one per connection: the server runs one
// thread per connection (a pool's threads serve many), and a control
// session's thread, by the id the server gives it, belongs to a local
// mariadbd process that started when the server's uptime says. A server
// elsewhere fails the check. Checked once per Server.
func (s *Server) onThisMachine(ctx context.Context) bool {
	s.localOnce.Do(func() {
		conn, done, err := s.control(ctx)
		if err != nil {
			return
		}
		defer done()
		var handling string
		var tid int
		var up, now int64
		err = conn.QueryRowContext(ctx, `SELECT @@thread_handling, (SELECT TID FROM information_schema.PROCESSLIST WHERE ID = CONNECTION_ID()),
			(SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'UPTIME'), UNIX_TIMESTAMP()`).Scan(&handling, &tid, &up, &now)
		if err != nil || handling != "one-thread-per-connection" {
			return
		}
		s.local = serverHere(collect.ThreadGroup(tid), time.Unix(now-up, 0), collect.Started)
	})
	return s.local
}

// serverHere says whether process pid of this machine, as started reads
// it, is a MariaDB server that began when the server says (began: its
// clock less its uptime, both in whole seconds).
func serverHere(pid int, began time.Time, started func(pid int) (comm string, at time.Time, err error)) bool {
	if pid <= 0 {
		return false
	}
	comm, at, err := started(pid)
	return err == nil && (comm == "mariadbd" || comm == "mysqld") && at.Sub(began).Abs() <= startSlack
}

// startSlack is how far a process's start read from /proc may be from the
// server's: both in whole seconds, and the query's own time between.
const startSlack = 3 * time.Second

// dialInputOnly connects to a Unix socket that the session waits on for
// input only (package socket): in Go's poller a session is woken twice
// per statement, once when the server reads the request and once when the
// answer arrives. A TCP socket is left in Go's poller: TCP signals output
// space only after a write found the buffer full.
func dialInputOnly(ctx context.Context, addr string) (*obsdriver.SocketConn, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, "unix", addr)
	if err != nil {
		return nil, err
	}
	sc, err := obsdriver.TakeSocket(nc)
	if err != nil {
		nc.Close()
		return nil, err
	}
	return sc, nil
}

// Socket is the session's socket when it is a Unix socket
// (driver.Socketed): the driver can run the session on an event loop.
func (c *Session) Socket() *obsdriver.SocketConn { return c.sock }

// uncancelled returns ctx without its cancellation, for go-sql-driver,
// and makes ctx's end interrupt the session's socket instead (a deadline
// in the past), once per context. With a cancellable context the driver
// hands each query to a watcher goroutine of the connection and back: a
// wake-up of another goroutine per statement (driver CPU that competes
// with the server measured), and on an event loop (driver.SocketLoop) a session
// that blocks its loop until that goroutine has run. Over TCP ctx is kept
// as it is.
func (c *Session) uncancelled(ctx context.Context) context.Context {
	if c.sock == nil || ctx.Done() == nil {
		return ctx
	}
	if ctx != c.watched {
		if c.stop != nil {
			c.stop()
		}
		c.watched, c.plain = ctx, context.WithoutCancel(ctx)
		c.stop = context.AfterFunc(ctx, func() { c.sock.SetDeadline(time.Unix(1, 0)) })
	}
	return c.plain
}

// errElsewhere is why a session of an external server has no CPU clock.
var errElsewhere = errors.New("the server's threads are not this machine's, one per connection: their CPU cannot be read")

// openThreadClock opens the CPU clock of the server thread that serves
// conn (one thread per connection, MariaDB's default thread_handling).
func openThreadClock(ctx context.Context, conn sqldriver.Conn) (*collect.TaskClock, error) {
	q, ok := conn.(sqldriver.QueryerContext)
	if !ok {
		return nil, errors.New("the connection cannot run a query")
	}
	rows, err := q.QueryContext(ctx, "SELECT TID FROM information_schema.PROCESSLIST WHERE ID = CONNECTION_ID()", nil)
	if err != nil {
		return nil, fmt.Errorf("read the session's thread id: %w", err)
	}
	defer rows.Close()
	v := make([]sqldriver.Value, 1)
	if err := rows.Next(v); err != nil {
		return nil, fmt.Errorf("read the session's thread id: %w", err)
	}
	text := fmt.Sprint(v[0]) // the text protocol gives []byte, others int64
	if b, ok := v[0].([]byte); ok {
		text = string(b)
	}
	tid, err := strconv.Atoi(text)
	if err != nil {
		return nil, fmt.Errorf("the session's thread id %v: %w", v[0], err)
	}
	return collect.OpenTaskClock(tid)
}

// ServerCPU is the CPU time the session's server thread has used so far.
// The clock is opened at the first read (a query for the thread's id):
// only runs that keep executions pay for it. The driver reads it between
// statements, when the connection is free.
func (c *Session) ServerCPU() (time.Duration, error) {
	if c.clock == nil && c.clockErr == nil {
		c.clock, c.clockErr = openThreadClock(context.Background(), c.conn)
	}
	if c.clockErr != nil {
		return 0, c.clockErr
	}
	return c.clock.Read()
}

// Prepare prepares sql on the server (COM_STMT_PREPARE), in MariaDB's
// dialect (Translate).
func (c *Session) Prepare(ctx context.Context, sql string) (workload.Stmt, error) {
	sql = Translate(sql)
	st, err := c.conn.(sqldriver.ConnPrepareContext).PrepareContext(c.uncancelled(ctx), sql)
	if err != nil {
		return nil, fmt.Errorf("prepare %q: %w", sql, err)
	}
	ds, err := engine.NewSQLStmt(st)
	if err != nil {
		return nil, err // not a typed nil in the interface
	}
	return &stmt{s: c, st: ds}, nil
}

// stmt runs a prepared statement with the session's uncancelled context.
type stmt struct {
	s  *Session
	st *engine.SQLStmt
}

func (st *stmt) Exec(ctx context.Context, args ...any) error {
	return st.st.Exec(st.s.uncancelled(ctx), args...)
}

// QueryRows returns the statement's columns and rows as text (a pgbench
// script's \gset).
func (st *stmt) QueryRows(ctx context.Context, args ...any) ([]string, [][]*string, error) {
	return st.st.QueryRows(st.s.uncancelled(ctx), args...)
}

// ExecSQL runs sql once as text (COM_QUERY) and reads every row: how a
// replay runs a captured statement, whose parameters the general log has
// already put into its text.
func (c *Session) ExecSQL(ctx context.Context, sql string) error {
	rows, err := c.conn.(sqldriver.QueryerContext).QueryContext(c.uncancelled(ctx), sql, nil)
	if err != nil {
		return err
	}
	return engine.SQLDrain(rows, nil)
}

// ExecText runs sql, in the workloads' portable SQL, once as text
// (COM_QUERY) in MariaDB's dialect (Translate): a statement of pgbench's
// simple mode, its variables' values already in its text.
func (c *Session) ExecText(ctx context.Context, sql string) error {
	return c.ExecSQL(ctx, Translate(sql))
}

// QueryText is ExecText that returns the result's columns and rows as
// text, NULL as nil (\gset in simple mode).
func (c *Session) QueryText(ctx context.Context, sql string) ([]string, [][]*string, error) {
	rows, err := c.conn.(sqldriver.QueryerContext).QueryContext(c.uncancelled(ctx), Translate(sql), nil)
	if err != nil {
		return nil, nil, err
	}
	return engine.SQLTextRows(rows)
}

// Close ends the session (COM_QUIT).
func (c *Session) Close(context.Context) error {
	if c.clock != nil {
		c.clock.Close()
	}
	if c.stop != nil {
		c.stop()
	}
	return c.conn.Close()
}
