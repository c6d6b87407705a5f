package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/obsbench/obsbench/bench/internal/sidebyside"
	"github.com/obsbench/obsbench/internal/driver"
	"github.com/obsbench/obsbench/internal/engine/postgres"
	"github.com/obsbench/obsbench/internal/experiment"
	"github.com/obsbench/obsbench/internal/server"
	"github.com/obsbench/obsbench/internal/workload"
)

// In a duet (-duet) both tools run at the same time, each against one of
// two twin servers (a copy of the first, sidebyside.StartTwins), each twin
// and its tool held to the same CPU quota, and swap twins phase by phase:
// a phase's ratio of the tools' statements/s was measured in the same
// seconds, so the machine's drift cancels in it. The obsbench driver runs
// in a child process of this program (-child-dsn), so that it can be put in
// its twin's group.

// runChild is the child's whole life (sidebyside.DriveChild) against dsn.
func runChild(ctx context.Context, c config, dsn string) error {
	wl, err := workload.Lookup(workloadName)
	if err != nil {
		return err
	}
	srv := postgres.New(dsn, postgres.Options{})
	dial := func(ctx context.Context) (driver.Session, error) { return srv.Connect(ctx) }
	return sidebyside.DriveChild(ctx, wl, dial, c.clients, c.procs, c.warmup, c.duration)
}

// duetPhase is one phase: each tool's measured run and the twin the
// obsbench driver ran against.
type duetPhase struct {
	phase           int
	driverTwin      string
	driver, pgbench sample
}

// ratio is the phase's obsbench statements/s over pgbench's.
func (p duetPhase) ratio() float64 { return p.driver.Rate() / p.pgbench.Rate() }

// runDuet runs 2 x c.rounds phases.
func runDuet(ctx context.Context, c config, b *bench, tw *sidebyside.Twins[*server.Postgres]) ([]duetPhase, error) {
	var phases []duetPhase
	for phase := 1; phase <= 2*c.rounds; phase++ {
		p := duetPhase{phase: phase}
		p.driver.Tool, p.pgbench.Tool = toolDriver, toolPgbench
		p.driver.Seconds, p.pgbench.Seconds = c.duration.Seconds(), c.duration.Seconds()
		err := sidebyside.DuetPhase(phase, "pgbench", func(twin int) error {
			p.driverTwin = experiment.TwinNames[twin]
			var r sidebyside.ChildResult
			err := sidebyside.RunChild(ctx, tw.Groups[twin], &r, "-child-dsn", tw.Servers[twin].DSN(database), "-clients", strconv.Itoa(c.clients),
				"-driver-threads", strconv.Itoa(c.procs), "-warmup", c.warmup.String(), "-duration", c.duration.String())
			p.driver.Rated, p.driver.Executed, p.driver.ClientCPU = r.Rated, r.Executed, r.ClientCPU
			return err
		}, func(twin int) error {
			pg, group := tw.Servers[twin], tw.Groups[twin]
			if c.warmup > 0 {
				if err := b.runPgbench(ctx, pg, group, c.warmup, nil); err != nil {
					return err
				}
			}
			return b.runPgbench(ctx, pg, group, c.duration, &p.pgbench)
		})
		if err != nil {
			return nil, err
		}
		phases = append(phases, p)
		logf("phase %d/%d  obsbench on twin %s %9.0f stmt/s  pgbench %9.0f stmt/s  ratio %.3f",
			phase, 2*c.rounds, p.driverTwin, p.driver.Rate(), p.pgbench.Rate(), p.ratio())
	}
	return phases, nil
}

// writeDuetReport writes the duet's markdown report to c.out and prints it.
func writeDuetReport(c config, sql string, phases []duetPhase) error {
	var w strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&w, format+"\n", args...) }
	p("# obsbench driver vs pgbench, by duet\n")
	w.WriteString(sidebyside.Provenance(c.command))
	p("- server: managed PostgreSQL %s and a copy of it (pg_basebackup), each with its tool in a cgroup held to %.0f%% of the machine's CPUs", c.postgres, 100*sidebyside.TwinShare)
	p("- workload %s, %d sessions, prepared; obsbench driver threads: %d event loops; pgbench -j %d", workloadName, c.clients, c.procs, min(c.pgbenchThreads, c.clients))
	p("- each phase: both tools at once, each a %v warm-up run then a %v measured run with new sessions, against its twin; the obsbench driver's twin a, b, b, a, ...; %d pairs of phases", c.warmup, c.duration, c.rounds)
	p("- query: `%s`\n", sql)
	p("Each tool's statements/s and client CPU are counted as in the bench's other mode (README); the server's CPU is not split from its tool's in a twin's group, and is not reported.\n")
	p("## Phases\n")
	p("| phase | obsbench's twin | obsbench statements/s | pgbench statements/s | ratio | obsbench client CPU µs/stmt | pgbench client CPU µs/stmt |")
	p("|---:|---|---:|---:|---:|---:|---:|")
	var ratios, cpu []float64
	for _, ph := range phases {
		p("| %d | %s | %.0f | %.0f | %.3f | %.2f | %.2f |", ph.phase, ph.driverTwin, ph.driver.Rate(), ph.pgbench.Rate(), ph.ratio(), ph.driver.ClientMicros(), ph.pgbench.ClientMicros())
		ratios, cpu = append(ratios, ph.ratio()), append(cpu, ph.driver.ClientMicros()/ph.pgbench.ClientMicros())
	}
	pairs, cpuPairs := sidebyside.PairRatios(ratios), sidebyside.PairRatios(cpu)
	med, cv := sidebyside.Spread(pairs)
	cmed, ccv := sidebyside.Spread(cpuPairs)
	p("\n## Pairs (geometric mean of a phase on each twin)\n")
	p("| ratio | median of pairs | coefficient of variation over pairs | pairs |")
	p("|---|---:|---:|---:|")
	p("| obsbench statements/s ÷ pgbench statements/s | %.3f | %.1f%% | %d |", med, 100*cv, len(pairs))
	p("| obsbench client CPU/statement ÷ pgbench client CPU/statement | %.3f | %.1f%% | %d |", cmed, 100*ccv, len(cpuPairs))
	if c.rounds < 3 {
		p("\nOnly %d pair(s): a smoke test, not a measurement (use 3 or more).", c.rounds)
	}
	if err := sidebyside.Publish(c.out, w.String()); err != nil {
		return err
	}
	logf("wrote %s", c.out)
	return nil
}
