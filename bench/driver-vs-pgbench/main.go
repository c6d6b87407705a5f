// Command driver-vs-pgbench compares obsbench's load driver with pgbench:
// the same managed PostgreSQL, the same query, the same number of prepared
// sessions, run alternately in a seeded random order for several rounds. It
// writes a markdown report and prints it. See README.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/obsbench/obsbench/bench/internal/sidebyside"
	"github.com/obsbench/obsbench/internal/dataset"
	"github.com/obsbench/obsbench/internal/driver"
	"github.com/obsbench/obsbench/internal/engine/postgres"
	"github.com/obsbench/obsbench/internal/stats"
	"github.com/obsbench/obsbench/internal/workload"
)

const (
	database     = "obsbench"
	workloadName = "credit-top1"
)

type config struct {
	rounds, clients   int
	procs             int // obsbench driver threads (event loops)
	pgbenchThreads    int // pgbench -j
	duration, warmup  time.Duration
	out               string
	seed              uint64
	goroutines        bool
	duet              bool   // both tools at once against twin servers (duet.go)
	command, postgres string // filled in by run
}

func main() {
	var c config
	flag.IntVar(&c.rounds, "rounds", 5, "rounds; each runs both tools once, in a seeded random order")
	flag.DurationVar(&c.duration, "duration", 10*time.Second, "measured time of each run (whole seconds: pgbench -T)")
	flag.DurationVar(&c.warmup, "warmup", 2*time.Second, "unmeasured warm-up run before each measured run (whole seconds)")
	flag.IntVar(&c.clients, "clients", 16, "client sessions of both tools")
	flag.IntVar(&c.procs, "driver-threads", 0, "OS threads of the obsbench driver, as obsbench run --driver-threads (0: its default for -clients, one per core, at most one per session)")
	flag.IntVar(&c.pgbenchThreads, "pgbench-threads", min(2, runtime.NumCPU()), "pgbench -j (at most -clients)")
	flag.StringVar(&c.out, "out", "bench/driver-vs-pgbench/RESULT.md", "markdown report to write")
	flag.Uint64Var(&c.seed, "seed", 0, "seed of the run order (default: from the clock)")
	flag.BoolVar(&c.goroutines, "goroutines", false, "also run the obsbench driver with a goroutine per session (its mode before event loops) in each round")
	flag.BoolVar(&c.duet, "duet", false, "run both tools at the same time, each against one of two twin servers held to equal CPU quotas, swapping twins phase by phase (-rounds pairs of phases; default -out RESULT-duet.md)")
	childDSN := flag.String("child-dsn", "", "(internal) run as the driver of a duet against this server and print the measured run")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of this process (the obsbench driver) to this file")
	flag.Parse()
	if c.duet && !sidebyside.FlagGiven("out") {
		c.out = "bench/driver-vs-pgbench/RESULT-duet.md"
	}
	if c.procs == 0 {
		c.procs = driver.DefaultProcs(c.clients)
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		defer pprof.StopCPUProfile()
	}
	switch {
	case c.rounds < 1 || c.clients < 1 || c.procs < 0 || c.pgbenchThreads < 1:
		fail(fmt.Errorf("-rounds, -clients, -driver-threads and -pgbench-threads must be at least 1 (-driver-threads 0: the default)"))
	case c.duration < time.Second || c.duration%time.Second != 0:
		fail(fmt.Errorf("-duration %v: want whole seconds, at least 1s", c.duration))
	case c.warmup < 0 || c.warmup%time.Second != 0:
		fail(fmt.Errorf("-warmup %v: want whole seconds", c.warmup))
	}
	if *childDSN != "" {
		if err := runChild(context.Background(), c, *childDSN); err != nil {
			fail(err)
		}
		return
	}
	switch {
	case c.duet && c.goroutines:
		fail(fmt.Errorf("-duet compares two tools: not with -goroutines"))
	case c.duet && *cpuprofile != "":
		fail(fmt.Errorf("-duet runs the obsbench driver in a child process: not with -cpuprofile"))
	}
	c.seed = sidebyside.Seed(c.seed)
	c.command = sidebyside.Command("driver-vs-pgbench")
	sidebyside.Main("driver-vs-pgbench", func(ctx context.Context) error { return run(ctx, c) })
}

func fail(err error) { sidebyside.Fail("driver-vs-pgbench", err) }

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "driver-vs-pgbench: "+format+"\n", args...)
}

// run sets up the server, runs the rounds and writes the report. The server
// is stopped on every return, a cancelled context (Ctrl-C) included.
func run(ctx context.Context, c config) error {
	meta, err := workload.Lookup(workloadName)
	if err != nil {
		return err
	}
	ds, err := dataset.Lookup(meta.Dataset)
	if err != nil {
		return err
	}
	sql, err := sidebyside.OneStatement(ctx, meta)
	if err != nil {
		return err
	}
	if strings.Contains(sql, "$1") {
		return fmt.Errorf("workload %s: want a statement without parameters, got %q", meta.Name, sql)
	}
	pg, bin, stop, err := sidebyside.StartPostgres(ctx, database, nil, logf)
	if err != nil {
		return err
	}
	defer stop()
	dsn := pg.DSN(database)
	srv := postgres.New(dsn, postgres.Options{Restart: pg.Restart})
	logf("loading dataset %s", ds.Name)
	if err := srv.Load(ctx, ds); err != nil {
		return err
	}
	if c.postgres, err = srv.Version(ctx); err != nil {
		return err
	}
	script, err := writeScript(sql)
	if err != nil {
		return err
	}
	defer os.Remove(script)
	pmPID, err := pg.PID()
	if err != nil {
		return err
	}
	b := &bench{
		srv: srv, wl: meta, clients: c.clients, procs: c.procs, warmup: c.warmup, duration: c.duration,
		pgbenchThreads: min(c.pgbenchThreads, c.clients), pgbench: filepath.Join(bin, "pgbench"), script: script, pg: pg, pmPID: pmPID,
	}
	if c.duet {
		tw, err := sidebyside.StartTwins(ctx, pg, pg.StartCopy, logf)
		if err != nil {
			return err
		}
		defer func() {
			if err := tw.Close(); err != nil {
				logf("%v", err)
			}
		}()
		logf("%d pairs of phases of %v warm-up + %v measured, both tools at once", c.rounds, c.warmup, c.duration)
		phases, err := runDuet(ctx, c, b, tw)
		if err != nil {
			return err
		}
		return writeDuetReport(c, sql, phases)
	}
	logf("seed %d; %d rounds of 2 x (%v warm-up + %v measured)", c.seed, c.rounds, c.warmup, c.duration)

	var samples []sample
	for round := 1; round <= c.rounds; round++ {
		for pos, tool := range sidebyside.Order(c.seed, round, c.tools()...) {
			s, err := b.measure(ctx, tool)
			if err != nil {
				return fmt.Errorf("round %d, %s: %w", round, tool, err)
			}
			s.Round, s.Position = round, pos+1
			samples = append(samples, s)
			logf("round %d/%d %-8s %9.0f stmt/s  client %5.1f µs/stmt  server %5.1f µs/stmt",
				round, c.rounds, tool, s.Rate(), s.ClientMicros(), s.ServerMicros())
		}
	}
	return writeReport(c, sql, samples)
}

// The goals of issue 26 (the harness costs less than what it measures).
const (
	goalRate   = 1.00 // obsbench statements/s ÷ pgbench statements/s, at least
	goalCPU    = 1.00 // obsbench CPU/statement ÷ pgbench CPU/statement, at most
	goalServer = 0.02 // |server CPU/statement under obsbench ÷ under pgbench - 1|, at most
)

// writeReport writes the markdown report to c.out and prints it.
func writeReport(c config, sql string, samples []sample) error {
	var w strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&w, format+"\n", args...) }
	p("# obsbench driver vs pgbench\n")
	w.WriteString(sidebyside.Provenance(c.command))
	p("- server: managed PostgreSQL %s; workload %s, %d sessions, prepared", c.postgres, workloadName, c.clients)
	p("- obsbench driver threads: %d event loops (GOMAXPROCS one more); pgbench -j %d", c.procs, min(c.pgbenchThreads, c.clients))
	p("- each run: %v warm-up run, then a %v measured run with new sessions; %d rounds, order seed %d", c.warmup, c.duration, c.rounds, c.seed)
	p("- query: `%s`\n", sql)
	p("statements/s: obsbench `result.Measured` ÷ duration; pgbench transactions processed ÷ `-T`.")
	p("CPU µs/statement: CPU of the whole measured run ÷ every statement it ran (obsbench `result.Executed`).\n")
	p("## Rounds\n")
	p("| round | # | tool | statements/s | client CPU s | client CPU µs/stmt | server CPU µs/stmt | pgbench tps |")
	p("|---:|---:|---|---:|---:|---:|---:|---:|")
	for _, s := range samples {
		tps := "–"
		if s.Tool == toolPgbench {
			tps = fmt.Sprintf("%.0f", s.tps)
		}
		p("| %d | %d | %s | %.0f | %.2f | %.2f | %.2f | %s |",
			s.Round, s.Position, s.Tool, s.Rate(), s.ClientCPU, s.ClientMicros(), s.ServerMicros(), tps)
	}
	med := map[string][3]float64{}
	p("\n## Medians\n")
	p("| tool | statements/s | client CPU µs/stmt | server CPU µs/stmt |")
	p("|---|---:|---:|---:|")
	for _, tool := range c.tools() {
		var rate, cpu, srv []float64
		for _, s := range samples {
			if s.Tool == tool {
				rate, cpu, srv = append(rate, s.Rate()), append(cpu, s.ClientMicros()), append(srv, s.ServerMicros())
			}
		}
		med[tool] = [3]float64{stats.Median(rate), stats.Median(cpu), stats.Median(srv)}
		p("| %s | %.0f | %.2f | %.2f |", tool, med[tool][0], med[tool][1], med[tool][2])
	}
	rateRatio := med[toolDriver][0] / med[toolPgbench][0]
	cpuRatio := med[toolDriver][1] / med[toolPgbench][1]
	srvRatio := med[toolDriver][2] / med[toolPgbench][2]
	p("\n## Goals (ratios of the medians)\n")
	p("| ratio | value | goal | result |")
	p("|---|---:|---|---|")
	p("| obsbench statements/s ÷ pgbench statements/s | %.3f | ≥ %.2f | %s |", rateRatio, goalRate, verdict(rateRatio >= goalRate))
	p("| obsbench CPU/statement ÷ pgbench CPU/statement | %.3f | ≤ %.2f | %s |", cpuRatio, goalCPU, verdict(cpuRatio <= goalCPU))
	p("| server CPU/statement under obsbench ÷ under pgbench | %.3f | %.2f ± %.2f | %s |", srvRatio, 1.0, goalServer, verdict(math.Abs(srvRatio-1) <= goalServer))
	if c.goroutines {
		g := med[toolGoroutines]
		p("\nThe driver with a goroutine per session (`-goroutines`, obsbench's mode before its event loops): %.3fx pgbench's statements/s, %.3fx its client CPU per statement, %.3fx its server CPU per statement.",
			g[0]/med[toolPgbench][0], g[1]/med[toolPgbench][1], g[2]/med[toolPgbench][2])
	}
	if c.rounds < 3 {
		p("\nOnly %d round(s): a smoke test, not a measurement (use 3 or more).", c.rounds)
	}
	if err := sidebyside.Publish(c.out, w.String()); err != nil {
		return err
	}
	logf("wrote %s", c.out)
	return nil
}

// tools are the tools of each round.
func (c config) tools() []string {
	if c.goroutines {
		return []string{toolDriver, toolGoroutines, toolPgbench}
	}
	return []string{toolDriver, toolPgbench}
}

func verdict(ok bool) string {
	if ok {
		return "PASS"
	}
	return "FAIL"
}
