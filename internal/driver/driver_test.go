package driver_test

import (
	"context"
	"math"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/obsbench/obsbench/internal/dataset"
	"github.com/obsbench/obsbench/internal/driver"
	"github.com/obsbench/obsbench/internal/engine/enginetest"
	"github.com/obsbench/obsbench/internal/engine/postgres"
	"github.com/obsbench/obsbench/internal/engine/servertest"
	"github.com/obsbench/obsbench/internal/workload"
)

// The driver's per-session, per-second counts add up to its measured total,
// the window callbacks bracket the measured time, and every statement is
// counted in Executed.
func TestCountsAddUp(t *testing.T) {
	ctx := context.Background()
	pg := servertest.Postgres(t)
	dsn := pg.DSN("obsbench")
	if err := postgres.CreateDatabase(ctx, dsn); err != nil {
		t.Fatal(err)
	}
	s := postgres.New(dsn, postgres.Options{})
	wl, _ := workload.Lookup("credit-top1")
	ds, _ := dataset.Lookup(wl.Dataset)
	if err := s.Load(ctx, ds); err != nil {
		t.Fatal(err)
	}
	var opened, closed time.Time
	cfg := driver.Config{
		Clients: 3, Warmup: 500 * time.Millisecond, Duration: 2500 * time.Millisecond,
		Window: func(start bool) {
			if start {
				opened = time.Now()
			} else {
				closed = time.Now()
			}
		},
	}
	dial := func(ctx context.Context) (driver.Session, error) { return s.Connect(ctx) }
	began := time.Now()
	res, err := driver.Run(ctx, cfg, dial, wl.New())
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	checkCounts(t, res)
	if w := closed.Sub(opened); w < 2400*time.Millisecond || w > 2700*time.Millisecond {
		t.Errorf("window lasted %v; want about 2.5s", w)
	}
	if d := opened.Sub(began); d < 400*time.Millisecond {
		t.Errorf("window opened %v after start; want after the 500ms warm-up", d)
	}

	// Without a Window callback the run lasts just as long; a live
	// counter sees every statement executed.
	cfg.Window = nil
	cfg.Executed = new(atomic.Int64)
	began = time.Now()
	res, err = driver.Run(ctx, cfg, dial, wl.New())
	if err != nil {
		t.Fatalf("Run without Window: %v", err)
	}
	if d := time.Since(began); d < 3*time.Second {
		t.Errorf("Run without Window took %v; want at least warm-up + duration = 3s", d)
	}
	checkCounts(t, res)
	if n := cfg.Executed.Load(); n != res.Executed {
		t.Errorf("live counter = %d; want Executed = %d", n, res.Executed)
	}
}

func checkCounts(t *testing.T, res driver.Result) {
	t.Helper()
	if len(res.PerSecond) != 3 {
		t.Fatalf("PerSecond has %d sessions; want 3", len(res.PerSecond))
	}
	// Every session completes statements and every second holds some; a
	// session may complete none in a second on a machine busy enough to
	// keep its backend off the CPU that long.
	var sum int64
	perSecond := make([]int64, 3)
	for i, secs := range res.PerSecond {
		if len(secs) != 3 {
			t.Errorf("session %d has %d seconds; want 3 (2.5 s rounded up)", i, len(secs))
		}
		var own int64
		for j, n := range secs {
			if n < 0 {
				t.Errorf("session %d second %d completed %d statements", i, j, n)
			}
			own += n
			if j < len(perSecond) {
				perSecond[j] += n
			}
		}
		if own == 0 {
			t.Errorf("session %d completed no statement in the window", i)
		}
		sum += own
	}
	for j, n := range perSecond {
		if n == 0 {
			t.Errorf("second %d: no session completed a statement", j)
		}
	}
	if sum != res.Measured || res.Measured == 0 {
		t.Errorf("per-second counts sum to %d; Measured = %d", sum, res.Measured)
	}
	if res.Executed <= res.Measured {
		t.Errorf("Executed = %d; want more than Measured = %d (warm-up statements count too)", res.Executed, res.Measured)
	}
	if want := float64(res.Measured) / 2.5; res.Throughput != want {
		t.Errorf("Throughput = %v; want %v", res.Throughput, want)
	}
	if l := res.Latency; !(l.P50 > 0 && l.P50 <= l.P99 && l.P99 <= l.Max) {
		t.Errorf("Latency = %+v; want 0 < p50 <= p99 <= max", l)
	}
	if len(res.LatencyPerSecond) != 3 {
		t.Fatalf("LatencyPerSecond has %d seconds; want 3", len(res.LatencyPerSecond))
	}
	for i, l := range res.LatencyPerSecond {
		var n int64
		for _, row := range res.PerSecond {
			n += row[i]
		}
		if l.Count != n || !(l.P50 > 0 && l.P50 <= l.P90 && l.P90 <= l.P99 && l.P99 <= l.Max && l.Max <= res.Latency.Max*1.0625) {
			t.Errorf("second %d: latency %+v; want %d statements, 0 < p50 <= p90 <= p99 <= max, within the run's max %v", i, l, n, res.Latency.Max)
		}
	}
}

func TestInvalidConfig(t *testing.T) {
	for _, cfg := range []driver.Config{
		{Clients: 0, Duration: time.Second},
		{Clients: 1, Duration: 0},
		{Clients: 1, Duration: time.Second, Warmup: -time.Second},
	} {
		if _, err := driver.Run(context.Background(), cfg, nil, nil); err == nil {
			t.Errorf("Run(%+v) = nil error; want an error", cfg)
		}
	}
}

// divide runs SELECT 1/$1 with a divisor of 0 every other statement; with
// tolerate the failures are workload.StatementErrors.
type divide struct{ tolerate bool }

func (d divide) Worker(ctx context.Context, conn workload.Conn, _ int) (workload.Op, error) {
	stmt, err := conn.Prepare(ctx, "SELECT 1/$1::int")
	if err != nil {
		return nil, err
	}
	n := 0
	return func(ctx context.Context) error {
		n++
		err := stmt.Exec(ctx, n%2)
		if err != nil && d.tolerate {
			return &workload.StatementError{Err: err}
		}
		return err
	}, nil
}

// A statement error the workload tolerates is counted, sampled once per
// distinct message, and the sessions go on; any other error ends the run.
func TestStatementErrors(t *testing.T) {
	ctx := context.Background()
	pg := servertest.Postgres(t)
	s := postgres.New(pg.DSN("postgres"), postgres.Options{})
	dial := func(ctx context.Context) (driver.Session, error) { return s.Connect(ctx) }
	cfg := driver.Config{Clients: 2, Duration: time.Second}

	res, err := driver.Run(ctx, cfg, dial, divide{tolerate: true})
	if err != nil {
		t.Fatalf("Run with tolerated errors: %v", err)
	}
	if res.Errors == 0 || res.Errors < res.Executed/2-2 || res.Errors > res.Executed/2+2 {
		t.Errorf("Errors = %d of %d executed; want about half", res.Errors, res.Executed)
	}
	if len(res.ErrorSamples) != 1 || !strings.Contains(res.ErrorSamples[0], "division by zero") {
		t.Errorf("ErrorSamples = %q; want the one division-by-zero message", res.ErrorSamples)
	}

	if _, err := driver.Run(ctx, cfg, dial, divide{}); err == nil || !strings.Contains(err.Error(), "division by zero") {
		t.Errorf("Run with an untolerated error: err = %v; want division by zero", err)
	}
}

// fixedWork runs SELECT 1 n times per session, then says it is done.
type fixedWork struct{ n int }

func (f fixedWork) Worker(ctx context.Context, conn workload.Conn, _ int) (workload.Op, error) {
	stmt, err := conn.Prepare(ctx, "SELECT 1")
	if err != nil {
		return nil, err
	}
	left := f.n
	return func(ctx context.Context) error {
		if left == 0 {
			return workload.ErrDone
		}
		left--
		return stmt.Exec(ctx)
	}, nil
}

// When every session runs out of work the run ends early, and the window is
// as long as the work took: a fixed-work run (a replay of a capture once).
func TestFixedWorkEndsEarly(t *testing.T) {
	ctx := context.Background()
	pg := servertest.Postgres(t)
	s := postgres.New(pg.DSN("postgres"), postgres.Options{})
	dial := func(ctx context.Context) (driver.Session, error) { return s.Connect(ctx) }
	began := time.Now()
	res, err := driver.Run(ctx, driver.Config{Clients: 3, Duration: time.Minute}, dial, fixedWork{n: 2000})
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(began); d > 30*time.Second {
		t.Errorf("run took %v; want it to end when the 6,000 statements are done", d)
	}
	if res.Executed != 6000 || res.Measured != 6000 {
		t.Errorf("Executed = %d, Measured = %d; want 6000 each", res.Executed, res.Measured)
	}
	if res.Seconds <= 0 || res.Seconds >= 30 || len(res.PerSecond[0]) != int(math.Ceil(res.Seconds)) {
		t.Errorf("Seconds = %v with %d per-second counts; want the work's own time", res.Seconds, len(res.PerSecond[0]))
	}
	if _, err := driver.Run(ctx, driver.Config{Clients: 1, Warmup: 5 * time.Second, Duration: time.Minute}, dial, fixedWork{n: 10}); err == nil || !strings.Contains(err.Error(), "warm-up") {
		t.Errorf("work done within the warm-up: err = %v; want one that says so", err)
	}
}

// Latency is also kept per label of the window's seconds: statements that
// take 4 ms in the first second and 1 ms after it give a "slow" p50 of
// about 4 ms and a "fast" one of about 1 ms; an unlabelled second counts
// in the whole run's latency only. No server: the driver's own logic.
func TestLatencyByLabel(t *testing.T) {
	var opened atomic.Int64
	cfg := driver.Config{
		Clients: 2, Duration: 3 * time.Second,
		Labels: []string{"slow", "fast", ""},
		Window: func(start bool) {
			if start {
				opened.Store(time.Now().UnixNano())
			}
		},
	}
	dial := func(ctx context.Context) (driver.Session, error) { return nopSession{}, nil }
	res, err := driver.Run(context.Background(), cfg, dial, sleeper{opened: &opened})
	if err != nil {
		t.Fatal(err)
	}
	slow, fast := res.LatencyBy["slow"], res.LatencyBy["fast"]
	if len(res.LatencyBy) != 2 || slow.P50 < 3.9 || slow.P50 > 6 || fast.P50 < 0.9 || fast.P50 > 2.5 {
		t.Errorf("LatencyBy = %+v; want slow p50 about 4 ms, fast about 1 ms", res.LatencyBy)
	}
	if res.Latency.P50 >= slow.P50 {
		t.Errorf("whole run's p50 %.2f ms; want below the slow second's %.2f ms", res.Latency.P50, slow.P50)
	}
}

// sleeper's statements take 4 ms during the window's first second, 1 ms
// otherwise.
type sleeper struct{ opened *atomic.Int64 }

func (w sleeper) Worker(ctx context.Context, conn workload.Conn, session int) (workload.Op, error) {
	return func(ctx context.Context) error {
		d := time.Millisecond
		if o := w.opened.Load(); o > 0 && time.Since(time.Unix(0, o)) < 900*time.Millisecond {
			d = 4 * time.Millisecond
		}
		time.Sleep(d)
		return nil
	}, nil
}

type nopSession struct{}

func (nopSession) Prepare(ctx context.Context, sql string) (workload.Stmt, error) { return nil, nil }
func (nopSession) Close(ctx context.Context) error                                { return nil }

// A session inside a unit of work (a transaction that holds a lock the
// other sessions wait for) is run on past the window to its end: a
// session stopped inside it would keep the lock, and the others, waiting,
// would never finish their statement. Each statement's latency is kept
// apart, and the counts add up to the run's. No server: the driver's own
// logic.
func TestUnfinishedWorkRunsToItsEnd(t *testing.T) {
	lock := make(chan struct{}, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	dial := func(ctx context.Context) (driver.Session, error) { return nopSession{}, nil }
	res, err := driver.Run(ctx, driver.Config{Clients: 3, Duration: time.Second}, dial, lockStep{lock})
	if err != nil {
		t.Fatalf("Run: %v (a session stopped holding the lock?)", err)
	}
	if len(lock) != 0 {
		t.Error("the run ended with the lock held")
	}
	if len(res.Statements) != 2 || res.Statements[0].Statement != "take" || res.Statements[1].Statement != "release" {
		t.Fatalf("Statements = %+v; want take and release", res.Statements)
	}
	take, release := res.Statements[0], res.Statements[1]
	if take.Count+release.Count != res.Measured || take.Count == 0 || release.MeanMS < 0.9 {
		t.Errorf("take %+v + release %+v; want them to add up to %d measured, release about 1 ms", take, release, res.Measured)
	}
}

// lockStep's sessions take a lock in one statement and release it in the
// next, 1 ms later.
type lockStep struct{ lock chan struct{} }

func (lockStep) StatementNames() []string { return []string{"take", "release"} }

func (w lockStep) Worker(ctx context.Context, conn workload.Conn, session int) (workload.Op, error) {
	held := false
	return func(ctx context.Context) error {
		clk := workload.Clocked(ctx)
		if !held {
			select {
			case w.lock <- struct{}{}:
			case <-ctx.Done():
				return ctx.Err()
			}
			held, clk.Statement, clk.Unfinished = true, 0, true
			return nil
		}
		time.Sleep(time.Millisecond)
		<-w.lock
		held, clk.Statement = false, 1
		return nil
	}, nil
}

// busyThenIdle alternates a statement that keeps its backend busy with
// one that sleeps as long.
type busyThenIdle struct{}

func (busyThenIdle) StatementNames() []string { return []string{"busy", "idle"} }

func (busyThenIdle) Worker(ctx context.Context, conn workload.Conn, _ int) (workload.Op, error) {
	busy, err := conn.Prepare(ctx, "SELECT count(*) FROM generate_series(1, 3000000)")
	if err != nil {
		return nil, err
	}
	idle, err := conn.Prepare(ctx, "SELECT pg_sleep(0.1)")
	if err != nil {
		return nil, err
	}
	n := 0
	return func(ctx context.Context) error {
		if n == 6 {
			return workload.ErrDone
		}
		n++
		c := workload.Clocked(ctx)
		c.Statement = n % 2
		if n%2 == 0 {
			return busy.Exec(ctx)
		}
		return idle.Exec(ctx)
	}, nil
}

// With Executions, every statement is kept with the CPU its backend
// spent: nearly all of a busy statement's latency, little of a sleeping
// one's. A server obsbench does not manage has no CPU, and says why.
func TestExecutionsServerCPU(t *testing.T) {
	ctx := context.Background()
	pg := servertest.Postgres(t)
	managed := postgres.New(pg.DSN("postgres"), postgres.Options{Host: pg})
	dial := func(ctx context.Context) (driver.Session, error) { return managed.Connect(ctx) }
	res, err := driver.Run(ctx, driver.Config{Clients: 1, Duration: time.Minute, Executions: true}, dial, busyThenIdle{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Executions) != 6 || res.ExecutionsNote != "" {
		t.Fatalf("%d executions, note %q; want 6 and none", len(res.Executions), res.ExecutionsNote)
	}
	// The busy statement's CPU is its work, about 300 ms here, whatever
	// else the machine runs; its share of the latency is not (on a busy
	// machine it waits for a core).
	for _, e := range res.Executions {
		busy := e.ServerCPUUS >= 100_000 && e.ServerCPUUS <= e.LatencyUS+1000
		asleep := float64(e.ServerCPUUS) <= 0.3*float64(e.LatencyUS)
		if (e.Statement == 0 && !busy) || (e.Statement == 1 && !asleep) || e.ServerCPUUS < 0 {
			t.Errorf("statement %d: %d µs of server CPU in %d µs; want 100 ms or more, within its latency, busy, and little of it asleep", e.Statement, e.ServerCPUUS, e.LatencyUS)
		}
	}
	if s := res.Statements; len(s) != 2 || s[0].CPUCount != 3 || s[0].CPUMeanMS < 10*s[1].CPUMeanMS {
		t.Errorf("statements %+v; want the busy one's mean CPU far above the idle one's", s)
	}

	external := postgres.New(pg.DSN("postgres"), postgres.Options{})
	dial = func(ctx context.Context) (driver.Session, error) { return external.Connect(ctx) }
	res, err = driver.Run(ctx, driver.Config{Clients: 1, Duration: time.Minute, Executions: true}, dial, busyThenIdle{})
	if err != nil {
		t.Fatal(err)
	}
	// An external server running on this machine: its backend is found
	// to be a local process, and read as a managed one's.
	if len(res.Executions) != 6 || res.ExecutionsNote != "" {
		t.Errorf("external server on this machine: %d executions, note %q; want 6 and none", len(res.Executions), res.ExecutionsNote)
	}
	for _, e := range res.Executions {
		if e.Statement == 0 && e.ServerCPUUS < 100_000 {
			t.Errorf("external server on this machine: the busy statement's server CPU %d µs; want it read, 100 ms or more", e.ServerCPUUS)
		}
	}
}

// napper's session 0 sleeps nap (workload.Sleep) before each statement;
// the others run theirs back to back. Before each statement a session
// yields to Go's scheduler and is busy for a while, and counts the times
// another session was doing the same: on one event loop none can, with a
// goroutine each they do even on one processor.
type napper struct {
	nap      time.Duration
	running  *atomic.Int32
	overlaps *atomic.Int32
}

func (w napper) Worker(ctx context.Context, conn workload.Conn, session int) (workload.Op, error) {
	stmt, err := conn.Prepare(ctx, "SELECT 1")
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) error {
		if session == 0 {
			if err := workload.Sleep(ctx, time.Now().Add(w.nap)); err != nil {
				return err
			}
			workload.Started(ctx)
		}
		if w.running.Add(1) != 1 {
			w.overlaps.Add(1)
		}
		runtime.Gosched() // a session that could run beside this one would
		for end := time.Now().Add(20 * time.Microsecond); time.Now().Before(end); {
		}
		w.running.Add(-1)
		return stmt.Exec(ctx)
	}, nil
}

// PostgreSQL sessions run on event loops, one per driver thread: a loop's
// sessions one at a time, a session's sleep holding up none of the others,
// and the run ending at its window although a session sleeps past it.
func TestSessionsRunOnEventLoops(t *testing.T) {
	ctx := context.Background()
	pg := servertest.Postgres(t)
	s := postgres.New(pg.DSN("postgres"), postgres.Options{})
	const clients = 3
	w := napper{nap: 400 * time.Millisecond, running: new(atomic.Int32), overlaps: new(atomic.Int32)}
	dial := func(ctx context.Context) (driver.Session, error) { return s.Connect(ctx) }
	cfg := driver.Config{Clients: clients, Warmup: 200 * time.Millisecond, Duration: 2 * time.Second, Procs: 1}
	began := time.Now()
	res, err := driver.Run(ctx, cfg, dial, w)
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(began); took > cfg.Warmup+cfg.Duration+time.Second {
		t.Errorf("the run took %v: the sleeping session held it open past its window", took)
	}
	if n := w.overlaps.Load(); n > 0 {
		t.Errorf("one driver thread: %d times a session ran while another did, want none", n)
	}
	var sleeper, others int64
	for i, secs := range res.PerSecond {
		for _, n := range secs {
			if i == 0 {
				sleeper += n
			} else {
				others += n
			}
		}
	}
	if sleeper < 3 || sleeper > 6 {
		t.Errorf("the sleeping session ran %d statements in 2 s of 400 ms naps, want 4 or 5", sleeper)
	}
	if others < 100*sleeper {
		t.Errorf("the other sessions ran %d statements while the sleeper ran %d: its sleeps held them up", others, sleeper)
	}
}

// Work that ends before the window opens is refused with a hint, and
// work that ends at once with no warm-up ran inside the window, however
// late the driver looks (a busy machine can hold it up between its timer
// and its check): the runner's own logic, on the in-memory server, many
// times to meet that race.
func TestFixedWorkAndWarmup(t *testing.T) {
	ctx := context.Background()
	srv := enginetest.New(enginetest.Options{StatementCost: time.Microsecond})
	cfg := driver.Config{Clients: 2, Warmup: time.Second, Duration: time.Minute}
	if _, err := driver.Run(ctx, cfg, srv.Dial, fixedWork{n: 3}); err == nil || !strings.Contains(err.Error(), "shorten --warmup") {
		t.Errorf("work done within a 1s warm-up: err = %v; want the hint to shorten --warmup", err)
	}
	cfg.Warmup = 0
	for i := range 300 {
		res, err := driver.Run(ctx, cfg, srv.Dial, fixedWork{n: 3})
		if err != nil {
			t.Fatalf("run %d with no warm-up: %v", i, err)
		}
		if res.Executed != 6 || res.Measured != 6 {
			t.Fatalf("run %d: Executed = %d, Measured = %d; want 6 each", i, res.Executed, res.Measured)
		}
	}
}
