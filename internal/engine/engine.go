// Package engine is the contract between obsbench and the database engines
// it measures, and the registry that finds an engine by name.
//
// An engine package (internal/engine/postgres, .../mariadb, .../sqlserver)
// implements Engine and registers it from an init function; the command
// imports it once for that side effect (cmd/obsbench/engines.go) and from
// then on asks the registry, never an engine package by name. What only
// some engines can do is an optional interface, asked for with a type
// assertion: a managed server's restart (Resetter), its standby
// (Companioned), its stderr stream (Streamed), the
// built-in capture (Capturer), a static restart split (Splitter).
package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/obsbench/obsbench/internal/dataset"
	"github.com/obsbench/obsbench/internal/observer"
	"github.com/obsbench/obsbench/internal/result"
	"github.com/obsbench/obsbench/internal/workload"
)

// Engine is one database engine obsbench can measure.
type Engine interface {
	// Info says what the engine is called and how it keeps a dataset.
	Info() Info
	// Open connects to the external server of o.DSN, journaling every
	// change it will make, or starts a managed server when o.DSN is empty.
	Open(ctx context.Context, o Options) (Server, error)
	// Planner reaches the server of dsn for a dry run: it reads, never
	// changes.
	Planner(dsn string) (Planner, error)
	// Inspect lists what watches the server of dsn now ("" for the
	// engine's local default), naming the candidates in force.
	Inspect(ctx context.Context, dsn string, candidates []observer.Observer) (*Inspection, error)
	// Undo reverts journaled changes on the server of dsn. needRestart
	// names settings that take effect only after a restart.
	Undo(ctx context.Context, dsn string, changes []json.RawMessage) (needRestart []string, err error)
}

// Info describes an engine.
type Info struct {
	Name string
	// Product is the server's own name, as help and errors write it
	// ("PostgreSQL").
	Product string
	// Namespace is what holds obsbench's dataset on an external server:
	// "schema" (PostgreSQL) or "database".
	Namespace string
	// AddOn is what the engine calls a loadable add-on: "extension" or
	// "plugin".
	AddOn string
	// Managed says obsbench can start a server of this engine itself.
	Managed bool
	// RestartsApply says an observer's restart-only settings are applied
	// by restarting a managed server (false: the engine applies every
	// observer for a whole run, as SQL Server's sessions and traces).
	RestartsApply bool
	// Counts says a managed server can run under valgrind's instruction
	// counter (--method instructions): its server implements
	// CountedServer.
	Counts bool
	// CountsQueries says its counted server can also count each
	// statement apart (--count-per-query): its server implements
	// StatementSplitter.
	CountsQueries bool
	// Dialect is the SQL the engine speaks: the workloads written in it
	// run on it.
	Dialect workload.Dialect
	// Observers are the catalog sections only this engine's observers
	// are written in, with the engine's types they decode into, and its
	// own check of them; engine.Register gives them to the catalog with
	// AddOn.
	Observers observer.EngineRules
	// WaitProfile is the engine's own wait profile, which the wait
	// sampler reads beside the sessions' waits (zero: none).
	WaitProfile result.WaitProfile
	// ExtendedQuery says the engine's protocol sends a statement with its
	// parameters to be parsed at every execution (pgbench's -M extended);
	// without it a statement goes as text or to a prepared statement.
	ExtendedQuery bool
}

// InfoOf is the Info of the registered engine name; the zero Info, which
// can do nothing, for a name not registered.
func InfoOf(name string) Info {
	if e, err := Lookup(name); err == nil {
		return e.Info()
	}
	return Info{Name: name}
}

// Options say which server Open reaches, or what it starts.
type Options struct {
	// DSN is the external server; empty starts a managed one.
	DSN string
	// Standby, on a managed server, starts a standby of it (a replica),
	// synchronous with SyncStandby.
	Standby, SyncStandby bool
	// StandbyDelay is the one-way delay between primary and standby.
	StandbyDelay time.Duration
	// Log receives notes for the user.
	Log func(format string, args ...any)
	// StateDir holds the journal of an external server's changes
	// (journal.Dir).
	StateDir string
	// Getenv reads the environment obsbench runs in, for the variables a
	// managed server's start reads (nil reads none).
	Getenv func(string) string
}

// Managed says o asks for a server obsbench starts.
func (o Options) Managed() bool { return o.DSN == "" }

// WithStandby says o asks for a standby.
func (o Options) WithStandby() bool { return o.Standby }

// Server is a server under test: what the experiment runner needs, and
// what the commands do around it.
type Server interface {
	Target
	// Load creates the dataset, unless it is there already.
	Load(ctx context.Context, d dataset.Dataset) error
	// Setup runs a workload's set-up statements (in the engine's dialect,
	// written in PostgreSQL's where the engine translates).
	Setup(ctx context.Context, stmts []string) error
	Version(ctx context.Context) (string, error)
	// ChangedSettings are the server's settings not at their defaults.
	ChangedSettings(ctx context.Context) (map[string]string, error)
	// Close stops what Open started (a managed server, its standby) and
	// closes the journal of an external one.
	Close() error
}

// Prepare loads the workload's dataset and runs its set-up.
func Prepare(ctx context.Context, s Server, d workload.Dialect, wl workload.Meta, ds dataset.Dataset, logf func(string, ...any)) error {
	logf("loading dataset %s", ds.Name)
	if err := s.Load(ctx, ds); err != nil {
		return err
	}
	return s.Setup(ctx, wl.SetupIn(d))
}

// Planner is what a dry run asks of an engine: the statements it would
// run, without running them.
type Planner interface {
	// Ping checks the server can be reached.
	Ping(ctx context.Context) error
	PlanLoad(ctx context.Context, d dataset.Dataset) ([]string, error)
	PlanApply(ctx context.Context, o observer.Observer) (apply, revert []string, err error)
}

// ReadPlanner is a Planner that also lists what it reads: the queries that
// count an observer's events and those its collectors run in every
// measured window (SQL Server, whose DBAs review every statement).
type ReadPlanner interface {
	PlanEvents(ctx context.Context, o observer.Observer, tag string) ([]string, error)
	PlanReads() []string
}

// WorkloadPlanner is a Planner whose engine does not run the workload's
// statements as written: it shows them as it would send them.
type WorkloadPlanner interface {
	PlanWorkload(ctx context.Context, wl workload.Meta, engine string) (setup, stmts []string, err error)
}

// PermissionChecker is a Server (or Planner) that can tell, before
// anything is changed, whether its login may do everything a run of
// observers needs. It returns the query it ran (a dry run prints it) and
// a *PermissionError naming every permission missing.
type PermissionChecker interface {
	CheckPermissions(ctx context.Context, observers []observer.Observer) (query string, err error)
}

// Copier is a managed Server that can start a copy of itself, its files
// as they are (the dataset loaded, page for page): a duet's twin, which
// the data then cannot tell apart from the first server.
type Copier interface {
	Copy(ctx context.Context, log func(string, ...any)) (Server, error)
}

// Splitter is an Engine that can tell, from its documentation alone, which
// part of an observer needs a restart (held) and which a reload switches.
type Splitter interface {
	StaticSplit(o observer.Observer) (held, switched observer.Observer)
}

// Restarter is a Splitter that also tells, from its documentation, which
// held settings only a restart changes: a setting a session copies when it
// starts is held in an alternation run without needing one.
type Restarter interface {
	StartOnly(setting string) bool
}

// SessionSplitter is an Engine whose observers can be split between two
// groups of sessions on one server (--method split): it knows, from its
// documentation, which settings a session can set for itself
// (observer.SplitSessions, an *observer.Unsplittable when none), and the
// statements a session sets them with.
type SessionSplitter interface {
	SplitSessions(o observer.Observer) (observer.SessionPart, error)
	SessionSQL(settings map[string]string) []string
}

// Capturer is a managed Server that can log what `obsbench capture` reads:
// every statement of a run with its session.
type Capturer interface {
	// CaptureObserver is the observer that makes the server log it, the
	// log's format (a capture source), and the application names to keep
	// (none: all).
	CaptureObserver() (o observer.Observer, source string, apps []string)
	// CapturedLogs are the files the capture observer wrote, in order.
	CapturedLogs() ([]string, error)
}

// Inspection is what obsbench inspect shows of a server.
type Inspection struct {
	// Server names it: engine, version and where.
	Server string
	// Observers are the catalog observers in force.
	Observers []string
	// Sections list what else watches the server, in order.
	Sections []Section
	// NotVisible says what inspection cannot see from a connection.
	NotVisible string
}

// Section is a titled list of an Inspection.
type Section struct {
	Title string
	Items []string
}

var (
	mu       sync.RWMutex
	registry = map[string]Engine{}
)

// Register makes e known by its name; a second engine of the same name is
// a programming error.
func Register(e Engine) {
	mu.Lock()
	defer mu.Unlock()
	name := e.Info().Name
	if _, dup := registry[name]; dup {
		panic("engine: " + name + " registered twice")
	}
	registry[name] = e
	rules := e.Info().Observers
	rules.AddOn = e.Info().AddOn
	observer.RegisterEngine(name, rules)
}

// Lookup finds a registered engine.
func Lookup(name string) (Engine, error) {
	mu.RLock()
	defer mu.RUnlock()
	if e, ok := registry[name]; ok {
		return e, nil
	}
	return nil, &UnknownError{Name: name, Known: namesLocked()}
}

// Names lists the registered engines, sorted.
func Names() []string {
	mu.RLock()
	defer mu.RUnlock()
	return namesLocked()
}

// NamesWhere lists the registered engines whose Info has what can asks
// for, sorted: the engines a flag or a check may name, found by ability
// rather than written out.
func NamesWhere(can func(Info) bool) []string {
	mu.RLock()
	defer mu.RUnlock()
	var names []string
	for _, n := range namesLocked() {
		if can(registry[n].Info()) {
			names = append(names, n)
		}
	}
	return names
}

func namesLocked() []string {
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// UnknownError names an engine that is not registered.
type UnknownError struct {
	Name  string
	Known []string
}

func (e *UnknownError) Error() string {
	return fmt.Sprintf("engine %q is not supported; valid: %s", e.Name, strings.Join(e.Known, ", "))
}

// Home is where obsbench keeps its dataset: the database it creates on a
// managed server, and the schema (PostgreSQL) or database it creates on an
// external one, never the user's tables.
const Home = "obsbench"

// Close stops what Open started, saying through logf why it could not:
// at the end of a command there is nothing else to do with the error.
func Close(s Server, logf func(string, ...any)) {
	if err := s.Close(); err != nil {
		logf("%v", err)
	}
}
