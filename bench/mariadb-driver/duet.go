package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/obsbench/obsbench/bench/internal/sidebyside"
	"github.com/obsbench/obsbench/internal/driver"
	"github.com/obsbench/obsbench/internal/engine/mariadb"
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
// its twin's group; it gets the server's password in its environment
// (passwordEnv), not on its command line.

const passwordEnv = "OBSBENCH_MARIADB_DRIVER_PASSWORD"

// runChild is the child's whole life (sidebyside.DriveChild) against dsn.
func runChild(ctx context.Context, c config, dsn string) error {
	wl, err := workload.Lookup(workloadName)
	if err != nil {
		return err
	}
	srv, err := mariadb.New(dsn, mariadb.Options{Password: os.Getenv(passwordEnv)})
	if err != nil {
		return err
	}
	dial := func(ctx context.Context) (driver.Session, error) { return srv.Connect(ctx) }
	return sidebyside.DriveChild(ctx, wl, dial, c.clients, c.procs, c.warmup, c.duration)
}

// duetPhase is one phase: each tool's measured run and the twin the
// obsbench driver ran against.
type duetPhase struct {
	phase            int
	driverTwin       string
	driver, sysbench sample
}

// ratio is the phase's obsbench statements/s over sysbench's.
func (p duetPhase) ratio() float64 { return p.driver.Rate() / p.sysbench.Rate() }

// runDuet runs 2 x c.rounds phases; files are each twin's sysbench files.
func runDuet(ctx context.Context, c *config, b *bench, tw *sidebyside.Twins[*server.MariaDB], files [2]sysbenchFiles) ([]duetPhase, error) {
	var phases []duetPhase
	for phase := 1; phase <= 2*c.rounds; phase++ {
		p := duetPhase{phase: phase}
		p.driver.Tool, p.sysbench.Tool = toolDriver, toolSysbench
		p.driver.Seconds, p.sysbench.Seconds = c.duration.Seconds(), c.duration.Seconds()
		err := sidebyside.DuetPhase(phase, "sysbench", func(twin int) error {
			p.driverTwin = experiment.TwinNames[twin]
			m := tw.Servers[twin]
			var r sidebyside.ChildResult
			err := sidebyside.RunChildEnv(ctx, tw.Groups[twin], []string{passwordEnv + "=" + m.Password()}, &r,
				"-child-dsn", m.DSN(database), "-clients", strconv.Itoa(c.clients),
				"-driver-threads", strconv.Itoa(c.procs), "-warmup", c.warmup.String(), "-duration", c.duration.String())
			p.driver.Rated, p.driver.Executed, p.driver.ClientCPU = r.Rated, r.Executed, r.ClientCPU
			return err
		}, func(twin int) error {
			group := tw.Groups[twin]
			if c.warmup > 0 {
				if err := b.runSysbenchIn(ctx, files[twin], group, c.warmup, nil); err != nil {
					return err
				}
			}
			return b.runSysbenchIn(ctx, files[twin], group, c.duration, &p.sysbench)
		})
		if err != nil {
			return nil, err
		}
		phases = append(phases, p)
		logf("phase %d/%d  obsbench on twin %s %9.0f stmt/s  sysbench %9.0f stmt/s  ratio %.3f",
			phase, 2*c.rounds, p.driverTwin, p.driver.Rate(), p.sysbench.Rate(), p.ratio())
	}
	return phases, nil
}

// writeDuetReport writes the duet's markdown report to c.out and prints it.
func writeDuetReport(c *config, sql string, phases []duetPhase) error {
	var w strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&w, format+"\n", args...) }
	p("# obsbench's MariaDB driver vs sysbench, by duet\n")
	w.WriteString(sidebyside.Provenance(c.command))
	p("- server: managed MariaDB %s and a copy of its data directory, each with its tool in a cgroup held to %.0f%% of the machine's CPUs", c.version, 100*sidebyside.TwinShare)
	p("- workload %s, %d sessions, server-side prepared statements; obsbench driver threads: %d event loops; sysbench %s --threads %d", workloadName, c.clients, c.procs, sysbenchVersion(), c.clients)
	p("- each phase: both tools at once, each a %v warm-up run then a %v measured run with new sessions, against its twin; the obsbench driver's twin a, b, b, a, ...; %d pairs of phases", c.warmup, c.duration, c.rounds)
	p("- query: `%s`\n", sql)
	p("Each tool's statements/s and client CPU are counted as in the bench's other mode (README); the server's CPU is not split from its tool's in a twin's group, and is not reported.\n")
	p("## Phases\n")
	p("| phase | obsbench's twin | obsbench statements/s | sysbench statements/s | ratio | obsbench client CPU µs/stmt | sysbench client CPU µs/stmt |")
	p("|---:|---|---:|---:|---:|---:|---:|")
	var ratios, cpu []float64
	for _, ph := range phases {
		p("| %d | %s | %.0f | %.0f | %.3f | %.2f | %.2f |", ph.phase, ph.driverTwin, ph.driver.Rate(), ph.sysbench.Rate(), ph.ratio(), ph.driver.ClientMicros(), ph.sysbench.ClientMicros())
		ratios, cpu = append(ratios, ph.ratio()), append(cpu, ph.driver.ClientMicros()/ph.sysbench.ClientMicros())
	}
	pairs, cpuPairs := sidebyside.PairRatios(ratios), sidebyside.PairRatios(cpu)
	med, cv := sidebyside.Spread(pairs)
	cmed, ccv := sidebyside.Spread(cpuPairs)
	p("\n## Pairs (geometric mean of a phase on each twin)\n")
	p("| ratio | median of pairs | coefficient of variation over pairs | pairs | goal |")
	p("|---|---:|---:|---:|---|")
	p("| obsbench statements/s ÷ sysbench statements/s | %.3f | %.1f%% | %d | ≥ %.2f: %s |", med, 100*cv, len(pairs), goalRate, verdict(med >= goalRate))
	p("| obsbench client CPU/statement ÷ sysbench client CPU/statement | %.3f | %.1f%% | %d | ≤ %.2f: %s |", cmed, 100*ccv, len(cpuPairs), goalCPU, verdict(cmed <= goalCPU))
	if c.rounds < 3 {
		p("\nOnly %d pair(s): a smoke test, not a measurement (use 3 or more).", c.rounds)
	}
	if err := sidebyside.Publish(c.out, w.String()); err != nil {
		return err
	}
	logf("wrote %s", c.out)
	return nil
}
