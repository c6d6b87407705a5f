package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"

	"github.com/obsbench/obsbench/bench/internal/sidebyside"
	"github.com/obsbench/obsbench/internal/driver"
	"github.com/obsbench/obsbench/internal/engine/postgres"
	"github.com/obsbench/obsbench/internal/experiment"
)

// In a duet (-duet) both tools run at the same time, each against one of
// two twin servers (a copy of the first, sidebyside.StartTwins), each twin
// and its tool held to the same CPU quota, and swap twins phase by phase:
// a phase's ratio of the tools' transactions/s was measured in the same
// seconds, so the machine's drift cancels in it. obsbench's side runs in a
// child process of this program (-child-dsn), so that it can be put in
// its twin's group.

// childResult is what obsbench's side prints: its measured run.
type childResult struct {
	TPS, ClientUS float64
}

// runChild is the child's whole life: a warm-up run and a measured run of
// obsbench's pgbench workload against dsn, the measured one printed as
// JSON.
func runChild(ctx context.Context, c config, dsn string) error {
	meta, perTxn, err := c.workload()
	if err != nil {
		return err
	}
	srv := postgres.New(dsn, postgres.Options{})
	dial := func(ctx context.Context) (driver.Session, error) { return srv.Connect(ctx) }
	if c.warmup > 0 {
		if _, err := driver.Run(ctx, driver.Config{Clients: c.clients, Duration: c.warmup, Procs: c.procs}, dial, meta.New()); err != nil {
			return fmt.Errorf("warm-up: %w", err)
		}
	}
	t0 := sidebyside.SelfCPU()
	res, err := driver.Run(ctx, driver.Config{Clients: c.clients, Duration: c.duration, Procs: c.procs}, dial, meta.New())
	cpu := sidebyside.SelfCPU() - t0
	if err != nil {
		return err
	}
	r := childResult{TPS: float64(res.Measured) / float64(perTxn) / c.duration.Seconds(),
		ClientUS: 1e6 * cpu.Seconds() * float64(perTxn) / float64(res.Executed)}
	return json.NewEncoder(os.Stdout).Encode(r)
}

// duetPhase is one phase: each tool's measured run and the twin obsbench
// ran against.
type duetPhase struct {
	phase     int
	obsTwin   string
	obs, peer sample
}

// runDuet runs 2 x c.rounds phases.
func runDuet(ctx context.Context, c config, tw *sidebyside.Twins[*postgres.Instance], pgbenchBin string) ([]duetPhase, error) {
	logf("%d pairs of phases of %v warm-up + %v measured, both tools at once", c.rounds, c.warmup, c.duration)
	var phases []duetPhase
	for phase := 1; phase <= 2*c.rounds; phase++ {
		p := duetPhase{phase: phase}
		err := sidebyside.DuetPhase(phase, "pgbench", func(twin int) error {
			p.obsTwin = experiment.TwinNames[twin]
			var r childResult
			err := sidebyside.RunChild(ctx, tw.Groups[twin], &r, "-child-dsn", tw.Servers[twin].DSN(database), "-clients", strconv.Itoa(c.clients),
				"-scale", strconv.Itoa(c.scale), "-script", c.script, "-query-mode", string(c.mode), "-seed", strconv.FormatUint(c.seed, 10),
				"-driver-threads", strconv.Itoa(c.procs), "-warmup", c.warmup.String(), "-duration", c.duration.String())
			p.obs = sample{tool: "obsbench", tps: r.TPS, clientUS: r.ClientUS}
			return err
		}, func(twin int) error {
			pg, group := tw.Servers[twin], tw.Groups[twin]
			args := c.pgbenchArgs(pg)
			if c.warmup > 0 {
				if _, err := runPgbench(ctx, pgbenchBin, pg.PassFile(), group, append(args, "-T", strconv.Itoa(int(c.warmup.Seconds())))); err != nil {
					return err
				}
			}
			var err error
			p.peer, err = runPgbench(ctx, pgbenchBin, pg.PassFile(), group, append(args, "-T", strconv.Itoa(int(c.duration.Seconds()))))
			return err
		})
		if err != nil {
			return nil, err
		}
		phases = append(phases, p)
		logf("phase %d/%d  obsbench on twin %s %8.0f tps  pgbench %8.0f tps  ratio %.3f", phase, 2*c.rounds, p.obsTwin, p.obs.tps, p.peer.tps, p.obs.tps/p.peer.tps)
	}
	return phases, nil
}

// writeDuetReport writes the duet's markdown report to c.out and prints it.
func writeDuetReport(c config, perTxn int, phases []duetPhase) error {
	w := sidebyside.NewReport("obsbench's pgbench workload vs pgbench, by duet", c.command)
	p := w.Line
	p("- server: managed PostgreSQL %s with pgbench -i's tables at scale %d, and a copy of it (pg_basebackup), each with its tool in a cgroup held to %.0f%% of the machine's CPUs", c.version, c.scale, 100*sidebyside.TwinShare)
	p("- built-in script %s (%d statements per transaction), %d clients each; obsbench: `--workload pgbench --script %s --query-mode %s`, %d driver thread(s); pgbench: `-n -M %s -b %s -j %d`", c.script, perTxn, c.clients, c.script, c.mode, c.procs, c.mode, c.script, c.pgbenchThreads)
	p("- each phase: both tools at once, each a %v warm-up run then a %v measured run with new sessions, against its twin; obsbench's twin a, b, b, a, ...; %d pairs of phases\n", c.warmup, c.duration, c.rounds)
	p("transactions/s and client CPU as in the bench's other mode (README); the server's CPU is not split from its tool's in a twin's group, and is not reported.\n")
	p("| phase | obsbench's twin | obsbench transactions/s | pgbench transactions/s | ratio | obsbench client CPU µs/txn | pgbench client CPU µs/txn |")
	p("|---:|---|---:|---:|---:|---:|---:|")
	var ratios, cpu []float64
	for _, ph := range phases {
		r := ph.obs.tps / ph.peer.tps
		p("| %d | %s | %.0f | %.0f | %.3f | %.1f | %.1f |", ph.phase, ph.obsTwin, ph.obs.tps, ph.peer.tps, r, ph.obs.clientUS, ph.peer.clientUS)
		ratios, cpu = append(ratios, r), append(cpu, ph.obs.clientUS/ph.peer.clientUS)
	}
	rate, cpuPairs := sidebyside.PairsOf(ratios), sidebyside.PairsOf(cpu)
	p("\n| ratio (geometric mean of a phase on each twin) | median of pairs | coefficient of variation over pairs | pairs |")
	p("|---|---:|---:|---:|")
	p("| obsbench transactions/s ÷ pgbench transactions/s | **%.3f** | %.1f%% | %d |", rate.Median, 100*rate.CV, rate.N)
	p("| obsbench client CPU/transaction ÷ pgbench's | %.3f | %.1f%% | %d |", cpuPairs.Median, 100*cpuPairs.CV, cpuPairs.N)
	if c.rounds < 3 {
		p("\nOnly %d pair(s): a smoke test, not a measurement (use 3 or more).", c.rounds)
	}
	return sidebyside.Publish(c.out, w.String())
}
