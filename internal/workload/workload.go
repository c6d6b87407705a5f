// Package workload defines what client sessions do, as registered
// generators: each workload names its dataset and hands the driver one
// operation per session. The driver knows nothing about particular
// workloads, and workloads know nothing about particular engines.
package workload

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/obsbench/obsbench/internal/dataset"
)

// Conn is what a workload needs from one database session.
type Conn interface {
	// Prepare prepares sql once for the session; the returned statement is
	// executed many times.
	Prepare(ctx context.Context, sql string) (Stmt, error)
}

// Execer is a Conn that also runs a statement once, as text, without
// preparing it (PostgreSQL's simple query protocol, MariaDB's COM_QUERY):
// what a replay needs for a captured ad hoc statement.
type Execer interface {
	ExecSQL(ctx context.Context, sql string) error
}

// Stmt is a prepared statement. Exec runs it and reads its whole result.
type Stmt interface {
	Exec(ctx context.Context, args ...any) error
}

// Op runs one statement of a session. The driver counts and times each call.
// An error ends the session, unless it is a *StatementError: then the
// statement counts as executed and the driver counts the error.
type Op func(ctx context.Context) error

type clockKey struct{}

// Clock is what an Op tells the driver about the statement it ran,
// through its context (one lookup per Op: Clocked).
type Clock struct {
	// Began is when the statement was sent (workload.Started).
	Began time.Time
	// Statement numbers the statement among the workload's
	// (StatementNames), -1 for none: its latency is also kept apart.
	Statement int
	// Unfinished says that the session is inside a unit of work (a
	// script's transaction) that the next Op continues: when the run
	// ends, the driver calls the Op until it is finished, so that no
	// session stops holding locks another session waits for.
	Unfinished bool
	// Ended, if set, is when the statement's answer was read: the Op did
	// more after it that ends its unit of work but is not the statement's
	// latency (a script's closing meta commands, such as a \sleep).
	Ended time.Time
}

// WithClock returns ctx carrying the clock the driver reads after each Op.
func WithClock(ctx context.Context, c *Clock) context.Context {
	return context.WithValue(ctx, clockKey{}, c)
}

// Clocked is the driver's clock in ctx; nil outside a run.
func Clocked(ctx context.Context) *Clock {
	c, _ := ctx.Value(clockKey{}).(*Clock)
	return c
}

// Started tells the driver that the Op's statement is being sent now:
// what the Op did before (waiting for its scheduled time) is not latency.
func Started(ctx context.Context) {
	if c := Clocked(ctx); c != nil {
		c.Began = time.Now()
	}
}

// StatementNamer is a Workload whose Ops say which of its statements
// each ran (Clock.Statement): the driver keeps the latency of each.
type StatementNamer interface {
	StatementNames() []string
}

type stoppingKey struct{}

// WithStopping returns ctx carrying a channel that the driver closes when
// the run ends.
func WithStopping(ctx context.Context, stopping <-chan struct{}) context.Context {
	return context.WithValue(ctx, stoppingKey{}, stopping)
}

// Stopping is closed when the run ends: an Op that waits before sending
// (a replay keeping the captured timing) stops waiting and returns
// ErrDone, rather than hold the run open past its window. Nil (never
// closed) outside a run.
func Stopping(ctx context.Context) <-chan struct{} {
	ch, _ := ctx.Value(stoppingKey{}).(<-chan struct{})
	return ch
}

type sleeperKey struct{}

// Sleeper waits on behalf of an Op that must not block its goroutine: the
// driver's event loops run several sessions on one goroutine (socket.Loop).
type Sleeper interface {
	// SleepUntil returns when at has come (false, nil), stop was closed
	// (true, nil) or the run was cancelled (false, its error).
	SleepUntil(at time.Time, stop <-chan struct{}) (stopped bool, err error)
}

// WithSleeper returns ctx carrying the Sleeper that Sleep waits through.
func WithSleeper(ctx context.Context, s Sleeper) context.Context {
	return context.WithValue(ctx, sleeperKey{}, s)
}

// Sleep waits until at: through ctx's Sleeper if it has one, else on a
// timer. When the run ends first (Stopping) it returns ErrDone, so that a
// session waiting for a statement due after the window does not hold the
// run open; when ctx ends, ctx's error.
func Sleep(ctx context.Context, at time.Time) error {
	if s, ok := ctx.Value(sleeperKey{}).(Sleeper); ok {
		stopped, err := s.SleepUntil(at, Stopping(ctx))
		if stopped {
			return ErrDone
		}
		return err
	}
	d := time.Until(at)
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-Stopping(ctx):
		return ErrDone
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ErrDone is returned by an Op whose session has no more work (a replay
// that has replayed its session once): the driver stops calling it, and
// ends the run early when every session is done.
var ErrDone = errors.New("workload: session done")

// StatementError is a statement that failed in a way the workload expects
// and goes on from: a replayed statement the target server refuses (a
// captured workload may hold errors of its own).
type StatementError struct{ Err error }

func (e *StatementError) Error() string { return e.Err.Error() }
func (e *StatementError) Unwrap() error { return e.Err }

// Workload produces the operation of each client session.
type Workload interface {
	// Worker prepares what session needs on conn and returns its operation.
	Worker(ctx context.Context, conn Conn, session int) (Op, error)
}

// Checker is a Workload that can check on one session, running nothing,
// that the server accepts its statements: a fault its first execution
// would show, found before an experiment starts.
type Checker interface {
	Check(ctx context.Context, conn Conn) error
}

// Meta describes a registered workload.
type Meta struct {
	Name        string
	Description string
	// Dataset is the name of the dataset the workload reads; DatasetScale
	// its scale, when the workload fixes one (a replay of a capture made
	// at a scale; 0: the scale parameter's, or 1).
	Dataset      string
	DatasetScale int
	// Tag is a string in the text of every statement the workload runs, so
	// that an observer's records of the workload's statements can be told
	// from those of obsbench's own statements.
	Tag string
	// Setup are statements run once after the dataset is loaded (each must
	// be safe to run again): objects the workload's statements use.
	Setup []string
	// DialectSetup are set-up statements in one SQL dialect, run after
	// Setup on an engine that speaks it: objects whose DDL differs by
	// dialect (functions, procedures).
	DialectSetup map[Dialect][]string
	// Dialects, if set, are the only SQL dialects the workload's
	// statements and set-up are written in; empty: any (portable SQL).
	Dialects []Dialect
	// TextStatements says the workload sends its statements as text,
	// values in them (pgbench's simple query mode), not as executions of
	// prepared statements: a counter that sees only those cannot count it.
	TextStatements bool
	// DefaultClients is the number of sessions when the user gives none.
	DefaultClients int
	// LongStatements says that the workload runs few statements that
	// take milliseconds to seconds (a mix of reports): the driver keeps
	// each execution with its server CPU (driver.Config.Executions), for
	// the comparison query by query.
	LongStatements bool
	// Params are the workload's own settings, each a run flag of its name
	// (e.g. --batch for inserts-batched).
	Params []Param
	// New makes the workload with the current parameter values. For a
	// workload with Params, Lookup and WithParams set it from Build.
	New func() Workload
	// Build makes a workload with Params from their values by name.
	Build func(params map[string]int) Workload
	// values are the parameters New uses.
	values map[string]int
}

// Param is one setting of a workload, an integer.
type Param struct {
	Name     string
	Default  int
	Min, Max int
	Usage    string
	// FixedWork says that a value above 0 gives each session a fixed
	// amount of work: the run ends when every session is done (its
	// duration is the measure, --duration only a cap), not at a time.
	FixedWork bool
}

var registry = map[string]Meta{}

// Register adds a workload; registering a name twice is a programming error.
func Register(m Meta) {
	if _, dup := registry[m.Name]; dup {
		panic("workload: duplicate registration of " + m.Name)
	}
	registry[m.Name] = m
}

// Lookup returns the workload called name.
func Lookup(name string) (Meta, error) {
	if m, ok := registry[name]; ok {
		return m.WithParams(nil)
	}
	return Meta{}, fmt.Errorf("unknown workload %q; known: %s", name, strings.Join(Names(), ", "))
}

// Names lists the registered workloads, sorted.
func Names() []string {
	var names []string
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Dialect is a dialect of SQL: what an engine speaks (engine.Info), and
// what a workload's statements and set-up are written in. Engines that
// speak one dialect share its workloads.
type Dialect string

// The dialects of the engines obsbench measures.
const (
	PostgreSQL  Dialect = "postgresql"
	MariaDB     Dialect = "mariadb"
	TransactSQL Dialect = "transact-sql"
)

// In says whether the workload's SQL runs in dialect d.
func (m Meta) In(d Dialect) bool {
	return len(m.Dialects) == 0 || slices.Contains(m.Dialects, d)
}

// SetupIn is every set-up statement of m in dialect d, in order.
func (m Meta) SetupIn(d Dialect) []string {
	return append(append([]string(nil), m.Setup...), m.DialectSetup[d]...)
}

// WithParams returns m whose New uses the given parameter values, the
// defaults for those not given. A parameter m does not have, or a value out
// of its range, is an error that names the valid ones.
func (m Meta) WithParams(values map[string]int) (Meta, error) {
	if m.Build == nil {
		for name := range values {
			return m, fmt.Errorf("workload %s has no parameter --%s", m.Name, name)
		}
		return m, nil
	}
	merged := map[string]int{}
	for _, p := range m.Params {
		merged[p.Name] = p.Default
	}
	for name, v := range values {
		p, ok := m.param(name)
		if !ok {
			return m, fmt.Errorf("workload %s has no parameter --%s; its parameters: %s", m.Name, name, m.paramNames())
		}
		if v < p.Min || v > p.Max {
			return m, fmt.Errorf("--%s %d: want %d to %d (%s)", name, v, p.Min, p.Max, p.Usage)
		}
		merged[name] = v
	}
	m.values = merged
	build := m.Build
	m.New = func() Workload { return build(merged) }
	return m, nil
}

// Value is the value parameter name has in m (0 if m has no such
// parameter).
func (m Meta) Value(name string) int { return m.values[name] }

// FixedWork says whether m, with its parameter values, gives each session
// a fixed amount of work (see Param.FixedWork).
func (m Meta) FixedWork() bool {
	for _, p := range m.Params {
		if p.FixedWork && m.values[p.Name] > 0 {
			return true
		}
	}
	return false
}

// WithParam is m with parameter name set to v, the others as they are.
func (m Meta) WithParam(name string, v int) (Meta, error) {
	values := maps.Clone(m.values)
	if values == nil {
		values = map[string]int{}
	}
	values[name] = v
	return m.WithParams(values)
}

// Counted is m as a counted run takes it: every FixedWork parameter at
// its most, so that sessions run the workload's fixed sequence (dss-mix's
// blocks: every query as often as its weight, in each session's own
// order) for as long as the run asks; the run's own statement counts end
// it. A run that asks for more than the most fails at the statement past
// it.
func (m Meta) Counted() Meta {
	values := maps.Clone(m.values)
	fixed := false
	for _, p := range m.Params {
		if p.FixedWork {
			values[p.Name], fixed = p.Max, true
		}
	}
	if !fixed {
		return m
	}
	c, err := m.WithParams(values)
	if err != nil {
		panic("workload: " + err.Error()) // a parameter's Max is in its range
	}
	return c
}

// DatasetAt is m's dataset at scale, shrunk as m's --shrink says.
func (m Meta) DatasetAt(scale int) (dataset.Dataset, error) {
	ds, err := dataset.Scaled(m.Dataset, scale)
	if err != nil || !m.HasParam("shrink") {
		return ds, err
	}
	return ds.Shrunk(m.Value("shrink"))
}

// HasParam says whether m takes parameter name.
func (m Meta) HasParam(name string) bool {
	_, ok := m.param(name)
	return ok
}

func (m Meta) param(name string) (Param, bool) {
	for _, p := range m.Params {
		if p.Name == name {
			return p, true
		}
	}
	return Param{}, false
}

func (m Meta) paramNames() string {
	var names []string
	for _, p := range m.Params {
		names = append(names, "--"+p.Name)
	}
	return strings.Join(names, ", ")
}

// AllParams lists the parameters of every registered workload, each name
// once, sorted: the run command offers each as a flag.
func AllParams() []Param {
	seen := map[string]Param{}
	for _, m := range registry {
		for _, p := range m.Params {
			if _, ok := seen[p.Name]; !ok {
				seen[p.Name] = p
			}
		}
	}
	var out []Param
	for _, p := range seen {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
