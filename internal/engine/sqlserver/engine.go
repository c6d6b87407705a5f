package sqlserver

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/obsbench/obsbench/internal/driver"
	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/observer"
	"github.com/obsbench/obsbench/internal/result"
	"github.com/obsbench/obsbench/internal/workload"
)

func init() {
	engine.Register(Engine{})
}

// Engine is SQL Server as obsbench's commands use it (engine.Engine).
// It is always external: obsbench cannot start one here.
type Engine struct{}

// Info: the dataset lives in a database of obsbench's own; every observer
// (an Extended Events session or a trace) is created for a whole run.
func (Engine) Info() engine.Info {
	return engine.Info{Name: "sqlserver", Product: "SQL Server", Namespace: "database", AddOn: "extension", Dialect: workload.TransactSQL,
		Observers:   observer.EngineRules{Sections: sections, Check: CheckObserver},
		WaitProfile: result.WaitProfile{Source: "sys.dm_os_wait_stats wait time (all tasks, background waits included)"}}
}

// errNoManaged is the answer to a run or an inspection without an
// external server's address.
var errNoManaged = &engine.NoManagedError{Engine: "sqlserver", DSNForm: "sqlserver://user:password@host:1433",
	Why: "obsbench starts managed PostgreSQL and MariaDB servers only, not SQL Server"}

// Planner reaches the server for a dry run.
func (Engine) Planner(dsn string) (engine.Planner, error) {
	s, err := New(dsn, Options{Database: engine.Home})
	if err != nil {
		return nil, &engine.AddressError{Err: err}
	}
	return planner{s}, nil
}

// planner shows the workload as SQL Server receives it: translated, one
// statement per prepared handle.
type planner struct{ *Server }

func (p planner) PlanWorkload(ctx context.Context, wl workload.Meta, engineName string) (setup, stmts []string, err error) {
	for _, st := range wl.SetupIn(workload.TransactSQL) {
		setup = append(setup, Translate(st))
	}
	stmts, err = WorkloadStatements(ctx, wl)
	return setup, stmts, err
}

// Undo reverts journaled changes (obsbench restore).
func (Engine) Undo(ctx context.Context, dsn string, changes []json.RawMessage) ([]string, error) {
	s, err := New(dsn, Options{})
	if err != nil {
		return nil, err
	}
	return nil, s.Undo(ctx, changes)
}

// Inspect lists the traces and Extended Events sessions running (study
// 1's advice), their targets and loss modes.
func (Engine) Inspect(ctx context.Context, dsn string, candidates []observer.Observer) (*engine.Inspection, error) {
	if dsn == "" {
		return nil, errNoManaged
	}
	s, err := New(dsn, Options{Database: engine.Home})
	if err != nil {
		return nil, &engine.AddressError{Err: err}
	}
	in, err := s.Inspect(ctx, candidates)
	if err != nil {
		return nil, fmt.Errorf("inspect %s: %w", engine.RedactDSN(dsn), err)
	}
	return &engine.Inspection{
		Server:    fmt.Sprintf("%s (%s)", in.Version, engine.RedactDSN(dsn)),
		Observers: in.Observers,
		Sections: []engine.Section{
			{Title: "traces (sys.traces)", Items: in.Traces},
			{Title: "Extended Events sessions (sys.server_event_sessions, sys.dm_xe_sessions)", Items: in.Sessions},
			{Title: "server audits", Items: in.Audits},
			{Title: "availability-group replicas of database " + engine.Home, Items: in.Replicas},
			{Title: "lost-event counters above zero", Items: in.Lost},
		},
		NotVisible: "a client attached to an XE event_stream (Watch Live Data, XELite) shows only as the session's dispatch latency forced to 3 s; SET options inside other sessions",
	}, nil
}

// Open connects to the server of o.DSN, with a journal for the sessions
// and traces it will create.
func (Engine) Open(ctx context.Context, o engine.Options) (engine.Server, error) {
	if o.Managed() {
		return nil, errNoManaged
	}
	probe, err := New(o.DSN, Options{Database: engine.Home})
	if err != nil {
		return nil, &engine.AddressError{Err: err}
	}
	j, err := engine.OpenExternal(ctx, o, probe.Ping)
	if err != nil {
		return nil, err
	}
	srv, _ := New(o.DSN, Options{Journal: j, Database: engine.Home})
	return &external{Server: srv, External: engine.External{Journal: j}}, nil
}

// external is the server of a DSN (engine.External): its processes are
// never this machine's that obsbench knows (the scheduler monitor gives
// its CPU instead).
type external struct {
	*Server
	engine.External
}

// Dial opens a workload session as the runner's driver.Session
// (engine.Target, driver.Dialer).
func (s *Server) Dial(ctx context.Context) (driver.Session, error) { return s.Connect(ctx) }

// SessionAddress is where workers open the workload's sessions
// (engine.SessionServer): the DSN as given, password included.
func (s *Server) SessionAddress() engine.SessionAddress {
	return engine.SessionAddress{DSN: s.dsn.String()}
}

// Sessions opens workload sessions for a worker (engine.SessionOpener),
// in the dataset's database as Open's do.
func (Engine) Sessions(a engine.SessionAddress) (driver.Dialer, error) {
	s, err := New(a.DSN, Options{Database: engine.Home})
	if err != nil {
		return nil, err
	}
	return s.Dial, nil
}
