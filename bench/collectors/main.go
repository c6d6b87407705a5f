// Command collectors measures what obsbench's wait sampler costs the
// workload it watches, one variant of the sampler at a time, each by
// obsbench's own method for a collector (obsbench run --measure-collectors:
// an alternation run that pauses and resumes the sampler in 2–4 s phases,
// beside an A/A arm), on a managed PostgreSQL that each run starts afresh;
// with -duet, by obsbench run --method duet instead: the sampler on in
// one twin server and off in the other, at the same time, swapped phase by
// phase.
// The variants separate the sampler's parts: its query of
// pg_stat_activity alone (--kernel-waits=false) and with the /proc look-up
// of sessions that report no wait.
//
//	go run ./bench/collectors [-variants 10ms,10ms-no-kernel,100ms] [-alt-rounds 3] [-alt-duration 60s] [-seed 11]
//	go run ./bench/collectors -duet [-duet-rounds 16] [-duet-duration 8s] [-variants 10ms] [-seed 11]
//
// It writes RESULT.md and, beside it, each variant's text output and
// summary.json.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/obsbench/obsbench/bench/internal/sidebyside"
	"github.com/obsbench/obsbench/internal/experiment"
	"github.com/obsbench/obsbench/internal/result"
)

type config struct {
	variants    []string
	altRounds   int
	altDuration time.Duration
	duet        bool
	duetRounds  int
	duetPhase   time.Duration
	seed        uint64
	dir         string
	command     string
}

// variant is one way of running the sampler, as obsbench run flags.
type variant struct {
	name, what string
	flags      []string
}

var variants = map[string]variant{
	"10ms":           {"10ms", "every 10 ms, taken by the server in batches of 10: pg_stat_activity, then /proc for sessions that report no wait", []string{"--waits", "10ms"}},
	"10ms-no-kernel": {"10ms-no-kernel", "every 10 ms, in batches of 10: pg_stat_activity only", []string{"--waits", "10ms", "--kernel-waits=false"}},
	"100ms":          {"100ms", "every 100 ms, one query a sample: pg_stat_activity, then /proc", []string{"--waits", "100ms"}},
}

var logf = sidebyside.Logger("collectors")

func main() {
	var c config
	list := flag.String("variants", "10ms,10ms-no-kernel,100ms", "variants of the sampler to measure, in this order: 10ms, 10ms-no-kernel, 100ms")
	flag.IntVar(&c.altRounds, "alt-rounds", 3, "alternation runs per arm (obsbench run --alt-rounds)")
	flag.DurationVar(&c.altDuration, "alt-duration", time.Minute, "length of each alternation run")
	flag.BoolVar(&c.duet, "duet", false, "measure by obsbench run --method duet (twin servers, the sampler in one) instead of alternation")
	flag.IntVar(&c.duetRounds, "duet-rounds", 16, "with -duet: phases per arm (obsbench run --rounds; even)")
	flag.DurationVar(&c.duetPhase, "duet-duration", 8*time.Second, "with -duet: measured length of each phase (obsbench run --duration)")
	flag.Uint64Var(&c.seed, "seed", 11, "seed of each experiment's phases (the same for every variant)")
	flag.StringVar(&c.dir, "dir", "bench/collectors", "where RESULT.md and the outputs go")
	flag.Parse()
	for _, v := range strings.Split(*list, ",") {
		if _, ok := variants[v]; !ok {
			logf("-variants: %q: want 10ms, 10ms-no-kernel or 100ms", v)
			os.Exit(2)
		}
		c.variants = append(c.variants, v)
	}
	if c.duet && (c.duetRounds < 2 || c.duetRounds%2 != 0) {
		logf("-duet-rounds %d: want an even number, at least 2", c.duetRounds)
		os.Exit(2)
	}
	c.command = sidebyside.Command("collectors")
	sidebyside.Main("collectors", func(ctx context.Context) error { return run(ctx, c) })
}

// measured is one variant's collector arm and A/A arm.
type measured struct {
	variant
	args          []string
	sampler, aa   result.ConditionSummary
	serverVersion string
}

func run(ctx context.Context, c config) error {
	logf("building obsbench")
	tmp, exe, err := sidebyside.BuildObsbench(ctx, "collectors")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return err
	}
	var ms []measured
	for _, name := range c.variants {
		v := variants[name]
		out := filepath.Join(tmp, name)
		args := append(c.methodArgs(), v.flags...)
		logf("%s: obsbench %s", name, strings.Join(args, " "))
		text, err := sidebyside.RunObsbench(ctx, exe, append(args, "--out", out)...)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		s, err := result.ReadSummary(filepath.Join(out, "summary.json"))
		if err != nil {
			return err
		}
		m := measured{variant: v, args: args, serverVersion: s.Server}
		for _, cs := range s.Conditions {
			switch cs.Name {
			case experiment.CollectorArm:
				m.sampler = cs
			case "baseline A/A":
				m.aa = cs
			}
		}
		if m.sampler.Overhead == nil || m.aa.Overhead == nil {
			return fmt.Errorf("%s: summary.json has no %q or A/A overhead", name, experiment.CollectorArm)
		}
		if err := os.WriteFile(filepath.Join(c.dir, "output-"+name+".txt"), []byte(text), 0o644); err != nil {
			return err
		}
		b, err := os.ReadFile(filepath.Join(out, "summary.json"))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(c.dir, "summary-"+name+".json"), b, 0o644); err != nil {
			return err
		}
		ms = append(ms, m)
		logf("%s: %s", name, interval(m.sampler.Overhead.Pct, m.sampler.Overhead.CILow, m.sampler.Overhead.CIHigh))
	}
	return report(c, ms)
}

// methodArgs are the obsbench run arguments of every variant but its
// sampler's flags.
func (c config) methodArgs() []string {
	args := []string{"run", "--observers", "baseline", "--measure-collectors", "--seed", fmt.Sprint(c.seed)}
	if c.duet {
		return append(args, "--method", "duet", "--closed-loop", "--rounds", fmt.Sprint(c.duetRounds), "--duration", c.duetPhase.String())
	}
	return append(args, "--method", "alternation", "--alt-duration", c.altDuration.String(), "--alt-rounds", fmt.Sprint(c.altRounds))
}

// what says how each variant was measured.
func (c config) what() string {
	if c.duet {
		return fmt.Sprintf("`obsbench %s`: twin servers, each with its load held to an equal CPU quota; the sampler in one twin and not the other, swapped phase by phase, %d phases of %v per arm", strings.Join(c.methodArgs(), " "), c.duetRounds, c.duetPhase)
	}
	return fmt.Sprintf("`obsbench %s`, %d runs of %v per arm (the same phases for every variant)", strings.Join(c.methodArgs(), " "), c.altRounds, c.altDuration)
}

func interval(pct, lo, hi float64) string { return fmt.Sprintf("%.1f [%.1f, %.1f]", pct, lo, hi) }

// The bench's goal for a collector: at most 0.5% of throughput, its
// interval containing 0 and no wider than ±1.5.
const goalPct, goalHalfWidth = 0.5, 1.5

func goal(o *result.OverheadSummary) string {
	switch {
	case o.Pct <= goalPct && o.CILow <= 0 && o.CIHigh >= 0 && o.CIHigh-o.Pct <= goalHalfWidth && o.Pct-o.CILow <= goalHalfWidth:
		return "met"
	case o.CILow > goalPct:
		return "not met"
	}
	return "not shown"
}

func report(c config, ms []measured) error {
	version := ""
	if len(ms) > 0 {
		version = ms[0].serverVersion
	}
	w := sidebyside.NewReport("What obsbench's wait sampler costs", c.command)
	p := w.Line
	p("- server: managed PostgreSQL %s, restarted for every run; workload credit-top1, 16 sessions", version)
	p("- each variant: %s, with the variant's flags", c.what())
	if c.duet {
		p("- ratio: the sampler's throughput overhead %% with its 95%% interval, from pairs of phases of the sampling twin against the other in the same seconds; the goal: ≤ %.1f%%, the interval containing 0 and within ±%.1f\n", goalPct, goalHalfWidth)
	} else {
		p("- ratio: the sampler's throughput overhead %% with its 95%% interval, from alternation phases with the sampler resumed against the paused phases on both sides; the goal: ≤ %.1f%%, the interval containing 0 and within ±%.1f\n", goalPct, goalHalfWidth)
	}
	p("| variant | what it does | throughput overhead %% [95%% CI] | goal | server CPU/stmt Δ%% [CI] | sampler's backend, %% of machine | A/A overhead %% [CI] | A/A server CPU/stmt Δ%% [CI] |")
	p("|---|---|---:|---|---:|---:|---:|---:|")
	for _, m := range ms {
		o, a := m.sampler.Overhead, m.aa.Overhead
		p("| %s | %s | **%s** | %s | %s | %s | %s | %s |", m.name, m.what, interval(o.Pct, o.CILow, o.CIHigh), goal(o),
			change(m.sampler.CPUChange), samplerCPU(m.sampler), interval(a.Pct, a.CILow, a.CIHigh), change(m.aa.CPUChange))
	}
	p("\nEach variant's text output and summary.json are beside this file (`output-VARIANT.txt`, `summary-VARIANT.json`).")
	p("What the figures mean, and what was tried: `bench/collectors/README.md`.")
	if !c.duet && c.altRounds < 3 {
		p("\nOnly %d run(s) per arm: a smoke test, not a measurement (use 3 or more).", c.altRounds)
	}
	return sidebyside.Publish(filepath.Join(c.dir, "RESULT.md"), w.String())
}

func change(c *result.ChangeSummary) string {
	if c == nil {
		return "–"
	}
	return fmt.Sprintf("%+.1f [%+.1f, %+.1f]", c.Pct, c.CILow, c.CIHigh)
}

func samplerCPU(cs result.ConditionSummary) string {
	if cs.Waits == nil || cs.Waits.SamplerCPUPct == nil {
		return "–"
	}
	return fmt.Sprintf("%.2f", *cs.Waits.SamplerCPUPct)
}
