// Package counting measures an observer's cost in instructions rather
// than time: the server runs under valgrind's instruction counter, and a
// fixed number of the workload's statements, run in one session with the
// observer in force, cost a count that does not depend on what else the
// machine does. Timing on a shared machine moves by percents from one
// second to the next; a count repeats to a hundredth of a percent.
//
// A run counts three phases, one after the other: a warm one (the
// workload's W+N statements, to fill caches), a control one (W
// statements) and a measured one (the same W+N). Their counts differ by
// the N statements' work alone: connection, start-up and warm-up cancel.
// A phase is one session or several at once (Config.Sessions, a mix run
// as its timed runs do), session k of each phase running the same
// statements as session k of the others.
// Where each session has a process of its own (PostgreSQL), the three run
// on one freshly restarted server and each backend counts apart; the
// server's other processes (postmaster, logging collector, WAL
// writer...) are counted over the run's server, from the restart before
// it to the one that ends it. Where sessions are threads of one process
// (MariaDB), the count is what the server spent serving client commands,
// in one lifetime per run, split at each connection's end.
//
// An Experiment is the whole of a counted experiment: managed servers
// under valgrind, a copy per core, the rounds spread over them, and
// instructions.json.
package counting

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/obsbench/obsbench/internal/driver"
	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/observer"
	"github.com/obsbench/obsbench/internal/poll"
	"github.com/obsbench/obsbench/internal/workload"
)

// countWait is how long a count may take to appear once the process or
// connection it counts has ended: valgrind writes it as the process exits,
// which on a loaded machine can take long after the client has gone.
const countWait = 2 * time.Minute

// Config is what a counted experiment runs.
type Config struct {
	Server    engine.CountedServer
	Workload  workload.Workload
	Observers []observer.Observer // the first is the baseline
	// Statements (N) are counted per run, after Warmup (W).
	Statements, Warmup int
	// Sessions run at once in each phase (0 or 1: one); the counts are
	// per statement over all of them.
	Sessions int
	Rounds   int
	// FirstRound is the number of the round before the first: Run counts
	// rounds FirstRound+1 to FirstRound+Rounds (Spread gives each server
	// its own).
	FirstRound int
	Seed       uint64
	// Queries, if set, are the workload's statement names
	// (workload.StatementNamer): each run also counts the measured
	// sessions' statements apart, on a StatementSplitter, and Sample
	// holds each query's instructions per execution.
	Queries []string
	// Progress, if set, hears of each run as it ends.
	Progress func(s Sample, seq, total int)
}

// Sample is one counted run of one condition.
type Sample struct {
	Condition string `json:"condition"`
	Round     int    `json:"round"`
	// Backend is the user-space instructions per statement of the
	// session's backend.
	Backend float64 `json:"backend_instructions_per_stmt"`
	// Helpers is the instructions of the server's other processes over
	// the run's server, from its start to its shutdown: the run's work
	// for them (a log line for the logging collector, WAL for the WAL
	// writer) and their start-up and shutdown work, which an observer
	// may change too (pg_stat_statements writes its file at shutdown).
	// They count only when they exit, so no window can leave those out.
	Helpers float64 `json:"helper_instructions_per_run"`
	// Syscalls are the backend's read and write system calls per
	// statement (from /proc/PID/io; -1 when it cannot be read), and
	// HelperSyscalls those of the other processes while the sessions
	// ran, per statement they ran.
	Syscalls       float64 `json:"backend_syscalls_per_stmt"`
	HelperSyscalls float64 `json:"helper_syscalls_per_stmt"`
	Seconds        float64 `json:"seconds"`
	// Queries are the measured sessions' statements counted apart
	// (Config.Queries), by query, in the workload's order.
	Queries []QueryCount `json:"queries,omitempty"`
}

// QueryCount is one query's counted executions in a run: the session's
// instructions from each execution's start to the next statement's.
type QueryCount struct {
	Name       string  `json:"name"`
	Executions int     `json:"executions"`
	PerExec    float64 `json:"instructions_per_execution"`
}

// Run counts every condition Rounds times, in an order shuffled per round
// from Seed, reverting each observer after its run. The server counts
// only during Run.
func Run(ctx context.Context, c Config) ([]Sample, error) {
	if c.Statements < 1 || c.Warmup < 0 || c.Sessions < 0 || c.Rounds < 1 || len(c.Observers) == 0 {
		return nil, fmt.Errorf("counting: %d statements, %d warm-up, %d sessions, %d rounds, %d conditions: want at least 1, 0, 0, 1, 1",
			c.Statements, c.Warmup, c.Sessions, c.Rounds, len(c.Observers))
	}
	switch c.Server.(type) {
	case engine.CountedProcesses, engine.CountedThreads:
	default:
		return nil, fmt.Errorf("counting: a %T counts neither per process nor per lifetime", c.Server)
	}
	if len(c.Queries) > 0 {
		split, ok := c.Server.(engine.StatementSplitter)
		if !ok {
			return nil, fmt.Errorf("counting: a %T does not count statements apart", c.Server)
		}
		split.SplitStatements(true)
		defer split.SplitStatements(false)
	}
	// Switching the counter on checks that it can run; it stays off but
	// for the restarts that start a counted life (restart), so that
	// applying and reverting an observer restart the server as it is.
	if err := c.Server.CountInstructions(true); err != nil {
		return nil, err
	}
	if err := c.Server.CountInstructions(false); err != nil {
		return nil, err
	}
	defer func() {
		// A fresh context: the caller's may have ended.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if c.Server.CountInstructions(false) == nil {
			c.Server.Reset(ctx)
		}
	}()
	var out []Sample
	total := c.Rounds * len(c.Observers)
	for r := c.FirstRound + 1; r <= c.FirstRound+c.Rounds; r++ {
		// Each round's order is its own: the same whichever server runs it.
		rng := rand.New(rand.NewPCG(c.Seed, 0x636f756e74+uint64(r)))
		order := rng.Perm(len(c.Observers))
		// Under the counter a lifetime's memory layout is the same every
		// time, and a vectorised comparison's instructions depend on
		// where its strings lie: at one layout an observer's change
		// would hold what its settings do to that layout, the same error
		// every round. Each round moves the stack by an amount of its
		// own, up to a page, the same for each of its conditions: the
		// rounds' spread then holds what the layout does.
		c.Server.ShiftStack(rng.IntN(stackShifts))
		for _, i := range order {
			s, err := c.run(ctx, c.Observers[i])
			if err != nil {
				return out, fmt.Errorf("round %d, %s: %w", r, c.Observers[i].Name, err)
			}
			s.Round = r
			out = append(out, s)
			if c.Progress != nil {
				c.Progress(s, len(out), total)
			}
		}
	}
	return out, nil
}

// stackShifts is how many stack positions the rounds draw from: one per
// byte of a page, every alignment a string on the stack can have.
const stackShifts = 4096

// Spread runs c's rounds on servers at once, each server its share of
// whole rounds, so that every pair of a condition and the baseline is
// counted on one server. A server under valgrind runs one thread at a
// time: one server per core counts in 1/len(servers) of the time what
// one would. Its samples are in round order; Progress hears of each run
// as it ends, on any server.
func Spread(ctx context.Context, c Config, servers []engine.CountedServer) ([]Sample, error) {
	n := min(len(servers), c.Rounds)
	if n < 1 {
		return nil, fmt.Errorf("counting: no server to count on")
	}
	var mu sync.Mutex
	seq, total := 0, c.Rounds*len(c.Observers)
	parts := make([][]Sample, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	first := c.FirstRound
	for k := range n {
		part := c
		part.Server, part.FirstRound, part.Rounds = servers[k], first, c.Rounds/n
		if k < c.Rounds%n {
			part.Rounds++
		}
		first += part.Rounds
		part.Progress = func(s Sample, _, _ int) {
			mu.Lock()
			defer mu.Unlock()
			seq++
			if c.Progress != nil {
				c.Progress(s, seq, total)
			}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			parts[k], errs[k] = Run(ctx, part)
		}()
	}
	wg.Wait()
	out := slices.Concat(parts...)
	slices.SortStableFunc(out, func(a, b Sample) int { return a.Round - b.Round })
	return out, errors.Join(errs...)
}

// run counts one condition with its observer in force.
func (c Config) run(ctx context.Context, o observer.Observer) (s Sample, err error) {
	began := time.Now()
	switch srv := c.Server.(type) {
	case engine.CountedProcesses:
		err = c.withObserver(ctx, o, func() (err error) {
			s, err = c.runProcesses(ctx, srv)
			return err
		})
	case engine.CountedThreads:
		s, err = c.runThreaded(ctx, srv, o)
	}
	s.Condition = o.Name
	s.Seconds = time.Since(began).Seconds()
	return s, err
}

// withObserver runs f with o applied, and reverts o after it.
func (c Config) withObserver(ctx context.Context, o observer.Observer, f func() error) (err error) {
	applied, err := c.Server.Apply(ctx, o)
	if err != nil {
		return err
	}
	defer func() {
		if rerr := applied.Revert(ctx); rerr != nil && err == nil {
			err = fmt.Errorf("revert: %w", rerr)
		}
	}()
	return f()
}

// runProcesses counts the three sessions on one freshly restarted server:
// each backend's count is its own.
func (c Config) runProcesses(ctx context.Context, srv engine.CountedProcesses) (s Sample, err error) {
	// The server this restart stops ran without the counter, so every
	// count from here on is the counted server's, its start-up process
	// included.
	if err := srv.ClearCounts(); err != nil {
		return s, err
	}
	if err := restart(ctx, srv, true); err != nil {
		return s, err
	}
	helpers, err := srv.Children()
	if err != nil {
		return s, err
	}
	helperIO := readIO(helpers)
	var phases [3][]sessionResult // warm, control, measured
	for i, n := range []int{c.Warmup + c.Statements, c.Warmup, c.Warmup + c.Statements} {
		if phases[i], err = c.phase(ctx, n, srv.BackendPID); err != nil {
			return s, fmt.Errorf("%s session: %w", phaseNames[i], err)
		}
	}
	helperIO = diffIO(readIO(helpers), helperIO)
	// The restart that ends the run makes the helpers exit and count.
	if err := restart(ctx, srv, false); err != nil {
		return s, err
	}
	var sessions []int
	for _, p := range phases {
		for _, r := range p {
			sessions = append(sessions, r.pid)
		}
	}
	counts, err := waitCounts(ctx, srv, append(slices.Clone(sessions), helpers...))
	if err != nil {
		return s, err
	}
	per := c.sessions() // a phase's sessions
	n := float64(per * c.Statements)
	var measured, control float64
	var io int64
	for i := range per {
		measured += float64(counts[phases[2][i].pid])
		control += float64(counts[phases[1][i].pid])
		if io >= 0 && phases[2][i].io >= 0 && phases[1][i].io >= 0 {
			io += phases[2][i].io - phases[1][i].io
		} else {
			io = -1
		}
	}
	s.Backend = (measured - control) / n
	executed := float64(per * (3*c.Warmup + 2*c.Statements))
	var h uint64
	for pid, k := range counts {
		if !slices.Contains(sessions, pid) {
			// Helpers, the postmaster and any process that came and
			// went (an autovacuum worker).
			h += k
		}
	}
	s.Helpers = float64(h)
	s.Syscalls = -1
	if io >= 0 && len(c.Queries) == 0 {
		// Split at each statement, a backend's system calls hold
		// callgrind's own writes of each statement's count.
		s.Syscalls = float64(io) / n
	}
	s.HelperSyscalls = -1
	if helperIO >= 0 {
		s.HelperSyscalls = float64(helperIO) / executed
	}
	if len(c.Queries) > 0 {
		s.Queries, err = c.queryCounts(srv.(engine.StatementSplitter), phases[1], phases[2])
	}
	return s, err
}

// queryCounts are the measured sessions' counted statements by query:
// each statement's part of its backend's count, from its start to the
// next statement's. The parts are matched to the statements from the
// end: the sessions' statements are the last each backend ran, the
// measured one ran Statements more than the control one, and each ran
// one statement per operation (anything else is an error). Each
// session's last statement is left out: its part holds the backend's
// exit too.
func (c Config) queryCounts(srv engine.StatementSplitter, control, measured []sessionResult) ([]QueryCount, error) {
	sum := make([]float64, len(c.Queries))
	runs := make([]int, len(c.Queries))
	for k, m := range measured {
		parts, base := srv.StatementCounts(m.pid), srv.StatementCounts(control[k].pid)
		if len(parts)-len(base) != c.Statements || len(parts) < c.Warmup+c.Statements+1 {
			return nil, fmt.Errorf("session %d's backend counted %d statements, its control session's %d: want %d more, one per operation (a workload whose operations run one statement each)",
				k+1, len(parts)-1, len(base)-1, c.Statements)
		}
		ran := m.statements[c.Warmup:]
		first := len(parts) - len(ran)
		for i, q := range ran[:len(ran)-1] {
			if q < 0 || q >= len(c.Queries) {
				return nil, fmt.Errorf("session %d's statement %d has no name among the workload's %d", k+1, c.Warmup+i+1, len(c.Queries))
			}
			sum[q] += float64(parts[first+i])
			runs[q]++
		}
	}
	out := make([]QueryCount, 0, len(c.Queries))
	for q, name := range c.Queries {
		if runs[q] > 0 {
			out = append(out, QueryCount{Name: name, Executions: runs[q], PerExec: sum[q] / float64(runs[q])})
		}
	}
	return out, nil
}

// runThreaded counts one lifetime of the server with three sessions, one
// after another: a warm one, the control one (the warm-up statements)
// and the measured one (the warm-up and the N statements). The count is
// split at each session's end, so the control and the measured sessions
// differ by the N statements alone, in the same lifetime, both after the
// first session's first-time work (tables opened, pages read). The
// server's other threads are counted over the lifetime. Their system
// calls cannot be told from the sessions' threads': the server process's
// are counted, none apart. The observer is applied after the restart, as
// a timed run does: a server's global settings do not outlive it.
func (c Config) runThreaded(ctx context.Context, srv engine.CountedThreads, o observer.Observer) (s Sample, err error) {
	if err := restart(ctx, srv, true); err != nil {
		return s, err
	}
	// What that restart ended is the previous lifetime or an uncounted
	// server: its tally is not needed.
	_, _, _ = srv.LastTally()
	var ends [4]int // connections ended before the warm session, and after each session
	var io [3]int64 // the server's system calls during each session
	var conns []uint64
	var rest uint64
	err = c.withObserver(ctx, o, func() (err error) {
		if ends[0], err = srv.EndedConnections(); err != nil {
			return err
		}
		for i, n := range []int{c.Warmup + c.Statements, c.Warmup, c.Warmup + c.Statements} {
			if io[i], ends[i+1], err = c.threadPhase(ctx, srv, n); err != nil {
				return fmt.Errorf("%s session: %w", phaseNames[i], err)
			}
		}
		// The restart that ends the lifetime makes the server write the
		// rest of its count, read before a revert restarts it again.
		if err := restart(ctx, srv, false); err != nil {
			return err
		}
		conns, rest, err = srv.LastTally()
		return err
	})
	if err != nil {
		return s, err
	}
	if len(conns) < ends[3] {
		return s, fmt.Errorf("the server's count has %d connections' parts; %d connections ended", len(conns), ends[3])
	}
	served := func(k int) (n uint64) { // commands up to the end of session k (1-3), from the one before
		for _, c := range conns[ends[k-1]:ends[k]] {
			n += c
		}
		return n
	}
	if served(3) <= served(2) || served(2) == 0 {
		return s, fmt.Errorf("the count's parts at each connection's end (%v, connections %v ended) do not hold the sessions: the control session's %d, the measured one's %d", conns, ends, served(2), served(3))
	}
	n := float64(c.sessions() * c.Statements)
	s.Backend = (float64(served(3)) - float64(served(2))) / n
	s.Helpers = float64(rest)
	s.Syscalls = -1
	if io[1] >= 0 && io[2] >= 0 {
		s.Syscalls = float64(io[2]-io[1]) / n
	}
	s.HelperSyscalls = -1
	return s, nil
}

// threadPhase runs n of the workload's operations in each of a phase's
// new sessions of srv, and closes them. It returns the server's system
// calls while they ran (-1: unknown) and how many connections of the
// lifetime had ended once theirs had. Whatever connection was closed
// before the phase (the observer's control connection) has ended on the
// server by the time its statements are done, so the count read just
// before closing them moves by the phase's ends alone.
func (c Config) threadPhase(ctx context.Context, srv engine.CountedThreads, n int) (io int64, ended int, err error) {
	before := readIO([]int{srv.ServerPID()})
	sessions := make([]driver.Session, c.sessions())
	closeAll := func() (err error) {
		for _, sess := range sessions {
			if sess != nil {
				err = errors.Join(err, sess.Close(ctx))
			}
		}
		return err
	}
	err = c.atOnce(func(k int) error {
		// Kept only once dialled: a failed Dial's nil session would be a
		// non-nil interface that closeAll closes.
		sess, err := c.Server.Dial(ctx)
		if err != nil {
			return err
		}
		sessions[k] = sess
		_, err = c.statements(ctx, sess, k, n)
		return err
	})
	if err != nil {
		closeAll()
		return 0, 0, err
	}
	io = -1
	if after := readIO([]int{srv.ServerPID()}); after >= 0 && before >= 0 {
		io = after - before
	}
	base, err := srv.EndedConnections()
	if err != nil {
		closeAll()
		return 0, 0, err
	}
	if err := closeAll(); err != nil {
		return 0, 0, err
	}
	ended, err = waitEnded(ctx, srv, base+len(sessions))
	return io, ended, err
}

// waitEnded waits until at least n connections of srv's lifetime have
// ended, and returns how many: a session's end reaches the server just
// after its client closes it.
func waitEnded(ctx context.Context, srv engine.CountedThreads, n int) (k int, err error) {
	err = poll.Until(ctx, countWait, 20*time.Millisecond, func() (bool, error) {
		k, err = srv.EndedConnections()
		return k >= n, err
	}, func() error {
		return fmt.Errorf("the server counted %d ended connections two minutes after a session closed; want %d", k, n)
	})
	return k, err
}

// restart restarts the server, under the counter or not. Only the
// lifetime a run counts runs under it: the restart that ends that lifetime
// (and makes it write its count) starts the server as it is, for the
// revert and the next run's apply, because a lifetime under valgrind
// spends seconds starting and stopping.
func restart(ctx context.Context, srv engine.CountedServer, counted bool) error {
	if err := srv.CountInstructions(counted); err != nil {
		return err
	}
	return srv.Reset(ctx)
}

// phaseNames name a run's three phases, in order.
var phaseNames = [3]string{"warm", "control", "measured"}

// sessions is how many sessions each phase runs at once.
func (c Config) sessions() int { return max(c.Sessions, 1) }

// atOnce runs f for each of a phase's sessions (0 to sessions()-1), all
// at the same time, and waits for them all.
func (c Config) atOnce(f func(k int) error) error {
	errs := make([]error, c.sessions())
	var wg sync.WaitGroup
	for k := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[k] = f(k)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// sessionResult is what a counted session leaves: its backend, the
// backend's read and write system calls (-1: unknown) and, where queries
// are counted apart, which of the workload's statements each operation
// ran, in order.
type sessionResult struct {
	pid        int
	io         int64
	statements []int
}

// phase runs n of the workload's operations in each of a phase's new
// sessions, served by the processes pidOf names, whose system calls it
// reads at the end; session k is the workload's session k.
func (c Config) phase(ctx context.Context, n int, pidOf func(context.Context, driver.Session) (int, error)) ([]sessionResult, error) {
	out := make([]sessionResult, c.sessions())
	err := c.atOnce(func(k int) error {
		sess, err := c.Server.Dial(ctx)
		if err != nil {
			return err
		}
		defer sess.Close(ctx)
		pid, err := pidOf(ctx, sess)
		if err != nil {
			return err
		}
		ran, err := c.statements(ctx, sess, k, n)
		if err != nil {
			return err
		}
		out[k] = sessionResult{pid: pid, io: readIO([]int{pid}), statements: ran}
		return nil
	})
	return out, err
}

// statements runs n of the workload's operations in sess, its session
// k; where queries are counted apart, it returns which of the workload's
// statements each ran (workload.Clock.Statement), in order.
func (c Config) statements(ctx context.Context, sess driver.Session, k, n int) ([]int, error) {
	op, err := c.Workload.Worker(ctx, sess, k)
	if err != nil {
		return nil, err
	}
	var ran []int
	for i := range n {
		octx := ctx
		var clock workload.Clock
		if len(c.Queries) > 0 {
			clock.Statement = -1
			octx = workload.WithClock(ctx, &clock)
		}
		if err := op(octx); err != nil {
			return nil, fmt.Errorf("statement %d: %w", i+1, err)
		}
		if len(c.Queries) > 0 {
			ran = append(ran, clock.Statement)
		}
	}
	return ran, nil
}

// waitCounts waits for every process in pids to have exited and counted,
// polling every 20 ms.
func waitCounts(ctx context.Context, srv engine.CountedProcesses, pids []int) (counts map[int]uint64, err error) {
	var missing []int
	err = poll.Until(ctx, countWait, 20*time.Millisecond, func() (bool, error) {
		if counts, err = srv.Counts(); err != nil {
			return false, err
		}
		missing = slices.DeleteFunc(slices.Clone(pids), func(p int) bool { _, ok := counts[p]; return ok })
		return len(missing) == 0, nil
	}, func() error {
		return fmt.Errorf("processes %v have no instruction count two minutes after they ended", missing)
	})
	return counts, err
}

// readIO is the read and write system calls of pids so far (syscr +
// syscw of /proc/PID/io), -1 if one cannot be read (another user's
// process, when obsbench is not root).
func readIO(pids []int) int64 {
	var sum int64
	for _, pid := range pids {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/io")
		if err != nil {
			return -1
		}
		for _, line := range strings.Split(string(b), "\n") {
			k, v, ok := strings.Cut(line, ": ")
			if ok && (k == "syscr" || k == "syscw") {
				n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				sum += n
			}
		}
	}
	return sum
}

func diffIO(after, before int64) int64 {
	if after < 0 || before < 0 {
		return -1
	}
	return after - before
}
