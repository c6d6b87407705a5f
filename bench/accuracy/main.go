// Command accuracy measures how accurate the default method's figure is
// on known costs, as coverage over many experiments rather than the best
// run: it runs `obsbench calibrate` (synthetic observers sized in a
// duet's twin, then measured by duet, the default method at its default
// length) over and over, every other experiment under a drift made on
// purpose (a thread of this process busy on one core for a random 3-12
// s, then idle for 3-12 s), and reports, per size and per condition:
// how often the 95% interval holds the size, the mean bias and its
// standard error, the mean half-width, and how often the cost is
// detected; for the two A/A comparisons of each experiment (the duet's
// A/A arm, and calibration-0pct, an observer switched like the others
// that adds nothing) how often the interval excludes 0.
//
//	go run ./bench/accuracy [-experiments 10] [-effects 0.5,1,2,5] [-seed 1] [-dir bench/accuracy] [-client-work µs] [-load P]
//
// With -load, every experiment runs at a fixed arrival rate, the one at
// which the baseline keeps P% of a twin's quota busy: the sizes are
// taken, and the figure read from server CPU per statement, below the
// quota (calibrate's --load).
//
// With -client-work, experiments 3-4, 7-8, ... make each session spend
// that much CPU in the driver before each statement (calibrate's
// --client-work): the figure is the server's, so it must read the same
// with a heavier driver, which the report compares.
//
// It writes RESULT.md, rewritten after every experiment (an interrupted
// bench keeps what it measured), and each experiment's text output
// beside it.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	moremath "github.com/aclements/go-moremath/stats"

	"github.com/obsbench/obsbench/bench/internal/sidebyside"
	"github.com/obsbench/obsbench/internal/calibrate"
	"github.com/obsbench/obsbench/internal/result"
)

var logf = sidebyside.Logger("accuracy")

type config struct {
	experiments int
	effects     string
	seed        uint64
	dir         string
	clientWork  int
	load        float64
	closedLoop  bool
	resume      bool
	command     string
}

func main() {
	var c config
	flag.IntVar(&c.experiments, "experiments", 10, "calibrate experiments to run, every other one under the made drift")
	flag.StringVar(&c.effects, "effects", "0.5,1,2,5", "the synthetic costs of each experiment, in percent")
	flag.Uint64Var(&c.seed, "seed", 1, "seed of the first experiment (the next ones add 1)")
	flag.StringVar(&c.dir, "dir", "bench/accuracy", "where RESULT.md and the outputs go")
	flag.IntVar(&c.clientWork, "client-work", 0, "µs of driver CPU before each statement in every other pair of experiments (0: none)")
	flag.Float64Var(&c.load, "load", 0, "run every experiment at a fixed arrival rate, this percentage of a twin's quota busy (calibrate's --load; 0: calibrate's default, half load)")
	flag.BoolVar(&c.closedLoop, "closed-loop", false, "run every experiment in a closed loop, each twin's server saturated at its quota (calibrate's --closed-loop)")
	again := flag.Bool("render", false, "write RESULT.md again from the comparisons.json of -dir, measuring nothing")
	flag.BoolVar(&c.resume, "resume", false, "keep the experiments in the comparisons.json of -dir and run the next ones, up to -experiments in all (same flags as the run that made it)")
	flag.Parse()
	c.command = sidebyside.Command("accuracy")
	if *again {
		sidebyside.Main("accuracy", func(context.Context) error { return render(c) })
		return
	}
	sidebyside.Main("accuracy", func(ctx context.Context) error { return run(ctx, c) })
}

// comparison is one interval of one experiment against its known size,
// as comparisons.json keeps it.
type comparison struct {
	Experiment int     `json:"experiment"`
	Drift      bool    `json:"drift"`
	Name       string  `json:"name"`
	SizePct    float64 `json:"size_pct"`   // the expected overhead (0: an A/A comparison)
	Target     float64 `json:"target_pct"` // the size asked for (0 for the A/A ones)
	Pct        float64 `json:"pct"`
	Lo         float64 `json:"ci_low"`
	Hi         float64 `json:"ci_high"`
	// The server-share figure, where it was read (HasShare).
	HasShare bool    `json:"has_share"`
	Share    float64 `json:"share_pct"`
	ShareLo  float64 `json:"share_ci_low"`
	ShareHi  float64 `json:"share_ci_high"`
	// ClientWork is the experiment's driver work before each statement
	// (µs; 0: the plain driver), DriverUS the driver CPU it measured per
	// statement (each twin's load group's, the runs' mean).
	ClientWork int     `json:"client_work_us,omitempty"`
	DriverUS   float64 `json:"driver_us_per_stmt,omitempty"`
	// Basis is what the table's overhead was read from (a duet's
	// overhead basis); where it was server CPU per statement, the
	// throughput figure beside it (HasTput).
	Basis   string  `json:"basis,omitempty"`
	HasTput bool    `json:"has_throughput,omitempty"`
	Tput    float64 `json:"throughput_pct,omitempty"`
	TputLo  float64 `json:"throughput_ci_low,omitempty"`
	TputHi  float64 `json:"throughput_ci_high,omitempty"`
}

// interval is one of a comparison's figures with its interval: the
// table's, the server share or the throughput figure.
type interval struct{ pct, lo, hi float64 }

func (c comparison) share() (interval, bool) {
	return interval{c.Share, c.ShareLo, c.ShareHi}, c.HasShare
}
func (c comparison) tput() (interval, bool) { return interval{c.Tput, c.TputLo, c.TputHi}, c.HasTput }

func (c comparison) holds() bool     { return c.Lo <= c.SizePct && c.SizePct <= c.Hi }
func (c comparison) detected() bool  { return c.Lo > 0 }
func (c comparison) excludes0() bool { return c.Lo > 0 || c.Hi < 0 }

func run(ctx context.Context, c config) error {
	logf("building obsbench")
	tmp, exe, err := sidebyside.BuildObsbench(ctx, "accuracy")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return err
	}
	prev, err := earlier(c)
	if err != nil {
		return err
	}
	all := prev.Comparisons
	var busy atomic.Int64
	busy.Store(prev.BusyMS)
	driftTime := time.Duration(prev.DriftS * float64(time.Second))
	start := time.Now().Add(-time.Duration(prev.TotalS * float64(time.Second)))
	for i := prev.Done; i < c.experiments; i++ {
		drift := i%2 == 1
		out := filepath.Join(tmp, fmt.Sprintf("exp-%d", i+1))
		seed := strconv.FormatUint(c.seed+uint64(i), 10)
		args := []string{"calibrate", "--effects", c.effects, "--count=false", "--seed", seed, "--out", out}
		if c.load > 0 {
			args = append(args, "--load", strconv.FormatFloat(c.load, 'g', -1, 64))
		}
		if c.closedLoop {
			args = append(args, "--closed-loop")
		}
		work := 0
		if c.clientWork > 0 && (i/2)%2 == 1 {
			work = c.clientWork
			args = append(args, "--client-work", strconv.Itoa(work))
		}
		logf("experiment %d of %d (drift %v): obsbench %s", i+1, c.experiments, drift, strings.Join(args, " "))
		t0 := time.Now()
		dctx, cancel := context.WithCancel(ctx)
		if drift {
			go sidebyside.Drift(dctx, c.seed+uint64(i), &busy)
		}
		text, err := sidebyside.RunObsbench(ctx, exe, args...)
		cancel()
		if drift {
			driftTime += time.Since(t0)
		}
		if err != nil {
			return fmt.Errorf("experiment %d: %w", i+1, err)
		}
		if err := os.WriteFile(filepath.Join(c.dir, fmt.Sprintf("output-%d.txt", i+1)), []byte(text), 0o644); err != nil {
			return err
		}
		got, err := comparisons(out, i+1, drift)
		if err == nil {
			err = driverCost(out, work, got)
		}
		if err != nil {
			return fmt.Errorf("experiment %d: %w", i+1, err)
		}
		all = append(all, got...)
		logf("experiment %d took %s", i+1, time.Since(t0).Round(time.Second))
		st := state{Command: prev.commandThen(c.command), Comparisons: all, Done: i + 1, BusyMS: busy.Load(), DriftS: driftTime.Seconds(), TotalS: time.Since(start).Seconds()}
		if err := st.save(c); err != nil {
			return err
		}
	}
	return nil
}

// comparisons reads an experiment's calibration.json and summary.json:
// each calibration against its size, and the A/A arm against 0.
func comparisons(dir string, exp int, drift bool) ([]comparison, error) {
	b, err := os.ReadFile(filepath.Join(dir, "calibration.json"))
	if err != nil {
		return nil, err
	}
	var f struct{ Calibrations []calibrate.Calibration }
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, err
	}
	sum, err := result.ReadSummary(filepath.Join(dir, "summary.json"))
	if err != nil {
		return nil, err
	}
	var out []comparison
	for _, cal := range f.Calibrations {
		if !cal.Measured.Measured() {
			return nil, fmt.Errorf("%s: not measured", cal.Name)
		}
		c := comparison{Experiment: exp, Drift: drift, Name: cal.Name, SizePct: cal.ExpectedPct, Target: cal.TargetPct,
			Pct: cal.Measured.Pct, Lo: cal.Measured.CILow, Hi: cal.Measured.CIHigh, Basis: cal.Measured.Basis}
		if t := cal.MeasuredThroughput; t.Measured() {
			c.HasTput, c.Tput, c.TputLo, c.TputHi = true, t.Pct, t.CILow, t.CIHigh
		}
		if s := cal.MeasuredShare; s != nil {
			c.HasShare, c.Share, c.ShareLo, c.ShareHi = true, s.Pct, s.CILow, s.CIHigh
		}
		out = append(out, c)
	}
	i := slices.IndexFunc(sum.Conditions, func(cs result.ConditionSummary) bool { return cs.Name == "baseline A/A" })
	if i < 0 || !sum.Conditions[i].Overhead.Measured() {
		return nil, fmt.Errorf("no A/A arm in %s", dir)
	}
	aa := sum.Conditions[i]
	c := comparison{Experiment: exp, Drift: drift, Name: "baseline A/A", Pct: aa.Overhead.Pct, Lo: aa.Overhead.CILow, Hi: aa.Overhead.CIHigh, Basis: aa.Overhead.Basis}
	if t := aa.ThroughputOverhead; t.Measured() {
		c.HasTput, c.Tput, c.TputLo, c.TputHi = true, t.Pct, t.CILow, t.CIHigh
	}
	if s := aa.ServerCost; s != nil {
		c.HasShare, c.Share, c.ShareLo, c.ShareHi = true, s.Share.Pct, s.Share.CILow, s.Share.CIHigh
	}
	return append(out, c), nil
}

// driverCost sets each comparison's driver work and the driver CPU per
// statement the experiment's duet runs measured in their twins' load
// groups.
func driverCost(dir string, work int, cs []comparison) error {
	runs, err := result.ReadRuns(filepath.Join(dir, "results.jsonl"))
	if err != nil {
		return err
	}
	var sum float64
	n := 0
	for _, r := range runs {
		d := r.Duet
		if d == nil || !d.LoadApart || r.Driver.Throughput <= 0 || d.Off.Throughput <= 0 {
			continue
		}
		sum += 1e6 * (d.OnLoadCPUs/r.Driver.Throughput + d.OffLoadCPUs/d.Off.Throughput) / 2
		n++
	}
	if n == 0 {
		return fmt.Errorf("%s: no duet run with its loads apart", dir)
	}
	for i := range cs {
		cs[i].ClientWork, cs[i].DriverUS = work, sum/float64(n)
	}
	return nil
}

// group is the comparisons of one size (or the A/A ones) in one condition.
type group struct {
	label string
	cs    []comparison
}

// state is what the bench measured so far, as comparisons.json keeps it:
// RESULT.md is made from it, again with -render.
type state struct {
	Command     string       `json:"command"`
	Comparisons []comparison `json:"comparisons"`
	Done        int          `json:"experiments"`
	BusyMS      int64        `json:"drift_busy_ms"`
	DriftS      float64      `json:"drift_experiments_s"`
	TotalS      float64      `json:"total_s"`
}

// save writes comparisons.json and RESULT.md.
func (st state) save(c config) error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(c.dir, "comparisons.json"), append(b, '\n'), 0o644); err != nil {
		return err
	}
	return sidebyside.Publish(filepath.Join(c.dir, "RESULT.md"), report(c, st))
}

// render writes RESULT.md again from comparisons.json.
func render(c config) error {
	st, err := load(c)
	if err != nil {
		return err
	}
	return st.save(c)
}

// load reads the comparisons.json of c.dir.
func load(c config) (state, error) {
	var st state
	b, err := os.ReadFile(filepath.Join(c.dir, "comparisons.json"))
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return st, fmt.Errorf("comparisons.json: %w", err)
	}
	return st, nil
}

// earlier is what a -resume keeps: the experiments already in c.dir,
// whose seeds and drift the next ones continue. Without -resume it is
// nothing.
func earlier(c config) (state, error) {
	if !c.resume {
		return state{}, nil
	}
	st, err := load(c)
	if err != nil {
		return st, fmt.Errorf("-resume: %w", err)
	}
	if st.Done >= c.experiments {
		return st, fmt.Errorf("-resume: %s holds %d experiments already; give -experiments above it", c.dir, st.Done)
	}
	logf("resuming after experiment %d of %s", st.Done, c.dir)
	return st, nil
}

// commandThen is the command line of what st holds followed by cmd's,
// where a -resume added experiments to it.
func (st state) commandThen(cmd string) string {
	if st.Command == "" || st.Command == cmd {
		return cmd
	}
	return st.Command + "`, then `" + cmd
}

func report(c config, st state) string {
	all, done, busyMS := st.Comparisons, st.Done, st.BusyMS
	driftTime, total := time.Duration(st.DriftS*float64(time.Second)), time.Duration(st.TotalS*float64(time.Second))
	w := sidebyside.NewReport("Accuracy of the default method on known costs", st.Command)
	p := w.Line
	p("- %d experiment(s) of `obsbench calibrate --effects %s --count=false` (the default method, duet, at its default length: 16 phases of 2 s per arm), %s in all", done, c.effects, total.Round(time.Minute))
	p("- every other experiment under a drift made on purpose: a thread of the bench busy on one core for a random 3-12 s, then idle 3-12 s (busy %.0f%% of those experiments' time)", 100*float64(busyMS)/math.Max(1, float64(driftTime.Milliseconds())))
	if work := slices.IndexFunc(all, func(x comparison) bool { return x.ClientWork > 0 }); work >= 0 {
		p("- experiments 3-4, 7-8, ... with `--client-work %d`: each session spends that many µs of CPU in the driver before each statement", all[work].ClientWork)
	}
	p("- each interval at the experiment's own level: 95%% over its %d comparisons together (Bonferroni), so each is wider than a lone 95%% interval", len(strings.Split(c.effects, ","))+1)
	p("- size: the expected overhead of each synthetic cost, X/(S+X), from one loop iteration's server CPU measured in a sizing duet of its own before the experiment (see `obsbench calibrate -h`)")
	p("")
	p("## The table's overhead")
	p("")
	p("Read from each twin server's CPU per statement in %d of %d comparisons (where the observer's twin used its CPU as the other did), from throughput in the rest.",
		count(all, func(x comparison) bool { return x.Basis == result.BasisServerCPU }), len(all))
	p("")
	p("| size asked | condition | n | held | coverage | mean bias (SE) | mean half-width | detected |")
	p("|---:|---|---:|---:|---:|---:|---:|---:|")
	for _, g := range groups(all) {
		n := len(g.cs)
		held, det := count(g.cs, comparison.holds), count(g.cs, comparison.detected)
		var bias []float64
		var hw float64
		for _, x := range g.cs {
			bias = append(bias, x.Pct-x.SizePct)
			hw += (x.Hi - x.Lo) / 2 / float64(n)
		}
		m, se := meanSE(bias)
		detected := fmt.Sprintf("%d of %d", det, n)
		if strings.HasPrefix(g.label, "A/A") {
			detected = fmt.Sprintf("%d of %d exclude 0", count(g.cs, comparison.excludes0), n)
		}
		p("| %s | %s | %d | %d | %.0f%% | %+.2f (%.2f) | ±%.2f | %s |", g.label, condition(g.cs), n, held, 100*float64(held)/float64(n), m, se, hw, detected)
	}
	p("")
	p("%s", smallestDetected(all))
	p("")
	figureTable(p, all, "Server share (srv +µs/stmt as a share of the server's CPU per statement)", comparison.share)
	if slices.ContainsFunc(all, func(x comparison) bool { return x.HasTput }) {
		figureTable(p, all, "Throughput figure, where the table's was read from server CPU per statement", comparison.tput)
	}
	if slices.ContainsFunc(all, func(x comparison) bool { return x.ClientWork > 0 }) {
		heavierDriver(p, all)
	}
	p("")
	p("## Every comparison")
	p("")
	p("| experiment | drift | driver work µs | name | size | overhead [CI] | server share [CI] |")
	p("|---:|---|---:|---|---:|---|---|")
	for _, x := range all {
		share := "–"
		if x.HasShare {
			share = fmt.Sprintf("%.2f [%.2f, %.2f]", x.Share, x.ShareLo, x.ShareHi)
		}
		p("| %d | %v | %d | %s | %.2f | %.2f [%.2f, %.2f] | %s |", x.Experiment, x.Drift, x.ClientWork, x.Name, x.SizePct, x.Pct, x.Lo, x.Hi, share)
	}
	return w.String()
}

// figureTable is a table of one of the comparisons' other figures, where
// they have it, against the sizes.
func figureTable(p func(string, ...any), all []comparison, title string, figure func(comparison) (interval, bool)) {
	p("")
	p("## %s", title)
	p("")
	p("| size asked | condition | n | held | coverage | mean bias (SE) | mean half-width |")
	p("|---:|---|---:|---:|---:|---:|---:|")
	for _, g := range groups(all) {
		var bias []float64
		var hw float64
		held := 0
		for _, x := range g.cs {
			if v, ok := figure(x); ok {
				bias, hw = append(bias, v.pct-x.SizePct), hw+(v.hi-v.lo)/2
				if v.lo <= x.SizePct && x.SizePct <= v.hi {
					held++
				}
			}
		}
		if n := len(bias); n > 0 {
			m, se := meanSE(bias)
			p("| %s | %s | %d | %d | %.0f%% | %+.2f (%.2f) | ±%.2f |", g.label, condition(g.cs), n, held, 100*float64(held)/float64(n), m, se, hw/float64(n))
		}
	}
}

// heavierDriver compares each size's bias with the plain driver and with
// the driver made heavier (-client-work): the figure is the server's, so
// the two should differ by no more than their standard errors allow.
func heavierDriver(p func(string, ...any), all []comparison) {
	p("")
	p("## The driver made heavier (-client-work)")
	p("")
	p("| size asked | driver | n | driver CPU µs/stmt | held | mean bias (SE) | heavier minus plain (SE) |")
	p("|---:|---|---:|---:|---:|---:|---:|")
	for _, g := range groups(all) {
		if hasBoth(all) && condition(g.cs) != "both" {
			continue // quiet and drift pooled: the driver is what differs
		}
		var plain, heavy []comparison
		for _, x := range g.cs {
			if x.ClientWork > 0 {
				heavy = append(heavy, x)
			} else {
				plain = append(plain, x)
			}
		}
		if len(plain) == 0 || len(heavy) == 0 {
			continue
		}
		mp, sp := meanSE(biases(plain))
		mh, sh := meanSE(biases(heavy))
		for _, side := range []struct {
			name string
			cs   []comparison
			m, s float64
		}{{"plain", plain, mp, sp}, {fmt.Sprintf("+%d µs", heavy[0].ClientWork), heavy, mh, sh}} {
			var us float64
			for _, x := range side.cs {
				us += x.DriverUS / float64(len(side.cs))
			}
			diff := ""
			if side.name != "plain" {
				diff = fmt.Sprintf("%+.2f (%.2f)", mh-mp, math.Hypot(sp, sh))
			}
			p("| %s | %s, %s | %d | %.1f | %d | %+.2f (%.2f) | %s |", g.label, condition(g.cs), side.name, len(side.cs), us, count(side.cs, comparison.holds), side.m, side.s, diff)
		}
	}
}

// biases are the comparisons' estimates less their sizes.
func biases(cs []comparison) []float64 {
	var out []float64
	for _, x := range cs {
		out = append(out, x.Pct-x.SizePct)
	}
	return out
}

// groups splits the comparisons by size asked and condition (quiet,
// drift, both), the A/A ones apart.
func groups(all []comparison) []group {
	var sizes []float64
	for _, x := range all {
		if x.Target > 0 && !slices.Contains(sizes, x.Target) {
			sizes = append(sizes, x.Target)
		}
	}
	slices.Sort(sizes)
	var out []group
	conds := []func(comparison) bool{func(x comparison) bool { return !x.Drift }, func(x comparison) bool { return x.Drift }}
	if hasBoth(all) {
		conds = append(conds, func(comparison) bool { return true })
	}
	add := func(label string, keep func(comparison) bool) {
		for _, cond := range conds {
			var cs []comparison
			for _, x := range all {
				if keep(x) && cond(x) {
					cs = append(cs, x)
				}
			}
			if len(cs) > 0 {
				out = append(out, group{label: label, cs: cs})
			}
		}
	}
	for _, s := range sizes {
		add(fmt.Sprintf("%g%%", s), func(x comparison) bool { return x.Target == s })
	}
	add("A/A, arm", func(x comparison) bool { return x.Name == "baseline A/A" })
	add("A/A, null observer", func(x comparison) bool { return x.Name == calibrate.NullName })
	return out
}

// smallestDetected says which size asked was the smallest detected in at
// least 80% of its experiments (all conditions together).
func smallestDetected(all []comparison) string {
	both := hasBoth(all)
	for _, g := range groups(all) {
		if strings.HasPrefix(g.label, "A/A") || (both && condition(g.cs) != "both") {
			continue
		}
		if n := len(g.cs); 5*count(g.cs, comparison.detected) >= 4*n {
			return fmt.Sprintf("The smallest size detected in at least 80%% of its experiments: %s (%d of %d).", g.label, count(g.cs, comparison.detected), n)
		}
	}
	return "No size was detected in 80% of its experiments."
}

// hasBoth says whether the comparisons ran in both conditions, so that
// groups has a row of both for each size.
func hasBoth(all []comparison) bool {
	return count(all, func(x comparison) bool { return x.Drift }) > 0 && count(all, func(x comparison) bool { return !x.Drift }) > 0
}

// condition names the condition a group's comparisons ran in.
func condition(cs []comparison) string {
	q, d := count(cs, func(x comparison) bool { return !x.Drift }), count(cs, func(x comparison) bool { return x.Drift })
	switch {
	case d == 0:
		return "quiet"
	case q == 0:
		return "drift"
	}
	return "both"
}

func count(cs []comparison, f func(comparison) bool) int {
	n := 0
	for _, c := range cs {
		if f(c) {
			n++
		}
	}
	return n
}

func meanSE(xs []float64) (mean, se float64) {
	return moremath.Mean(xs), moremath.StdDev(xs) / math.Sqrt(float64(len(xs)))
}
