package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"

	"github.com/obsbench/obsbench/internal/driver"
	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/observer"
	"github.com/obsbench/obsbench/internal/result"
	"github.com/obsbench/obsbench/internal/server"
	"github.com/obsbench/obsbench/internal/workload"
)

func init() { engine.Register(Engine{}) }

// Engine is PostgreSQL as obsbench's commands use it (engine.Engine).
type Engine struct{}

// Info: PostgreSQL keeps the dataset of an external server in a schema,
// and obsbench starts managed servers from the local binaries.
func (Engine) Info() engine.Info {
	return engine.Info{Name: "postgres", Product: "PostgreSQL", Namespace: "schema", AddOn: "extension", Dialect: workload.PostgreSQL,
		WaitProfile: result.WaitProfile{Source: "pg_wait_sampling (all processes)"}, Managed: true, RestartsApply: true, Counts: true, CountsQueries: true, ExtendedQuery: true,
		Observers: observer.EngineRules{Check: checkObserver}}
}

// checkObserver: a consumer reads a logical replication slot, which
// PostgreSQL makes only at wal_level=logical; the entry must say so, so
// that applying it sets it (with the restart it needs).
func checkObserver(o observer.Observer) (field string, err error) {
	if o.Consumer != nil && o.Settings["wal_level"] != "logical" {
		return "consumer", errors.New("a consumer reads a logical replication slot: the settings need wal_level: logical")
	}
	return "", nil
}

// Info says the engine Counts: its managed server runs under the counter
// (each backend a process counted apart).
var _ engine.CountedProcesses = (*managed)(nil)

// Planner reaches an external server for a dry run.
func (Engine) Planner(dsn string) (engine.Planner, error) {
	return New(dsn, Options{Schema: engine.Home}), nil
}

// Undo reverts journaled changes (obsbench restore).
func (Engine) Undo(ctx context.Context, dsn string, changes []json.RawMessage) ([]string, error) {
	return New(dsn, Options{}).Undo(ctx, changes)
}

// Inspect lists what watches the server of dsn ("": libpq's defaults).
func (Engine) Inspect(ctx context.Context, dsn string, candidates []observer.Observer) (*engine.Inspection, error) {
	where := "libpq defaults"
	if dsn != "" {
		where = engine.RedactDSN(dsn)
	}
	in, err := New(dsn, Options{}).Inspect(ctx, candidates)
	if err != nil {
		return nil, fmt.Errorf("inspect %s: %w", where, err)
	}
	var settings []string
	for _, s := range in.Settings {
		settings = append(settings, fmt.Sprintf("%s = %s  (%s)", s.Name, s.Value, s.Source))
	}
	return &engine.Inspection{
		Server:    fmt.Sprintf("postgres %s (%s)", in.Version, where),
		Observers: in.Observers,
		Sections: []engine.Section{
			{Title: "observing settings (not at their defaults)", Items: settings},
			{Title: "libraries preloaded in every process", Items: in.Preload},
			{Title: "libraries preloaded in every new session", Items: in.SessionPreload},
			{Title: "extensions in this database", Items: in.Extensions},
			{Title: "observing processes", Items: in.Processes},
			{Title: "replication slots", Items: in.Slots},
			{Title: "connected standbys", Items: in.Standbys},
		},
		NotVisible: "LOAD or SET inside other sessions, per-role settings (pg_db_role_setting)",
	}, nil
}

// Open connects to the external server of o.DSN, journaling every change,
// or starts a managed server (with a standby, if asked).
func (Engine) Open(ctx context.Context, o engine.Options) (engine.Server, error) {
	if !o.Managed() {
		j, err := engine.OpenExternal(ctx, o, New(o.DSN, Options{}).Ping)
		if err != nil {
			return nil, err
		}
		return &external{Server: New(o.DSN, Options{Journal: j, Schema: engine.Home}), External: engine.External{Journal: j}}, nil
	}
	bin, err := FindBin()
	if err != nil {
		return nil, &engine.UnavailableError{Err: err}
	}
	pg, err := Start(ctx, InstanceOptions{BinDir: bin, Log: o.Log, Getenv: o.Getenv})
	if err != nil {
		return nil, err
	}
	m := newManaged(pg, o.Log)
	if o.WithStandby() {
		standby, err := pg.StartStandby(ctx, server.CompanionOptions{Sync: o.SyncStandby, Delay: o.StandbyDelay, Log: o.Log})
		if err != nil {
			m.Close()
			return nil, fmt.Errorf("start the standby: %w", err)
		}
		m.Companion = standby
	}
	if err := CreateDatabase(ctx, pg.DSN(engine.Home)); err != nil {
		m.Close()
		return nil, err
	}
	return m, nil
}

// newManaged adapts the managed server pg, restarted before every run;
// its database (engine.Home) is the caller's to create.
func newManaged(pg *Instance, log func(string, ...any)) *managed {
	return &managed{pg: pg, Managed: &engine.Managed{Proc: pg, CompanionName: "standby", Log: log},
		Server: New(pg.DSN(engine.Home), Options{Restart: pg.Restart, Host: pg})}
}

// SessionAddress is where workers open the workload's sessions
// (engine.SessionServer).
func (s *Server) SessionAddress() engine.SessionAddress {
	return engine.SessionAddress{DSN: s.dsn, Schema: s.schema}
}

// Sessions opens workload sessions for a worker (engine.SessionOpener).
// Their backends' CPU is read only where the worker finds them to be
// processes of its own machine (Server.onThisMachine).
func (Engine) Sessions(a engine.SessionAddress) (driver.Dialer, error) {
	s := New(a.DSN, Options{Schema: a.Schema})
	return s.Dial, nil
}

// external is a server obsbench does not manage (engine.External).
type external struct {
	*Server
	engine.External
}

// managed is a server obsbench started: it restarts it before every run
// (engine.Managed), and reads its stderr stream.
type managed struct {
	*Server
	*engine.Managed
	pg *Instance
}

// Copy starts a copy of the server (pg_basebackup): a duet's twin. It has
// no standby, as a duet has none.
func (t *managed) Copy(ctx context.Context, log func(string, ...any)) (engine.Server, error) {
	pg, err := t.pg.StartCopy(ctx, log)
	if err != nil {
		return nil, err
	}
	return newManaged(pg, log), nil
}

// Counters adds the bytes of the server's stderr stream obsbench read: the
// log volume of observers that write to the stream.
func (t *managed) Counters(ctx context.Context) (map[string]float64, error) {
	c, err := t.Server.Counters(ctx)
	if err == nil {
		c["log_stream_bytes"] = float64(t.pg.Stream().Bytes())
	}
	return c, err
}

// StreamBytes is what obsbench has read of the server's stderr stream.
func (t *managed) StreamBytes() int64 { return t.pg.Stream().Bytes() }

// ServerFaults reports the server's complaints that it could not write
// its log.
func (t *managed) ServerFaults() (int64, string) { return t.pg.ServerFaults() }

// CaptureObserver makes the server log every statement, connect and
// disconnect to csvlog files, which obsbench capture reads; only the
// driver's sessions are kept.
func (t *managed) CaptureObserver() (observer.Observer, string, []string) {
	return observer.Observer{
		Name: "capture", Engine: "postgres",
		Description: "every statement, connect and disconnect to csvlog files, for obsbench capture",
		Settings: map[string]string{
			"logging_collector": "on", "log_destination": "csvlog", "log_statement": "all",
			"log_connections": "on", "log_disconnections": "on",
		},
		Events: &observer.EventCounter{Source: observer.SourceServerLog, Match: `(statement|execute [^:]*): .*{{tag}}`},
	}, "csvlog", []string{DriverApplication}
}

// CapturedLogs are the csvlog files, in the order written.
func (t *managed) CapturedLogs() ([]string, error) {
	dir := filepath.Join(t.pg.DataDir(), "log")
	files, err := filepath.Glob(filepath.Join(dir, "*.csv"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("no csvlog files in %s", dir)
	}
	sort.Strings(files) // postgresql-<time>.csv: by name is by time
	return files, nil
}

// CountInstructions makes the next restart run the managed server under
// valgrind's instruction counter (--method instructions).
func (t *managed) CountInstructions(on bool) error { return t.pg.CountInstructions(on) }
func (t *managed) ShiftStack(bytes int)            { t.pg.ShiftStack(bytes) }

// Counts are the instructions of the server's processes that exited.
func (t *managed) Counts() (map[int]uint64, error) { return t.pg.Counts() }

// SplitStatements and StatementCounts count each statement apart
// (--count-per-query).
func (t *managed) SplitStatements(on bool)          { t.pg.SplitStatements(on) }
func (t *managed) StatementCounts(pid int) []uint64 { return t.pg.StatementCounts(pid) }

// ClearCounts forgets the counts read so far.
func (t *managed) ClearCounts() error { return t.pg.ClearCounts() }

// Children are the postmaster's processes: helpers and backends.
func (t *managed) Children() ([]int, error) { return t.pg.Children() }

// BackendPID is the backend process of a driver session.
func (t *managed) BackendPID(ctx context.Context, s driver.Session) (int, error) {
	sess, ok := s.(*Session)
	if !ok {
		return 0, fmt.Errorf("a %T is not a PostgreSQL driver session", s)
	}
	st, err := sess.Prepare(ctx, "SELECT pg_backend_pid()")
	if err != nil {
		return 0, err
	}
	_, rows, err := st.(*stmt).QueryRows(ctx)
	if err != nil {
		return 0, err
	}
	if len(rows) != 1 || len(rows[0]) != 1 || rows[0][0] == nil {
		return 0, fmt.Errorf("pg_backend_pid() returned %d rows", len(rows))
	}
	return strconv.Atoi(*rows[0][0])
}
