// Command mix-phases measures how far the server CPU of the same queries
// moves between alternation phases of the decision-support mix, the
// noise that bounds the targets study's intervals, and whether a speed
// probe running beside the server sees the same movement.
//
// It runs obsbench's A/A alternation on dss-mix (8 sessions, nothing
// switched, phases of 10 to 20 s) on a managed PostgreSQL while a probe
// thread times two fixed loops every 20 ms. From the executions it
// reports each phase's factor (the median over the queries of the query's
// mean server CPU per execution in the phase over its mean in the whole
// run), the probe's loops per phase and their correlation with the
// factor, the spread of the costliest queries' server CPU per execution
// (their parameters vary the work), and the per-pair noise of the
// stratified comparison obsbench makes (each "on" phase against the phases
// beside it, CPU-weighted) with the pairs that noise needs for an
// interval of ±5 points, alone and over study 3's 19 comparisons.
//
//	go run ./bench/mix-phases [-alt-duration 240s] [-warmup 2s] [-seed 7] [-dir bench/mix-phases]
//
// It writes RESULT.md and, beside it, obsbench's text output.
package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	moremath "github.com/aclements/go-moremath/stats"

	"github.com/obsbench/obsbench/bench/internal/sidebyside"
	"github.com/obsbench/obsbench/internal/analysis"
	"github.com/obsbench/obsbench/internal/result"
	"github.com/obsbench/obsbench/internal/stats"
)

var logf = sidebyside.Logger("mix-phases")

type config struct {
	altDuration time.Duration
	warmup      time.Duration
	seed        uint64
	dir         string
	command     string
}

func main() {
	var c config
	flag.DurationVar(&c.altDuration, "alt-duration", 240*time.Second, "length of the A/A alternation run")
	flag.DurationVar(&c.warmup, "warmup", 2*time.Second, "obsbench's warm-up before the alternation window (its default: 2s)")
	flag.Uint64Var(&c.seed, "seed", 7, "seed of the run (phases and the mix's draws)")
	flag.StringVar(&c.dir, "dir", "bench/mix-phases", "where RESULT.md and the output go")
	flag.Parse()
	c.command = sidebyside.Command("mix-phases")
	sidebyside.Main("mix-phases", func(ctx context.Context) error { return run(ctx, c) })
}

func run(ctx context.Context, c config) error {
	logf("building obsbench")
	tmp, exe, err := sidebyside.BuildObsbench(ctx, "mix-phases")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	out := filepath.Join(tmp, "out")
	args := []string{"run", "--workload", "dss-mix", "--clients", "8", "--method", "alternation", "--observers", "baseline",
		"--alt-duration", c.altDuration.String(), "--phase-min", "10", "--phase-max", "20", "--warmup", c.warmup.String(),
		"--seed", fmt.Sprint(c.seed), "--out", out}
	logf("obsbench %s", strings.Join(args, " "))
	probe := startProbe()
	text, err := sidebyside.RunObsbench(ctx, exe, args...)
	samples := probe.close()
	if err != nil {
		return fmt.Errorf("obsbench: %w", err)
	}
	runs, err := result.ReadRuns(filepath.Join(out, "results.jsonl"))
	if err != nil {
		return err
	}
	i := slices.IndexFunc(runs, func(r result.Run) bool { return r.Method.Alternates() && len(r.Driver.Executions) > 0 })
	if i < 0 {
		return fmt.Errorf("no alternation run with executions in %s", out)
	}
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(c.dir, "output.txt"), []byte(text), 0o644); err != nil {
		return err
	}
	sum, err := result.ReadSummary(filepath.Join(out, "summary.json"))
	if err != nil {
		return err
	}
	return report(c, args, analyze(runs[i], samples, c.warmup), sum)
}

// phase is one usable phase of the run, as measured.
type phase struct {
	result.Phase
	strata          []stats.Stratum // server CPU (µs) per query; nil: unusable
	factor          float64
	compute, memory float64 // the probe's median loop times, relative to the run's
}

// findings are what the run shows.
type findings struct {
	names                   []string
	phases                  []phase
	factorCV, computeCV     float64
	corrCompute, corrMemory float64
	residualCV              float64 // of factor / compute
	spread                  []querySpread
	pairLogSD               float64
	pairs                   int
	adjusted                []adjustment // by the core loop, the memory loop
}

// adjustment is the pairs' noise with each phase divided by a loop's
// time raised to slope.
type adjustment struct {
	slope, pairLogSD float64
}

// pairNoise forms the stratified comparison's pairs as obsbench does
// (each on phase against the off phases beside it, CPU-weighted query by
// query), each phase's costs divided by scale, and returns their count and
// the sd of their log ratios.
func pairNoise(phases []phase, weights []float64, scale func(phase) float64) (int, float64) {
	scaled := func(p phase) []stats.Stratum {
		out := make([]stats.Stratum, len(p.strata))
		for q, st := range p.strata {
			out[q] = stats.Stratum{N: st.N, Total: st.Total / scale(p)}
		}
		return out
	}
	var logs []float64
	for i := 1; i+1 < len(phases); i++ {
		if phases[i].strata == nil || phases[i-1].strata == nil || phases[i+1].strata == nil || !phases[i].On || phases[i-1].On || phases[i+1].On {
			continue
		}
		ref := stats.Pooled(scaled(phases[i-1]), scaled(phases[i+1]))
		if x, err := stats.StratifiedRatio(ref, scaled(phases[i]), weights); err == nil {
			logs = append(logs, math.Log(x))
		}
	}
	return len(logs), moremath.StdDev(logs)
}

type querySpread struct {
	name       string
	sharePct   float64
	p10, p50   float64 // ms
	p90, count float64
}

// analyze reads run r, whose window began about warmup after it started,
// with the probe's samples.
func analyze(r result.Run, samples []probeSample, warmup time.Duration) findings {
	var a findings
	for _, s := range r.Driver.Statements {
		a.names = append(a.names, s.Statement)
	}
	nq := len(a.names)
	// Each phase's executions as obsbench's analysis sorts them: those
	// wholly inside the phase after its first second; nil for a phase it
	// cannot use.
	_, cpu := analysis.PhaseStrata(r)
	for i, ph := range r.Phases {
		a.phases = append(a.phases, phase{Phase: ph, strata: cpu[i]})
	}
	perExec := make([][]float64, nq)
	for _, e := range r.Driver.Executions {
		if e.Statement >= 0 && e.Statement < nq && e.ServerCPUUS >= 0 {
			perExec[e.Statement] = append(perExec[e.Statement], float64(e.ServerCPUUS))
		}
	}
	all := make([][]stats.Stratum, len(a.phases))
	for i, p := range a.phases {
		all[i] = p.strata
	}
	whole := stats.Pooled(all...)
	weights := stats.StratumWeights(all)

	a.probeByPhase(samples, r.Started.Add(warmup), whole)
	a.pairs, a.pairLogSD = pairNoise(a.phases, weights, func(phase) float64 { return 1 })
	a.adjust(weights)
	a.heaviest(whole, perExec)
	return a
}

// probeByPhase sets each phase's cost factor (its strata's means over the
// whole run's) and the probe's loop times in it, each over the run's
// median; the first second of a phase left out, as the analysis leaves
// it out; origin is when the window began. Then their spreads and
// correlations over the phases.
func (a *findings) probeByPhase(samples []probeSample, origin time.Time, whole []stats.Stratum) {
	var computeAll, memoryAll []float64
	for _, s := range samples {
		computeAll, memoryAll = append(computeAll, float64(s.compute)), append(memoryAll, float64(s.memory))
	}
	cMed, mMed := stats.Median(computeAll), stats.Median(memoryAll)
	var factors, computes, memories, residuals []float64
	for i := range a.phases {
		p := &a.phases[i]
		var rel []float64
		for q, s := range p.strata {
			if s.N >= 3 {
				rel = append(rel, s.Mean()/whole[q].Mean())
			}
		}
		p.factor = stats.Median(rel)
		var c, m []float64
		from, to := origin.Add(time.Duration(p.Start+1)*time.Second), origin.Add(time.Duration(p.End)*time.Second)
		for _, s := range samples {
			if !s.at.Before(from) && s.at.Before(to) {
				c, m = append(c, float64(s.compute)), append(m, float64(s.memory))
			}
		}
		p.compute, p.memory = stats.Median(c)/cMed, stats.Median(m)/mMed
		if len(c) > 0 && !math.IsNaN(p.factor) {
			factors, computes, memories = append(factors, p.factor), append(computes, p.compute), append(memories, p.memory)
			residuals = append(residuals, p.factor/p.compute)
		}
	}
	a.factorCV, a.computeCV, a.residualCV = sidebyside.CV(factors), sidebyside.CV(computes), sidebyside.CV(residuals)
	a.corrCompute, a.corrMemory = correlation(factors, computes), correlation(factors, memories)
}

// adjust is the pairs' noise with each phase's costs divided by the
// probe's loop scaled to the factor: log factor regressed on log loop
// time over the off phases (in-sample: those phases are in the pairs
// too), for each of the probe's two loops.
func (a *findings) adjust(weights []float64) {
	for _, loop := range []func(phase) float64{func(p phase) float64 { return p.compute }, func(p phase) float64 { return p.memory }} {
		var xs, ys []float64
		for _, p := range a.phases {
			if !p.On && !math.IsNaN(p.factor) && !math.IsNaN(loop(p)) {
				xs, ys = append(xs, math.Log(loop(p))), append(ys, math.Log(p.factor))
			}
		}
		b := slope(xs, ys)
		_, sd := pairNoise(a.phases, weights, func(p phase) float64 { return math.Exp(b * math.Log(loop(p))) })
		a.adjusted = append(a.adjusted, adjustment{slope: b, pairLogSD: sd})
	}
}

// heaviest sets the spread of the server CPU of each execution of the
// three queries that took most of it.
func (a *findings) heaviest(whole []stats.Stratum, perExec [][]float64) {
	nq := len(a.names)
	total := 0.0
	for _, w := range whole {
		total += w.Total
	}
	order := make([]int, nq)
	for q := range order {
		order[q] = q
	}
	slices.SortFunc(order, func(x, y int) int { return int(whole[y].Total - whole[x].Total) })
	for _, q := range order[:min(3, nq)] {
		v := perExec[q]
		a.spread = append(a.spread, querySpread{name: a.names[q], sharePct: 100 * whole[q].Total / total,
			p10: stats.Percentile(v, 0.1) / 1000, p50: stats.Percentile(v, 0.5) / 1000, p90: stats.Percentile(v, 0.9) / 1000, count: float64(len(v))})
	}
}

// pairsFor is how many pairs a per-pair log-ratio noise of sd needs for
// an interval of ±halfPct at two-sided confidence conf (normal theory;
// the signed-rank interval obsbench uses needs about 5% more).
func pairsFor(sd, halfPct, conf float64) int {
	z := math.Sqrt2 * math.Erfinv(conf)
	return int(math.Ceil(math.Pow(z*sd/math.Log(1+halfPct/100), 2)))
}
