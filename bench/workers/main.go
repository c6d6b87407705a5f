// Command workers measures what spreading a run's sessions over worker
// processes changes and costs, side by side on one managed PostgreSQL:
// the same sessions run by this process's driver (as obsbench run without
// --workers), by 1 worker and by N workers (obsbench run --workers), in a
// seeded random order each round. It reports statements/s of each as a
// ratio to the in-process driver's, the workers' CPU, and the
// coordinator's own CPU while the workers run (the goal: under 1% of the
// machine).
//
//	go run ./bench/workers [-rounds 5] [-workers 3] [-duration 10s] [-clients 16]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/obsbench/obsbench/bench/internal/sidebyside"
	"github.com/obsbench/obsbench/internal/collect"
	"github.com/obsbench/obsbench/internal/driver"
	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/engine/postgres"
	"github.com/obsbench/obsbench/internal/fleet"
	"github.com/obsbench/obsbench/internal/spec"
	"github.com/obsbench/obsbench/internal/stats"
)

const workloadName = "credit-top1"

type config struct {
	rounds, workers, clients int
	duration, warmup         time.Duration
	seed                     uint64
	out, command             string
}

var logf = sidebyside.Logger("workers")

func main() {
	var c config
	flag.IntVar(&c.rounds, "rounds", 5, "rounds; each runs every arrangement once, in a seeded random order")
	flag.IntVar(&c.workers, "workers", 3, "worker processes of the many-workers arrangement")
	flag.IntVar(&c.clients, "clients", 16, "sessions of every arrangement")
	flag.DurationVar(&c.duration, "duration", 10*time.Second, "measured time of each run")
	flag.DurationVar(&c.warmup, "warmup", 2*time.Second, "warm-up of each run, not measured")
	flag.Uint64Var(&c.seed, "seed", 0, "seed of the run order (default: from the clock)")
	flag.StringVar(&c.out, "out", "bench/workers/RESULT.md", "markdown report to write")
	flag.Parse()
	c.seed = sidebyside.Seed(c.seed)
	c.command = sidebyside.Command("workers")
	sidebyside.Main("workers", func(ctx context.Context) error { return run(ctx, c) })
}

// sample is one measured run of one arrangement.
type sample struct {
	arrangement string
	round       int
	rate        float64 // statements/s, merged
	workerCPU   float64 // % of the machine, the processes that ran the sessions
	coordCPU    float64 // % of the machine, this process while workers ran
	clockErrMS  float64 // the largest clock error bound
}

func run(ctx context.Context, c config) error {
	meta, ds, err := sidebyside.Workload(workloadName)
	if err != nil {
		return err
	}
	bin, err := postgres.FindBin()
	if err != nil {
		return err
	}
	logf("building obsbench for the workers")
	tmp, exe, err := sidebyside.BuildObsbench(ctx, "workers")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	pg, err := postgres.Start(ctx, postgres.InstanceOptions{BinDir: bin, Log: logf})
	if err != nil {
		return err
	}
	defer pg.Stop()
	dsn := pg.DSN("obsbench")
	if err := postgres.CreateDatabase(ctx, dsn); err != nil {
		return err
	}
	srv := postgres.New(dsn, postgres.Options{})
	logf("loading dataset %s", ds.Name)
	if err := srv.Load(ctx, ds); err != nil {
		return err
	}
	version, err := srv.Version(ctx)
	if err != nil {
		return err
	}
	dcfg := driver.Config{Clients: c.clients, Warmup: c.warmup, Duration: c.duration, Procs: driver.DefaultProcs(c.clients)}
	many := fmt.Sprintf("%d workers", c.workers)
	arrangements := []string{"in process", "1 worker", many}
	var samples []sample
	for round := 1; round <= c.rounds; round++ {
		for _, a := range sidebyside.Order(c.seed, round, arrangements...) {
			s := sample{arrangement: a, round: round}
			switch a {
			case "in process":
				var self selfCPU
				in := dcfg
				in.Window = self.toggle
				res, err := driver.Run(ctx, in, func(ctx context.Context) (driver.Session, error) { return srv.Connect(ctx) }, meta.New())
				if err != nil {
					return err
				}
				s.rate = res.Throughput
				s.workerCPU = self.machinePct()
			default:
				n := 1
				if a == many {
					n = c.workers
				}
				if s, err = onWorkers(ctx, exe, tmp, dsn, n, dcfg, s); err != nil {
					return fmt.Errorf("round %d, %s: %w", round, a, err)
				}
			}
			samples = append(samples, s)
			logf("round %d/%d %-11s %9.0f stmt/s  sessions' processes %5.1f%%  coordinator %5.2f%% of the machine", round, c.rounds, a, s.rate, s.workerCPU, s.coordCPU)
		}
	}
	return report(c, version, arrangements, samples)
}

// onWorkers starts n local workers, runs once on them and stops them;
// the coordinator's CPU is this process's over the run, while it does
// nothing but coordinate.
func onWorkers(ctx context.Context, exe, tmp, dsn string, n int, dcfg driver.Config, s sample) (sample, error) {
	l, err := fleet.StartLocal(ctx, fleet.LocalConfig{
		Config:  fleet.Config{Workers: n, Spec: spec.Spec{Engine: "postgres", Workload: workloadName}, Address: engine.SessionAddress{DSN: dsn}},
		Command: []string{exe, "worker"}, LogDir: filepath.Join(tmp, "workers"), Register: time.Minute,
	})
	if err != nil {
		return s, err
	}
	defer l.Close()
	var self selfCPU
	dcfg.Window = self.toggle
	res, err := l.Run(ctx, dcfg)
	if err != nil {
		return s, err
	}
	s.rate = res.Throughput
	s.coordCPU = self.machinePct()
	for _, w := range res.Workers {
		s.workerCPU += w.CPU.Pct
		s.clockErrMS = max(s.clockErrMS, w.ClockErrorMS)
	}
	return s, nil
}

// selfCPU is this process's CPU over a driver's window (its Window).
type selfCPU struct {
	cpu0, cpu time.Duration
	opened    time.Time
	window    time.Duration
}

func (m *selfCPU) toggle(open bool) {
	if open {
		m.cpu0, m.opened = sidebyside.SelfCPU(), time.Now()
		return
	}
	m.cpu, m.window = sidebyside.SelfCPU()-m.cpu0, time.Since(m.opened)
}

// machinePct is the CPU as a share of all the machine's cores.
func (m *selfCPU) machinePct() float64 {
	return collect.MachinePct(m.cpu.Seconds(), m.window.Seconds())
}

// goalCoordinator is the bench's bound on the coordinator's own CPU.
const goalCoordinator = 1.0 // % of the machine

func report(c config, version string, arrangements []string, samples []sample) error {
	w := sidebyside.NewReport("Sessions in worker processes vs in obsbench's own process", c.command)
	p := w.Line
	p("- server: managed PostgreSQL %s; workload %s, %d sessions; the same server for every run", version, workloadName, c.clients)
	p("- each run: %v warm-up, %v measured; %d rounds, order seed %d", c.warmup, c.duration, c.rounds, c.seed)
	p("- workers: local processes (`obsbench worker`) over a Unix socket, started for each run (registration not timed)\n")
	p("## Rounds\n")
	p("| round | arrangement | statements/s | CPU of the sessions' processes, %% of machine | coordinator CPU, %% of machine | clock error bound ms |")
	p("|---:|---|---:|---:|---:|---:|")
	for _, s := range samples {
		p("| %d | %s | %.0f | %.1f | %.2f | %.3f |", s.round, s.arrangement, s.rate, s.workerCPU, s.coordCPU, s.clockErrMS)
	}
	med := map[string]float64{}
	p("\n## Medians\n")
	p("| arrangement | statements/s | ratio to in process | coordinator CPU, %% of machine (max) |")
	p("|---|---:|---:|---:|")
	worst := 0.0
	for _, a := range arrangements {
		var rate, coord []float64
		for _, s := range samples {
			if s.arrangement == a {
				rate, coord = append(rate, s.rate), append(coord, s.coordCPU)
			}
		}
		med[a] = stats.Median(rate)
		mx := 0.0
		for _, x := range coord {
			mx = max(mx, x)
		}
		col := "–"
		if a != "in process" {
			col = fmt.Sprintf("%.2f (%.2f)", stats.Median(coord), mx)
			worst = max(worst, mx)
		}
		p("| %s | %.0f | %.3f | %s |", a, med[a], med[a]/med["in process"], col)
	}
	verdict := "met"
	if worst >= goalCoordinator {
		verdict = "not met"
	}
	p("\nGoal: the coordinator's CPU under %.0f%% of the machine in every run: highest %.2f%%, %s.", goalCoordinator, worst, verdict)
	if c.rounds < 3 {
		p("\nOnly %d round(s): a smoke test, not a measurement (use 3 or more).", c.rounds)
	}
	return sidebyside.Publish(c.out, w.String())
}
