// Package enginetest is a database target that lives in the process, for
// testing obsbench's own logic (planning, alternation, rounds, resume,
// statistics, reports) fast, without root and without any database
// installed. Only tests use it, as pgx's tests use pgxtest.
//
// A memory server does not interpret SQL. Every statement a session
// executes, whatever its text, takes a fixed service time
// (Options.StatementCost), and at most Options.Capacity statements are in
// service at once, like cores: with enough sessions to keep it busy its
// throughput is Capacity/StatementCost, exactly, unless Options.Noise
// makes its speed drift from second to second (seeded), as a real
// machine's does. An observer applied to it
// makes every statement take longer by a fraction of the service time
// given by the observer's name (Options.Overheads), so the overhead a
// measurement should find is known in advance (ExpectedOverheadPct). An
// observer that records events counts the statements carrying the
// workload's tag, and can be made to lose some (Options.LoseEvents).
// Settings are a map, changed by Apply and restored by Revert; the
// settings named in Options.RestartOnly, preload libraries and extensions
// are what Split holds, as a real server's restart-only part. Faults can be
// injected (Options.Faults): a dial or statement that fails, a connection
// that drops mid-run, statement errors, an Apply or Revert that fails, a
// Revert that leaves a setting changed, a server that complains of a full
// log device.
//
// Service time is spent sleeping, not spinning: a statement reserves the
// next free slot of the server's schedule and its session sleeps until the
// slot's end. On a small shared machine that keeps the throughput the
// schedule's, not whatever CPU other processes leave (spinning sessions
// would compete with them and with the driver for the same cores), and a
// sleeping session costs no CPU. Since a sleep may end late (about a
// millisecond, on Linux), a slot's next statement starts when the previous
// one ended on the schedule, not when its session woke: as long as more
// sessions than Capacity are queued (several times Capacity for
// sub-millisecond costs) the schedule never idles. Sleeping also lets a
// test run the server under testing/synctest's fake clock, where a
// 40-second alternation run takes a fraction of a second and every count
// is exact.
//
// What it does not model: SQL (no parsing, no results, no data: Load only
// records the row counts Verify checks), locks, transactions, I/O, memory,
// CPU use (the server has no process of its own: ServerPID is 0, so no
// server CPU is measured), waits and activity counters (it is not an
// engine.Prober), sinks and streams, restarts that take time, and
// costs that depend on the statement or on the number of sessions other
// than through the capacity limit. An observer's EnableSQL and DisableSQL
// are not run, and a Reset (a managed server's restart) only empties the
// schedule (and starts what Options.Linger leaves for one run).
package enginetest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/obsbench/obsbench/internal/dataset"
	"github.com/obsbench/obsbench/internal/driver"
	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/observer"
	"github.com/obsbench/obsbench/internal/poll"
	"github.com/obsbench/obsbench/internal/workload"
)

// Defaults of Options.
const (
	DefaultStatementCost = 200 * time.Microsecond
	DefaultCapacity      = 2
	DefaultVersion       = "memory 1.0"
)

// HeldSuffix ends the name of the part of an observer Split holds (what
// needs a restart); Options.Overheads[name+HeldSuffix] is that part's cost.
const HeldSuffix = observer.HeldSuffix

// PreloadSetting is the setting that lists the preloaded libraries, as
// PostgreSQL's shared_preload_libraries: an observer's Preload is added to
// it, and it needs a restart.
const PreloadSetting = "shared_preload_libraries"

// Options configure a memory server.
type Options struct {
	// StatementCost is the service time of one statement, before
	// observers (DefaultStatementCost if 0).
	StatementCost time.Duration
	// Capacity is how many statements are in service at once, like
	// cores (DefaultCapacity if 0).
	Capacity int
	// Overheads is what each observer adds to the service time of every
	// statement while it is in force, as a fraction of StatementCost, by
	// observer name: 0.10 makes statements take 10% longer, which lowers
	// the throughput by 1-1/1.10 = 9.1% (ExpectedOverheadPct). The key
	// name is the cost of the observer's switchable part (what a reload
	// switches); name+HeldSuffix that of its held part (what needs a
	// restart: restart-only settings, preload libraries, extensions),
	// counted when applying it changes the server. A whole observer
	// costs both; fractions of observers in force together add up.
	Overheads map[string]float64
	// RestartOnly names the settings that take effect only at a
	// restart: Split holds them (PreloadSetting always is).
	RestartOnly []string
	// Settings are the server's settings at start, on top of its
	// built-in defaults (they count as changed: ChangedSettings).
	Settings map[string]string
	// Noise is the relative standard deviation of the server's speed,
	// drawn anew every second of its life from Seed and the second's
	// number: the drift of a real machine, which gives intervals a width.
	// 0: a constant speed.
	Noise float64
	Seed  uint64
	// Drift, if set, multiplies the server's speed at each statement's
	// start: give several servers the same function and they feel the
	// same drift at the same moment, as two twins of a duet on one
	// machine do.
	Drift func(time.Time) float64
	// Linger is the fraction of a reverted observer's cost that stays in
	// its server until the end of the server's next run (through one
	// Reset): what a real observer can leave behind, a log file still
	// being written back or a cache its restart emptied.
	Linger float64
	// LoseEvents is the fraction of tagged statements an observer's
	// event counter fails to record, exactly: of n statements,
	// floor(n*LoseEvents) are lost.
	LoseEvents float64
	// Unavailable names observers that Check refuses, with the reason
	// (a library that is not installed).
	Unavailable map[string]string
	// External makes the server one obsbench does not manage: Check
	// refuses an observer whose held part would change it (it would need
	// a restart), as on a real external server. Reset still succeeds.
	External bool
	// Version is what Version returns (DefaultVersion if empty).
	Version string
	Faults  Faults
}

// Faults make a memory server fail on purpose. Counts run over the
// server's life, from 1.
type Faults struct {
	// FailDial makes the Nth Dial fail.
	FailDial int64
	// DropExec makes the Nth statement fail as a dropped connection
	// does: its session's later statements fail too.
	DropExec int64
	// StatementErrorEvery makes every Nth statement fail with a
	// *workload.StatementError, which the workload goes on from (the
	// driver counts it): the statement still took its time.
	StatementErrorEvery int64
	// FailApply and FailRevert name an observer, as Apply sees it (Split
	// names the held part name+HeldSuffix), whose Apply or Revert fails;
	// a failed Revert leaves the observer in force.
	FailApply, FailRevert string
	// LeaveChanged names an observer whose Revert takes its cost away but
	// leaves its settings as Apply set them.
	LeaveChanged string
	// LogFullUnder names an observer (as Apply sees it) under which the
	// server cannot write its log: the first statement after each Apply
	// makes it complain (ServerFaults), as of a full log device.
	LogFullUnder string
	// Hook, if set, is called before every operation; an error it returns
	// is the operation's. An Exec error ends the session as a dropped
	// connection, unless it is a *workload.StatementError.
	Hook func(Op) error
}

// Op is an operation the server is about to do, as Faults.Hook sees it.
type Op struct {
	Kind OpKind
	// N counts the operations of this kind so far, this one included.
	N int64
	// Observer is the observer of an Apply or Revert.
	Observer string
	// SQL is the statement of an Exec.
	SQL string
}

// OpKind names an operation.
type OpKind string

// Operations.
const (
	OpDial   OpKind = "dial"
	OpExec   OpKind = "exec"
	OpApply  OpKind = "apply"
	OpRevert OpKind = "revert"
	OpVerify OpKind = "verify"
	OpReset  OpKind = "reset"
)

// ErrDropped is the error of a statement on a dropped connection.
var ErrDropped = errors.New("memory: server closed the connection unexpectedly")

// builtin are the settings of every memory server, at their defaults.
var builtin = map[string]string{
	PreloadSetting:    "",
	"max_connections": "100",
}

// Server is a memory server. It is safe for concurrent use.
type Server struct {
	opts        Options
	cost        time.Duration
	restartOnly map[string]bool
	born        time.Time

	mu         sync.Mutex
	slots      []time.Time // when each slot of the schedule is free
	extra      float64     // the fractions of the observers in force
	lingering  float64     // what reverted observers left, until the next Reset
	leftover   float64     // what those of this run leave for the next
	settings   map[string]string
	extensions map[string]bool
	applied    []*applied // in force, in the order applied
	counters   []*counter // counting events
	loaded     map[string]map[string]int
	setup      []string
	speedSec   int64
	speed      float64
	faults     int64
	lastFault  string
	closed     bool

	dials, execs, applies, reverts, verifies, resets atomic.Int64
}

// New makes a memory server.
func New(o Options) *Server {
	s := &Server{opts: o, cost: o.StatementCost, restartOnly: map[string]bool{PreloadSetting: true},
		born: time.Now(), settings: maps.Clone(builtin), extensions: map[string]bool{},
		loaded: map[string]map[string]int{}, speedSec: -1}
	if s.cost <= 0 {
		s.cost = DefaultStatementCost
	}
	if s.opts.Capacity <= 0 {
		s.opts.Capacity = DefaultCapacity
	}
	if s.opts.Version == "" {
		s.opts.Version = DefaultVersion
	}
	for _, n := range o.RestartOnly {
		s.restartOnly[n] = true
	}
	maps.Copy(s.settings, o.Settings)
	s.slots = make([]time.Time, s.opts.Capacity)
	return s
}

// Throughput is the server's statements per second with no observer in
// force, on average: Capacity/StatementCost.
func (s *Server) Throughput() float64 {
	return float64(s.opts.Capacity) / s.cost.Seconds()
}

// ExpectedOverheadPct is the overhead in percent (1 - T/T0) of adding
// the fraction added to the service time of a server on which the
// fraction inForce is already in force in both conditions (the held part
// of an observer whose switchable part alternates; 0 for a whole
// observer against the baseline).
func ExpectedOverheadPct(inForce, added float64) float64 {
	return 100 * added / (1 + inForce + added)
}

// Stats counts what the server did.
type Stats struct {
	Dials, Statements, Applies, Reverts, Verifies, Resets int64
}

// Stats counts what the server did so far.
func (s *Server) Stats() Stats {
	return Stats{Dials: s.dials.Load(), Statements: s.execs.Load(), Applies: s.applies.Load(),
		Reverts: s.reverts.Load(), Verifies: s.verifies.Load(), Resets: s.resets.Load()}
}

// InForce names the observers in force, in the order applied.
func (s *Server) InForce() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var names []string
	for _, a := range s.applied {
		names = append(names, a.obs.Name)
	}
	return names
}

// SetupStatements are the statements Setup received, in order.
func (s *Server) SetupStatements() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.setup)
}

// Complain records a complaint of the server's, as ServerFaults reports.
func (s *Server) Complain(msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.complainLocked(msg)
}

func (s *Server) complainLocked(msg string) {
	s.faults++
	s.lastFault = msg
}

// ServerFaults returns how many complaints the server made, and the
// latest (engine.FaultReporter).
func (s *Server) ServerFaults() (int64, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.faults, s.lastFault
}

func (s *Server) hook(kind OpKind, n int64, obs, sql string) error {
	if s.opts.Faults.Hook == nil {
		return nil
	}
	return s.opts.Faults.Hook(Op{Kind: kind, N: n, Observer: obs, SQL: sql})
}

func (s *Server) checkOpen() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errors.New("memory: server closed")
	}
	return nil
}

// Check refuses an observer named in Options.Unavailable and, on an
// External server, one that would change a restart-only setting or the
// preloaded libraries.
func (s *Server) Check(ctx context.Context, o observer.Observer) error {
	if err := s.checkOpen(); err != nil {
		return err
	}
	if why, ok := s.opts.Unavailable[o.Name]; ok {
		return fmt.Errorf("observer %s cannot be applied: %s", o.Name, why)
	}
	if !s.opts.External {
		return nil
	}
	// What needs a restart: an AlternateOff value is held but reloads.
	restart := observer.Observer{Preload: o.Preload, Settings: map[string]string{}}
	for n, v := range o.Settings {
		if s.restartOnly[n] {
			restart.Settings[n] = v
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if changed := s.heldChangesLocked(restart); len(changed) > 0 {
		return fmt.Errorf("observer %s changes %s, which takes a restart obsbench does only on a server it manages", o.Name, strings.Join(changed, ", "))
	}
	return nil
}

// heldChangesLocked lists what applying held would change: settings not
// at its values, libraries not preloaded, extensions not created.
func (s *Server) heldChangesLocked(held observer.Observer) []string {
	var changed []string
	for _, n := range held.SettingNames() {
		if s.settings[n] != held.Settings[n] {
			changed = append(changed, n)
		}
	}
	libs := splitList(s.settings[PreloadSetting])
	for _, l := range held.Preload {
		if !slices.Contains(libs, l) {
			changed = append(changed, PreloadSetting)
			break
		}
	}
	for _, e := range held.Extensions {
		if !s.extensions[e] {
			changed = append(changed, "extension "+e)
		}
	}
	return changed
}

// Split divides o as a real engine does: preload libraries, extensions
// and the settings of Options.RestartOnly are held (named o.Name +
// HeldSuffix), the rest is switched and keeps o's event counter. A setting
// with an AlternateOff value is held at that value and switched to its
// own.
func (s *Server) Split(ctx context.Context, o observer.Observer) (held, switched observer.Observer, err error) {
	held, switched = s.split(o)
	return held, switched, nil
}

func (s *Server) split(o observer.Observer) (held, switched observer.Observer) {
	return observer.Split(o, func(name string) bool { return s.restartOnly[name] })
}

func hasHeld(held observer.Observer) bool {
	return len(held.Settings) > 0 || len(held.Preload) > 0 || len(held.Extensions) > 0
}

func hasSwitched(sw observer.Observer) bool {
	return len(sw.Settings) > 0 || len(sw.EnableSQL) > 0
}

// Settings returns every setting, name to value.
func (s *Server) Settings(ctx context.Context) (map[string]string, error) {
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.settings), nil
}

// ChangedSettings are the settings not at their built-in defaults: those
// of Options.Settings, and what observers in force changed.
func (s *Server) ChangedSettings(ctx context.Context) (map[string]string, error) {
	all, err := s.Settings(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for k, v := range all {
		if d, ok := builtin[k]; !ok || d != v {
			out[k] = v
		}
	}
	return out, nil
}

// Version returns Options.Version.
func (s *Server) Version(ctx context.Context) (string, error) {
	return s.opts.Version, s.checkOpen()
}

// ServerPID is 0: the server has no process of its own.
func (s *Server) ServerPID() int { return 0 }

// Load records d's tables and row counts, for Verify; no rows are made.
func (s *Server) Load(ctx context.Context, d dataset.Dataset) error {
	if err := s.checkOpen(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.loaded[d.Name]; ok {
		return nil // there already, as a real engine leaves it
	}
	tables := map[string]int{}
	for _, t := range d.Tables {
		tables[t.Name] = t.Rows
	}
	s.loaded[d.Name] = tables
	return nil
}

// Setup records a workload's set-up statements; they are not run.
func (s *Server) Setup(ctx context.Context, stmts []string) error {
	if err := s.checkOpen(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.setup = append(s.setup, stmts...)
	return nil
}

// Verify checks that every table of d was loaded with its row count.
func (s *Server) Verify(ctx context.Context, d dataset.Dataset) error {
	if err := s.checkOpen(); err != nil {
		return err
	}
	if err := s.hook(OpVerify, s.verifies.Add(1), "", ""); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	tables := s.loaded[d.Name]
	for _, t := range d.Tables {
		n, ok := tables[t.Name]
		switch {
		case !ok:
			return fmt.Errorf("dataset %s: table %s does not exist (not loaded)", d.Name, t.Name)
		case n != t.Rows:
			return fmt.Errorf("dataset %s: table %s has %d rows, want %d", d.Name, t.Name, n, t.Rows)
		}
	}
	return nil
}

// Reset brings the server to its starting state as a managed server's
// restart does: nothing is in service (engine.Resetter).
func (s *Server) Reset(ctx context.Context) error {
	if err := s.checkOpen(); err != nil {
		return err
	}
	if err := s.hook(OpReset, s.resets.Add(1), "", ""); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lingering, s.leftover = s.leftover, 0
	s.sumExtraLocked()
	now := time.Now()
	for i := range s.slots {
		s.slots[i] = now
	}
	return nil
}

// Close stops the server: later calls fail. Safe to call again.
func (s *Server) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	return nil
}

// Apply puts o in force: its settings and preload libraries into the
// settings, its extensions created, its cost (Options.Overheads) added to
// every statement's.
func (s *Server) Apply(ctx context.Context, o observer.Observer) (engine.Applied, error) {
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	if err := s.hook(OpApply, s.applies.Add(1), o.Name, ""); err != nil {
		return nil, err
	}
	if s.opts.Faults.FailApply == o.Name {
		return nil, fmt.Errorf("memory: applying %s failed (injected)", o.Name)
	}
	held, sw := s.split(o)
	s.mu.Lock()
	defer s.mu.Unlock()
	a := &applied{s: s, obs: o, prior: map[string]*string{}, complain: s.opts.Faults.LogFullUnder == o.Name}
	base, isHeld := strings.CutSuffix(o.Name, HeldSuffix)
	switch {
	case isHeld:
		if len(s.heldChangesLocked(o)) > 0 {
			a.extra = s.opts.Overheads[o.Name]
		}
	default:
		if hasSwitched(sw) {
			a.extra += s.opts.Overheads[base]
		}
		if hasHeld(held) && len(s.heldChangesLocked(held)) > 0 {
			a.extra += s.opts.Overheads[base+HeldSuffix]
		}
	}
	for _, n := range o.SettingNames() {
		a.set(n, o.Settings[n])
	}
	if len(o.Preload) > 0 {
		libs := splitList(s.settings[PreloadSetting])
		for _, l := range o.Preload {
			if !slices.Contains(libs, l) {
				libs = append(libs, l)
			}
		}
		a.set(PreloadSetting, strings.Join(libs, ","))
	}
	for _, e := range o.Extensions {
		if !s.extensions[e] {
			s.extensions[e] = true
			a.created = append(a.created, e)
		}
	}
	s.applied = append(s.applied, a)
	s.sumExtraLocked()
	return a, nil
}

func (s *Server) sumExtraLocked() {
	s.extra = s.lingering
	for _, a := range s.applied {
		s.extra += a.extra
	}
}

func splitList(v string) []string {
	var out []string
	for l := range strings.SplitSeq(v, ",") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// applied is an observer in force.
type applied struct {
	s        *Server
	obs      observer.Observer
	prior    map[string]*string // each setting changed, its value before (nil: none)
	created  []string           // extensions it created
	extra    float64
	counters []*counter
	complain bool // complain at the next statement (Faults.LogFullUnder)
	reverted bool
}

// set changes a setting, remembering its first prior value. Under s.mu.
func (a *applied) set(name, v string) {
	if _, seen := a.prior[name]; !seen {
		if old, ok := a.s.settings[name]; ok {
			a.prior[name] = &old
		} else {
			a.prior[name] = nil
		}
	}
	a.s.settings[name] = v
}

// StartEvents counts, from now on and while the observer is in force, the
// statements whose text holds tag; nil when the observer records no
// events. An observer whose Events.Lost is set also reports its losses
// (engine.LostCounter).
func (a *applied) StartEvents(ctx context.Context, tag string) (engine.EventCounter, error) {
	if a.obs.Events == nil {
		return nil, nil
	}
	s := a.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if a.reverted {
		return nil, fmt.Errorf("memory: %s is not in force", a.obs.Name)
	}
	c := &counter{tag: tag, lose: s.opts.LoseEvents}
	a.counters = append(a.counters, c)
	// Copied on write: statements read the slice without the lock.
	s.counters = append(slices.Clip(s.counters), c)
	if a.obs.Events.Lost != "" {
		return lostCounter{c}, nil
	}
	return c, nil
}

// Revert takes the observer out of force: its settings back to their
// prior values, its extensions dropped, its event counters stopped.
func (a *applied) Revert(ctx context.Context) error {
	s := a.s
	if err := s.hook(OpRevert, s.reverts.Add(1), a.obs.Name, ""); err != nil {
		return err
	}
	if s.opts.Faults.FailRevert == a.obs.Name {
		return fmt.Errorf("memory: reverting %s failed (injected)", a.obs.Name)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if a.reverted {
		return nil
	}
	a.reverted = true
	s.leftover += s.opts.Linger * a.extra
	if s.opts.Faults.LeaveChanged != a.obs.Name {
		for name, v := range a.prior {
			if v == nil {
				delete(s.settings, name)
			} else {
				s.settings[name] = *v
			}
		}
	}
	for _, e := range a.created {
		delete(s.extensions, e)
	}
	s.applied = slices.DeleteFunc(slices.Clone(s.applied), func(x *applied) bool { return x == a })
	s.counters = slices.DeleteFunc(slices.Clone(s.counters), func(c *counter) bool { return slices.Contains(a.counters, c) })
	s.sumExtraLocked()
	return nil
}

// counter counts an observer's events (engine.EventCounter).
type counter struct {
	tag      string
	lose     float64
	seen     atomic.Int64
	recorded atomic.Int64
	lost     atomic.Int64
}

func (c *counter) record() {
	n := c.seen.Add(1)
	if c.lose > 0 && math.Floor(float64(n)*c.lose) > math.Floor(float64(n-1)*c.lose) {
		c.lost.Add(1)
		return
	}
	c.recorded.Add(1)
}

// Count is how many events were recorded.
func (c *counter) Count(ctx context.Context) (int64, error) { return c.recorded.Load(), nil }

type lostCounter struct{ *counter }

// EngineLost is how many events the observer failed to record.
func (c lostCounter) EngineLost(ctx context.Context) (int64, bool, error) {
	return c.lost.Load(), true, nil
}

// Dial opens a session.
func (s *Server) Dial(ctx context.Context) (driver.Session, error) {
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	n := s.dials.Add(1)
	if err := s.hook(OpDial, n, "", ""); err != nil {
		return nil, err
	}
	if n == s.opts.Faults.FailDial {
		return nil, fmt.Errorf("memory: connection refused (dial %d, injected)", n)
	}
	return &session{s: s}, nil
}

// session is one connection. A workload uses it from one goroutine.
type session struct {
	s      *Server
	err    error // set when the connection dropped or was closed
	closed bool
}

// Prepare returns a statement of sql; nothing is parsed.
func (c *session) Prepare(ctx context.Context, sql string) (workload.Stmt, error) {
	if c.err != nil {
		return nil, c.err
	}
	return stmt{c: c, sql: sql}, nil
}

// ExecSQL runs sql once (workload.Execer).
func (c *session) ExecSQL(ctx context.Context, sql string) error { return c.exec(ctx, sql) }

// ExecText runs a statement sent as text (pgbench.TextConn).
func (c *session) ExecText(ctx context.Context, sql string) error { return c.exec(ctx, sql) }

// QueryText runs a statement sent as text; the memory server returns no
// rows, so a script's \gset fails on it as in prepared mode.
func (c *session) QueryText(ctx context.Context, sql string) ([]string, [][]*string, error) {
	if err := c.exec(ctx, sql); err != nil {
		return nil, nil, err
	}
	return nil, nil, errors.New(`memory: a statement of the in-memory target returns no rows; \gset and \aset need a real server`)
}

// Unnamed is a statement sent whole with each execution
// (pgbench.UnnamedConn); nothing is parsed.
func (c *session) Unnamed(sql string) workload.Stmt { return stmt{c: c, sql: sql} }

// Close closes the session; its statements fail after.
func (c *session) Close(ctx context.Context) error {
	if !c.closed {
		c.closed = true
		if c.err == nil {
			c.err = errors.New("memory: session closed")
		}
	}
	return nil
}

type stmt struct {
	c   *session
	sql string
}

// Exec runs the statement; its arguments are ignored.
func (st stmt) Exec(ctx context.Context, args ...any) error { return st.c.exec(ctx, st.sql) }

// exec serves one statement: it takes the next free slot of the schedule
// and sleeps until the slot's end.
func (c *session) exec(ctx context.Context, sql string) error {
	if c.err != nil {
		return c.err
	}
	s := c.s
	n := s.execs.Add(1)
	f := &s.opts.Faults
	if err := s.hook(OpExec, n, "", sql); err != nil {
		if _, ok := errors.AsType[*workload.StatementError](err); !ok {
			c.err = err
		}
		return err
	}
	if n == f.DropExec {
		c.err = ErrDropped
		return c.err
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		c.err = ErrDropped
		return c.err
	}
	now := time.Now()
	slot := 0
	for i, free := range s.slots {
		if free.Before(s.slots[slot]) {
			slot = i
		}
	}
	start := s.slots[slot]
	if start.Before(now) {
		start = now
	}
	done := start.Add(time.Duration(float64(s.cost) * (1 + s.extra) / s.speedLocked(start)))
	s.slots[slot] = done
	counters := s.counters
	for _, a := range s.applied {
		if a.complain {
			a.complain = false
			s.complainLocked("could not write to log file: No space left on device")
		}
	}
	s.mu.Unlock()

	if err := poll.Sleep(ctx, done.Sub(now)); err != nil {
		return err
	}
	for _, ec := range counters {
		if strings.Contains(sql, ec.tag) {
			ec.record()
		}
	}
	if k := f.StatementErrorEvery; k > 0 && n%k == 0 {
		return &workload.StatementError{Err: fmt.Errorf("memory: statement %d failed (injected)", n)}
	}
	return nil
}

// speedLocked is the server's speed at t: by Noise, in the second of its
// life that t falls in (1 without), times Drift's at t.
func (s *Server) speedLocked(t time.Time) float64 {
	speed := 1.0
	if s.opts.Noise != 0 {
		sec := int64(t.Sub(s.born) / time.Second)
		if sec != s.speedSec {
			z := rand.New(rand.NewPCG(s.opts.Seed, uint64(sec))).NormFloat64()
			s.speedSec, s.speed = sec, max(1+s.opts.Noise*z, 0.1)
		}
		speed = s.speed
	}
	if s.opts.Drift != nil {
		speed *= max(s.opts.Drift(t), 0.01)
	}
	return speed
}

// Interfaces a memory server implements.
var (
	_ engine.Target        = (*Server)(nil)
	_ engine.Resetter      = (*Server)(nil)
	_ engine.FaultReporter = (*Server)(nil)
	_ engine.LostCounter   = lostCounter{}
	_ workload.Execer      = (*session)(nil)
)
