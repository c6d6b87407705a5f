package calibrate

import (
	"context"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"time"

	"github.com/obsbench/obsbench/internal/analysis"
	"github.com/obsbench/obsbench/internal/driver"
	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/experiment"
	"github.com/obsbench/obsbench/internal/observer"
	"github.com/obsbench/obsbench/internal/report"
	"github.com/obsbench/obsbench/internal/result"
	"github.com/obsbench/obsbench/internal/spec"
	"github.com/obsbench/obsbench/internal/workload"
)

// mixCalibrationWorkload is dss-mix with obsbench_calibrate() after every
// execution, inside the execution's server CPU.
const mixCalibrationWorkload = "dss-mix-calibrated"

// loopOnly runs obsbench_calibrate() alone: what a loop iteration costs
// is measured on it, under as many sessions as the mix has.
var loopOnly = workload.Meta{Name: "calibration-loop", Tag: "obsbench-calibrate",
	New: func() workload.Workload { return workload.Loop("SELECT obsbench_calibrate() /* obsbench-calibrate */") }}

// calibrateMix is obsbench calibrate on dss-mix: each synthetic observer
// adds a known server CPU cost to every execution of the mix, sized as a
// share of the mean execution's server CPU, and the mix is measured in
// rounds of fixed work, query by query (the stratified comparison). The
// known cost is recovered when the interval of the server CPU added per
// execution (result.StratifiedSummary.CPUAdded) reaches the range of its
// size at the loop's cost measured before and after the runs.
func calibrateMix(ctx context.Context, o Options, out Output) error {
	stdout, stderr := out.Stdout, out.Stderr
	switch {
	case o.Rounds < 2 || o.Rounds > 100:
		return spec.Invalidf("--rounds %d: want 2 to 100 (a paired interval needs rounds)", o.Rounds)
	case o.Blocks < 1 || o.Blocks > 100:
		return spec.Invalidf("--blocks %d: want 1 to 100", o.Blocks)
	case o.Shrink < 1:
		return spec.Invalidf("--shrink %d: want 1 or more", o.Shrink)
	}
	logf := report.Notes(stderr)
	wl, err := workload.Lookup(mixCalibrationWorkload)
	if err != nil {
		return err
	}
	if wl, err = wl.WithParams(map[string]int{"blocks": o.Blocks, "shrink": o.Shrink}); err != nil {
		return err
	}
	target, ds, err := openCalibration(ctx, wl, o.Out, out.Getenv, logf)
	if err != nil {
		return err
	}
	defer engine.Close(target, logf)
	// Fixed work: no warm-up (it would take part of the blocks), and the
	// duration only caps a run.
	dcfg := driver.Config{Clients: o.Clients, Duration: time.Hour, Procs: driver.DefaultProcs(o.Clients), Executions: true}
	before, err := sessionLoopCost(ctx, target, o.Clients, dcfg.Procs)
	if err != nil {
		return err
	}
	pilotUS, err := pilotExecutionCPU(ctx, target, wl, dcfg)
	if err != nil {
		return err
	}
	logf("calibration: %.4f µs of server CPU per loop iteration; the mix's pilot run %.0f µs per execution", before.LoopUS, pilotUS)
	cals, observers := sizeForExecutions(o.Effects, pilotUS, before.LoopUS)
	names := observer.Names(observers)
	runs, runErr := experiment.Run(ctx, experiment.Config{
		Target: target, Workload: wl, Dataset: ds, Observers: observers, Method: experiment.MethodRounds,
		Rounds: o.Rounds, Seed: o.Seed, Out: o.Out, Driver: dcfg, Progress: report.Progress(stderr),
	})
	if runErr != nil && len(runs) == 0 {
		return runErr
	}
	// The machine's speed moves over minutes, the loop's cost with it
	// (bench/mix-stratified): it is measured again after the runs,
	// the known cost is the mean of the two, and it is recovered if the
	// measured interval reaches the range between them.
	after, err := sessionLoopCost(ctx, target, o.Clients, dcfg.Procs)
	if err != nil {
		return err
	}
	cost := LoopCost{LoopUS: (before.LoopUS + after.LoopUS) / 2, ServerUS: (before.ServerUS + after.ServerUS) / 2}
	for i := range cals {
		l := float64(cals[i].Loops)
		cals[i].ExtraUS = l * cost.LoopUS
		cals[i].ExtraRangeUS = []float64{l * min(before.LoopUS, after.LoopUS), l * max(before.LoopUS, after.LoopUS)}
	}
	ver, _ := target.Version(ctx)
	sum := analysis.Summarize(result.Summary{Engine: "postgres", Server: ver, Workload: wl.Name, Clients: o.Clients,
		Seed: o.Seed, Rounds: o.Rounds, Seconds: dcfg.Duration.Seconds()}, names, runs)
	if err := result.WriteSummary(filepath.Join(o.Out, "summary.json"), sum); err != nil {
		return err
	}
	fmt.Fprintln(stdout)
	if err := report.Text(stdout, sum); err != nil {
		return err
	}
	baseUS := 1000 * baselineExecutionCPU(runs)
	fmt.Fprintf(stdout, "\ncalibration: %.4f µs of a session's server CPU per loop iteration (%.4f before the runs, %.4f after); the baseline runs' executions %.0f µs of server CPU each\n",
		cost.LoopUS, before.LoopUS, after.LoopUS, baseUS)
	printRecoveredMix(stdout, sum, cals, baseUS)
	if err := writeCalibration(stdout, o.Out, cost, cals); err != nil {
		return err
	}
	return runErr
}

// pilotExecutionCPU is the mean execution's server CPU (µs) in one run of
// the mix: what sizes the effects.
func pilotExecutionCPU(ctx context.Context, target engine.Server, wl workload.Meta, dcfg driver.Config) (float64, error) {
	pilot, err := driver.Run(ctx, dcfg, target.Dial, wl.New())
	if err != nil {
		return 0, fmt.Errorf("calibration pilot run: %w", err)
	}
	us := 1000 * meanExecutionCPU(pilot)
	if !(us > 0) {
		return 0, fmt.Errorf("calibration pilot run: no server CPU per execution (%d executions); the server's clock could not be read", pilot.Measured)
	}
	return us, nil
}

// sizeForExecutions sizes a synthetic observer for each effect, in
// percent of the pilot's server CPU per execution: the baseline first,
// then one per effect.
func sizeForExecutions(effects []float64, pilotUS, loopUS float64) ([]Calibration, []observer.Observer) {
	observers := []observer.Observer{{Name: observer.Baseline, Engine: "postgres", Description: "baseline"}}
	cals := make([]Calibration, len(effects))
	for i, e := range effects {
		loops := int(math.Round(e / 100 * pilotUS / loopUS))
		cals[i] = Calibration{Name: fmt.Sprintf("calibration-%g%%", e), TargetPct: e, Loops: loops,
			ExtraUS: float64(loops) * loopUS, RecoveredOn: "server CPU added per execution (µs), query by query"}
		observers = append(observers, calibrationObserver(cals[i].Name, loops,
			fmt.Sprintf("synthetic: %d loop iterations (%.0f µs of server CPU) per execution", loops, cals[i].ExtraUS)))
	}
	return cals, observers
}

// printRecoveredMix fills in what was expected and measured of each
// calibration on the mix (baseUS: the baseline runs' server CPU per
// execution) and says whether the added cost was recovered.
func printRecoveredMix(w io.Writer, sum result.Summary, cals []Calibration, baseUS float64) {
	for i := range cals {
		c := &cals[i]
		// Each query's CPU rises by the same X µs, and the stratified
		// change weights each query's rise (X / its mean) by its share of
		// the baseline's CPU: the sum is X over the mean execution.
		c.ExpectedCPUPct = 100 * c.ExtraUS / baseUS
		c.ExpectedPct = 100 * c.ExtraUS / (baseUS + c.ExtraUS)
		verdict := "not measured"
		for _, cs := range sum.Conditions {
			if cs.Name != c.Name || cs.Stratified == nil {
				continue
			}
			c.Measured, c.MeasuredCPU, c.MeasuredAdded = cs.Stratified.Time, cs.Stratified.CPU, cs.Stratified.CPUAdded
			if m, a := c.MeasuredCPU, c.MeasuredAdded; m != nil && a != nil {
				// The added cost is the same in every execution: the
				// added µs, which the short queries resolve, is the
				// check; the change weighted by CPU is shown beside it.
				lo, hi := c.ExtraRangeUS[0], c.ExtraRangeUS[1]
				c.Recovered = a.CILow <= hi && lo <= a.CIHigh
				verdict = fmt.Sprintf("measured %+.0f µs [%+.0f, %+.0f]: ", a.US, a.CILow, a.CIHigh)
				if c.Recovered {
					verdict += "recovered"
				} else {
					verdict += "NOT recovered"
				}
				if a.Verdict == "too few samples to tell" {
					verdict += " (too few rounds for an interval: the range of all estimates)"
				}
				verdict += fmt.Sprintf("; server CPU per execution %+.1f%% expected, %+.1f%% [%+.1f, %+.1f] measured", c.ExpectedCPUPct, m.Pct, m.CILow, m.CIHigh)
			}
		}
		fmt.Fprintf(w, "%s: %d loops = %.0f µs/execution added (%.0f-%.0f at the loop's cost before and after): %s\n",
			c.Name, c.Loops, c.ExtraUS, c.ExtraRangeUS[0], c.ExtraRangeUS[1], verdict)
	}
}

// sessionLoopCost measures a loop iteration's server CPU the way the
// mix's executions are measured: each call's session clock (the
// backend's /proc schedstat), with many iterations and with none, under
// the mix's number of sessions. The whole server's CPU per call, as the
// short-statement calibration reads it, would add the other processes'
// background work, which grows per call as the calls slow down.
func sessionLoopCost(ctx context.Context, t engine.Server, clients, procs int) (LoopCost, error) {
	return loopCost(ctx, t, 10000, func() (float64, error) {
		cfg := driver.Config{Clients: clients, Procs: procs, Warmup: time.Second, Duration: 4 * time.Second, Executions: true}
		res, err := driver.Run(ctx, cfg, t.Dial, loopOnly.New())
		if err != nil {
			return 0, fmt.Errorf("calibration loop run: %w", err)
		}
		var sum float64
		var n int
		for _, e := range res.Executions {
			if e.ServerCPUUS >= 0 {
				sum += float64(e.ServerCPUUS)
				n++
			}
		}
		if n == 0 {
			return 0, fmt.Errorf("calibration loop run: no call's server CPU was read (%s)", res.ExecutionsNote)
		}
		return sum / float64(n), nil
	})
}

// meanExecutionCPU is the mean server CPU of a run's executions, in ms,
// over those whose CPU was read.
func meanExecutionCPU(r result.DriverResult) float64 {
	var n int64
	var ms float64
	for _, s := range r.Statements {
		n += s.CPUCount
		ms += s.CPUMeanMS * float64(s.CPUCount)
	}
	if n == 0 {
		return math.NaN()
	}
	return ms / float64(n)
}

// baselineExecutionCPU is meanExecutionCPU over the baseline runs.
func baselineExecutionCPU(runs []result.Run) float64 {
	var all result.DriverResult
	for _, r := range runs {
		if r.Condition == observer.Baseline && r.Error == "" {
			all.Statements = append(all.Statements, r.Driver.Statements...)
		}
	}
	return meanExecutionCPU(all)
}
