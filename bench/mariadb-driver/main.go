// Command mariadb-driver compares obsbench's MariaDB driver with sysbench:
// the same managed MariaDB, the same query (credit-top1's), the same number
// of sessions each with the statement prepared, run alternately in a seeded
// random order for several rounds. It writes a markdown report and prints
// it. See README.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/obsbench/obsbench/bench/internal/sidebyside"
	"github.com/obsbench/obsbench/internal/dataset"
	"github.com/obsbench/obsbench/internal/driver"
	"github.com/obsbench/obsbench/internal/engine/mariadb"
	"github.com/obsbench/obsbench/internal/server"
	"github.com/obsbench/obsbench/internal/stats"
	"github.com/obsbench/obsbench/internal/workload"
)

const (
	database     = "obsbench"
	workloadName = "credit-top1"
)

type config struct {
	rounds, clients  int
	procs            int // obsbench driver threads (event loops)
	goroutines       bool
	duet             bool // both tools at once against twin servers (duet.go)
	duration, warmup time.Duration
	out              string
	seed             uint64
	command, version string // filled in by run
}

func main() {
	var c config
	flag.IntVar(&c.rounds, "rounds", 5, "rounds; each runs both tools once, in a seeded random order")
	flag.DurationVar(&c.duration, "duration", 10*time.Second, "measured time of each run (whole seconds: sysbench --time)")
	flag.DurationVar(&c.warmup, "warmup", 2*time.Second, "unmeasured warm-up run before each measured run (whole seconds)")
	flag.IntVar(&c.clients, "clients", 16, "client sessions of both tools (sysbench --threads)")
	flag.IntVar(&c.procs, "driver-threads", 0, "OS threads of the obsbench driver, as obsbench run --driver-threads (0: its default for -clients, one per core, at most one per session)")
	flag.StringVar(&c.out, "out", "bench/mariadb-driver/RESULT.md", "markdown report to write")
	flag.Uint64Var(&c.seed, "seed", 0, "seed of the run order (default: from the clock)")
	flag.BoolVar(&c.goroutines, "goroutines", false, "also run the obsbench driver with a goroutine per session (its mode before event loops) in each round")
	flag.BoolVar(&c.duet, "duet", false, "run both tools at the same time, each against one of two twin servers held to equal CPU quotas, swapping twins phase by phase (-rounds pairs of phases; default -out RESULT-duet.md)")
	childDSN := flag.String("child-dsn", "", "(internal) run as the driver of a duet against this server and print the measured run")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of this process (the obsbench driver) to this file")
	flag.Parse()
	if c.duet && !sidebyside.FlagGiven("out") {
		c.out = "bench/mariadb-driver/RESULT-duet.md"
	}
	if c.procs == 0 {
		c.procs = driver.DefaultProcs(c.clients)
	}
	if *childDSN != "" {
		if err := runChild(context.Background(), c, *childDSN); err != nil {
			fail(err)
		}
		return
	}
	switch {
	case c.rounds < 1 || c.clients < 1 || c.procs < 0:
		fail(fmt.Errorf("-rounds, -clients and -driver-threads must be at least 1 (-driver-threads 0: the default)"))
	case c.duration < time.Second || c.duration%time.Second != 0:
		fail(fmt.Errorf("-duration %v: want whole seconds, at least 1s", c.duration))
	case c.warmup < 0 || c.warmup%time.Second != 0:
		fail(fmt.Errorf("-warmup %v: want whole seconds", c.warmup))
	case c.duet && c.goroutines:
		fail(fmt.Errorf("-duet compares two tools: not with -goroutines"))
	case c.duet && *cpuprofile != "":
		fail(fmt.Errorf("-duet runs the obsbench driver in a child process: not with -cpuprofile"))
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fail(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fail(err)
		}
		defer pprof.StopCPUProfile()
	}
	c.seed = sidebyside.Seed(c.seed)
	c.command = sidebyside.Command("mariadb-driver")
	sidebyside.Main("mariadb-driver", func(ctx context.Context) error {
		err := run(ctx, &c)
		if err != nil {
			pprof.StopCPUProfile()
		}
		return err
	})
}

func fail(err error) { sidebyside.Fail("mariadb-driver", err) }

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "mariadb-driver: "+format+"\n", args...)
}

// run sets up the server, runs the rounds and writes the report. The server
// is stopped on every return, a cancelled context (Ctrl-C) included.
func run(ctx context.Context, c *config) error {
	sysbench, err := findSysbench()
	if err != nil {
		return err
	}
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
	if strings.Contains(sql, "?") || strings.Contains(sql, "]==]") {
		return fmt.Errorf("workload %s: want a statement without parameters or ]==], got %q", meta.Name, sql)
	}
	m, err := server.StartMariaDB(ctx, server.MariaDBOptions{Log: logf})
	if err != nil {
		return err
	}
	defer func() {
		if err := m.Stop(); err != nil {
			logf("stopping the managed server: %v", err)
		}
	}()
	srv, err := mariadb.New(m.DSN(database), mariadb.Options{Password: m.Password()})
	if err != nil {
		return err
	}
	logf("loading dataset %s", ds.Name)
	if err := srv.Load(ctx, ds); err != nil {
		return err
	}
	if c.version, err = srv.Version(ctx); err != nil {
		return err
	}
	if c.duet {
		return runDuetBench(ctx, c, sql, m, sysbench)
	}
	pid, err := m.PID()
	if err != nil {
		return err
	}
	files, err := writeSysbenchFiles(sql, m)
	if err != nil {
		return err
	}
	defer os.RemoveAll(files.dir)
	control, err := openControl(m)
	if err != nil {
		return err
	}
	defer control.Close()
	b := &bench{
		srv: srv, m: m, wl: meta, pid: pid, clients: c.clients, procs: c.procs,
		warmup: c.warmup, duration: c.duration, sysbench: sysbench, files: files, control: control,
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
			logf("round %d/%d %-8s %9.0f stmt/s  client %5.2f µs/stmt  server %5.2f µs/stmt",
				round, c.rounds, tool, s.Rate(), s.ClientMicros(), s.ServerMicros())
		}
	}
	return writeReport(c, sql, samples)
}

// runDuetBench copies m into a twin, writes each twin's sysbench files and
// runs the duet.
func runDuetBench(ctx context.Context, c *config, sql string, m *server.MariaDB, sysbench string) error {
	tw, err := sidebyside.StartTwins(ctx, m, m.StartCopy, logf)
	if err != nil {
		return err
	}
	defer func() {
		if err := tw.Close(); err != nil {
			logf("%v", err)
		}
	}()
	var files [2]sysbenchFiles
	for i, twin := range tw.Servers {
		if files[i], err = writeSysbenchFiles(sql, twin); err != nil {
			return err
		}
		defer os.RemoveAll(files[i].dir)
	}
	b := &bench{clients: c.clients, procs: c.procs, sysbench: sysbench}
	logf("%d pairs of phases of %v warm-up + %v measured, both tools at once", c.rounds, c.warmup, c.duration)
	phases, err := runDuet(ctx, c, b, tw, files)
	if err != nil {
		return err
	}
	return writeDuetReport(c, sql, phases)
}

// The goals of issue 26 (the harness costs less than what it measures).
const (
	goalRate = 1.00 // obsbench statements/s ÷ sysbench statements/s, at least
	goalCPU  = 1.00 // obsbench client CPU/statement ÷ sysbench's, at most
)

// writeReport writes the markdown report to c.out and prints it.
func writeReport(c *config, sql string, samples []sample) error {
	var w strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&w, format+"\n", args...) }
	p("# obsbench's MariaDB driver vs sysbench\n")
	w.WriteString(sidebyside.Provenance(c.command))
	p("- server: managed MariaDB %s over its Unix socket; workload %s, %d sessions, server-side prepared statements", c.version, workloadName, c.clients)
	p("- obsbench driver threads: %d event loops (GOMAXPROCS one more); sysbench %s: --threads %d (one thread per session)", c.procs, sysbenchVersion(), c.clients)
	p("- each run: %v warm-up run, then a %v measured run with new sessions; %d rounds, order seed %d", c.warmup, c.duration, c.rounds, c.seed)
	p("- query: `%s`\n", sql)
	p("statements/s: obsbench `result.Measured` ÷ duration; sysbench's events (one statement each) ÷ `--time`.")
	p("client CPU µs/statement: the tool's CPU over the whole measured run (connecting and preparing included) ÷ every statement it ran.")
	p("server CPU µs/statement: mariadbd's CPU over the measured run ÷ the same statements.\n")
	p("## Rounds\n")
	p("| round | # | tool | statements/s | client CPU µs/stmt | server CPU µs/stmt |")
	p("|---:|---:|---|---:|---:|---:|")
	for _, s := range samples {
		p("| %d | %d | %s | %.0f | %.2f | %.2f |", s.Round, s.Position, s.Tool, s.Rate(), s.ClientMicros(), s.ServerMicros())
	}
	med := map[string][3]float64{}
	p("\n## Medians (min–max)\n")
	p("| tool | statements/s | client CPU µs/stmt | server CPU µs/stmt |")
	p("|---|---:|---:|---:|")
	for _, tool := range c.tools() {
		var cols [3][]float64
		for _, s := range samples {
			if s.Tool == tool {
				for i, v := range [3]float64{s.Rate(), s.ClientMicros(), s.ServerMicros()} {
					cols[i] = append(cols[i], v)
				}
			}
		}
		var cells [3]string
		for i, col := range cols {
			med[tool] = setAt(med[tool], i, stats.Median(col))
			format := "%.2f (%.2f–%.2f)"
			if i == 0 {
				format = "%.0f (%.0f–%.0f)"
			}
			cells[i] = fmt.Sprintf(format, stats.Median(col), minOf(col), maxOf(col))
		}
		p("| %s | %s | %s | %s |", tool, cells[0], cells[1], cells[2])
	}
	rateRatio := med[toolDriver][0] / med[toolSysbench][0]
	cpuRatio := med[toolDriver][1] / med[toolSysbench][1]
	srvRatio := med[toolDriver][2] / med[toolSysbench][2]
	p("\n## Goals (ratios of the medians)\n")
	p("| ratio | value | goal | result |")
	p("|---|---:|---|---|")
	p("| obsbench statements/s ÷ sysbench statements/s | %.3f | ≥ %.2f | %s |", rateRatio, goalRate, verdict(rateRatio >= goalRate))
	p("| obsbench client CPU/statement ÷ sysbench's | %.3f | ≤ %.2f | %s |", cpuRatio, goalCPU, verdict(cpuRatio <= goalCPU))
	p("| server CPU/statement under obsbench ÷ under sysbench | %.3f | – | – |", srvRatio)
	if c.goroutines {
		g := med[toolGoroutines]
		p("\nThe driver with a goroutine per session (`-goroutines`, obsbench's mode before its event loops): %.3fx sysbench's statements/s, %.3fx its client CPU per statement, %.3fx its server CPU per statement.",
			g[0]/med[toolSysbench][0], g[1]/med[toolSysbench][1], g[2]/med[toolSysbench][2])
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

func setAt(a [3]float64, i int, v float64) [3]float64 { a[i] = v; return a }

func minOf(xs []float64) float64 {
	m := xs[0]
	for _, x := range xs {
		m = min(m, x)
	}
	return m
}

func maxOf(xs []float64) float64 {
	m := xs[0]
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

// tools are the tools of each round.
func (c *config) tools() []string {
	if c.goroutines {
		return []string{toolDriver, toolGoroutines, toolSysbench}
	}
	return []string{toolDriver, toolSysbench}
}

func verdict(ok bool) string {
	if ok {
		return "PASS"
	}
	return "FAIL"
}
