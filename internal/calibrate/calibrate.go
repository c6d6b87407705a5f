// Package calibrate checks that obsbench recovers a known overhead:
// synthetic observers add server work of a measured size to every
// statement of a PostgreSQL workload, and are measured like any observer.
package calibrate

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/obsbench/obsbench/internal/analysis"
	"github.com/obsbench/obsbench/internal/app"
	"github.com/obsbench/obsbench/internal/collect"
	"github.com/obsbench/obsbench/internal/dataset"
	"github.com/obsbench/obsbench/internal/driver"
	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/experiment"
	"github.com/obsbench/obsbench/internal/observer"
	"github.com/obsbench/obsbench/internal/report"
	"github.com/obsbench/obsbench/internal/result"
	"github.com/obsbench/obsbench/internal/spec"
	"github.com/obsbench/obsbench/internal/workload"
)

// Workload calls obsbench_calibrate() in every statement.
const Workload = workload.Calibrated

// warmup is a run's, before its measured window, as an experiment's
// default.
const warmup = 2 * time.Second

// Calibration is what obsbench calibrate expected and measured for one
// synthetic observer; written to calibration.json.
type Calibration struct {
	Name      string  `json:"name"`
	TargetPct float64 `json:"target_pct"`
	Loops     int     `json:"loops"`
	ExtraUS   float64 `json:"extra_server_us_per_stmt"`
	// ExtraRangeUS is, on a mix, ExtraUS at the loop's cost measured
	// before and after the runs, lower first.
	ExtraRangeUS []float64 `json:"extra_server_us_range,omitempty"`
	ExpectedPct  float64   `json:"expected_overhead_pct"`
	// ExpectedCPUPct is the expected rise of server CPU per statement.
	ExpectedCPUPct float64                 `json:"expected_cpu_per_stmt_change_pct"`
	Measured       *result.OverheadSummary `json:"measured"`
	MeasuredCPU    *result.ChangeSummary   `json:"measured_cpu_per_stmt_change"`
	// MeasuredAdded is, on a mix, the server CPU added per execution;
	// by duet, per statement, twin against twin, with MeasuredShare its
	// share of the server's CPU per statement (X/(S+X), the expected
	// overhead's form).
	MeasuredAdded *result.AddedSummary  `json:"measured_server_cpu_added_us,omitempty"`
	MeasuredShare *result.ChangeSummary `json:"measured_server_share_pct,omitempty"`
	// MeasuredThroughput is a duet's throughput overhead where Measured
	// is read from server CPU per statement (its Basis).
	MeasuredThroughput *result.OverheadSummary `json:"measured_throughput,omitempty"`
	Recovered          bool                    `json:"recovered"`
	// RecoveredOn is what Recovered judges: the time overhead (the
	// default), or on a mix the server CPU added per execution.
	RecoveredOn string `json:"recovered_on"`
}

// LoopCost is what the calibration's known effect is computed from.
type LoopCost struct {
	LoopUS   float64 `json:"loop_us"`                      // server CPU per loop iteration
	ServerUS float64 `json:"server_us_per_stmt"`           // without calibration work
	DriverUS float64 `json:"driver_us_per_stmt,omitempty"` // not on a mix
}

// Options are what obsbench calibrate builds and runs.
type Options struct {
	// Effects are the overheads to build, in percent (0.5 to 50).
	Effects []float64
	// Workload is "credit-top1" (the default: a loop of one short
	// statement, alternation) or "dss-mix" (the mix, rounds of Blocks,
	// compared query by query).
	Workload string
	// Method is how credit-top1's calibrations are measured: duet (the
	// default method: sized in a twin, measured by duet) or alternation;
	// empty on dss-mix.
	Method result.Method
	// Phases are a duet's phases per calibration observer; Count counts
	// each calibration's instructions after them.
	Phases      int
	Count       bool
	AltDuration time.Duration
	AltRounds   int
	Rounds      int
	Blocks      int
	// Shrink is dss-mix's dataset with 1/Shrink of its rows (1: all).
	Shrink  int
	Clients int
	// ClientWork is credit-top1's µs of driver CPU before each
	// statement (the workload's --client-work): a heavier client, which
	// the duet's figure must not move with.
	ClientWork int
	// LoadPct, by duet, runs both duets at a fixed arrival rate: the one
	// at which the sizing duet's baseline keeps LoadPct of its twin's
	// CPU quota busy (run's --load), so each size is taken, and read
	// from server CPU per statement, below the quota.
	LoadPct float64
	Seed    uint64
	Out     string
}

// Calibrate checks that obsbench recovers a known overhead: a synthetic
// observer adds server work of a measured size to every statement, sized
// to cost each of o.Effects, and is measured like any observer.
func Run(ctx context.Context, o Options, out Output) error {
	if err := o.check(); err != nil {
		return err
	}
	switch {
	case o.Workload == "dss-mix":
		return calibrateMix(ctx, o, out)
	case o.Method.Twins():
		return calibrateDuet(ctx, o, out)
	}
	return calibrateAlternation(ctx, o, out)
}

// check refuses what calibrate cannot run, and fills in the seed and
// the results directory when not given.
func (o *Options) check() error {
	for _, v := range o.Effects {
		if v < 0.5 || v > 50 {
			return spec.Invalidf("--effects %g: want percentages from 0.5 to 50, e.g. 3,10", v)
		}
	}
	switch {
	case len(o.Effects) == 0:
		return spec.Invalidf("--effects is empty")
	case o.Clients < 1 || o.Clients > 1000:
		return spec.Invalidf("--clients %d: want 1 to 1000", o.Clients)
	case o.Workload != "" && o.Workload != "credit-top1" && o.Workload != "dss-mix":
		return spec.Invalidf("--workload %s: calibrate runs credit-top1 (the default) or dss-mix", o.Workload)
	case o.Workload != "dss-mix" && o.Method != "" && !o.Method.Twins() && !o.Method.Alternates():
		return spec.Invalidf("--method %s: calibrate measures credit-top1 by duet (the default) or alternation", o.Method)
	case o.Method.Twins() && (o.Phases < 4 || o.Phases > 400):
		return spec.Invalidf("--phases %d: want 4 to 400", o.Phases)
	case o.ClientWork < 0 || o.ClientWork > 10_000:
		return spec.Invalidf("--client-work %d: want 0 to 10000 µs", o.ClientWork)
	case o.LoadPct < 0 || o.LoadPct > maxLoadPct:
		return spec.Invalidf("--load %g: want a percentage of a twin's quota from above 0 to %d (the largest size's twin must keep the rate too)", o.LoadPct, maxLoadPct)
	case o.LoadPct > 0 && !o.Method.Twins():
		return spec.Invalidf("--load: calibrate runs at a load by duet only (--method %s)", o.Method)
	}
	if o.Seed == 0 {
		o.Seed = uint64(time.Now().UnixNano())
	}
	if o.Out == "" {
		o.Out = filepath.Join("obsbench-results", "calibrate-"+time.Now().Format("20060102-150405"))
	}
	return checkOut(o.Out)
}

// calibrateAlternation calibrates on credit-top1: each synthetic observer
// is sized to cost its effect in statements/s, and measured by
// alternation.
func calibrateAlternation(ctx context.Context, o Options, out Output) error {
	stdout, stderr := out.Stdout, out.Stderr
	switch {
	case o.AltDuration < 20*time.Second:
		return spec.Invalidf("--alt-duration %v: want at least 20s", o.AltDuration)
	case o.AltRounds < 1 || o.AltRounds > 100:
		return spec.Invalidf("--alt-rounds %d: want 1 to 100", o.AltRounds)
	}
	logf := report.Notes(stderr)
	wl, err := workload.Lookup(Workload)
	if err == nil {
		wl, err = wl.WithParam("client-work", o.ClientWork)
	}
	if err != nil {
		return err
	}
	target, ds, err := openCalibration(ctx, wl, o.Out, out.Getenv, logf)
	if err != nil {
		return err
	}
	defer engine.Close(target, logf)
	dcfg := driver.Config{Clients: o.Clients, Warmup: warmup, Procs: driver.DefaultProcs(o.Clients)}
	cost, err := measureLoopCost(ctx, target, wl, dcfg)
	if err != nil {
		return err
	}
	logf("calibration: %.4f µs of server CPU per loop; without it %.1f µs server + %.1f µs driver CPU per statement",
		cost.LoopUS, cost.ServerUS, cost.DriverUS)
	cals, observers := sizeForThroughput(o.Effects, cost)
	names := observer.Names(observers)
	runs, runErr := experiment.Run(ctx, experiment.Config{
		Target: target, Workload: wl, Dataset: ds, Observers: observers, Method: experiment.MethodAlternation,
		Alternation: experiment.Alternation{Duration: o.AltDuration, MinPhase: 2, MaxPhase: 4, Reps: o.AltRounds, CheckDuration: experiment.DefaultCheckDuration},
		Seed:        o.Seed, Out: o.Out, Driver: dcfg, Progress: report.Progress(stderr),
	})
	if runErr != nil && len(runs) == 0 {
		return runErr
	}
	ver, _ := target.Version(ctx)
	sum := analysis.Summarize(result.Summary{Engine: "postgres", Server: ver, Workload: wl.Name, Clients: o.Clients,
		Seed: o.Seed, Rounds: o.AltRounds, AltSeconds: o.AltDuration.Seconds(), Warmup: warmup.Seconds()}, names, runs)
	if err := result.WriteSummary(filepath.Join(o.Out, "summary.json"), sum); err != nil {
		return err
	}
	fmt.Fprintln(stdout)
	if err := report.Text(stdout, sum); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\ncalibration: %.4f µs of server CPU per loop iteration; without calibration %.1f µs server + %.1f µs driver CPU per statement\n",
		cost.LoopUS, cost.ServerUS, cost.DriverUS)
	printRecovered(stdout, sum, cals)
	if err := writeCalibration(stdout, o.Out, cost, cals); err != nil {
		return err
	}
	return runErr
}

// sizeForThroughput sizes a synthetic observer for each effect, in
// percent of statements/s: the baseline first, then one per effect.
func sizeForThroughput(effects []float64, cost LoopCost) ([]Calibration, []observer.Observer) {
	observers := []observer.Observer{{Name: observer.Baseline, Engine: "postgres", Description: "baseline"}}
	cals := make([]Calibration, len(effects))
	for i, e := range effects {
		// Throughput on a CPU-saturated machine is capacity / CPU per
		// statement, so X more µs cost X / (S + D + X) of it.
		extra := e / (100 - e) * (cost.ServerUS + cost.DriverUS)
		loops := int(math.Round(extra / cost.LoopUS))
		x := float64(loops) * cost.LoopUS
		cals[i] = Calibration{
			Name: fmt.Sprintf("calibration-%g%%", e), TargetPct: e, Loops: loops, ExtraUS: x, RecoveredOn: "time overhead",
			ExpectedPct:    100 * x / (cost.ServerUS + cost.DriverUS + x),
			ExpectedCPUPct: 100 * x / cost.ServerUS,
		}
		observers = append(observers, calibrationObserver(cals[i].Name, loops,
			fmt.Sprintf("synthetic: %d loop iterations (%.2f µs of server CPU) per statement", loops, x)))
	}
	return cals, observers
}

// printRecovered fills in what was measured of each calibration and says
// whether its expected overhead is inside the measured interval.
func printRecovered(w io.Writer, sum result.Summary, cals []Calibration) {
	for i := range cals {
		c := &cals[i]
		share := ""
		for _, cs := range sum.Conditions {
			if cs.Name != c.Name {
				continue
			}
			c.Measured, c.MeasuredCPU, c.MeasuredThroughput = cs.Overhead, cs.CPUChange, cs.ThroughputOverhead
			if sc := cs.ServerCost; sc != nil {
				c.MeasuredAdded, c.MeasuredShare = &sc.Added, &sc.Share
				share = fmt.Sprintf("; server share %.2f%% [%.2f, %.2f]", sc.Share.Pct, sc.Share.CILow, sc.Share.CIHigh)
			}
		}
		verdict, d := "not measured", 1
		if m := c.Measured; m != nil && !math.IsNaN(m.Pct) && m.Verdict != "" {
			c.Recovered = c.ExpectedPct >= m.CILow && c.ExpectedPct <= m.CIHigh
			d = digitsApart(c.ExpectedPct, m.CILow, m.CIHigh)
			verdict = fmt.Sprintf("measured %.*f%% [%.*f, %.*f]: ", d, m.Pct, d, m.CILow, d, m.CIHigh)
			if m.Basis == result.BasisServerCPU {
				verdict = fmt.Sprintf("measured %.*f%% [%.*f, %.*f] from server CPU per statement: ", d, m.Pct, d, m.CILow, d, m.CIHigh)
			}
			if c.Recovered {
				verdict += "recovered"
			} else {
				verdict += "NOT recovered"
			}
		}
		fmt.Fprintf(w, "%s: %d loops = %.2f µs/stmt: expected overhead %.*f%% (server CPU/stmt %+.1f%%), %s%s\n",
			c.Name, c.Loops, c.ExtraUS, d, c.ExpectedPct, c.ExpectedCPUPct, verdict, share)
	}
}

// digitsApart is the number of decimals (1 to 3) at which x, printed
// beside the interval [lo, hi], falls on the side of it where it is: an
// expected 10.06% outside [10.08, 10.4] printed with one decimal would
// read 10.1 inside [10.1, 10.4], beside a verdict "NOT recovered".
func digitsApart(x, lo, hi float64) int {
	for d := 1; d < 3; d++ {
		p := math.Pow(10, float64(d))
		r := func(v float64) float64 { return math.Round(v*p) / p }
		if (x >= lo) == (r(x) >= r(lo)) && (x <= hi) == (r(x) <= r(hi)) {
			return d
		}
	}
	return 3
}

// openCalibration starts the managed PostgreSQL a calibration runs on,
// with wl's dataset and set-up, in the environment getenv reads, and
// creates the results directory out. The caller closes the server
// (closeServer).
func openCalibration(ctx context.Context, wl workload.Meta, out string, getenv func(string) string, logf func(string, ...any)) (engine.Server, dataset.Dataset, error) {
	ds, err := wl.DatasetAt(1)
	if err != nil {
		return nil, dataset.Dataset{}, err
	}
	eng, err := engine.Lookup("postgres")
	if err != nil {
		return nil, dataset.Dataset{}, err
	}
	target, err := eng.Open(ctx, engine.Options{Log: logf, Getenv: getenv})
	if err != nil {
		return nil, dataset.Dataset{}, spec.FromEngine(err, "--dsn")
	}
	err = os.MkdirAll(out, 0o700)
	if err == nil {
		err = engine.Prepare(ctx, target, workload.PostgreSQL, wl, ds, logf)
	}
	if err != nil {
		engine.Close(target, logf)
		return nil, dataset.Dataset{}, err
	}
	return target, ds, nil
}

// calibrationObserver is the synthetic observer that sets the calibration
// function's work to loops iterations, and back to none.
func calibrationObserver(name string, loops int, description string) observer.Observer {
	return observer.Observer{
		Name: name, Engine: "postgres", Description: description,
		EnableSQL:  []string{workload.CalibrationSQL(loops)},
		DisableSQL: []string{workload.CalibrationSQL(0)},
	}
}

// writeCalibration writes calibration.json into dir and names dir on stdout.
func writeCalibration(stdout io.Writer, dir string, cost LoopCost, cals []Calibration) error {
	b, _ := json.MarshalIndent(struct {
		Cost         LoopCost      `json:"cost"`
		Calibrations []Calibration `json:"calibrations"`
	}{cost, cals}, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, "calibration.json"), append(b, '\n'), 0o600); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nresults: %s\n", dir)
	return nil
}

// measureLoopCost measures the server CPU of one loop iteration under the
// experiment's own load (all sessions: a loop costs more when the cores are
// shared than in one session alone), from CPU per statement with and
// without many iterations, and the CPU per statement of the plain workload.
func measureLoopCost(ctx context.Context, t engine.Server, wl workload.Meta, dcfg driver.Config) (LoopCost, error) {
	cfg := dcfg
	cfg.Warmup, cfg.Duration = time.Second, 5*time.Second
	var drv float64 // the last run's: the plain workload's
	c, err := loopCost(ctx, t, 1000, func() (server float64, err error) {
		server, drv, err = cpuPerStmt(ctx, t, wl, cfg)
		return server, err
	})
	c.DriverUS = drv
	return c, err
}

// loopCost sets the calibration function to loops iterations, then to
// none, measures server CPU per call (µs) with each, and returns one
// iteration's cost and the call's without any.
func loopCost(ctx context.Context, t engine.Server, loops int, measure func() (float64, error)) (LoopCost, error) {
	var per [2]float64
	for i, n := range []int{loops, 0} {
		if err := t.Setup(ctx, []string{workload.CalibrationSQL(n)}); err != nil {
			return LoopCost{}, err
		}
		v, err := measure()
		if err != nil {
			return LoopCost{}, err
		}
		per[i] = v
	}
	c := LoopCost{LoopUS: (per[0] - per[1]) / float64(loops), ServerUS: per[1]}
	if !(c.LoopUS > 0) {
		return c, fmt.Errorf("calibration: a loop iteration measured %.4f µs; the measurement failed", c.LoopUS)
	}
	return c, nil
}

// cpuPerStmt runs the workload and returns server and driver CPU per
// statement of the measured window, in µs.
func cpuPerStmt(ctx context.Context, t engine.Server, wl workload.Meta, cfg driver.Config) (server, drv float64, err error) {
	cpu := &collect.Window{Root: t.ServerPID()}
	cfg.Window = cpu.Toggle
	res, err := driver.Run(ctx, cfg, t.Dial, wl.New())
	cpu.Close()
	if err == nil {
		err = cpu.Err
	}
	srv, dcpu := cpu.Usage.Server, cpu.Usage.Driver
	if err != nil || srv == nil || res.Measured == 0 {
		return 0, 0, fmt.Errorf("calibration run: %v (server CPU %v, %d statements)", err, srv, res.Measured)
	}
	n := float64(res.Measured)
	return 1e6 * srv.Seconds / n, 1e6 * dcpu.Seconds / n, nil
}

// Output is where a calibration prints: its report and results on
// Stdout, notes and progress on Stderr; and the environment it runs in.
type Output = app.Output

// checkOut refuses an --out directory that holds results already: a
// calibration's, or any of an experiment's, which it would mix with its
// own.
func checkOut(dir string) error {
	for _, f := range []string{"calibration.json", "results.jsonl", "summary.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			return spec.Invalidf("--out %s already holds results (%s); choose another directory", dir, f)
		}
	}
	return nil
}
