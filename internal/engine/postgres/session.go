package postgres

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/obsbench/obsbench/internal/collect"
	"github.com/obsbench/obsbench/internal/driver"
	"github.com/obsbench/obsbench/internal/workload"
)

// Session is one client session of the driver.
//
// pgx opens and authenticates the connection; then the session takes the
// socket over (pgconn's Hijack) and speaks the extended query protocol
// itself: each Exec is one write of a pre-encoded Bind/Describe/Execute/Sync
// and reads until ReadyForQuery, checking message types without decoding
// rows. That is what libpq does for pgbench -M prepared, and it keeps the
// driver's CPU per statement near pgbench's (bench/driver-vs-pgbench): the
// driver must not compete with the server it measures. pgconn's general
// machinery (context watching, a background reader during writes, message
// decoding) cost clearly more than pgbench per statement. A plain socket is
// then taken out of Go's poller (package socket), so that the session
// wakes once per statement, as pgbench's clients do, not also each time
// the server reads a request.
type Session struct {
	conn    net.Conn
	sock    *driver.SocketConn // conn, when it is a plain socket; nil with TLS
	buf     []byte             // read buffer; buf[r:w] is unread
	r, w    int
	n       int
	watched context.Context
	stop    func() bool

	pid      int                // the backend's process id
	clock    *collect.TaskClock // the backend's CPU clock, opened when first read
	clockErr error              // why there is no clock: not ours to read, or opening it failed
}

// DriverApplication is the application_name of the driver's sessions: a
// capture of a run keeps only theirs, not obsbench's own queries.
const DriverApplication = "obsbench-driver"

// Dial opens a driver session on the dataset database as the runner's
// driver.Session (engine.Target, driver.Dialer).
func (s *Server) Dial(ctx context.Context) (driver.Session, error) { return s.Connect(ctx) }

// Connect opens a driver session on the dataset database.
func (s *Server) Connect(ctx context.Context) (*Session, error) {
	cfg, err := pgconn.ParseConfig(s.dsn)
	if err != nil {
		return nil, fmt.Errorf("parse dsn: %w", err)
	}
	cfg.RuntimeParams["application_name"] = DriverApplication
	s.setSearchPath(cfg.RuntimeParams)
	pc, err := pgconn.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect driver session: %w", err)
	}
	hc, err := pc.Hijack()
	if err != nil {
		pc.Close(ctx)
		return nil, fmt.Errorf("take over driver session: %w", err)
	}
	c := &Session{conn: hc.Conn, buf: make([]byte, 16<<10)}
	if sock, err := driver.TakeSocket(hc.Conn); err == nil {
		c.conn, c.sock = sock, sock
	} else if !errors.Is(err, driver.ErrNotSocket) {
		hc.Conn.Close()
		return nil, fmt.Errorf("take over driver session: %w", err)
	}
	// The backend's CPU clock is read only where the backends are this
	// machine's processes: another machine's process ids name none of
	// this machine's.
	c.pid = int(hc.PID)
	if s.host == nil && !s.onThisMachine(ctx) {
		c.clockErr = errElsewhere
	}
	return c, nil
}

// onThisMachine says whether the backends of a server obsbench does not
// manage are processes of this machine: a control session's backend, by
// the process id the server gives it, is a local postgres process that
// started when the server says it did. A server elsewhere (or in another
// process namespace) fails the check: its id names no process of this
// machine, or another one. Checked once per Server.
func (s *Server) onThisMachine(ctx context.Context) bool {
	s.localOnce.Do(func() {
		conn, err := s.connect(ctx)
		if err != nil {
			return
		}
		defer conn.Close(ctx)
		var pid int
		var began time.Time
		if err := conn.QueryRow(ctx, "SELECT pid, backend_start FROM pg_stat_activity WHERE pid = pg_backend_pid()").Scan(&pid, &began); err != nil {
			return
		}
		s.local = backendHere(pid, began, collect.Started)
	})
	return s.local
}

// backendHere says whether process pid of this machine, as started
// reads it, is a postgres backend that began when the server says
// (began, its backend_start).
func backendHere(pid int, began time.Time, started func(pid int) (comm string, at time.Time, err error)) bool {
	comm, at, err := started(pid)
	return err == nil && comm == "postgres" && at.Sub(began).Abs() <= startSlack
}

// startSlack is how far a process's start read from /proc (whole seconds
// of boot time, ticks of 10 ms) may be from the server's backend_start.
const startSlack = 2 * time.Second

// Prepare prepares sql under a name of the session's own (Parse, Sync).
func (c *Session) Prepare(ctx context.Context, sql string) (workload.Stmt, error) {
	c.watch(ctx)
	c.n++
	name := "obsbench_" + strconv.Itoa(c.n)
	msg := message(nil, 'P', cstring(cstring(nil, name), sql), []byte{0, 0})
	msg = message(msg, 'S')
	if err := c.roundTrip(msg); err != nil {
		return nil, fmt.Errorf("prepare: %w", err)
	}
	return &stmt{s: c, name: name, noArgs: execution(nil, name, nil)}, nil
}

// ExecSQL runs sql once as a simple query (Query), which may hold several
// statements: how a replay runs a captured ad hoc statement.
func (c *Session) ExecSQL(ctx context.Context, sql string) error {
	c.watch(ctx)
	return c.roundTrip(message(nil, 'Q', cstring(nil, sql)))
}

// ExecText runs sql once as a simple query: a statement of pgbench's
// simple mode, its variables' values already in its text.
func (c *Session) ExecText(ctx context.Context, sql string) error { return c.ExecSQL(ctx, sql) }

// QueryText runs sql once as a simple query and returns its result's
// column names and rows as text, NULL as nil (\gset in simple mode).
func (c *Session) QueryText(ctx context.Context, sql string) ([]string, [][]*string, error) {
	c.watch(ctx)
	return c.queryRows(message(nil, 'Q', cstring(nil, sql)))
}

// Unnamed is sql as an unnamed statement: each Exec sends Parse with the
// text, then Bind, Describe, Execute and Sync, in one write, and the
// server parses and plans it every time (pgbench -M extended, libpq's
// PQexecParams). Nothing is sent now.
func (c *Session) Unnamed(sql string) workload.Stmt {
	parse := message(nil, 'P', cstring(cstring(nil, ""), sql), []byte{0, 0})
	return &stmt{s: c, parse: parse, noArgs: execution(append([]byte(nil), parse...), "", nil)}
}

// Socket is the session's socket when it is a plain one (driver.Socketed),
// nil with TLS.
func (c *Session) Socket() *driver.SocketConn { return c.sock }

// errElsewhere is why a session of an external server has no CPU clock.
var errElsewhere = errors.New("the server's backends are not processes of this machine: their CPU cannot be read")

// ServerCPU is the CPU time the session's backend has used so far. The
// clock is opened at the first read: only runs that keep executions pay
// for it.
func (c *Session) ServerCPU() (time.Duration, error) {
	if c.clock == nil && c.clockErr == nil {
		c.clock, c.clockErr = collect.OpenTaskClock(c.pid)
	}
	if c.clockErr != nil {
		return 0, c.clockErr
	}
	return c.clock.Read()
}

// Close ends the session (Terminate) and closes the socket.
func (c *Session) Close(context.Context) error {
	if c.clock != nil {
		c.clock.Close()
	}
	if c.stop != nil {
		c.stop()
	}
	c.conn.SetWriteDeadline(time.Now().Add(time.Second))
	c.conn.Write(message(nil, 'X'))
	return c.conn.Close()
}

// watch makes a cancelled ctx interrupt a blocked read or write, by setting
// a past deadline. It is registered once per context, not per statement.
func (c *Session) watch(ctx context.Context) {
	if ctx == c.watched || ctx.Done() == nil {
		return
	}
	if c.stop != nil {
		c.stop()
	}
	c.watched = ctx
	c.stop = context.AfterFunc(ctx, func() { c.conn.SetDeadline(time.Unix(1, 0)) })
}

type stmt struct {
	s      *Session
	parse  []byte // Parse of an unnamed statement, sent before each Bind; nil when prepared
	name   string
	noArgs []byte // the encoded execution without arguments
	buf    []byte // the last execution with arguments, reused
}

// Exec runs the statement with its arguments in text format and reads the
// whole result.
func (st *stmt) Exec(ctx context.Context, args ...any) error {
	st.s.watch(ctx)
	return st.s.roundTrip(st.message(args))
}

// message is the statement's execution with args in text format.
func (st *stmt) message(args []any) []byte {
	if len(args) == 0 {
		return st.noArgs
	}
	// One buffer per statement, reused: the message is written before
	// Exec returns. Building it in place, the arguments formatted by
	// strconv where fmt is not needed, saves the allocations of a slice
	// per argument and of the message's growth (the pgbench workload
	// binds 1-4 arguments per statement).
	st.buf = execution(append(st.buf[:0], st.parse...), st.name, args)
	return st.buf
}

// execution appends to dst the execution of the prepared statement name
// with args in text format (nil: NULL): Bind, Describe, Execute, Sync.
func execution(dst []byte, name string, args []any) []byte {
	b := append(dst, 'B', 0, 0, 0, 0, 0) // length, then the unnamed portal
	b = append(append(b, name...), 0)
	b = binary.BigEndian.AppendUint16(b, 0) // all parameters in text format
	b = binary.BigEndian.AppendUint16(b, uint16(len(args)))
	for _, a := range args {
		if a == nil {
			b = binary.BigEndian.AppendUint32(b, 0xFFFFFFFF) // NULL
			continue
		}
		at := len(b)
		b = appendText(append(b, 0, 0, 0, 0), a)
		binary.BigEndian.PutUint32(b[at:], uint32(len(b)-at-4))
	}
	b = binary.BigEndian.AppendUint16(b, 0) // all results in text format
	binary.BigEndian.PutUint32(b[len(dst)+1:], uint32(len(b)-len(dst)-1))
	return append(b, executeTail...)
}

// executeTail follows each Bind: Describe the portal, Execute it, Sync.
var executeTail = message(message(message(nil, 'D', []byte{'P', 0}), 'E', []byte{0, 0, 0, 0, 0}), 'S')

// appendText appends a's text, as fmt.Sprint formats it.
func appendText(b []byte, a any) []byte {
	switch v := a.(type) {
	case string:
		return append(b, v...)
	case int:
		return strconv.AppendInt(b, int64(v), 10)
	case int64:
		return strconv.AppendInt(b, v, 10)
	case bool:
		return strconv.AppendBool(b, v)
	default:
		return fmt.Append(b, v)
	}
}

// QueryRows runs the statement and returns its result's column names and
// rows as text, NULL as nil: what a pgbench script's \gset stores.
func (st *stmt) QueryRows(ctx context.Context, args ...any) (columns []string, rows [][]*string, err error) {
	st.s.watch(ctx)
	return st.s.queryRows(st.message(args))
}

// queryRows sends msg and collects the columns and rows of its answer.
func (c *Session) queryRows(msg []byte) (columns []string, rows [][]*string, err error) {
	var bad error
	err = c.converse(msg, func(typ byte, body []byte) {
		switch typ {
		case 'T':
			if columns, err = rowDescription(body); err != nil && bad == nil {
				bad = err
			}
		case 'D':
			row, err := dataRow(body)
			if err != nil && bad == nil {
				bad = err
			}
			rows = append(rows, row)
		}
	})
	if err == nil {
		err = bad
	}
	return columns, rows, err
}

// rowDescription reads the column names of a RowDescription.
func rowDescription(b []byte) ([]string, error) {
	if len(b) < 2 {
		return nil, errors.New("short RowDescription")
	}
	n := int(binary.BigEndian.Uint16(b))
	b = b[2:]
	cols := make([]string, 0, n)
	for i := 0; i < n; i++ {
		end := bytes.IndexByte(b, 0)
		if end < 0 || len(b) < end+1+18 {
			return nil, errors.New("short RowDescription")
		}
		cols = append(cols, string(b[:end]))
		b = b[end+1+18:] // table oid, column, type oid, size, modifier, format
	}
	return cols, nil
}

// dataRow reads a DataRow's values.
func dataRow(b []byte) ([]*string, error) {
	if len(b) < 2 {
		return nil, errors.New("short DataRow")
	}
	n := int(binary.BigEndian.Uint16(b))
	b = b[2:]
	row := make([]*string, n)
	for i := range row {
		if len(b) < 4 {
			return nil, errors.New("short DataRow")
		}
		l := int32(binary.BigEndian.Uint32(b))
		b = b[4:]
		if l < 0 {
			continue // NULL
		}
		if len(b) < int(l) {
			return nil, errors.New("short DataRow")
		}
		v := string(b[:l])
		row[i], b = &v, b[l:]
	}
	return row, nil
}

// roundTrip writes msg and reads messages up to ReadyForQuery. An
// ErrorResponse becomes the returned error, after the session is in sync
// again.
func (c *Session) roundTrip(msg []byte) error { return c.converse(msg, nil) }

// converse is roundTrip that hands each RowDescription and DataRow to rows
// (its body is valid only during the call).
func (c *Session) converse(msg []byte, rows func(typ byte, body []byte)) error {
	if c.r == c.w {
		c.r, c.w = 0, 0 // nothing unread: the answer goes to the start
	}
	if err := c.send(msg); err != nil {
		if reason := c.closingError(); reason != nil {
			return fmt.Errorf("%w (and the server closed the connection)", reason)
		}
		return err
	}
	var failed error
	for {
		typ, body, err := c.next()
		if err != nil && failed != nil {
			// A FATAL error (the connection terminated, the server
			// shutting down) comes before the server closes the
			// connection: it is the reason, not the EOF after it.
			return fmt.Errorf("%w (and the server closed the connection)", failed)
		}
		if err != nil {
			return err
		}
		switch typ {
		case 'E':
			failed = errorResponse(body)
		case 'G':
			// COPY FROM STDIN (a replayed statement): the session has
			// no data to send, so it refuses, and the server answers
			// with an error.
			if err := c.send(message(nil, 'f', cstring(nil, "obsbench sends no COPY data"))); err != nil {
				return err
			}
		case 'T', 'D':
			if rows != nil {
				rows(typ, body)
			}
		case 'Z':
			return failed
		}
	}
}

// closingError looks, after a failed write, for the ErrorResponse the
// server sent before it closed the connection (a terminated backend, a
// shutdown): that is the reason, not the broken pipe.
func (c *Session) closingError() error {
	c.conn.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	defer c.conn.SetReadDeadline(time.Time{})
	for {
		typ, body, err := c.next()
		if err != nil {
			return nil
		}
		if typ == 'E' {
			return errorResponse(body)
		}
	}
}

// next returns the next message's type and body; the body is valid until
// the following call.
func (c *Session) next() (byte, []byte, error) {
	if err := c.fill(5); err != nil {
		return 0, nil, err
	}
	typ := c.buf[c.r]
	n := int(binary.BigEndian.Uint32(c.buf[c.r+1:])) + 1
	if n < 5 {
		return 0, nil, fmt.Errorf("malformed message %q of length %d", typ, n-1)
	}
	if err := c.fill(n); err != nil {
		return 0, nil, err
	}
	body := c.buf[c.r+5 : c.r+n]
	c.r += n
	return typ, body, nil
}

// fill makes at least n unread bytes available.
func (c *Session) fill(n int) error {
	if c.w-c.r >= n {
		return nil
	}
	if c.r > 0 {
		c.w = copy(c.buf, c.buf[c.r:c.w])
		c.r = 0
	}
	if n > len(c.buf) {
		c.buf = append(c.buf, make([]byte, n-len(c.buf))...)
	}
	for c.w < n {
		m, err := c.conn.Read(c.buf[c.w:])
		c.w += m
		if err != nil && c.w < n {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return err
		}
	}
	return nil
}

// send writes msg and, on a plain socket, waits until the server has
// answered something and reads it: one write(2) and one read(2) per
// statement, as in pgbench (see driver.SocketConn.Exchange).
func (c *Session) send(msg []byte) error {
	if c.sock == nil {
		_, err := c.conn.Write(msg)
		return err
	}
	if c.w == len(c.buf) {
		c.buf = append(c.buf, make([]byte, len(c.buf))...)
	}
	n, err := c.sock.Exchange(msg, c.buf[c.w:])
	c.w += n
	return err
}

// errorResponse turns an ErrorResponse body into a *pgconn.PgError, so that
// callers can classify it by SQLSTATE.
func errorResponse(body []byte) error {
	e := &pgconn.PgError{}
	for len(body) > 1 {
		field := body[0]
		end := 1
		for end < len(body) && body[end] != 0 {
			end++
		}
		v := string(body[1:end])
		switch field {
		case 'S':
			e.Severity = v
		case 'C':
			e.Code = v
		case 'M':
			e.Message = v
		case 'D':
			e.Detail = v
		}
		body = body[min(end+1, len(body)):]
	}
	return e
}

// message appends a protocol message of type typ with the given body parts.
func message(dst []byte, typ byte, parts ...[]byte) []byte {
	n := 4
	for _, p := range parts {
		n += len(p)
	}
	dst = append(dst, typ)
	dst = binary.BigEndian.AppendUint32(dst, uint32(n))
	for _, p := range parts {
		dst = append(dst, p...)
	}
	return dst
}

func cstring(dst []byte, s string) []byte { return append(append(dst, s...), 0) }
