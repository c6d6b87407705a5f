package pgbench

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/obsbench/obsbench/internal/workload"
)

// Weighted is a script with its weight: each transaction runs one script,
// chosen at random in proportion to the weights (pgbench -f FILE@W).
type Weighted struct {
	Script *Script
	Weight int
}

// RowStmt is a prepared statement that returns its result's rows as text
// (NULL as nil), which \gset and \aset need. Sessions whose statements
// cannot are refused for a script that stores results.
type RowStmt interface {
	QueryRows(ctx context.Context, args ...any) (columns []string, rows [][]*string, err error)
}

// Client runs scripts in one session as a pgbench client does: each call
// of Op runs the meta-commands up to the next SQL command, then sends that
// one statement (so that the driver counts and times statements).
type Client struct {
	scripts []Weighted
	total   int
	env     Env
	tag     string
	mode    QueryMode
	conn    workload.Conn
	stmts   map[*Command]workload.Stmt
	args    []any // a statement's arguments, reused

	cur  *Script
	pc   int
	cond []ifState

	// ids number the statements of every script (StatementNames' order).
	ids map[*Command]int
	// failing counts statement errors in a row; rollback ends the
	// transaction a failed statement leaves open.
	failing  int
	rollback workload.Stmt
}

// maxConsecutiveErrors ends a session whose statements all fail: its
// connection is gone, or the scripts do not fit the server.
const maxConsecutiveErrors = 100

// StatementNames names every SQL command of scripts, in order: the
// script's base name, the line, and the statement whole, its white space
// made single spaces (summary.json keeps it so, for a program to match;
// a table shortens it).
func StatementNames(scripts []Weighted) []string {
	var names []string
	for _, w := range scripts {
		for _, cmd := range w.Script.Commands {
			if cmd.Kind == SQL {
				text := strings.Join(strings.Fields(cmd.Text), " ")
				names = append(names, fmt.Sprintf("%s:%d %s", filepath.Base(w.Script.Name), cmd.Line, text))
			}
		}
	}
	return names
}

// ifState is the state of one \if ... \endif (pgbench's ifstate).
type ifState int

const (
	ifTrue      ifState = iota // this branch runs
	ifFalse                    // no branch has run yet: a later \elif or \else may
	ifIgnored                  // a branch ran, or the whole \if is skipped
	ifElseTrue                 // in \else, running
	ifElseFalse                // in \else, skipped
)

func (s ifState) runs() bool { return s == ifTrue || s == ifElseTrue }

// NewClient makes the client of session id. vars are the variables every
// client starts with (pgbench's scale, default_seed, random_seed and the
// --define ones); client_id is set here. tag is put, as a comment, before
// every statement sent, so that observers' records of the workload can be
// counted.
func NewClient(conn workload.Conn, scripts []Weighted, vars map[string]string, id int, seed uint64, tag string) (*Client, error) {
	if len(scripts) == 0 {
		return nil, errors.New("no script to run")
	}
	c := &Client{scripts: scripts, conn: conn, tag: tag, mode: Prepared, stmts: map[*Command]workload.Stmt{},
		env: Env{Vars: map[string]string{}, Rand: NewPRNG(seed)}}
	for k, v := range vars {
		c.env.Vars[k] = v
	}
	c.env.Vars["client_id"] = strconv.Itoa(id)
	c.ids = map[*Command]int{}
	for _, w := range scripts {
		for i := range w.Script.Commands {
			if cmd := &w.Script.Commands[i]; cmd.Kind == SQL {
				c.ids[cmd] = len(c.ids)
			}
		}
	}
	for _, w := range scripts {
		if w.Weight < 0 {
			return nil, fmt.Errorf("%s: weight %d: a weight is 0 or more", w.Script.Name, w.Weight)
		}
		c.total += w.Weight
	}
	if c.total == 0 {
		return nil, errors.New("every script has weight 0: nothing would run")
	}
	return c, nil
}

// SetQueryMode sets how the client sends its statements (Prepared until
// set). It fails when the session cannot send them so.
func (c *Client) SetQueryMode(m QueryMode) error {
	ok := true
	switch m {
	case Simple:
		_, ok = c.conn.(TextConn)
	case Extended:
		_, ok = c.conn.(UnnamedConn)
	case Prepared:
	default:
		_, err := ParseQueryMode(string(m))
		return err
	}
	if !ok {
		return fmt.Errorf("--query-mode %s: this engine's sessions cannot send statements so", m)
	}
	c.mode = m
	return nil
}

// Vars are the client's variables now (for tests and \gset's results).
func (c *Client) Vars() map[string]string { return c.env.Vars }

// Op is the session's operation (workload.Op).
func (c *Client) Op(ctx context.Context) error {
	sqlless := 0 // scripts begun since the last statement: one without SQL would loop
	for {
		if c.cur == nil {
			select {
			case <-workload.Stopping(ctx):
				return workload.ErrDone // the run ended: no new transaction
			default:
			}
			if sqlless > 2*len(c.scripts)+10 {
				return errors.New("the scripts run no SQL command: nothing to measure")
			}
			c.begin()
			sqlless++
		}
		if c.pc >= len(c.cur.Commands) {
			if len(c.cond) > 0 { // cannot happen: ParseScript checks nesting
				return fmt.Errorf("%s: \\if not closed", c.cur.Name)
			}
			c.cur = nil
			continue
		}
		cmd := &c.cur.Commands[c.pc]
		c.pc++
		ran, err := c.step(ctx, cmd)
		if err != nil {
			where := fmt.Sprintf("%s:%d", c.cur.Name, cmd.Line)
			var ns notSent
			var me *ModeError
			if err = modeError(c.mode, where, err); errors.As(err, &me) {
				return err // the statement cannot run in this mode
			}
			err = fmt.Errorf("%s: %w", where, err)
			if !ran || errors.As(err, &ns) {
				return err // the script is wrong, not the server
			}
			return c.failed(ctx, cmd, err)
		}
		if ran {
			c.failing = 0
			clk := workload.Clocked(ctx)
			if clk != nil {
				clk.Statement, clk.Unfinished = c.ids[cmd], c.pc < len(c.cur.Commands)
			}
			if c.pc < len(c.cur.Commands) && !c.sqlAhead() {
				return c.finish(ctx, clk)
			}
			return nil
		}
	}
}

// sqlAhead says whether a SQL command is left in the script (in any
// branch of an \if).
func (c *Client) sqlAhead() bool {
	for _, cmd := range c.cur.Commands[c.pc:] {
		if cmd.Kind == SQL {
			return true
		}
	}
	return false
}

// finish runs the meta commands that close the script after its last
// statement (a \sleep, a \set), as pgbench counts them in the
// transaction: the unit of work ends with them, the statement's latency
// before them (clk.Ended). When the run ends during them, the statement
// still counts.
func (c *Client) finish(ctx context.Context, clk *workload.Clock) error {
	if clk != nil {
		clk.Ended, clk.Unfinished = time.Now(), false
	}
	for c.pc < len(c.cur.Commands) {
		cmd := &c.cur.Commands[c.pc]
		c.pc++
		if _, err := c.step(ctx, cmd); err != nil {
			name := c.cur.Name
			c.cur = nil
			if errors.Is(err, workload.ErrDone) {
				return nil
			}
			return fmt.Errorf("%s:%d: %w", name, cmd.Line, err)
		}
	}
	c.cur = nil
	return nil
}

// failed ends the transaction in which a statement failed (a deadlock, a
// constraint the script breaks): the server's error is counted by the
// driver, the transaction is rolled back, and the session goes on with a
// new one, as pgbench's clients go on after a failed transaction when
// retries are off. The ROLLBACK carries no tag: it is not the workload's.
func (c *Client) failed(ctx context.Context, cmd *Command, err error) error {
	c.failing++
	if c.failing >= maxConsecutiveErrors || ctx.Err() != nil {
		return err
	}
	c.cur = nil
	if tc, ok := c.conn.(TextConn); ok && c.mode == Simple {
		if rerr := tc.ExecText(ctx, "ROLLBACK"); rerr != nil {
			return errors.Join(err, rerr)
		}
	} else if c.rollback == nil {
		st, perr := c.conn.Prepare(ctx, "ROLLBACK")
		if perr != nil {
			return errors.Join(err, perr)
		}
		c.rollback = st
	}
	if c.rollback != nil {
		if rerr := c.rollback.Exec(ctx); rerr != nil {
			return errors.Join(err, rerr)
		}
	}
	if clk := workload.Clocked(ctx); clk != nil {
		clk.Statement = c.ids[cmd]
	}
	return &workload.StatementError{Err: err}
}

// notSent is an error of a statement the client could not send (a
// variable the script never set): the script's fault, which ends the
// session, not the server's.
type notSent struct{ error }

func (e notSent) Unwrap() error { return e.error }

// begin chooses the next transaction's script by weight.
func (c *Client) begin() {
	r := int(c.env.Rand.Range(0, uint64(c.total-1)))
	for _, w := range c.scripts {
		if r < w.Weight {
			c.cur = w.Script
			break
		}
		r -= w.Weight
	}
	c.pc, c.cond = 0, c.cond[:0]
}

// step runs one command; ran says a statement was sent.
func (c *Client) step(ctx context.Context, cmd *Command) (ran bool, err error) {
	top := ifTrue
	if len(c.cond) > 0 {
		top = c.cond[len(c.cond)-1]
	}
	switch cmd.Kind {
	case If:
		if !top.runs() {
			c.cond = append(c.cond, ifIgnored)
			return false, nil
		}
		v, err := cmd.Expr.Eval(&c.env)
		if err != nil {
			return false, err
		}
		c.cond = append(c.cond, map[bool]ifState{true: ifTrue, false: ifFalse}[truth(v)])
		return false, nil
	case Elif:
		switch top {
		case ifTrue:
			c.cond[len(c.cond)-1] = ifIgnored
		case ifFalse:
			v, err := cmd.Expr.Eval(&c.env)
			if err != nil {
				return false, err
			}
			if truth(v) {
				c.cond[len(c.cond)-1] = ifTrue
			}
		}
		return false, nil
	case Else:
		switch top {
		case ifTrue, ifIgnored:
			c.cond[len(c.cond)-1] = ifElseFalse
		case ifFalse:
			c.cond[len(c.cond)-1] = ifElseTrue
		}
		return false, nil
	case Endif:
		c.cond = c.cond[:len(c.cond)-1]
		return false, nil
	}
	if !top.runs() {
		return false, nil
	}
	switch cmd.Kind {
	case Set:
		v, err := cmd.Expr.Eval(&c.env)
		if err != nil {
			return false, err
		}
		c.env.Vars[cmd.Var] = v.String()
		return false, nil
	case Sleep:
		return false, c.sleep(ctx, cmd)
	}
	return true, c.exec(ctx, cmd)
}

func (c *Client) sleep(ctx context.Context, cmd *Command) error {
	us := cmd.SleepUS
	if cmd.SleepVar != "" {
		s, ok := c.env.Vars[cmd.SleepVar]
		if !ok {
			return fmt.Errorf(`\sleep: undefined variable %q`, cmd.SleepVar)
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return fmt.Errorf(`\sleep: %s is %q, not a whole number`, cmd.SleepVar, s)
		}
		us = n * cmd.Unit
	}
	return workload.Sleep(ctx, time.Now().Add(time.Duration(us)*time.Microsecond))
}

// PrepareAll prepares every statement of the client's scripts, as
// pgbench -M prepared does before a script's first transaction: a
// statement the server refuses fails the session before the run. Only
// prepared mode prepares; the others send each statement whole.
func (c *Client) PrepareAll(ctx context.Context) error {
	if c.mode != Prepared {
		return nil
	}
	return c.eachStatement(func(cmd *Command) error {
		_, err := c.prepare(ctx, cmd)
		return err
	})
}

// Check has the server parse every statement of the client's scripts,
// without running any, in the extended and prepared modes (simple mode's
// statements are only known with their values): a statement whose
// parameters the server cannot type fails here with a *ModeError, before
// an experiment starts. The statements it prepares stay in the session.
func (c *Client) Check(ctx context.Context) error {
	if c.mode == Simple {
		return nil
	}
	return c.eachStatement(func(cmd *Command) error {
		_, err := c.conn.Prepare(ctx, "/* "+c.tag+" */ "+cmd.Text)
		return err
	})
}

// eachStatement calls f for every SQL command of the scripts; its error
// is given the command's file:line, and named a *ModeError when another
// mode would avoid it.
func (c *Client) eachStatement(f func(cmd *Command) error) error {
	for _, w := range c.scripts {
		for i := range w.Script.Commands {
			cmd := &w.Script.Commands[i]
			if cmd.Kind != SQL {
				continue
			}
			where := fmt.Sprintf("%s:%d", w.Script.Name, cmd.Line)
			if err := f(cmd); err != nil {
				var me *ModeError
				if err = modeError(c.mode, where, err); errors.As(err, &me) {
					return err
				}
				return fmt.Errorf("%s: %w", where, err)
			}
		}
	}
	return nil
}

// prepare is cmd's statement: prepared on the server once (prepared mode),
// or an unnamed statement sent with each execution (extended).
func (c *Client) prepare(ctx context.Context, cmd *Command) (workload.Stmt, error) {
	if st, ok := c.stmts[cmd]; ok {
		return st, nil
	}
	text := "/* " + c.tag + " */ " + cmd.Text
	var st workload.Stmt
	if uc, ok := c.conn.(UnnamedConn); ok && c.mode == Extended {
		st = uc.Unnamed(text)
	} else {
		var err error
		if st, err = c.conn.Prepare(ctx, text); err != nil {
			return nil, err
		}
	}
	c.stmts[cmd] = st
	return st, nil
}

func (c *Client) exec(ctx context.Context, cmd *Command) error {
	if c.mode == Simple {
		return c.execText(ctx, cmd)
	}
	st, err := c.prepare(ctx, cmd)
	if err != nil {
		return err
	}
	if _, rows := st.(RowStmt); cmd.Gset != nil && !rows {
		return notSent{errors.New(`\gset and \aset need a session that returns rows; this engine's does not`)}
	}
	// One slice per client, reused: a statement does not keep its
	// arguments after Exec returns.
	args := c.args[:0]
	for range cmd.Params {
		args = append(args, nil)
	}
	c.args = args
	for i, p := range cmd.Params {
		v, ok := c.env.Vars[p]
		if !ok {
			return notSent{fmt.Errorf("undefined variable %q", p)}
		}
		args[i] = v
	}
	workload.Started(ctx)
	if cmd.Gset == nil {
		return st.Exec(ctx, args...)
	}
	cols, rows, err := st.(RowStmt).QueryRows(ctx, args...)
	if err != nil {
		return err
	}
	return c.store(cmd, cols, rows)
}

// execText runs cmd in simple mode: the variables' values put into its
// text (substitute), sent as one simple query.
func (c *Client) execText(ctx context.Context, cmd *Command) error {
	tc := c.conn.(TextConn) // SetQueryMode checked it
	text := "/* " + c.tag + " */ " + substitute(cmd.Raw, c.env.Vars)
	workload.Started(ctx)
	if cmd.Gset == nil {
		return tc.ExecText(ctx, text)
	}
	cols, rows, err := tc.QueryText(ctx, text)
	if err != nil {
		return err
	}
	return c.store(cmd, cols, rows)
}

// store keeps a \gset or \aset result in the client's variables.
func (c *Client) store(cmd *Command, cols []string, rows [][]*string) error {
	if !cmd.Gset.All && len(rows) != 1 {
		return fmt.Errorf(`\gset: expected one row, got %d`, len(rows))
	}
	for _, row := range rows {
		for i, v := range row {
			s := "" // pgbench stores PQgetvalue's text: a NULL is empty
			if v != nil {
				s = *v
			}
			c.env.Vars[cmd.Gset.Prefix+cols[i]] = s
		}
	}
	return nil
}
