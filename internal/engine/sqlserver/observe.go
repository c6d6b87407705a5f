package sqlserver

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/observer"
)

// change is one applied step with the statements that undo it. It is
// journaled (as JSON) before it is made, so that `obsbench restore` can
// undo it after a crash; every undo is safe to run twice.
type change struct {
	Engine string   `json:"engine"` // "sqlserver", so that restore picks this engine
	What   string   `json:"what"`
	Undo   []string `json:"undo_sql"`
}

// step is one change to make: Do, after journaling Undo. Wait, if set,
// is a query run after Do until it returns 0, and UndoWait one run so
// after the revert's undo (see availabilitySteps); neither is journaled:
// a restore after a crash only has to undo.
type step struct {
	What     string
	Do       []string
	Undo     []string
	Wait     string
	UndoWait string
}

// Applied is an observer in force. Revert undoes it.
type Applied struct {
	s       *Server
	obs     observer.Observer
	env     Env
	changes engine.Changes[change]
	// undoWaits are the steps' UndoWait queries, run once the revert has
	// undone every change.
	undoWaits []string
}

// Observer is the observer that was applied.
func (a *Applied) Observer() observer.Observer { return a.obs }

// NotSQLServerError says an observer of another engine was given.
type NotSQLServerError struct{ Observer, Engine string }

func (e *NotSQLServerError) Error() string {
	return fmt.Sprintf("observer %s is for %s, not sqlserver", e.Observer, e.Engine)
}

// plan renders what putting o in force changes: the XE session, the
// trace, the replicas' commit mode, in that order.
func plan(o observer.Observer, env Env, replicas []Replica) ([]step, error) {
	if o.Name == observer.Baseline {
		return nil, nil
	}
	if o.Engine != "sqlserver" {
		return nil, &NotSQLServerError{o.Name, o.Engine}
	}
	var steps []step
	if sessionOf(o) != nil {
		name := SessionName(o)
		steps = append(steps, step{
			What: "XE session " + name,
			Do:   []string{CreateSessionSQL(o, env), StartSessionSQL(name)},
			Undo: []string{DropSessionSQL(name)},
		})
	}
	if traceOf(o) != nil {
		path := TracePath(o, env)
		steps = append(steps, step{
			What: "trace " + path + ".trc",
			Do:   []string{CreateTraceSQL(o, env)},
			Undo: []string{DropTraceSQL(path)},
		})
	}
	if groupOf(o) != nil {
		ag, err := availabilitySteps(o, env, replicas)
		if err != nil {
			return nil, err
		}
		steps = append(steps, ag...)
	}
	return steps, nil
}

// prepare reads what planning o needs from the server.
func (s *Server) prepare(ctx context.Context, conn *sql.Conn, o observer.Observer) (Env, []Replica, error) {
	env, err := s.env(ctx, conn)
	if err != nil {
		return env, nil, err
	}
	var replicas []Replica
	if groupOf(o) != nil {
		if replicas, err = s.replicas(ctx, conn); err != nil {
			return env, nil, err
		}
	}
	return env, replicas, nil
}

// waitComment heads a query that Apply or Revert repeats until it
// returns 0, in what --dry-run prints.
var waitComment = fmt.Sprintf("-- repeated every %s, for up to %s, until it returns 0:\n", syncPoll, syncTimeout)

// PlanApply lists, without changing anything, the statements Apply would
// run to put o in force, and those that would revert it: what --dry-run
// prints.
func (s *Server) PlanApply(ctx context.Context, o observer.Observer) (apply, revert []string, err error) {
	if o.Name == observer.Baseline {
		return nil, nil, nil
	}
	conn, done, err := s.control(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer done()
	if err := s.check(ctx, conn, o); err != nil {
		return nil, nil, err
	}
	env, replicas, err := s.prepare(ctx, conn, o)
	if err != nil {
		return nil, nil, err
	}
	steps, err := plan(o, env, replicas)
	if err != nil {
		return nil, nil, err
	}
	var undoWaits []string
	for _, st := range steps {
		apply = append(apply, st.Do...)
		if st.Wait != "" {
			apply = append(apply, waitComment+st.Wait)
		}
		revert = append(append([]string{}, st.Undo...), revert...)
		if st.UndoWait != "" {
			undoWaits = append(undoWaits, waitComment+st.UndoWait)
		}
	}
	return apply, append(revert, undoWaits...), nil
}

// Check fails when o cannot be applied here: an event the server does not
// have, a session or trace of o's already there (left by another
// obsbench), no availability group.
func (s *Server) Check(ctx context.Context, o observer.Observer) error {
	if o.Name == observer.Baseline {
		return nil
	}
	conn, done, err := s.control(ctx)
	if err != nil {
		return err
	}
	defer done()
	if err := s.check(ctx, conn, o); err != nil {
		return err
	}
	env, replicas, err := s.prepare(ctx, conn, o)
	if err != nil {
		return err
	}
	_, err = plan(o, env, replicas)
	return err
}

func (s *Server) check(ctx context.Context, conn *sql.Conn, o observer.Observer) error {
	if o.Engine != "sqlserver" {
		return &NotSQLServerError{o.Name, o.Engine}
	}
	if traceOf(o) != nil {
		if err := s.checkTraceLeft(ctx, conn, o); err != nil {
			return err
		}
	}
	x := sessionOf(o)
	if x == nil {
		return nil
	}
	for _, e := range x.Events {
		pkg, name, _ := strings.Cut(e.Name, ".")
		var n int
		if err := conn.QueryRowContext(ctx, `SELECT COUNT(*) FROM sys.dm_xe_objects xo JOIN sys.dm_xe_packages p ON p.guid = xo.package_guid
			WHERE xo.object_type = 'event' AND p.name = @p1 AND xo.name = @p2`, pkg, name).Scan(&n); err != nil {
			return fmt.Errorf("look for event %s: %w", e.Name, err)
		}
		if n == 0 {
			return fmt.Errorf("observer %s: this server has no Extended Events event %s", o.Name, e.Name)
		}
	}
	var n int
	if err := conn.QueryRowContext(ctx, "SELECT COUNT(*) FROM sys.server_event_sessions WHERE name = @p1", SessionName(o)).Scan(&n); err != nil {
		return fmt.Errorf("look for session %s: %w", SessionName(o), err)
	}
	if n > 0 {
		return fmt.Errorf("observer %s: an XE session %s already exists (left by an obsbench that crashed? run obsbench restore); obsbench does not touch it", o.Name, SessionName(o))
	}
	return nil
}

// checkTraceLeft fails when a trace of o's is there already.
func (s *Server) checkTraceLeft(ctx context.Context, conn *sql.Conn, o observer.Observer) error {
	rows, err := conn.QueryContext(ctx, "SELECT COALESCE(path, N'') FROM sys.traces")
	if err != nil {
		return fmt.Errorf("look for traces: %w", err)
	}
	defer rows.Close()
	var paths []string
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			return err
		}
		paths = append(paths, p)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	return leftoverTrace(o, paths)
}

// leftoverTrace is the error for a trace of o's among the traces at paths:
// one a crashed obsbench left, which would be measured with the new one.
func leftoverTrace(o observer.Observer, paths []string) error {
	for _, p := range paths {
		if TraceObserver(p) == o.Name {
			return fmt.Errorf("observer %s: a trace of it is there already, writing %s (left by an obsbench that crashed? run obsbench restore); obsbench does not touch it", o.Name, p)
		}
	}
	return nil
}

// Apply puts o in force, journaling each step's undo before making it. On
// error, what was already applied is reverted.
func (s *Server) Apply(ctx context.Context, o observer.Observer) (_ engine.Applied, err error) {
	a := &Applied{s: s, obs: o, changes: engine.NewChanges[change](s.journal)}
	if o.Name == observer.Baseline {
		return a, nil
	}
	conn, done, err := s.control(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	if err := s.check(ctx, conn, o); err != nil {
		return nil, err
	}
	env, replicas, err := s.prepare(ctx, conn, o)
	if err != nil {
		return nil, err
	}
	a.env = env
	steps, err := plan(o, env, replicas)
	if err != nil {
		return nil, err
	}
	defer engine.RevertIfFailed(ctx, &err, a.Revert)
	for _, st := range steps {
		if err := a.record(change{What: st.What, Undo: st.Undo}); err != nil {
			return nil, err
		}
		for _, stmt := range st.Do {
			if _, err := conn.ExecContext(ctx, stmt); err != nil {
				return nil, fmt.Errorf("apply %s: %s: %w", o.Name, firstLine(stmt), err)
			}
		}
		if st.UndoWait != "" {
			a.undoWaits = append(a.undoWaits, st.UndoWait)
		}
		if st.Wait != "" {
			if err := waitSynchronized(ctx, conn, st.Wait); err != nil {
				return nil, fmt.Errorf("apply %s: %w", o.Name, err)
			}
		}
	}
	return a, nil
}

// record journals c and keeps it for Revert.
func (a *Applied) record(c change) error {
	c.Engine = "sqlserver"
	return a.changes.Record(c)
}

// Revert undoes the applied changes, newest first; it goes on after a
// failed step and reports every failure. A change whose undo failed stays
// for another Revert (each undo is safe to run twice).
func (a *Applied) Revert(ctx context.Context) error {
	if a.changes.Len() == 0 {
		return nil
	}
	conn, done, err := a.s.control(ctx)
	if err != nil {
		return err
	}
	defer done()
	if _, err = a.changes.Undo(func(c change) error {
		var errs []error
		for _, stmt := range c.Undo {
			if _, err := conn.ExecContext(ctx, stmt); err != nil {
				errs = append(errs, fmt.Errorf("revert %s: %s: %w", c.What, firstLine(stmt), err))
			}
		}
		return errors.Join(errs...)
	}); err != nil {
		return err
	}
	for len(a.undoWaits) > 0 {
		if err := waitSynchronized(ctx, conn, a.undoWaits[0]); err != nil {
			return fmt.Errorf("revert %s: %w", a.obs.Name, err)
		}
		a.undoWaits = a.undoWaits[1:]
	}
	return nil
}

// Undo reverts journaled changes (obsbench restore).
func (s *Server) Undo(ctx context.Context, changes []json.RawMessage) error {
	cs, err := engine.Journaled[change](s.journal, changes)
	if err != nil {
		return err
	}
	a := &Applied{s: s, obs: observer.Observer{Name: "the journaled changes"}, changes: cs}
	return a.Revert(ctx)
}

// Split puts all of o in the held part: creating and dropping sessions
// and traces are not switched within a run (the runner uses rounds).
func (s *Server) Split(_ context.Context, o observer.Observer) (held, switched observer.Observer, err error) {
	return o, observer.Observer{Name: o.Name, Engine: o.Engine}, nil
}

func firstLine(s string) string {
	line, _, cut := strings.Cut(s, "\n")
	if cut {
		return line + " ..."
	}
	return line
}
