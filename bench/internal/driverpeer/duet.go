package driverpeer

import (
	"context"
	"fmt"
	"strconv"

	"github.com/obsbench/obsbench/bench/internal/sidebyside"
	"github.com/obsbench/obsbench/internal/cgroup"
	"github.com/obsbench/obsbench/internal/driver"
	"github.com/obsbench/obsbench/internal/experiment"
	"github.com/obsbench/obsbench/internal/workload"
)

// In a duet (-duet) both tools run at the same time, each against one of
// two twin servers (a copy of the first, sidebyside.StartTwins), each twin
// and its tool held to the same CPU quota, and swap twins phase by phase:
// a phase's ratio of the tools' statements/s was measured in the same
// seconds, so the machine's drift cancels in it. The obsbench driver runs
// in a child process of the bench (-child-dsn), so that it can be put in
// its twin's group.

// driveChild is the child's whole life (sidebyside.DriveChild) against
// c.childDSN.
func (c *Config) driveChild(ctx context.Context, dial func(dsn string) (driver.Dialer, error)) error {
	wl, err := workload.Lookup(c.Workload)
	if err != nil {
		return err
	}
	d, err := dial(c.childDSN)
	if err != nil {
		return err
	}
	return sidebyside.DriveChild(ctx, wl, d, c.Clients, c.Procs, c.Warmup, c.Duration)
}

// Phase is one phase of a duet: each tool's measured run and the twin the
// obsbench driver ran against.
type Phase struct {
	N            int
	DriverTwin   string
	Driver, Peer sidebyside.Sample
}

// Ratio is the phase's obsbench statements/s over the peer's.
func (p Phase) Ratio() float64 { return p.Driver.Rate() / p.Peer.Rate() }

// RunDuet runs 2 x c.Rounds phases on twins in groups: the driver's child
// against the twin child names (its DSN, and what the child's environment
// adds: a password, which a command line would show to every account),
// and peer against the other.
func (c *Config) RunDuet(ctx context.Context, groups [2]*cgroup.Group, child func(twin int) (dsn string, env []string), peer func(twin int) Tool) ([]Phase, error) {
	c.Logf("%d pairs of phases of %v warm-up + %v measured, both tools at once", c.Rounds, c.Warmup, c.Duration)
	var phases []Phase
	for n := 1; n <= 2*c.Rounds; n++ {
		p := Phase{N: n}
		p.Driver = sidebyside.Sample{Tool: Driver, Seconds: c.Duration.Seconds()}
		p.Peer = sidebyside.Sample{Tool: c.Peer, Seconds: c.Duration.Seconds()}
		err := sidebyside.DuetPhase(n, c.Peer, func(twin int) error {
			p.DriverTwin = experiment.TwinNames[twin]
			dsn, env := child(twin)
			var r sidebyside.ChildResult
			err := sidebyside.RunChildEnv(ctx, groups[twin], env, &r, "-child-dsn", dsn, "-clients", strconv.Itoa(c.Clients),
				"-driver-threads", strconv.Itoa(c.Procs), "-warmup", c.Warmup.String(), "-duration", c.Duration.String())
			p.Driver.Rated, p.Driver.Executed, p.Driver.ClientCPU = r.Rated, r.Executed, r.ClientCPU
			return err
		}, func(twin int) error {
			run := peer(twin)
			if c.Warmup > 0 {
				if err := run(ctx, c.Warmup, nil); err != nil {
					return err
				}
			}
			return run(ctx, c.Duration, &p.Peer)
		})
		if err != nil {
			return nil, err
		}
		phases = append(phases, p)
		c.Logf("phase %d/%d  obsbench on twin %s %9.0f stmt/s  %s %9.0f stmt/s  ratio %.3f",
			n, 2*c.Rounds, p.DriverTwin, p.Driver.Rate(), c.Peer, p.Peer.Rate(), p.Ratio())
	}
	return phases, nil
}

// DuetReport is what a duet's report says beyond what every duet's does.
type DuetReport struct {
	Title  string
	Server string // the "- server:" line: the twins
	Setup  string // the line on the workload and each tool's settings
	Query  string
	Goals  *Goals // nil: the pairs are not held to goals
}

// Goals are what a bench wants of the driver against its peer.
type Goals struct {
	Rate float64 // obsbench statements/s ÷ the peer's, at least
	CPU  float64 // obsbench client CPU/statement ÷ the peer's, at most
}

// WriteDuetReport writes the duet's markdown report to c.Out and prints it.
func (c *Config) WriteDuetReport(r DuetReport, phases []Phase) error {
	w := sidebyside.NewReport(r.Title, c.Command)
	p := w.Line
	p("- server: %s", r.Server)
	p("- %s", r.Setup)
	p("- each phase: both tools at once, each a %v warm-up run then a %v measured run with new sessions, against its twin; the obsbench driver's twin a, b, b, a, ...; %d pairs of phases", c.Warmup, c.Duration, c.Rounds)
	p("- query: `%s`\n", r.Query)
	p("Each tool's statements/s and client CPU are counted as in the bench's other mode (README); the server's CPU is not split from its tool's in a twin's group, and is not reported.\n")
	p("## Phases\n")
	p("| phase | obsbench's twin | obsbench statements/s | %[1]s statements/s | ratio | obsbench client CPU µs/stmt | %[1]s client CPU µs/stmt |", c.Peer)
	p("|---:|---|---:|---:|---:|---:|---:|")
	var ratios, cpu []float64
	for _, ph := range phases {
		p("| %d | %s | %.0f | %.0f | %.3f | %.2f | %.2f |", ph.N, ph.DriverTwin, ph.Driver.Rate(), ph.Peer.Rate(), ph.Ratio(), ph.Driver.ClientMicros(), ph.Peer.ClientMicros())
		ratios, cpu = append(ratios, ph.Ratio()), append(cpu, ph.Driver.ClientMicros()/ph.Peer.ClientMicros())
	}
	rate, cpuPairs := sidebyside.PairsOf(ratios), sidebyside.PairsOf(cpu)
	var goal, rule, rateGoal, cpuGoal string
	if g := r.Goals; g != nil {
		goal, rule = " goal |", "---|"
		rateGoal = fmt.Sprintf(" ≥ %.2f: %s |", g.Rate, sidebyside.Verdict(rate.Median >= g.Rate))
		cpuGoal = fmt.Sprintf(" ≤ %.2f: %s |", g.CPU, sidebyside.Verdict(cpuPairs.Median <= g.CPU))
	}
	p("\n## Pairs (geometric mean of a phase on each twin)\n")
	p("| ratio | median of pairs | coefficient of variation over pairs | pairs |%s", goal)
	p("|---|---:|---:|---:|%s", rule)
	p("| obsbench statements/s ÷ %s statements/s | %.3f | %.1f%% | %d |%s", c.Peer, rate.Median, 100*rate.CV, rate.N, rateGoal)
	p("| obsbench client CPU/statement ÷ %s client CPU/statement | %.3f | %.1f%% | %d |%s", c.Peer, cpuPairs.Median, 100*cpuPairs.CV, cpuPairs.N, cpuGoal)
	return c.Publish(w.String())
}
