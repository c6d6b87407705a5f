// Command duet measures how finely obsbench resolves an observer's cost by
// duet (two twin servers driven at once, the observer in one of them)
// against --method auto (the whole cost in rounds of restarted servers,
// the switchable part by alternation; the default before duet), side by
// side in one run, optionally under a drift made on purpose: a thread of
// this process that is busy on one core for a random 3-12 s, then idle
// for 3-12 s, over and over.
//
// Each repetition runs, one after the other:
//
//   - auto: obsbench run --method auto --observers log-filtered-out,noop
//     (noop changes nothing: the A/A of rounds), auto's default budget;
//
//   - duet: obsbench run --method duet --observers log-filtered-out;
//
//   - calibrate: obsbench calibrate --effects 1,2,5 (synthetic observers
//     of known cost, by alternation), which also sizes them;
//
//   - duet-calibrated: the same synthetic observers by duet.
//
//     go run ./bench/duet [-repeats 1] [-drift=true] [-seed 1] [-dir bench/duet]
//
// It writes RESULT.md and, beside it, every run's text output.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/obsbench/obsbench/bench/internal/sidebyside"
	"github.com/obsbench/obsbench/internal/analysis"
	"github.com/obsbench/obsbench/internal/result"
	"github.com/obsbench/obsbench/internal/stats"
	"github.com/obsbench/obsbench/internal/workload"
)

var logf = sidebyside.Logger("duet")

type config struct {
	shares  []string
	repeats int
	drift   bool
	seed    uint64
	dir     string
	command string
}

func main() {
	var c config
	flag.IntVar(&c.repeats, "repeats", 1, "repetitions of the four experiments")
	flag.BoolVar(&c.drift, "drift", true, "run a thread beside the experiments that is busy on one core for 3-12 s, then idle for 3-12 s")
	flag.Uint64Var(&c.seed, "seed", 1, "seed of the first repetition (the next ones add 1)")
	flag.StringVar(&c.dir, "dir", "bench/duet", "where RESULT.md and the outputs go")
	shares := flag.String("shares", "", "instead: the A/A spread at each of these --twin-cpus quotas (e.g. 1,0.7), into SHARES.md")
	flag.Parse()
	if *shares != "" {
		c.shares = strings.Split(*shares, ",")
	}
	c.command = sidebyside.Command("duet")
	do := run
	if len(c.shares) > 0 {
		do = runShares
	}
	sidebyside.Main("duet", func(ctx context.Context) error { return do(ctx, c) })
}

// noop changes nothing: in rounds against the baseline, an A/A comparison.
const noop = `- name: noop
  engine: postgres
  description: changes nothing (A/A comparison in rounds)
`

// experiment is one obsbench command of a repetition and what it found.
type experiment struct {
	name    string
	args    []string
	elapsed time.Duration
	sum     result.Summary
	cal     []calibration // calibrate only
}

func (e experiment) condition(name string) *result.ConditionSummary {
	for i := range e.sum.Conditions {
		if e.sum.Conditions[i].Name == name {
			return &e.sum.Conditions[i]
		}
	}
	return nil
}

// calibration is what calibration.json says of one synthetic observer.
type calibration struct {
	Name        string                  `json:"name"`
	Loops       int                     `json:"loops"`
	ExpectedPct float64                 `json:"expected_overhead_pct"`
	Measured    *result.OverheadSummary `json:"measured"`
}

func run(ctx context.Context, c config) error {
	logf("building obsbench")
	tmp, exe, err := sidebyside.BuildObsbench(ctx, "duet")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return err
	}
	noopFile := filepath.Join(tmp, "noop.yaml")
	if err := os.WriteFile(noopFile, []byte(noop), 0o644); err != nil {
		return err
	}
	var busy atomic.Int64 // milliseconds the drift thread was busy
	if c.drift {
		dctx, cancel := context.WithCancel(ctx)
		defer cancel()
		go sidebyside.Drift(dctx, c.seed, &busy)
	}
	start := time.Now()
	var reps [][]experiment
	for r := 0; r < c.repeats; r++ {
		seed := fmt.Sprint(c.seed + uint64(r))
		dir := filepath.Join(tmp, "rep"+fmt.Sprint(r+1))
		var rep []experiment
		do := func(name string, args ...string) (experiment, error) {
			e := experiment{name: name, args: args}
			out := filepath.Join(dir, name)
			logf("repetition %d, %s: obsbench %s", r+1, name, strings.Join(args, " "))
			t0 := time.Now()
			text, err := sidebyside.RunObsbench(ctx, exe, append(args, "--seed", seed, "--out", out)...)
			if err != nil {
				return e, fmt.Errorf("%s: %w", name, err)
			}
			e.elapsed = time.Since(t0)
			if err := os.WriteFile(filepath.Join(c.dir, fmt.Sprintf("output-%d-%s.txt", r+1, name)), []byte(text), 0o644); err != nil {
				return e, err
			}
			if e.sum, err = result.ReadSummary(filepath.Join(out, "summary.json")); err != nil && name != "calibrate" {
				return e, err
			}
			if name == "calibrate" {
				b, err := os.ReadFile(filepath.Join(out, "calibration.json"))
				if err != nil {
					return e, err
				}
				var f struct{ Calibrations []calibration }
				if err := json.Unmarshal(b, &f); err != nil {
					return e, err
				}
				e.cal = f.Calibrations
			}
			rep = append(rep, e)
			return e, nil
		}
		if _, err := do("auto", "run", "--method", "auto", "--observers", "log-filtered-out,noop", "--observer-file", noopFile); err != nil {
			return err
		}
		if _, err := do("duet", "run", "--method", "duet", "--closed-loop", "--observers", "log-filtered-out"); err != nil {
			return err
		}
		cal, err := do("calibrate", "calibrate", "--method", "alternation", "--effects", "1,2,5", "--alt-duration", "60s")
		if err != nil {
			return err
		}
		calFile, names, err := calibrationObservers(tmp, r, cal.cal)
		if err != nil {
			return err
		}
		if _, err := do("duet-calibrated", "run", "--method", "duet", "--closed-loop", "--workload", "credit-top1-calibrated",
			"--observer-file", calFile, "--observers", strings.Join(names, ",")); err != nil {
			return err
		}
		reps = append(reps, rep)
	}
	return report(c, reps, busy.Load(), time.Since(start))
}

// calibrationObservers writes the synthetic observers calibrate sized, as
// an observer file a duet can run: the same loops, switched by the same
// statement.
func calibrationObservers(dir string, rep int, cals []calibration) (string, []string, error) {
	var b strings.Builder
	var names []string
	for _, c := range cals {
		fmt.Fprintf(&b, "- name: %s\n  engine: postgres\n  description: synthetic, %d loop iterations per statement\n  enable_sql: [%q]\n  disable_sql: [%q]\n",
			fileName(c.Name), c.Loops, workload.CalibrationSQL(c.Loops), workload.CalibrationSQL(0))
		names = append(names, fileName(c.Name))
	}
	path := filepath.Join(dir, fmt.Sprintf("calibration-%d.yaml", rep+1))
	return path, names, os.WriteFile(path, []byte(b.String()), 0o644)
}

// fileName is a calibration's name as an observer file allows it:
// calibration-2% is calibration-2pct.
func fileName(name string) string {
	return strings.NewReplacer("%", "pct", ".", "-").Replace(name)
}

func interval(o *result.OverheadSummary) string {
	if o == nil {
		return "–"
	}
	return fmt.Sprintf("%.1f [%.1f, %.1f]", o.Pct, o.CILow, o.CIHigh)
}

func halfWidth(o *result.OverheadSummary) string {
	if o == nil {
		return "–"
	}
	return fmt.Sprintf("±%.1f", (o.CIHigh-o.CILow)/2)
}

func holds(o *result.OverheadSummary, want float64) string {
	if o == nil {
		return "–"
	}
	if o.CILow <= want && want <= o.CIHigh {
		return "yes"
	}
	return "no"
}

func report(c config, reps [][]experiment, busyMS int64, total time.Duration) error {
	w := sidebyside.NewReport("Duet against --method auto, side by side", c.command)
	p := w.Line
	if c.drift {
		p("- drift made on purpose: a thread of the bench busy on one core for a random 3-12 s, then idle 3-12 s (busy %.0f%% of the %s)", 100*float64(busyMS)/float64(total.Milliseconds()), total.Round(time.Minute))
	} else {
		p("- no drift made on purpose: the machine as it was")
	}
	p("- workload credit-top1, 16 sessions, managed PostgreSQL; each repetition runs the four experiments one after the other, with seeds %d.. (one per repetition)\n", c.seed)
	for i, rep := range reps {
		p("## Repetition %d\n", i+1)
		p("| experiment | took | log-filtered-out, whole cost %% [95%% CI] | half-width | its switchable part | A/A %% [CI] |")
		p("|---|---:|---:|---:|---:|---:|")
		for _, e := range rep {
			switch e.name {
			case "auto":
				whole, sw := e.condition("log-filtered-out"), e.condition("log-filtered-out (switchable)")
				aaR, aaA := e.condition("noop"), e.condition("baseline A/A")
				p("| auto (`%s`) | %s | %s | %s | %s | rounds %s; alternation %s |", strings.Join(e.args, " "), e.elapsed.Round(time.Second),
					interval(over(whole)), halfWidth(over(whole)), interval(over(sw)), interval(over(aaR)), interval(over(aaA)))
			case "duet":
				whole, aa := e.condition("log-filtered-out"), e.condition("baseline A/A")
				p("| duet (`%s`) | %s | **%s** | **%s** | – | %s |", strings.Join(e.args, " "), e.elapsed.Round(time.Second),
					interval(over(whole)), halfWidth(over(whole)), interval(over(aa)))
			}
		}
		var cal, dcal experiment
		for _, e := range rep {
			switch e.name {
			case "calibrate":
				cal = e
			case "duet-calibrated":
				dcal = e
			}
		}
		p("\nSynthetic observers of known cost (`obsbench calibrate` sizes them; the duet runs the same loops):\n")
		p("| observer | expected %% | alternation (%s) | holds it | duet (%s) | holds it |", cal.elapsed.Round(time.Second), dcal.elapsed.Round(time.Second))
		p("|---|---:|---:|---|---:|---|")
		for _, k := range cal.cal {
			d := over(dcal.condition(fileName(k.Name)))
			p("| %s | %.2f | %s | %s | %s | %s |", k.Name, k.ExpectedPct, interval(k.Measured), holds(k.Measured, k.ExpectedPct), interval(d), holds(d, k.ExpectedPct))
		}
		if aa := dcal.condition("baseline A/A"); aa != nil {
			p("| duet A/A | 0 | – | – | %s | %s |", interval(aa.Overhead), holds(aa.Overhead, 0))
		}
		p("\nEach twin's CPU in the duets (median phase; quota per twin):\n")
		for _, e := range rep {
			for _, cs := range e.sum.Conditions {
				if d := cs.Duet; d != nil {
					p("- %s, %s: observer's twin %.2f CPU, other %.2f, of %.3g each; throttled by the quota %.2f s and %.2f s a phase (summed over CPUs)", e.name, cs.Name, d.OnCPUs, d.OffCPUs, d.ShareCPUs, d.OnThrottledS, d.OffThrottledS)
				}
			}
		}
		p("")
	}
	p("Every experiment's text output is beside this file (`output-REPETITION-EXPERIMENT.txt`). What the figures mean: `bench/duet/README.md`.")
	return sidebyside.Publish(filepath.Join(c.dir, "RESULT.md"), w.String())
}

func over(c *result.ConditionSummary) *result.OverheadSummary {
	if c == nil {
		return nil
	}
	return c.Overhead
}

// runShares measures how far apart two identical twins fall, phase by
// phase, at each CPU quota: the A/A arm of a duet with no observer.
func runShares(ctx context.Context, c config) error {
	tmp, exe, err := sidebyside.BuildObsbench(ctx, "duet")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	var busy atomic.Int64
	start := time.Now()
	if c.drift {
		dctx, cancel := context.WithCancel(ctx)
		defer cancel()
		go sidebyside.Drift(dctx, c.seed, &busy)
	}
	w := sidebyside.NewReport("How far apart identical twins fall, by CPU quota", c.command)
	p := w.Line
	p("- each quota: `obsbench run --method duet --observers baseline --rounds 8 --duration 8s --twin-cpus X --seed %d`, one after the other", c.seed)
	defer func() {
		if c.drift {
			logf("drift thread busy %.0f%% of the time", 100*float64(busy.Load())/float64(time.Since(start).Milliseconds()))
		}
	}()
	if c.drift {
		p("- drift made on purpose: a thread of the bench busy on one core for a random 3-12 s, then idle 3-12 s")
	} else {
		p("- no drift made on purpose")
	}
	p("- spread: the coefficient of variation of the twins' throughput ratio over the 8 phases, and over each phase's seconds\n")
	p("| --twin-cpus | phases' ratio CV | seconds' ratio CV | stmts/s of a twin (median) | A/A %% [CI] |")
	p("|---:|---:|---:|---:|---:|")
	for _, share := range c.shares {
		out := filepath.Join(tmp, "share-"+share)
		args := []string{"run", "--method", "duet", "--closed-loop", "--observers", "baseline", "--rounds", "8", "--duration", "8s", "--twin-cpus", share, "--seed", fmt.Sprint(c.seed), "--out", out}
		logf("obsbench %s", strings.Join(args, " "))
		if _, err := sidebyside.RunObsbench(ctx, exe, args...); err != nil {
			return fmt.Errorf("--twin-cpus %s: %w", share, err)
		}
		runs, err := result.ReadRuns(filepath.Join(out, "results.jsonl"))
		if err != nil {
			return err
		}
		var phases, seconds, tput []float64
		for _, r := range runs {
			if r.Error != "" || r.Duet == nil || r.Duet.Off.Throughput == 0 {
				continue
			}
			phases = append(phases, r.Driver.Throughput/r.Duet.Off.Throughput)
			tput = append(tput, r.Driver.Throughput)
			on, off := analysis.TotalPerSecond(r.Driver.PerSecond), analysis.TotalPerSecond(r.Duet.Off.PerSecond)
			for i := range min(len(on), len(off)) {
				if on[i] > 0 && off[i] > 0 {
					seconds = append(seconds, on[i]/off[i])
				}
			}
		}
		s, err := result.ReadSummary(filepath.Join(out, "summary.json"))
		if err != nil {
			return err
		}
		var aa *result.OverheadSummary
		for _, cs := range s.Conditions {
			if cs.Name == "baseline A/A" {
				aa = cs.Overhead
			}
		}
		p("| %s | %.1f%% | %.1f%% | %.0f | %s |", share, 100*sidebyside.CV(phases), 100*sidebyside.CV(seconds), stats.Median(tput), interval(aa))
	}
	name := "SHARES.md"
	if c.drift {
		name = "SHARES-drift.md"
	}
	return sidebyside.Publish(filepath.Join(c.dir, name), w.String())
}
