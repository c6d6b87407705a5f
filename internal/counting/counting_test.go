package counting

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/obsbench/obsbench/internal/driver"
	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/observer"
	"github.com/obsbench/obsbench/internal/workload"
)

// fakeServer counts like a server under the counter would: a backend
// costs a connection's start-up plus its statements' work, the helpers a
// fixed amount per server life, and an observer's extra per statement.
// A server started without the counter counts nothing.
type fakeServer struct {
	mu       sync.Mutex         // sessions at once
	counter  bool               // the next start runs under the counter
	shift    int                // the stack shift of the next counted life
	shifts   []lifeShift        // each counted life's, in order
	counted  bool               // this life runs under it
	lives    int                // lives started under the counter
	perStmt  map[string]float64 // by condition
	current  string
	nextPID  int
	live     map[int]*fakeBackend
	counts   map[int]uint64
	helpers  []int
	applied  []string // conditions applied, in order
	reverted int
	resets   int
	failDial bool
}

type fakeBackend struct {
	statements int
	srv        *fakeServer
}

const (
	fakeStartup = 1_000_000 // a backend's connection and first statements
	fakeHelpers = 5_000_000 // the helpers' per server life
)

func newFake() *fakeServer {
	return &fakeServer{perStmt: map[string]float64{"baseline": 1000, "obs": 1010}, nextPID: 100,
		live: map[int]*fakeBackend{}, counts: map[int]uint64{}}
}

func (f *fakeServer) Apply(_ context.Context, o observer.Observer) (engine.Applied, error) {
	f.current = o.Name
	f.applied = append(f.applied, o.Name)
	return fakeApplied{f}, nil
}

type fakeApplied struct{ f *fakeServer }

func (a fakeApplied) StartEvents(context.Context, string) (engine.EventCounter, error) {
	return nil, nil
}
func (a fakeApplied) Revert(context.Context) error { a.f.reverted++; return nil }

// Reset ends the helpers, which count if counted, and starts new ones.
func (f *fakeServer) Reset(context.Context) error {
	f.resets++
	for _, h := range f.helpers {
		if f.counted {
			f.counts[h] = fakeHelpers / uint64(len(f.helpers))
		}
	}
	f.helpers = []int{f.pid(), f.pid()}
	f.counted = f.counter
	if f.counted {
		f.lives++
		f.shifts = append(f.shifts, lifeShift{f.current, f.shift})
	}
	return nil
}

type lifeShift struct {
	condition string
	shift     int
}

func (f *fakeServer) pid() int { f.nextPID++; return f.nextPID }

func (f *fakeServer) Dial(context.Context) (driver.Session, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failDial {
		return nil, errors.New("refused")
	}
	b := &fakeBackend{srv: f}
	f.live[f.pid()] = b
	return b, nil
}

func (f *fakeServer) CountInstructions(on bool) error { f.counter = on; return nil }
func (f *fakeServer) ShiftStack(bytes int)            { f.shift = bytes }
func (f *fakeServer) Counts() (map[int]uint64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[int]uint64{}
	for k, v := range f.counts {
		out[k] = v
	}
	return out, nil
}
func (f *fakeServer) ClearCounts() error       { clear(f.counts); return nil }
func (f *fakeServer) Children() ([]int, error) { return f.helpers, nil }
func (f *fakeServer) BackendPID(_ context.Context, s driver.Session) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for pid, b := range f.live {
		if b == s {
			return pid, nil
		}
	}
	return 0, errors.New("no such session")
}

func (b *fakeBackend) Prepare(context.Context, string) (workload.Stmt, error) { return nil, nil }

// Close ends the backend, which counts.
func (b *fakeBackend) Close(context.Context) error {
	b.srv.mu.Lock()
	defer b.srv.mu.Unlock()
	for pid, x := range b.srv.live {
		if x == b {
			if b.srv.counted {
				b.srv.counts[pid] = uint64(fakeStartup + float64(b.statements)*b.srv.perStmt[b.srv.current])
			}
			delete(b.srv.live, pid)
		}
	}
	return nil
}

// oneStatement is a workload whose operation is one statement of its
// session.
type oneStatement struct{}

func (oneStatement) Worker(_ context.Context, conn workload.Conn, _ int) (workload.Op, error) {
	b := conn.(*fakeBackend)
	return func(context.Context) error { b.statements++; return nil }, nil
}

// The count per statement is the measured backend's minus the control
// one's, over N: start-up and warm-up cancel; the other processes are
// the helpers alone, not the sessions; each condition runs once per
// round on a server restarted for it, and is reverted. Only that server
// runs under the counter: one life per run.
func TestRunCountsTheStatementsAlone(t *testing.T) {
	f := newFake()
	obs := []observer.Observer{{Name: "baseline"}, {Name: "obs"}}
	samples, err := Run(context.Background(), Config{Server: f, Workload: oneStatement{}, Observers: obs,
		Statements: 500, Warmup: 50, Rounds: 3, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(samples) != 6 || f.reverted != 6 || len(f.applied) != 6 || f.lives != 6 {
		t.Fatalf("%d samples, %d reverts, %d applies, %d lives under the counter; want 6 each", len(samples), f.reverted, len(f.applied), f.lives)
	}
	for _, s := range samples {
		if want := f.perStmt[s.Condition]; s.Backend != want {
			t.Errorf("%s round %d: %.3f instructions per statement; want %.0f", s.Condition, s.Round, s.Backend, want)
		}
		if s.Helpers != fakeHelpers {
			t.Errorf("%s round %d: other processes %.0f; want the helpers' %d alone", s.Condition, s.Round, s.Helpers, fakeHelpers)
		}
	}
	conds := Summarize([]string{"baseline", "obs"}, samples, 0)
	c := conds[1].BackendChange
	if c == nil || math.Abs(c.Pct-1) > 1e-9 || !c.HasCI || c.Pairs != 3 || conds[0].BackendChange != nil {
		t.Errorf("change %+v; want +1%% over 3 pairs", c)
	}
}

// Each round's counted lives have their stack moved by one amount, the
// same for every condition of the round, and the rounds by different
// amounts, within a page.
func TestRunShiftsStackByRound(t *testing.T) {
	f := newFake()
	obs := []observer.Observer{{Name: "baseline"}, {Name: "obs"}, {Name: "other"}}
	if _, err := Run(context.Background(), Config{Server: f, Workload: oneStatement{}, Observers: obs,
		Statements: 10, Rounds: 4, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	if len(f.shifts) != 12 {
		t.Fatalf("%d counted lives; want 12", len(f.shifts))
	}
	rounds := map[int]bool{}
	for r := range 4 {
		round := f.shifts[3*r : 3*r+3]
		for _, l := range round {
			if l.shift != round[0].shift || l.shift < 0 || l.shift >= 4096 {
				t.Fatalf("round %d: shifts %v; want one, in [0, 4096)", r+1, round)
			}
		}
		rounds[round[0].shift] = true
	}
	if len(rounds) < 3 {
		t.Errorf("4 rounds' shifts %v: want them to differ", f.shifts)
	}
}

// meeting is a workload whose sessions each wait, at their first
// statement, until all of a phase's have reached theirs: sessions that
// did not run at once would wait forever (a second, then fail). It
// notes the workload's session numbers it was asked for.
type meeting struct {
	sessions int
	inner    workload.Workload
	mu       sync.Mutex
	arrived  int
	met      chan struct{}
	numbers  map[int]int
}

func (m *meeting) Worker(ctx context.Context, conn workload.Conn, k int) (workload.Op, error) {
	op, err := m.inner.Worker(ctx, conn, k)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	m.numbers[k]++
	if m.arrived%m.sessions == 0 {
		m.met = make(chan struct{})
	}
	met := m.met
	if m.arrived++; m.arrived%m.sessions == 0 {
		close(met)
	}
	m.mu.Unlock()
	first := true
	return func(ctx context.Context) error {
		if first {
			first = false
			select {
			case <-met:
			case <-time.After(time.Second):
				return errors.New("the phase's other sessions never ran beside this one")
			}
		}
		return op(ctx)
	}, nil
}

// Sessions at once: each phase runs them together, session k as the
// workload's session k, and the count is per statement over them all.
func TestRunSessionsAtOnce(t *testing.T) {
	const k = 3
	obs := []observer.Observer{{Name: "baseline"}, {Name: "obs"}}
	for _, tc := range []struct {
		name   string
		server engine.CountedServer
		wl     workload.Workload
	}{
		{"processes", newFake(), oneStatement{}},
		{"threads", &fakeThreaded{perStmt: map[string]float64{"baseline": 1000, "obs": 1010}}, threadStatement{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &meeting{sessions: k, inner: tc.wl, numbers: map[int]int{}}
			samples, err := Run(context.Background(), Config{Server: tc.server, Workload: m, Observers: obs,
				Statements: 200, Warmup: 20, Sessions: k, Rounds: 2, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range samples {
				if want := map[string]float64{"baseline": 1000, "obs": 1010}[s.Condition]; s.Backend != want {
					t.Errorf("%s round %d: %.3f per statement; want %.0f", s.Condition, s.Round, s.Backend, want)
				}
			}
			// 4 runs of 3 phases: each session number 12 times.
			if want := map[int]int{0: 12, 1: 12, 2: 12}; !maps.Equal(m.numbers, want) {
				t.Errorf("sessions by number %v; want %v", m.numbers, want)
			}
		})
	}
}

// A run that fails says which round and condition, and returns the
// samples before it.
func TestRunFails(t *testing.T) {
	f := newFake()
	f.failDial = true
	_, err := Run(context.Background(), Config{Server: f, Workload: oneStatement{}, Observers: []observer.Observer{{Name: "baseline"}},
		Statements: 10, Rounds: 1})
	if err == nil || !strings.Contains(err.Error(), "round 1, baseline: warm session: refused") {
		t.Errorf("err = %v", err)
	}
	if _, err := Run(context.Background(), Config{Server: f, Workload: oneStatement{}, Statements: 0, Rounds: 1}); err == nil {
		t.Error("0 statements accepted")
	}
}

// fakeThreaded counts like MariaDB under the counter: one process whose
// tally per lifetime is its sessions' commands, split at each end of a
// connection, and the rest; a restart drops the observer's settings
// (global settings do not outlive the server), and it counts the commands
// of connecting to a session.
type fakeThreaded struct {
	mu       sync.Mutex // sessions at once
	perStmt  map[string]float64
	current  string
	pending  uint64   // commands since the last connection's end
	conns    []uint64 // the running lifetime's, per connection end
	last     []uint64 // the ended lifetime's, its tail included
	lastOK   bool
	applied  int
	reverted int
	resets   int
}

type fakeThreadSession struct {
	srv        *fakeThreaded
	statements int
}

func (f *fakeThreaded) Apply(_ context.Context, o observer.Observer) (engine.Applied, error) {
	f.current = o.Name
	f.applied++
	f.pending += 7_000 // the SET GLOBAL commands, on a connection that stays open
	return fakeThreadedApplied{f}, nil
}

type fakeThreadedApplied struct{ f *fakeThreaded }

func (a fakeThreadedApplied) StartEvents(context.Context, string) (engine.EventCounter, error) {
	return nil, nil
}
func (a fakeThreadedApplied) Revert(context.Context) error { a.f.reverted++; return nil }

func (f *fakeThreaded) Reset(context.Context) error {
	f.resets++
	f.last, f.lastOK = append(f.conns, f.pending), true
	f.conns, f.pending, f.current = nil, 0, "baseline"
	return nil
}

func (f *fakeThreaded) LastTally() ([]uint64, uint64, error) {
	if !f.lastOK {
		return nil, 0, errors.New("read twice")
	}
	f.lastOK = false
	return f.last, fakeHelpers, nil
}

func (f *fakeThreaded) EndedConnections() (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.conns), nil
}
func (f *fakeThreaded) ServerPID() int               { return 1 }
func (f *fakeThreaded) CountInstructions(bool) error { return nil }
func (f *fakeThreaded) ShiftStack(int)               {}
func (f *fakeThreaded) Dial(context.Context) (driver.Session, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pending += fakeStartup
	return &fakeThreadSession{srv: f}, nil
}
func (s *fakeThreadSession) Prepare(context.Context, string) (workload.Stmt, error) { return nil, nil }
func (s *fakeThreadSession) Close(context.Context) error {
	s.srv.mu.Lock()
	defer s.srv.mu.Unlock()
	s.srv.pending += uint64(float64(s.statements) * s.srv.perStmt[s.srv.current])
	s.srv.conns = append(s.srv.conns, s.srv.pending)
	s.srv.pending = 0
	return nil
}

type threadStatement struct{}

func (threadStatement) Worker(_ context.Context, conn workload.Conn, _ int) (workload.Op, error) {
	s := conn.(*fakeThreadSession)
	return func(context.Context) error { s.statements++; return nil }, nil
}

// On a threaded server the statements' work is the measured session's
// commands minus the control one's, both in one lifetime, told apart at
// each connection's end; the observer is applied after the restart (a
// restart drops it), and the rest is the lifetime's.
func TestRunThreadedCountsTheStatementsAlone(t *testing.T) {
	f := &fakeThreaded{perStmt: map[string]float64{"baseline": 1000, "obs": 1010}}
	obs := []observer.Observer{{Name: "baseline"}, {Name: "obs"}}
	samples, err := Run(context.Background(), Config{Server: f, Workload: threadStatement{}, Observers: obs,
		Statements: 500, Warmup: 50, Rounds: 2, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	// One lifetime per run, applied and reverted once.
	if len(samples) != 4 || f.applied != 4 || f.reverted != 4 {
		t.Fatalf("%d samples, %d applies, %d reverts; want 4, 4, 4", len(samples), f.applied, f.reverted)
	}
	for _, s := range samples {
		if want := f.perStmt[s.Condition]; s.Backend != want || s.Helpers != fakeHelpers || s.HelperSyscalls != -1 {
			t.Errorf("%s round %d: %.3f per statement, rest %.0f, other syscalls %.0f; want %.0f, %d, -1",
				s.Condition, s.Round, s.Backend, s.Helpers, s.HelperSyscalls, want, fakeHelpers)
		}
	}
}

// A condition the counting stopped before is listed with no runs and no
// change, and what Summarize returns is still JSON (no NaN): the timed
// results it is written beside must not be lost to it.
func TestSummarizeUncountedCondition(t *testing.T) {
	samples := []Sample{
		{Condition: "baseline", Round: 1, Backend: 1000, Helpers: 5000, Syscalls: 9, HelperSyscalls: 0.1, Seconds: 7},
		{Condition: "baseline", Round: 2, Backend: 1001, Helpers: 5001, Syscalls: 9, HelperSyscalls: 0.1, Seconds: 7},
		{Condition: "x", Round: 1, Backend: 1100, Helpers: 5500, Syscalls: 9, HelperSyscalls: 0.1, Seconds: 8},
	}
	conds := Summarize([]string{"baseline", "x", "never"}, samples, 0)
	if len(conds) != 3 || conds[2].Runs != 0 || conds[2].BackendChange != nil || conds[1].BackendChange == nil {
		t.Fatalf("%+v; want never with no runs and no change, x with one", conds)
	}
	if _, err := json.Marshal(conds); err != nil {
		t.Errorf("json: %v", err)
	}
}
