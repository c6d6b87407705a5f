// Package driverpeer is what the benches that set obsbench's load driver
// beside a peer tool share (driver-vs-pgbench beside pgbench,
// mariadb-driver beside sysbench): both tools run one workload's one
// statement with the same sessions, in turn for rounds in a seeded order,
// or at the same time against twin servers (-duet). It holds their command
// line, their rounds, their duet and the duet's report; each bench brings
// its server, its peer and its rounds' report.
package driverpeer

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
	"time"

	"github.com/obsbench/obsbench/bench/internal/sidebyside"
	"github.com/obsbench/obsbench/internal/dataset"
	"github.com/obsbench/obsbench/internal/driver"
	"github.com/obsbench/obsbench/internal/stats"
	"github.com/obsbench/obsbench/internal/workload"
)

// The tools of a round besides the peer.
const (
	Driver     = "obsbench"
	Goroutines = "obsbench-goroutines" // the driver with a goroutine per session (-goroutines)
)

// Config is a driver-vs-peer bench: what it is (Bench, Peer, Workload,
// set by the bench) and its command line (DefineFlags, Parse).
type Config struct {
	Bench    string // its directory under bench/, and its name in messages
	Peer     string // the peer tool, as the report names it
	Workload string // the workload whose one statement both tools run

	Rounds, Clients  int
	Procs            int // obsbench driver threads (event loops)
	Duration, Warmup time.Duration
	Out              string
	Seed             uint64
	Goroutines       bool   // each round also runs the driver with a goroutine per session
	Duet             bool   // both tools at once against twin servers (RunDuet)
	Command          string // how the bench was run, filled in by Main

	childDSN, cpuprofile string
}

// DefineFlags defines the flags every driver-vs-peer bench has, into c;
// durationHelp and clientsHelp are the help of -duration and -clients,
// which say how the peer takes them.
func (c *Config) DefineFlags(durationHelp, clientsHelp string) {
	flag.IntVar(&c.Rounds, "rounds", 5, "rounds; each runs both tools once, in a seeded random order")
	flag.DurationVar(&c.Duration, "duration", 10*time.Second, durationHelp)
	flag.DurationVar(&c.Warmup, "warmup", 2*time.Second, "unmeasured warm-up run before each measured run (whole seconds)")
	flag.IntVar(&c.Clients, "clients", 16, clientsHelp)
	flag.IntVar(&c.Procs, "driver-threads", 0, "OS threads of the obsbench driver, as obsbench run --driver-threads (0: its default for -clients, one per core, at most one per session)")
	flag.StringVar(&c.Out, "out", "bench/"+c.Bench+"/RESULT.md", "markdown report to write")
	flag.Uint64Var(&c.Seed, "seed", 0, "seed of the run order (default: from the clock)")
	flag.BoolVar(&c.Goroutines, "goroutines", false, "also run the obsbench driver with a goroutine per session (its mode before event loops) in each round")
	flag.BoolVar(&c.Duet, "duet", false, "run both tools at the same time, each against one of two twin servers held to equal CPU quotas, swapping twins phase by phase (-rounds pairs of phases; default -out RESULT-duet.md)")
	flag.StringVar(&c.childDSN, "child-dsn", "", "(internal) run as the driver of a duet against this server and print the measured run")
	flag.StringVar(&c.cpuprofile, "cpuprofile", "", "write a CPU profile of this process (the obsbench driver) to this file")
}

// Parse parses the command line, fills in the defaults that depend on
// other flags and checks it; a wrong command line ends the bench.
func (c *Config) Parse() {
	flag.Parse()
	if c.Duet && !sidebyside.FlagGiven("out") {
		c.Out = "bench/" + c.Bench + "/RESULT-duet.md"
	}
	if c.Procs == 0 {
		c.Procs = driver.DefaultProcs(c.Clients)
	}
	if err := c.check(); err != nil {
		c.Fail(err)
	}
}

func (c *Config) check() error {
	switch {
	case c.Rounds < 1 || c.Clients < 1 || c.Procs < 0:
		return errors.New("-rounds, -clients and -driver-threads must be at least 1 (-driver-threads 0: the default)")
	case c.Duration < time.Second || c.Duration%time.Second != 0:
		return fmt.Errorf("-duration %v: want whole seconds, at least 1s", c.Duration)
	case c.Warmup < 0 || c.Warmup%time.Second != 0:
		return fmt.Errorf("-warmup %v: want whole seconds", c.Warmup)
	case c.Duet && c.Goroutines:
		return errors.New("-duet compares two tools: not with -goroutines")
	case c.Duet && c.cpuprofile != "":
		return errors.New("-duet runs the obsbench driver in a child process: not with -cpuprofile")
	}
	return nil
}

// Fail prints err after the bench's name and exits 1.
func (c *Config) Fail(err error) { sidebyside.Fail(c.Bench, err) }

// Logf is the bench's progress line on standard error.
func (c *Config) Logf(format string, args ...any) { sidebyside.Logger(c.Bench)(format, args...) }

// Main runs the bench once Parse has read its command line: with
// -child-dsn, as the driver of a duet (RunDuet's child) against that server,
// through the sessions dial opens; else run, under a CPU profile when
// -cpuprofile names a file.
func (c *Config) Main(dial func(dsn string) (driver.Dialer, error), run func(ctx context.Context) error) {
	if c.childDSN != "" {
		if err := c.driveChild(context.Background(), dial); err != nil {
			c.Fail(err)
		}
		return
	}
	if c.cpuprofile != "" {
		f, err := os.Create(c.cpuprofile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			c.Fail(err)
		}
		defer pprof.StopCPUProfile()
	}
	c.Seed = sidebyside.Seed(c.Seed)
	c.Command = sidebyside.Command(c.Bench)
	sidebyside.Main(c.Bench, func(ctx context.Context) error {
		err := run(ctx)
		if err != nil {
			pprof.StopCPUProfile() // the exit on an error skips the deferred stop
		}
		return err
	})
}

// Statement is the workload both tools run, the dataset it runs on and
// its one statement (sidebyside.OneStatement), which the peer runs too.
func (c *Config) Statement(ctx context.Context) (workload.Meta, dataset.Dataset, string, error) {
	wl, ds, err := sidebyside.Workload(c.Workload)
	if err != nil {
		return wl, ds, "", err
	}
	sql, err := sidebyside.OneStatement(ctx, wl)
	return wl, ds, sql, err
}

// Tools are the tools of each round.
func (c *Config) Tools() []string {
	if c.Goroutines {
		return []string{Driver, Goroutines, c.Peer}
	}
	return []string{Driver, c.Peer}
}

// A Tool runs one of a round's tools for d and, when s is not nil (a
// measured run, not a warm-up), records the run in s. Each run opens and
// closes its own sessions.
type Tool func(ctx context.Context, d time.Duration, s *sidebyside.Sample) error

// Server is the server of the rounds, as a round measures it.
type Server interface {
	// WaitIdle waits until no session of the last run is left, so that
	// a run's server CPU is its own.
	WaitIdle(ctx context.Context) error
	// StartCPU starts measuring the server's CPU; stop returns its
	// seconds since.
	StartCPU() (stop func() (float64, error), err error)
}

// RunRounds runs c.Rounds rounds against srv, each running every tool
// (Tools) once, in the round's seeded order: the driver over wl through
// dial, and peer. It returns the measured runs.
func (c *Config) RunRounds(ctx context.Context, srv Server, wl workload.Meta, dial driver.Dialer, peer Tool) ([]sidebyside.Sample, error) {
	tools := map[string]Tool{Driver: c.driver(wl, dial, false), Goroutines: c.driver(wl, dial, true), c.Peer: peer}
	c.Logf("seed %d; %d rounds of 2 x (%v warm-up + %v measured)", c.Seed, c.Rounds, c.Warmup, c.Duration)
	var samples []sidebyside.Sample
	for round := 1; round <= c.Rounds; round++ {
		for pos, tool := range sidebyside.Order(c.Seed, round, c.Tools()...) {
			s := sidebyside.Sample{Tool: tool, Round: round, Position: pos + 1, Seconds: c.Duration.Seconds()}
			if err := c.measure(ctx, srv, tools[tool], &s); err != nil {
				return nil, fmt.Errorf("round %d, %s: %w", round, tool, err)
			}
			samples = append(samples, s)
			c.Logf("round %d/%d %-8s %9.0f stmt/s  client %5.2f µs/stmt  server %5.2f µs/stmt",
				round, c.Rounds, tool, s.Rate(), s.ClientMicros(), s.ServerMicros())
		}
	}
	return samples, nil
}

// measure runs tool's warm-up, then its measured run into s with the
// server's CPU over it. The CPU times cover the whole measured run,
// connecting and preparing included.
func (c *Config) measure(ctx context.Context, srv Server, tool Tool, s *sidebyside.Sample) error {
	if c.Warmup > 0 {
		if err := tool(ctx, c.Warmup, nil); err != nil {
			return fmt.Errorf("warm-up: %w", err)
		}
	}
	if err := srv.WaitIdle(ctx); err != nil {
		return err
	}
	stop, err := srv.StartCPU()
	if err != nil {
		return err
	}
	if err := tool(ctx, c.Duration, s); err != nil {
		stop()
		return err
	}
	werr := srv.WaitIdle(ctx)
	s.ServerCPU, err = stop()
	return errors.Join(werr, err)
}

// driver is the obsbench driver as a round's tool (sidebyside.RunDriver):
// its sessions on event loops as obsbench run does, or with goroutines a
// goroutine per session.
func (c *Config) driver(wl workload.Meta, dial driver.Dialer, goroutines bool) Tool {
	return func(ctx context.Context, d time.Duration, s *sidebyside.Sample) error {
		cfg := driver.Config{Clients: c.Clients, Duration: d, Procs: c.Procs, Goroutines: goroutines}
		return sidebyside.RunDriver(ctx, cfg, dial, wl, s)
	}
}

// Medians are each tool's medians of its rounds' statements/s, client CPU
// µs/statement and server CPU µs/statement (Figures).
func Medians(samples []sidebyside.Sample) map[string][3]float64 {
	med := map[string][3]float64{}
	for tool, cols := range Figures(samples) {
		med[tool] = [3]float64{stats.Median(cols[0]), stats.Median(cols[1]), stats.Median(cols[2])}
	}
	return med
}

// Figures are each tool's statements/s, client CPU µs/statement and
// server CPU µs/statement, a round each.
func Figures(samples []sidebyside.Sample) map[string][3][]float64 {
	figs := map[string][3][]float64{}
	for _, s := range samples {
		f := figs[s.Tool]
		f[0], f[1], f[2] = append(f[0], s.Rate()), append(f[1], s.ClientMicros()), append(f[2], s.ServerMicros())
		figs[s.Tool] = f
	}
	return figs
}

// Ratios are tool's medians over the peer's (Medians): statements/s,
// client CPU per statement and server CPU per statement.
func (c *Config) Ratios(med map[string][3]float64, tool string) [3]float64 {
	t, peer := med[tool], med[c.Peer]
	return [3]float64{t[0] / peer[0], t[1] / peer[1], t[2] / peer[2]}
}

// GoroutinesNote is the report's paragraph on the driver with a goroutine
// per session against the peer, from the medians (Medians); "" without
// -goroutines.
func (c *Config) GoroutinesNote(med map[string][3]float64) string {
	if !c.Goroutines {
		return ""
	}
	r := c.Ratios(med, Goroutines)
	return fmt.Sprintf("\nThe driver with a goroutine per session (`-goroutines`, obsbench's mode before its event loops): %.3fx %s's statements/s, %.3fx its client CPU per statement, %.3fx its server CPU per statement.\n",
		r[0], c.Peer, r[1], r[2])
}

// Publish ends a report with the note a smoke test gets (fewer than 3
// rounds, each a pair of phases in a duet), prints it and writes it to
// c.Out.
func (c *Config) Publish(report string) error {
	if c.Rounds < 3 {
		unit := "round(s)"
		if c.Duet {
			unit = "pair(s)"
		}
		report += fmt.Sprintf("\nOnly %d %s: a smoke test, not a measurement (use 3 or more).\n", c.Rounds, unit)
	}
	if err := sidebyside.Publish(c.Out, report); err != nil {
		return err
	}
	c.Logf("wrote %s", c.Out)
	return nil
}
