// Package driver runs a workload's client sessions in a closed loop for a
// warm-up and a measured window, counting completed statements per session
// per second and recording their latency. It knows nothing about particular
// workloads or engines.
package driver

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/obsbench/obsbench/internal/result"
	"github.com/obsbench/obsbench/internal/workload"
)

// Session is one client connection.
type Session interface {
	workload.Conn
	Close(ctx context.Context) error
}

// ServerClock is a Session that can read the CPU time its server-side
// process or thread has used so far (a server on this machine): the
// driver reads it before and after each statement when Config.Executions
// asks for it.
type ServerClock interface {
	ServerCPU() (time.Duration, error)
}

// Socketed is a Session whose statements wait on a plain socket (nil if
// not, e.g. with TLS), which an event loop can own: the driver then runs
// its sessions on event loops (SocketLoop), as pgbench's threads run
// their clients.
type Socketed interface {
	Socket() *SocketConn
}

// Dialer opens a session.
type Dialer func(ctx context.Context) (Session, error)

// DefaultProcs is the number of driver threads (Config.Procs) for a run
// of clients sessions: one per core, at most one per session, as
// pgbench -j for this machine.
//
// Every request a thread writes wakes the server process that reads it on
// the thread's own core (a Unix socket's wake-up is synchronous), and on a
// busy machine the scheduler does not look for an idle core: with fewer
// threads than cores, a core stays idle. On event loops, several sessions
// per thread cost nothing more. The measurements are in
// bench/driver-vs-pgbench and bench/pgbench-scripts.
func DefaultProcs(clients int) int {
	return max(1, min(runtime.NumCPU(), clients))
}

// Config says how long and how wide to run.
type Config struct {
	Clients  int
	Warmup   time.Duration // run but not measured
	Duration time.Duration // the measured window
	// Procs, when > 0, is the number of driver threads: the event loops
	// the sessions run on (GOMAXPROCS is one more while they run), or,
	// with a goroutine per session, the OS threads that run Go code
	// (GOMAXPROCS). The previous GOMAXPROCS is restored after.
	// DefaultProcs says how many suit a number of sessions.
	Procs int
	// Goroutines runs each session on a goroutine of its own even when
	// every session is Socketed; otherwise those run on event loops, one
	// per driver thread (Procs, or DefaultProcs).
	Goroutines bool
	// Window is called when the measured window opens (start=true) and
	// closes (start=false), so that other measurements can cover exactly it.
	Window func(start bool)
	// Executed, if set, is incremented for every statement completed, so
	// that a progress display can show the live rate.
	Executed *atomic.Int64
	// Labels, if set, names each second of the measured window ("" for
	// none): the latency of the statements completed in the seconds of
	// each label is also kept apart (Result.LatencyBy), so that an
	// alternation run can report its on phases' latency, not the whole
	// run's.
	Labels []string
	// Executions keeps every statement completed in the window
	// (Result.Executions): which statement, when, its latency and, from
	// sessions that are ServerClocks, the server CPU spent on it. For
	// workloads of few, long statements (a mix of reports): reading the
	// server's clock adds to the driver's work on every statement.
	Executions bool
	// FirstSession numbers this driver's sessions from FirstSession on:
	// the workload's session ids (pgbench's :client_id, a replay's
	// sessions) stay global when several drivers share the sessions.
	FirstSession int
	// Begin, if set, is called once every session is connected and
	// prepared, and returns when the run starts (a time on this machine's
	// clock, now or later): a start barrier shared with other drivers.
	// The driver counts its seconds from that moment.
	Begin func(ctx context.Context) (time.Time, error)
	// Groups, when more than 1, divides the sessions into groups,
	// session i in group i % Groups, so that every event loop and thread
	// carries sessions of each group alike; Result.Groups is then each
	// group's result beside the whole's (a split of one server's
	// sessions, the observer set in one group).
	Groups int
	// GroupSQL[g] are statements each session of group g runs once, as
	// text, after it connects and before it prepares its operation
	// (SET log_statement = 'all'): settings that last as long as the
	// session and change nothing beyond it. Sessions must then be
	// workload.Execers.
	GroupSQL [][]string
	// ServerCPU reads each session's server CPU (a ServerClock's) as the
	// window opens and closes: Result.ServerSeconds, and each group's.
	// Only where every session has a clock (a managed server).
	ServerCPU bool
	// Rate, when > 0, runs the sessions at a fixed arrival rate, units of
	// work per second over them all, as pgbench -R: an open model, whose
	// result says how the schedule was kept (Result.Rate). Each event loop
	// and group has a Poisson schedule of its own, its sessions' share of
	// the rate, which RateSeed seeds.
	Rate     float64
	RateSeed int64
	// LatencyLimit, with a Rate, counts units that take longer from their
	// scheduled start as late, and skips arrivals already later than it
	// when a session is free, as pgbench -L.
	LatencyLimit time.Duration
}

// Latency and Result are plain data, kept in package result with the runs
// they are part of.
type (
	Latency = result.Latency
	Result  = result.DriverResult
)

// maxErrorSamples is how many distinct statement errors a result keeps.
const maxErrorSamples = 5

const (
	minLatencyMicros = 1
	maxLatencyMicros = 60_000_000
)

// Run connects cfg.Clients sessions, prepares each one's operation, then
// runs them together. Statements are attributed to the second in which they
// completed; the loop ends after the window by letting each session finish
// its statement in flight (not by cancelling it), so that every statement
// the server saw is counted.
func Run(ctx context.Context, cfg Config, dial Dialer, w workload.Workload) (Result, error) {
	p, err := RunPart(ctx, cfg, dial, w)
	return p.Result, err
}

// RunPart is Run, returning also the histograms the result's latencies
// were read from, so that the parts several drivers ran can be merged
// without loss (Merge).
func RunPart(ctx context.Context, cfg Config, dial Dialer, w workload.Workload) (Part, error) {
	if cfg.Clients < 1 || cfg.Duration <= 0 || cfg.Warmup < 0 || cfg.Rate < 0 || cfg.LatencyLimit < 0 {
		return Part{}, fmt.Errorf("driver: invalid config %+v", cfg)
	}
	sessions, err := dialAll(ctx, dial, cfg.Clients)
	defer func() {
		for _, s := range sessions {
			s.Close(context.WithoutCancel(ctx))
		}
	}()
	if err != nil {
		return Part{}, err
	}
	if err := runSessionSQL(ctx, cfg, sessions); err != nil {
		return Part{}, err
	}
	ops, err := prepare(ctx, cfg, sessions, w)
	if err != nil {
		return Part{}, err
	}

	var cpu *serverCPU
	if cfg.ServerCPU {
		cpu = newServerCPU(cfg, sessions)
		window := cfg.Window
		cfg.Window = func(open bool) {
			if open {
				cpu.read(true)
			}
			if window != nil {
				window(open)
			}
			if !open {
				cpu.read(false)
			}
		}
	}
	loops, err := openLoops(cfg, sessions)
	if err != nil {
		return Part{}, err
	}
	if procs := cfg.Procs; procs > 0 || loops != nil {
		if loops != nil {
			procs = len(loops) + extraProcs
		}
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
	}
	// Deferred after the sessions' Close: the loops give the sockets
	// back before the sessions close them.
	defer closeLoops(loops)
	r := newRunning(cfg, loops)
	if err := r.begin(ctx); err != nil {
		return Part{}, err
	}
	r.startSessions(ctx, sessions, ops)
	closed, err := r.measure(ctx)
	if err != nil {
		return Part{}, err
	}
	backlog, waiting := backlogs(r.lanes, cfg.Groups)
	p, err := collate(cfg, r.window(closed), r.workers, r.run(), r.names, waiting)
	p.Result.ServerSeconds = cpu.seconds(func(int) bool { return true })
	if cfg.Groups > 1 && err == nil {
		p.Result.Groups = groupResults(cfg, r.window(closed), r.workers, r.names, backlog)
		for g := range p.Result.Groups {
			p.Result.Groups[g].ServerSeconds = cpu.seconds(func(i int) bool { return cfg.group(i) == g })
		}
	}
	if n, ok := w.(workload.StatementNamer); ok && err == nil {
		p.Result.Statements, p.Result.StatementsBy = statementLatencies(r.workers, r.names, n.StatementNames())
	}
	return p, err
}

// extraProcs is the number of Go processors beside the event loops' for
// the rest of the program (timers, progress, collectors). Each loop's
// thread holds its processor while it waits in epoll_wait(2), a system
// call; with no processor idle, Go's monitor takes a processor from a
// thread in a system call after 20 us and starts another thread for it,
// for nearly every wait, which costs statements and client CPU
// (bench/driver-vs-pgbench, bench/pgbench-scripts: with and without the
// spare processor).
const extraProcs = 1

// openLoops opens one event loop per driver thread and attaches each
// session's socket to one of them, in turn; none (nil) when cfg asks for
// goroutines or a session is not Socketed.
func openLoops(cfg Config, sessions []Session) ([]*SocketLoop, error) {
	if cfg.Goroutines {
		return nil, nil
	}
	socks := make([]*SocketConn, len(sessions))
	for i, s := range sessions {
		if sk, ok := s.(Socketed); ok {
			socks[i] = sk.Socket()
		}
		if socks[i] == nil {
			return nil, nil
		}
	}
	n := cfg.Procs
	if n <= 0 {
		n = DefaultProcs(len(sessions))
	}
	loops := make([]*SocketLoop, min(n, len(sessions)))
	for k := range loops {
		l, err := NewSocketLoop()
		if err != nil {
			closeLoops(loops[:k])
			return nil, fmt.Errorf("driver: %w", err)
		}
		loops[k] = l
	}
	for i, sk := range socks {
		if err := loops[cfg.loopOf(i, len(loops))].Attach(sk); err != nil {
			closeLoops(loops)
			return nil, fmt.Errorf("driver: session %d: %w", cfg.FirstSession+i, err)
		}
	}
	return loops, nil
}

func closeLoops(loops []*SocketLoop) {
	for _, l := range loops {
		l.Close()
	}
}

// loopOf is the event loop, of n, that runs session i: sessions in turn,
// each group's next one on the same loop (session i is in group
// i % Groups), so that every loop carries every group alike and what
// delays a loop's thread delays all groups.
func (cfg Config) loopOf(i, n int) int {
	return (i / max(1, cfg.Groups)) % n
}

// stream is the workload's session (its random stream, its :client_id)
// that a run's session i runs: with groups, the k-th session of every
// group runs the same, so that the groups differ by nothing but their
// settings.
func (cfg Config) stream(i int) int {
	return cfg.FirstSession + i/max(1, cfg.Groups)
}

// group is the group of a run's session i (Config.Groups).
func (cfg Config) group(i int) int {
	if cfg.Groups <= 1 {
		return 0
	}
	return i % cfg.Groups
}

// runSessionSQL runs each session's group's Config.GroupSQL in it.
func runSessionSQL(ctx context.Context, cfg Config, sessions []Session) error {
	for i, s := range sessions {
		g := cfg.group(i)
		if g >= len(cfg.GroupSQL) || len(cfg.GroupSQL[g]) == 0 {
			continue
		}
		ex, ok := s.(workload.Execer)
		if !ok {
			return fmt.Errorf("driver: session %d cannot run a statement as text, which its settings need", cfg.FirstSession+i)
		}
		for _, sql := range cfg.GroupSQL[g] {
			if err := ex.ExecSQL(ctx, sql); err != nil {
				return fmt.Errorf("driver: session %d: %s: %w", cfg.FirstSession+i, sql, err)
			}
		}
	}
	return nil
}

// dialsAtOnce bounds the sessions dialAll opens at the same time.
const dialsAtOnce = 8

// dialAll opens n sessions, several at a time: the server starts a
// process or a thread for each, and sessions opened one by one would delay
// every run by the sum of their set-ups. On an error it returns the
// sessions it opened, to be closed, and the first error.
func dialAll(ctx context.Context, dial Dialer, n int) ([]Session, error) {
	sessions := make([]Session, n)
	errs := make([]error, n)
	slots := make(chan struct{}, dialsAtOnce)
	var wg sync.WaitGroup
	for i := range n {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			sessions[i], errs[i] = dial(ctx)
		})
	}
	wg.Wait()
	var opened []Session
	var first error
	for i, err := range errs {
		switch {
		case err == nil:
			opened = append(opened, sessions[i])
		case first == nil:
			first = err
		}
	}
	return opened, first
}

// sleepUntil waits until t; false if ctx ended first.
func sleepUntil(ctx context.Context, t time.Time) bool {
	timer := time.NewTimer(time.Until(t))
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// statementLatencies sums each statement's latency over the sessions: over
// the window, and over the seconds of each label.
func statementLatencies(workers []*worker, labels, stmts []string) ([]result.StatementLatency, map[string][]result.StatementLatency) {
	sum := func(k int) []result.StatementLatency {
		var out []result.StatementLatency
		for i, name := range stmts {
			var t stmtSum
			for _, wk := range workers {
				if k < len(wk.stmts) && i < len(wk.stmts[k]) {
					w := wk.stmts[k][i]
					t.n, t.us, t.cpuN, t.cpuUS = t.n+w.n, t.us+w.us, t.cpuN+w.cpuN, t.cpuUS+w.cpuUS
				}
			}
			l := result.StatementLatency{Statement: name, Count: t.n}
			if t.n > 0 {
				l.MeanMS = float64(t.us) / float64(t.n) / 1000
			}
			if t.cpuN > 0 {
				l.CPUCount = t.cpuN
				l.CPUMeanMS = float64(t.cpuUS) / float64(t.cpuN) / 1000
			}
			out = append(out, l)
		}
		return out
	}
	var by map[string][]result.StatementLatency
	for k, name := range labels {
		if by == nil {
			by = map[string][]result.StatementLatency{}
		}
		by[name] = sum(k + 1)
	}
	return sum(0), by
}

// labelIndex numbers the distinct labels of the window's seconds: label[i]
// is second i's (-1 for none), names[k] is label k.
func labelIndex(labels []string, seconds int) (label []int, names []string) {
	if len(labels) == 0 {
		return nil, nil
	}
	label = make([]int, seconds)
	for i := range label {
		label[i] = -1
		if i >= len(labels) || labels[i] == "" {
			continue
		}
		k := slices.Index(names, labels[i])
		if k < 0 {
			k = len(names)
			names = append(names, labels[i])
		}
		label[i] = k
	}
	return label, names
}

type worker struct {
	perSecond []int64
	units     int64       // units of work completed in the window
	secs      *secondHist // shared by the run's sessions
	rateSecs  *secondHist // at a rate, shared too
	executed  int64
	hist      *hdrhistogram.Histogram
	err       error
	done      bool // the workload said the session has no more work
	errors    int64
	samples   []string // distinct statement errors, at most maxErrorSamples
	labels    []int    // each second's label, -1 for none (Config.Labels)
	labelHist []*hdrhistogram.Histogram
	// stmts[0] sums each statement's latency over the window, stmts[k+1]
	// over the seconds of label k.
	stmts [][]stmtSum
	// keep says to keep each execution (Config.Executions), with the
	// server CPU from clock when the session has one.
	keep       bool
	session    int
	clock      ServerClock
	clockErr   error
	executions []result.Execution
	lastEnd    time.Time // when its latest statement ended
	// lane is the schedule the session takes its arrivals from, at a
	// rate (Config.Rate; nil: a closed loop), limit the latency limit,
	// rate its count of how it kept the schedule.
	lane  *lane
	limit time.Duration
	rate  *arrivals
}

// lastEnd is when the latest statement of any session ended.
func lastEnd(workers []*worker) time.Time {
	var t time.Time
	for _, wk := range workers {
		if wk.lastEnd.After(t) {
			t = wk.lastEnd
		}
	}
	return t
}

// stmtSum is the completions of one statement, their total latency and,
// for cpuN of them, their total server CPU.
type stmtSum struct{ n, us, cpuN, cpuUS int64 }

func (wk *worker) recordStatement(stmt, label int, us, cpuUS int64) {
	if wk.stmts == nil {
		wk.stmts = make([][]stmtSum, 1+len(wk.labelHist))
	}
	add := func(k int) {
		for len(wk.stmts[k]) <= stmt {
			wk.stmts[k] = append(wk.stmts[k], stmtSum{})
		}
		wk.stmts[k][stmt].n++
		wk.stmts[k][stmt].us += us
		if cpuUS >= 0 {
			wk.stmts[k][stmt].cpuN++
			wk.stmts[k][stmt].cpuUS += cpuUS
		}
	}
	add(0)
	if label >= 0 {
		add(label + 1)
	}
}

// tolerate counts err if it is a statement error the workload goes on
// from, and says whether it was.
func (wk *worker) tolerate(err error) bool {
	var se *workload.StatementError
	if !errors.As(err, &se) {
		return false
	}
	wk.errors++
	if msg := se.Error(); len(wk.samples) < maxErrorSamples && !slices.Contains(wk.samples, msg) {
		wk.samples = append(wk.samples, msg)
	}
	return true
}

func (wk *worker) loop(ctx context.Context, op workload.Op, stop *atomic.Bool, start time.Time, warmup, dur time.Duration, live *atomic.Int64) {
	// clk.Began is when the statement was sent: a workload that waits
	// before sending (a replay keeping the captured timing) moves it with
	// workload.Started, so that the wait is not latency. A session inside
	// a unit of work (clk.Unfinished) runs on past the stop to its end.
	var clk workload.Clock
	ctx = workload.WithClock(ctx, &clk)
	for !stop.Load() || clk.Unfinished {
		// At a rate, a unit of work starts at its arrival; the statements
		// that continue it (clk.Unfinished) follow at once.
		unit := !clk.Unfinished
		if wk.lane != nil && unit && !wk.arrive(ctx) {
			return
		}
		clk.Began, clk.Statement, clk.Unfinished, clk.Ended = time.Now(), -1, false, time.Time{}
		cpu0 := wk.serverCPU()
		err := op(ctx)
		cpu := wk.serverCPU() - cpu0
		if cpu0 < 0 || cpu < 0 {
			cpu = -1
		}
		if errors.Is(err, workload.ErrDone) {
			wk.done = true
			return
		}
		if err != nil && (ctx.Err() != nil || !wk.tolerate(err)) {
			if ctx.Err() == nil {
				wk.err = err
			}
			return
		}
		end := time.Now()
		wk.executed++
		wk.lastEnd = end
		if live != nil {
			live.Add(1)
		}
		since := end.Sub(start) - warmup
		if since < 0 || since >= dur {
			continue
		}
		if !clk.Unfinished {
			wk.units++
			if wk.lane != nil {
				wk.unitDone(end, int(since/time.Second))
			}
		}
		sec := since / time.Second
		wk.perSecond[sec]++
		answered := end
		if !clk.Ended.IsZero() {
			answered = clk.Ended
		}
		us := clampMicros(answered.Sub(clk.Began))
		wk.hist.RecordValue(us)
		wk.secs.record(int(sec), us)
		label := -1
		if wk.labels != nil {
			if label = wk.labels[sec]; label >= 0 {
				wk.labelHist[label].RecordValue(us)
			}
		}
		cpuUS := int64(-1)
		if cpu >= 0 {
			cpuUS = cpu.Microseconds()
		}
		if clk.Statement >= 0 {
			wk.recordStatement(clk.Statement, label, us, cpuUS)
		}
		if wk.keep {
			wk.executions = append(wk.executions, result.Execution{
				Statement: clk.Statement, Session: wk.session,
				EndUS: since.Microseconds(), LatencyUS: us, ServerCPUUS: cpuUS})
		}
	}
}

// serverCPU reads the session's server clock, -1 without one. A clock
// that fails once is not read again: the session's executions then have
// no CPU, and the result says why (Result.ExecutionsNote).
func (wk *worker) serverCPU() time.Duration {
	if wk.clock == nil || wk.clockErr != nil {
		return -1
	}
	d, err := wk.clock.ServerCPU()
	if err != nil {
		wk.clockErr = err
		return -1
	}
	return d
}

// perSecond are a run's per-second latency counts: its statements', and
// at a rate its units' from their scheduled starts.
type perSecond struct{ statements, units *secondHist }

func (r *running) run() perSecond { return perSecond{r.secs, r.rateSecs} }

func collate(cfg Config, window time.Duration, workers []*worker, secs perSecond, labels []string, backlog int64) (Part, error) {
	r := Result{Clients: cfg.Clients, Seconds: window.Seconds()}
	keep := int((window + time.Second - 1) / time.Second)
	hist := hdrhistogram.New(minLatencyMicros, maxLatencyMicros, 3)
	byLabel := make([]*hdrhistogram.Histogram, len(labels))
	for k := range byLabel {
		byLabel[k] = hdrhistogram.New(minLatencyMicros, maxLatencyMicros, 3)
	}
	var errs []error
	for i, wk := range workers {
		if wk.err != nil {
			errs = append(errs, fmt.Errorf("session %d: %w", cfg.FirstSession+i, wk.err))
		}
		r.PerSecond = append(r.PerSecond, wk.perSecond[:keep])
		for _, n := range wk.perSecond[:keep] {
			r.Measured += n
		}
		r.Executed += wk.executed
		r.Units += wk.units
		r.Errors += wk.errors
		for _, msg := range wk.samples {
			if len(r.ErrorSamples) < maxErrorSamples && !slices.Contains(r.ErrorSamples, msg) {
				r.ErrorSamples = append(r.ErrorSamples, msg)
			}
		}
		hist.Merge(wk.hist)
		r.Executions = append(r.Executions, wk.executions...)
		if wk.keep && wk.clock == nil && r.ExecutionsNote == "" {
			r.ExecutionsNote = "the sessions cannot read their server's CPU (a server on another machine, or not managed by obsbench)"
		}
		if wk.clockErr != nil && r.ExecutionsNote == "" {
			r.ExecutionsNote = fmt.Sprintf("session %d: reading the server's CPU failed: %v", cfg.FirstSession+i, wk.clockErr)
		}
		for k, h := range wk.labelHist {
			byLabel[k].Merge(h)
		}
	}
	if len(errs) > 0 {
		return Part{Result: r}, errors.Join(errs...)
	}
	p := Part{Result: r, hist: hist}
	p.Result.Rate, p.rateLatency, p.rateLag = rateOf(cfg, workers, window.Seconds(), backlog)
	if secs.statements != nil {
		p.seconds = secs.statements.plain(keep)
	}
	if secs.units != nil && p.Result.Rate != nil {
		p.rateSeconds = secs.units.plain(keep)
		p.Result.Rate.LatencyPerSecond = perSecondLatency(p.rateSeconds)
	}
	for k, name := range labels {
		if byLabel[k].TotalCount() == 0 {
			continue
		}
		if p.byLabel == nil {
			p.byLabel = map[string]*hdrhistogram.Histogram{}
		}
		p.byLabel[name] = byLabel[k]
	}
	p.summarize()
	return p, nil
}

// groupResults are each group's sessions collated apart (Config.Groups);
// the latency of each second is kept for the whole run only.
func groupResults(cfg Config, window time.Duration, workers []*worker, labels []string, backlog []int64) []Result {
	out := make([]Result, cfg.Groups)
	for g := range out {
		var mine []*worker
		for i, wk := range workers {
			if cfg.group(i) == g {
				mine = append(mine, wk)
			}
		}
		c := cfg
		c.Clients = len(mine)
		c.Rate = cfg.Rate * float64(len(mine)) / float64(cfg.Clients)
		p, _ := collate(c, window, mine, perSecond{}, labels, backlog[g]) // a session's error is the whole run's
		out[g] = p.Result
	}
	return out
}

func latencyOf(h *hdrhistogram.Histogram) Latency {
	ms := func(us int64) float64 { return float64(us) / 1000 }
	return Latency{
		P50: ms(h.ValueAtQuantile(50)), P90: ms(h.ValueAtQuantile(90)),
		P99: ms(h.ValueAtQuantile(99)), P999: ms(h.ValueAtQuantile(99.9)),
		Max: ms(h.Max()), Mean: h.Mean() / 1000,
	}
}
