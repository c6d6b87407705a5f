package mariadb

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/obsbench/obsbench/internal/driver"
	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/observer"
	"github.com/obsbench/obsbench/internal/result"
	"github.com/obsbench/obsbench/internal/server"
	"github.com/obsbench/obsbench/internal/workload"
)

func init() { engine.Register(Engine{}) }

// Engine is MariaDB as obsbench's commands use it (engine.Engine).
type Engine struct{}

// Info: MariaDB keeps the dataset in a database of obsbench's own, and
// obsbench starts managed servers from the local binaries.
func (Engine) Info() engine.Info {
	return engine.Info{Name: "mariadb", Product: "MariaDB", Namespace: "database", AddOn: "plugin", Dialect: workload.MariaDB,
		WaitProfile: result.WaitProfile{Source: "performance_schema wait time (all threads)",
			Missing: "performance_schema is off on this server; obsbench never turns an observer on to measure"},
		Managed: true, RestartsApply: true, Counts: true,
		Observers: observer.EngineRules{Check: checkObserver}}
}

// checkObserver refuses what a MariaDB server has no place for: libraries
// preloaded at start (preload:, PostgreSQL's shared_preload_libraries),
// which Apply would otherwise pass over in silence.
func checkObserver(o observer.Observer) (field string, err error) {
	if len(o.Preload) > 0 {
		return "preload", errors.New("preload: is PostgreSQL's (shared_preload_libraries); a MariaDB plugin is installed with extensions: (INSTALL SONAME)")
	}
	if o.Consumer != nil {
		return "consumer", errors.New("consumer: reads a PostgreSQL logical replication slot; MariaDB's binary log readers are not among obsbench's consumers yet (binlog-row measures writing the log)")
	}
	return "", nil
}

// Info says the engine Counts: its managed server runs under the counter
// (sessions are threads, counted inside do_command).
var _ engine.CountedThreads = (*managed)(nil)

// Planner reaches an external server for a dry run.
func (Engine) Planner(dsn string) (engine.Planner, error) {
	s, err := New(dsn, Options{Database: engine.Home})
	if err != nil {
		return nil, &engine.AddressError{Err: err}
	}
	return s, nil
}

// Undo reverts journaled changes (obsbench restore).
func (Engine) Undo(ctx context.Context, dsn string, changes []json.RawMessage) ([]string, error) {
	s, err := New(dsn, Options{})
	if err != nil {
		return nil, err
	}
	return nil, s.Undo(ctx, changes)
}

// defaultInspectDSN is the local server Debian's package starts.
const defaultInspectDSN = "root@unix(/run/mysqld/mysqld.sock)/"

// Inspect lists what watches the server of dsn ("": the local server).
func (Engine) Inspect(ctx context.Context, dsn string, candidates []observer.Observer) (*engine.Inspection, error) {
	if dsn == "" {
		dsn = defaultInspectDSN
	}
	s, err := New(dsn, Options{})
	if err != nil {
		return nil, &engine.AddressError{Err: err}
	}
	in, err := s.Inspect(ctx, candidates)
	if err != nil {
		return nil, fmt.Errorf("inspect %s: %w", engine.RedactDSN(dsn), err)
	}
	var settings []string
	for _, s := range in.Settings {
		settings = append(settings, fmt.Sprintf("%s = %s  (%s)", s.Name, s.Value, strings.ToLower(s.Source)))
	}
	consumers := in.Consumers
	if consumers == nil {
		consumers = []string{"performance_schema is off"}
	} else {
		consumers = append(consumers, fmt.Sprintf("(%d instruments enabled)", in.Instruments))
	}
	return &engine.Inspection{
		Server:    fmt.Sprintf("mariadb %s (%s)", in.Version, engine.RedactDSN(dsn)),
		Observers: in.Observers,
		Sections: []engine.Section{
			{Title: "observing variables (not at their defaults)", Items: settings},
			{Title: "audit, response-time and semi-sync plugins", Items: in.Plugins},
			{Title: "performance_schema consumers enabled", Items: consumers},
			{Title: "replication", Items: in.Replication},
			{Title: "lost-event counters above zero", Items: in.Lost},
		},
		NotVisible: "SET SESSION inside other sessions, performance_schema setup_actors and setup_objects filters",
	}, nil
}

// Open connects to the external server of o.DSN, journaling every change,
// or starts a managed server (with a replica, if asked).
func (Engine) Open(ctx context.Context, o engine.Options) (engine.Server, error) {
	if !o.Managed() {
		probe, err := New(o.DSN, Options{})
		if err != nil {
			return nil, &engine.AddressError{Err: err}
		}
		j, err := engine.OpenExternal(ctx, o, probe.Ping)
		if err != nil {
			return nil, err
		}
		srv, err := New(o.DSN, Options{Journal: j, Database: engine.Home})
		if err != nil {
			j.Close()
			return nil, err
		}
		return &external{Server: srv, External: engine.External{Journal: j}}, nil
	}
	m, err := Start(ctx, InstanceOptions{Log: o.Log, Getenv: o.Getenv})
	if err != nil {
		if errors.Is(err, ErrNoBinaries) {
			return nil, &engine.UnavailableError{Err: err}
		}
		return nil, err
	}
	t, err := newManaged(m, o.Log)
	if err != nil {
		m.Stop()
		return nil, err
	}
	if o.WithStandby() {
		replica, err := m.StartReplica(ctx, server.CompanionOptions{Sync: o.SyncStandby, Delay: o.StandbyDelay, Log: o.Log})
		if err != nil {
			t.Close()
			return nil, fmt.Errorf("start the replica: %w", err)
		}
		t.Companion = replica
	}
	return t, nil
}

// newManaged adapts the managed server m, restarted before every run.
func newManaged(m *Instance, log func(string, ...any)) (*managed, error) {
	srv, err := New(m.DSN(engine.Home), Options{Startup: m, Host: m, Password: m.Password()})
	if err != nil {
		return nil, err
	}
	return &managed{Server: srv, m: m, Managed: &engine.Managed{Proc: m, CompanionName: "replica", Log: log}}, nil
}

// Dial opens a workload session as the runner's driver.Session
// (engine.Target, driver.Dialer).
func (s *Server) Dial(ctx context.Context) (driver.Session, error) { return s.Connect(ctx) }

// SessionAddress is where workers open the workload's sessions
// (engine.SessionServer): the dataset database, password included.
func (s *Server) SessionAddress() engine.SessionAddress {
	return engine.SessionAddress{DSN: s.DSN()}
}

// Sessions opens workload sessions for a worker (engine.SessionOpener).
func (Engine) Sessions(a engine.SessionAddress) (driver.Dialer, error) {
	s, err := New(a.DSN, Options{})
	if err != nil {
		return nil, err
	}
	return s.Dial, nil
}

// external is a server obsbench does not manage (engine.External).
type external struct {
	*Server
	engine.External
}

// managed is a server obsbench started: it restarts it before every run
// (engine.Managed).
type managed struct {
	*Server
	*engine.Managed
	m *Instance
}

// Copy starts a copy of the server (its data directory, copied while it
// is stopped): a duet's twin. It has no replica, as a duet has none.
func (t *managed) Copy(ctx context.Context, log func(string, ...any)) (engine.Server, error) {
	m, err := t.m.StartCopy(ctx, log)
	if err != nil {
		return nil, err
	}
	c, err := newManaged(m, log)
	if err != nil {
		m.Stop()
		return nil, err
	}
	return c, nil
}

// ServerFaults reports writes the server's slow directory refused.
func (t *managed) ServerFaults() (int64, string) { return t.m.ServerFaults() }

// captureLog is the general log file of the built-in capture, in the data
// directory.
const captureLog = "obsbench-capture.log"

// CaptureObserver makes the server write the general log (every
// statement, connect and quit) to a file, which obsbench capture reads.
func (t *managed) CaptureObserver() (observer.Observer, string, []string) {
	return observer.Observer{
		Name: "capture", Engine: "mariadb",
		Description: "the general log (every statement, connect and quit) to a file, for obsbench capture",
		Settings:    map[string]string{"log_output": "FILE", "general_log_file": captureLog, "general_log": "ON"},
		Events:      &observer.EventCounter{Source: observer.SourceServerLog, FileSetting: "general_log_file", Match: ` (Execute|Query)\t.*{{tag}}`},
	}, "general-log", nil
}

// CapturedLogs is the general log the capture observer wrote.
func (t *managed) CapturedLogs() ([]string, error) {
	return []string{filepath.Join(t.m.DataDir(), captureLog)}, nil
}

// CountInstructions makes the next restart run the managed server under
// valgrind's callgrind (--method instructions).
func (t *managed) CountInstructions(on bool) error { return t.m.CountInstructions(on) }
func (t *managed) ShiftStack(bytes int)            { t.m.ShiftStack(bytes) }

// LastTally is the count of the server lifetime the latest restart ended:
// the instructions spent serving client commands, split at each end of a
// connection, and the rest.
func (t *managed) LastTally() (connections []uint64, rest uint64, err error) {
	tally, err := t.m.LastTally()
	return tally.Connections, tally.Rest, err
}

// EndedConnections is how many client connections of the running counted
// lifetime have ended.
func (t *managed) EndedConnections() (int, error) { return t.m.EndedConnections() }
