package sqlserver

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/experiment"
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

// step is one change to make: Do, after journaling Undo.
type step struct {
	What string
	Do   []string
	Undo []string
}

// Applied is an observer in force. Revert undoes it.
type Applied struct {
	s       *Server
	obs     observer.Observer
	env     Env
	changes engine.Changes[change]
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
	if o.XE != nil {
		name := SessionName(o)
		steps = append(steps, step{
			What: "XE session " + name,
			Do:   []string{CreateSessionSQL(o, env), StartSessionSQL(name)},
			Undo: []string{DropSessionSQL(name)},
		})
	}
	if o.Trace != nil {
		path := TracePath(o, env)
		steps = append(steps, step{
			What: "trace " + path + ".trc",
			Do:   []string{CreateTraceSQL(o, env)},
			Undo: []string{DropTraceSQL(path)},
		})
	}
	if ag := o.AvailabilityGroup; ag != nil {
		if err := checkPrimary(o, replicas); err != nil {
			return nil, err
		}
		secondaries := 0
		for _, r := range replicas {
			// A configuration-only replica holds the group's metadata, no
			// data: its mode is CONFIGURATION_ONLY and is not a commit
			// mode to switch ("ALTER AVAILABILITY GROUP", AVAILABILITY_MODE).
			// https://learn.microsoft.com/sql/t-sql/statements/alter-availability-group-transact-sql
			if r.Primary || r.Mode == "CONFIGURATION_ONLY" {
				continue
			}
			secondaries++
			if r.Mode == ag.Mode {
				continue
			}
			if ag.Mode == "ASYNCHRONOUS_COMMIT" && r.Failover == "AUTOMATIC" {
				return nil, fmt.Errorf("observer %s: replica %s of availability group %s fails over automatically, which needs synchronous commit; obsbench does not change failover modes", o.Name, r.Name, r.Group)
			}
			steps = append(steps, step{
				What: fmt.Sprintf("availability group %s replica %s mode", r.Group, r.Name),
				Do:   []string{ModifyReplicaSQL(r.Group, r.Name, ag.Mode)},
				Undo: []string{ModifyReplicaSQL(r.Group, r.Name, r.Mode)},
			})
		}
		if secondaries == 0 {
			return nil, &NoAvailabilityGroupError{Observer: o.Name, Database: env.Database}
		}
	}
	return steps, nil
}

// checkPrimary refuses a plan on an instance that is not the primary of
// every group it would change: ALTER AVAILABILITY GROUP ... MODIFY
// REPLICA is run on the primary replica
// (https://learn.microsoft.com/sql/t-sql/statements/alter-availability-group-transact-sql,
// "Supported only on the primary replica").
func checkPrimary(o observer.Observer, replicas []Replica) error {
	primaryHere := map[string]bool{}
	for _, r := range replicas {
		if r.Primary && r.Local {
			primaryHere[r.Group] = true
		}
	}
	for _, r := range replicas {
		if !primaryHere[r.Group] {
			return &NotPrimaryError{Observer: o.Name, Group: r.Group}
		}
	}
	return nil
}

// NotPrimaryError says the connected instance is not the primary of an
// availability group an observer would change.
type NotPrimaryError struct{ Observer, Group string }

func (e *NotPrimaryError) Error() string {
	return fmt.Sprintf("observer %s changes the commit mode of availability group %s, which only its primary replica can do: connect --dsn to the primary", e.Observer, e.Group)
}

// NoAvailabilityGroupError says an availability-group observer found no
// group with a secondary replica holding the dataset's database.
type NoAvailabilityGroupError struct{ Observer, Database string }

func (e *NoAvailabilityGroupError) Error() string {
	return fmt.Sprintf("observer %s needs an availability group with a secondary replica that holds database %s; there is none, and obsbench never creates one (add the database to an existing group whose primary is this server)", e.Observer, e.Database)
}

// prepare reads what planning o needs from the server.
func (s *Server) prepare(ctx context.Context, conn *sql.Conn, o observer.Observer) (Env, []Replica, error) {
	env, err := s.env(ctx, conn)
	if err != nil {
		return env, nil, err
	}
	var replicas []Replica
	if o.AvailabilityGroup != nil {
		if replicas, err = s.replicas(ctx, conn); err != nil {
			return env, nil, err
		}
	}
	return env, replicas, nil
}

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
	for _, st := range steps {
		apply = append(apply, st.Do...)
		revert = append(append([]string{}, st.Undo...), revert...)
	}
	return apply, revert, nil
}

// Check fails when o cannot be applied here: an event the server does not
// have, a session or trace of obsbench's name already there (left by
// another obsbench), no availability group.
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
	if o.XE == nil {
		return nil
	}
	for _, e := range o.XE.Events {
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

// Apply puts o in force, journaling each step's undo before making it. On
// error, what was already applied is reverted.
func (s *Server) Apply(ctx context.Context, o observer.Observer) (_ experiment.Applied, err error) {
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
	_, err = a.changes.Undo(func(c change) error {
		var errs []error
		for _, stmt := range c.Undo {
			if _, err := conn.ExecContext(ctx, stmt); err != nil {
				errs = append(errs, fmt.Errorf("revert %s: %s: %w", c.What, firstLine(stmt), err))
			}
		}
		return errors.Join(errs...)
	})
	return err
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
