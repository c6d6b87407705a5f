// Command open-model compares obsbench's fixed arrival rate (--rate) with
// pgbench -R on the same managed PostgreSQL, built-in script and rate:
// each round runs both tools, in a seeded random order, once as they are
// and once with the server stalled for a second in the middle of the
// measured window (a session holding a lock every transaction needs), and
// compares the latency each counts from its units' scheduled starts, and
// the rate each achieved. See README.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/obsbench/obsbench/bench/internal/sidebyside"
	"github.com/obsbench/obsbench/internal/collect"
	"github.com/obsbench/obsbench/internal/driver"
	"github.com/obsbench/obsbench/internal/pgbench"
	"github.com/obsbench/obsbench/internal/stats"
)

const database = "obsbench"

// precisePgbench is pgbench whose threads' timers have no slack, as
// obsbench's event loops' timers have none: its plain runs tell the
// tools' timer precision apart from how each counts latency.
const precisePgbench = "pgbench-1ns-slack"

// The goals: obsbench's p50 and p99 within a tenth of pgbench's, its
// achieved rate within a hundredth of the rate asked.
const (
	latencyGoal = 0.10
	rateGoal    = 0.01
)

type config struct {
	rounds, clients, scale, threads int
	rate                            float64
	script                          string
	warmup, duration, stall         time.Duration
	out, command, version           string
	seed                            uint64
}

// sample is one run of one tool: what it achieved and its latency from
// the schedule, in ms.
type sample struct {
	tool, kind      string
	round, position int
	achieved        float64
	p50, p99, lag   float64
	// serverUS and clientUS are the server's and the tool's CPU per
	// transaction over the whole run, connections and warm-up included.
	serverUS, clientUS float64
}

func main() {
	var c config
	flag.IntVar(&c.rounds, "rounds", 5, "rounds; each runs both tools, plain and stalled, in a seeded random order")
	flag.IntVar(&c.clients, "clients", 8, "client sessions of both tools")
	flag.IntVar(&c.threads, "threads", 2, "driver threads of both tools (pgbench -j, obsbench's event loops)")
	flag.IntVar(&c.scale, "scale", 4, "pgbench -i scale")
	flag.Float64Var(&c.rate, "rate", 1000, "transactions per second both tools are asked for (pgbench -R, obsbench --rate)")
	flag.StringVar(&c.script, "script", "tpcb-like", "built-in script both tools run (prepared mode)")
	flag.DurationVar(&c.warmup, "warmup", 2*time.Second, "unmeasured start of each run")
	flag.DurationVar(&c.duration, "duration", 10*time.Second, "measured time of each run (whole seconds)")
	flag.DurationVar(&c.stall, "stall", time.Second, "how long the stalled runs' lock is held, from the middle of the measured window")
	flag.StringVar(&c.out, "out", "bench/open-model/RESULT.md", "markdown report to write")
	flag.Uint64Var(&c.seed, "seed", 0, "seed of the run order and the schedules (default: from the clock)")
	flag.Parse()
	if c.rounds < 1 || c.clients < 1 || c.rate <= 0 || c.duration%time.Second != 0 || c.warmup%time.Second != 0 || c.duration < 2*c.stall {
		sidebyside.Fail("open-model", fmt.Errorf("want -rounds, -clients and -rate above 0, whole seconds of -warmup and -duration, -duration at least twice -stall"))
	}
	c.seed = sidebyside.Seed(c.seed)
	c.command = sidebyside.Command("open-model")
	sidebyside.Main("open-model", func(ctx context.Context) error { return run(ctx, c) })
}

var logf = sidebyside.Logger("open-model")

// run starts and loads the server, runs the rounds and writes the report;
// the server is stopped on every return, Ctrl-C included.
func run(ctx context.Context, c config) error {
	script, err := pgbench.Builtin(c.script)
	if err != nil {
		return err
	}
	meta, err := pgbench.Meta(pgbench.Options{Scripts: []pgbench.Weighted{{Script: script, Weight: 1}}, Seed: c.seed, Mode: pgbench.Prepared}).
		WithParams(map[string]int{"scale": c.scale})
	if err != nil {
		return err
	}
	pg, bin, stop, err := sidebyside.StartPostgres(ctx, database, nil, logf)
	if err != nil {
		return err
	}
	defer stop()
	srv, version, pmPID, err := sidebyside.LoadPgbench(ctx, pg, database, c.scale, meta, logf)
	if err != nil {
		return err
	}
	c.version = version
	tools := map[string]func(run int) (sample, error){
		"obsbench": func(run int) (sample, error) {
			dial := func(ctx context.Context) (driver.Session, error) { return srv.Connect(ctx) }
			cpu0 := sidebyside.SelfCPU()
			res, err := driver.Run(ctx, driver.Config{Clients: c.clients, Warmup: c.warmup, Duration: c.duration, Procs: c.threads,
				Rate: c.rate, RateSeed: int64(c.seed) + int64(run)}, dial, meta.New())
			if err != nil {
				return sample{}, err
			}
			r := res.Rate
			return sample{achieved: r.Achieved, p50: r.Latency.P50, p99: r.Latency.P99, lag: r.Lag.Mean,
				clientUS: perTxn(c, sidebyside.SelfCPU()-cpu0)}, nil
		},
		"pgbench":      func(int) (sample, error) { return runPgbench(ctx, c, pg, bin, false) },
		precisePgbench: func(int) (sample, error) { return runPgbench(ctx, c, pg, bin, true) },
	}
	logf("seed %d; %d rounds of 2 tools x plain and stalled x (%v + %v) at %g tps", c.seed, c.rounds, c.warmup, c.duration, c.rate)
	var samples []sample
	for round := 1; round <= c.rounds; round++ {
		for pos, run := range sidebyside.Order(c.seed, round, "obsbench plain", "obsbench stalled", "pgbench plain", "pgbench stalled", precisePgbench+" plain") {
			var tool, kind string
			fmt.Sscan(run, &tool, &kind)
			if err := sidebyside.WaitPostgresIdle(ctx, pmPID, database); err != nil {
				return err
			}
			// Each run a schedule of its own, as pgbench draws one.
			s, err := withServerCPU(ctx, c, pmPID, func() (sample, error) {
				return withStall(ctx, c, pg.DSN(database), kind == "stalled", func() (sample, error) { return tools[tool](4*round + pos) })
			})
			if err != nil {
				return fmt.Errorf("round %d, %s: %w", round, run, err)
			}
			s.tool, s.kind, s.round, s.position = tool, kind, round, pos+1
			samples = append(samples, s)
			logf("round %d/%d %-8s %-7s %7.1f tps  p50 %7.3f ms  p99 %8.3f ms  lag %6.3f ms  server %5.1f µs/txn  client %5.1f µs/txn", round, c.rounds, tool, kind, s.achieved, s.p50, s.p99, s.lag, s.serverUS, s.clientUS)
		}
	}
	return writeReport(c, samples)
}

// withStall runs measure; stalled, a session takes an exclusive lock on
// pgbench_branches, which every tpcb-like transaction updates, in the
// middle of the measured window and holds it for c.stall. Both tools
// connect in well under the warm-up, so the middle is where the clock
// says from measure's start.
func withStall(ctx context.Context, c config, dsn string, stalled bool, measure func() (sample, error)) (sample, error) {
	if !stalled {
		return measure()
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return sample{}, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	held := make(chan error, 1)
	start := time.Now()
	go func() {
		at := start.Add(c.warmup + c.duration/2)
		time.Sleep(time.Until(at))
		held <- holdLock(ctx, conn, c.stall)
	}()
	s, err := measure()
	if herr := <-held; err == nil && herr != nil {
		err = fmt.Errorf("the stall's lock: %w", herr)
	}
	return s, err
}

// withServerCPU runs measure and adds the server's CPU per transaction
// over it: the postmaster's process tree, and what it reaped.
func withServerCPU(ctx context.Context, c config, pmPID int, measure func() (sample, error)) (sample, error) {
	sampler, err := collect.StartSampler(pmPID)
	if err != nil {
		return sample{}, err
	}
	s, err := measure()
	werr := sidebyside.WaitPostgresIdle(ctx, pmPID, database)
	u, serr := sampler.Stop()
	if err = errors.Join(err, werr, serr); err != nil {
		return sample{}, err
	}
	if u.Server != nil {
		s.serverUS = perTxn(c, time.Duration(u.Server.Seconds*float64(time.Second)))
	}
	return s, nil
}

// perTxn is cpu per transaction asked of a whole run, warm-up included.
func perTxn(c config, cpu time.Duration) float64 {
	return 1e6 * cpu.Seconds() / (c.rate * (c.warmup + c.duration).Seconds())
}

func holdLock(ctx context.Context, conn *pgx.Conn, d time.Duration) error {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, "LOCK TABLE pgbench_branches IN ACCESS EXCLUSIVE MODE"); err != nil {
		tx.Rollback(ctx)
		return err
	}
	time.Sleep(d)
	return tx.Commit(ctx)
}

func writeReport(c config, samples []sample) error {
	w := sidebyside.NewReport("obsbench --rate vs pgbench -R", c.command)
	p := w.Line
	p("- server: managed PostgreSQL %s; pgbench -i's tables at scale %d; built-in script %s, prepared mode", c.version, c.scale, c.script)
	p("- both tools: %d clients on %d threads, %g transactions/s asked (Poisson schedule), %v warm-up then %v measured; %d rounds, order seed %d", c.clients, c.threads, c.rate, c.warmup, c.duration, c.rounds, c.seed)
	p("- stalled: a session holds an exclusive lock on pgbench_branches for %v from the middle of the measured window\n", c.stall)
	p("latency: from each transaction's scheduled start to its end, over the transactions that ended in the measured window (pgbench: its per-transaction log, `-l`); lag: the mean delay of a transaction's start behind its schedule; tps: those transactions ÷ the window.\n")
	p("server and client CPU: µs per transaction asked over the whole run (connections and warm-up included); the server's is the postmaster's process tree and what it reaped, the client's the tool's own process.\n")
	p("| round | # | tool | run | tps | p50 ms | p99 ms | lag ms | server µs/txn | client µs/txn |")
	p("|---:|---:|---|---|---:|---:|---:|---:|---:|---:|")
	for _, s := range samples {
		p("| %d | %d | %s | %s | %.1f | %.3f | %.3f | %.3f | %.1f | %.1f |", s.round, s.position, s.tool, s.kind, s.achieved, s.p50, s.p99, s.lag, s.serverUS, s.clientUS)
	}
	// Each run's arrivals are Poisson: a window's count spreads by its
	// square root, so the rate held is read over every run of a tool.
	pass := true
	p("\n| tool | transactions in all windows | asked | achieved ÷ asked | Poisson SE |")
	p("|---|---:|---:|---:|---:|")
	for _, tool := range []string{"obsbench", "pgbench", precisePgbench} {
		var n float64
		runs := 0
		for _, s := range samples {
			if s.tool == tool {
				n, runs = n+s.achieved*c.duration.Seconds(), runs+1
			}
		}
		asked := c.rate * c.duration.Seconds() * float64(runs)
		held := n / asked
		if tool == "obsbench" {
			pass = pass && math.Abs(held-1) <= rateGoal
		}
		p("| %s | %.0f | %.0f | %.4f | %.4f |", tool, n, asked, held, 1/math.Sqrt(asked))
	}
	rateOK := pass
	p("\n| run | peer | obsbench tps | peer tps | ratio | obsbench p50 | peer p50 | ratio | obsbench p99 | peer p99 | ratio |")
	p("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	within := map[string]bool{}
	for _, cmp := range []struct{ kind, peer string }{{"plain", "pgbench"}, {"plain", precisePgbench}, {"stalled", "pgbench"}} {
		med := func(tool string, f func(sample) float64) float64 {
			var xs []float64
			for _, s := range samples {
				if s.tool == tool && s.kind == cmp.kind {
					xs = append(xs, f(s))
				}
			}
			return stats.Median(xs)
		}
		var cells []string
		ok := true
		for i, f := range []func(sample) float64{func(s sample) float64 { return s.achieved }, func(s sample) float64 { return s.p50 }, func(s sample) float64 { return s.p99 }} {
			o, g := med("obsbench", f), med(cmp.peer, f)
			cells = append(cells, fmt.Sprintf("%.3f | %.3f | %.3f", o, g, o/g))
			ok = ok && (i == 0 || ratioWithin(o, g, latencyGoal))
		}
		within[cmp.kind+" "+cmp.peer] = ok
		p("| %s | %s | %s | %s | %s |", cmp.kind, cmp.peer, cells[0], cells[1], cells[2])
	}
	p("\n%s: pgbench with its threads' timer slack set to 1 ns (`/proc/self/timerslack_ns` before exec). By default Linux may wake a thread's ppoll(2), which pgbench -R sleeps in until a transaction's scheduled start, up to 50 µs late; obsbench's event loops sleep on a timerfd(2), which has no slack. The difference is in each transaction's lag, so in its latency from the schedule.", precisePgbench)
	p("\n**Goals**: obsbench's transactions over all its windows within %.0f%% of the rate asked; its p50 and p99 within %.0f%% of pgbench's (medians of the rounds):", 100*rateGoal, 100*latencyGoal)
	p("- against pgbench as it runs by default, plain and stalled: **%s**", sidebyside.Verdict(rateOK && within["plain pgbench"] && within["stalled pgbench"]))
	p("- against pgbench at obsbench's timer precision (%s) plain, and pgbench stalled: **%s**", precisePgbench, sidebyside.Verdict(rateOK && within["plain "+precisePgbench] && within["stalled pgbench"]))
	if c.rounds < 3 {
		p("\nOnly %d round(s): a smoke test, not a measurement (use 3 or more).", c.rounds)
	}
	return sidebyside.Publish(c.out, w.String())
}

// ratioWithin says whether a is within share of b.
func ratioWithin(a, b, share float64) bool {
	return b > 0 && a/b >= 1-share && a/b <= 1+share
}
