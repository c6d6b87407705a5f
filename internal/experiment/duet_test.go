package experiment_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/obsbench/obsbench/internal/engine/enginetest"
	"github.com/obsbench/obsbench/internal/experiment"
	"github.com/obsbench/obsbench/internal/observer"
	"github.com/obsbench/obsbench/internal/result"
	"github.com/obsbench/obsbench/internal/workload"
)

// machineDrift is a machine whose speed jumps between 0.6 and 1.4 every
// 1.3 s, the same for every server that asks at the same moment: far
// faster and larger than anything alternation or rounds can cancel.
func machineDrift(t time.Time) float64 {
	step := uint64(t.UnixNano() / 1_300_000_000)
	return 0.6 + 0.8*rand.New(rand.NewPCG(99, step)).Float64()
}

// duetConfig is an experiment of method on a, with b as its twin unless
// nil, in 16 rounds (phases) of 2 s: 8 pairs, enough for a signed-rank
// interval over two comparisons.
func duetConfig(t *testing.T, a, b *enginetest.Server, method experiment.Method) experiment.Config {
	t.Helper()
	cfg := newConfig(t, a, method, baseline, slow, free)
	cfg.Rounds = 16
	cfg.Driver.Duration = 2 * time.Second
	if b != nil {
		if err := b.Load(t.Context(), cfg.Dataset); err != nil {
			t.Fatal(err)
		}
		cfg.Twins = &experiment.Twins{Target: b}
	}
	return cfg
}

// A drift common to both twins is removed: under a machine whose speed
// swings ±40% every 1.3 s, duet finds slow's 4.76% within a fraction of a
// point, and free (an A/A in all but name) and the A/A arm at 0, while
// rounds on the same machine cannot tell slow from nothing.
func TestDuetRemovesCommonDrift(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		opts := memOptions(0, map[string]float64{"slow": 0.05})
		opts.Drift = machineDrift
		a, b := enginetest.New(opts), enginetest.New(opts)
		runs := run(t, duetConfig(t, a, b, experiment.MethodDuet))
		by := byCondition(runs)
		if len(runs) != 48 || len(by[experiment.AAName]) != 16 || len(by["slow"]) != 16 || len(by["free"]) != 16 {
			t.Fatalf("runs %v; want 16 phases of the A/A arm, slow and free", names(runs))
		}
		for _, r := range by["slow"] {
			if r.Error != "" || r.Method != "duet" || r.Duet == nil {
				t.Fatalf("phase %d (%s): %s, error %q, duet %v", r.Seq, r.Condition, r.Method, r.Error, r.Duet)
			}
			if want := experiment.TwinNames[experiment.DuetOn(r.Round, experiment.DuetFlipped(11, r.Condition))]; r.Duet.On != want {
				t.Errorf("phase %d of slow: observer in twin %s; want %s (A,B,B,A or B,A,A,B, as drawn for the arm)", r.Round, r.Duet.On, want)
			}
			// Each phase's ratio alone is the truth, whatever the drift.
			if got := 100 * (1 - r.Driver.Throughput/r.Duet.Off.Throughput); math.Abs(got-enginetest.ExpectedOverheadPct(0, 0.05)) > 0.5 {
				t.Errorf("phase %d of slow: %.2f%% slower than its twin; want %.2f%%", r.Round, got, enginetest.ExpectedOverheadPct(0, 0.05))
			}
		}
		conds := summarize(t, runs)
		checkOverhead(t, conds, "slow", enginetest.ExpectedOverheadPct(0, 0.05), 1)
		checkOverhead(t, conds, "free", 0, 1)
		checkOverhead(t, conds, experiment.AAName, 0, 1)
		if c := conds["slow"]; c.Measures != result.MeasuresWhole || c.Reference == nil || c.Duet == nil || c.Duet.Phases != 16 {
			t.Errorf("slow: measures %q, reference %v, duet %+v; want the whole observer against its twin over 16 phases", c.Measures, c.Reference, c.Duet)
		}
		if st := b.Stats(); st.Resets < 48 {
			t.Errorf("twin b was reset %d times; want before each of its 48 phases", st.Resets)
		}

		// The same machine, one server, rounds: the drift is all there is.
		opts.Drift = machineDrift
		one := enginetest.New(opts)
		rounds := run(t, duetConfig(t, one, nil, experiment.MethodRounds))
		r := summarize(t, rounds)["slow"].Overhead
		d := conds["slow"].Overhead
		t.Logf("rounds: %.2f [%.2f, %.2f]; duet: %.2f [%.2f, %.2f]", r.Pct, r.CILow, r.CIHigh, d.Pct, d.CILow, d.CIHigh)
		if r.CIHigh-r.CILow < 10*(d.CIHigh-d.CILow) {
			t.Errorf("rounds' interval [%.2f, %.2f] is not ten times duet's [%.2f, %.2f]: the drift did not bite", r.CILow, r.CIHigh, d.CILow, d.CIHigh)
		}
	})
}

// A difference between the twins is removed by the swaps: with twin b 3%
// slower than twin a, the phases with the observer in a and those with
// it in b lean 3% each way, and each pair of them holds the truth, so the
// interval stays as narrow as with identical twins; the A/A arm shows no
// difference.
func TestDuetSwapsRemoveTwinAsymmetry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		opts := memOptions(0, map[string]float64{"slow": 0.05})
		opts.Drift = machineDrift
		a := enginetest.New(opts)
		opts.StatementCost = stmtCost * 103 / 100
		b := enginetest.New(opts)
		runs := run(t, duetConfig(t, a, b, experiment.MethodDuet))
		mean := map[string]float64{}
		for _, r := range byCondition(runs)["slow"] {
			mean[r.Duet.On] += math.Log(r.Driver.Throughput/r.Duet.Off.Throughput) / 8
		}
		if lean := 100 * (mean["a"] - mean["b"]); lean < 5 || lean > 7 {
			t.Errorf("phases with slow in a lean %.2f points from those with it in b; want about 6 (twice the twins' 3%%)", lean)
		}
		conds := summarize(t, runs)
		checkOverhead(t, conds, "slow", enginetest.ExpectedOverheadPct(0, 0.05), 1)
		checkOverhead(t, conds, experiment.AAName, 0, 1)
		if o := conds["slow"].Overhead; math.Abs(o.Pct-enginetest.ExpectedOverheadPct(0, 0.05)) > 0.5 {
			t.Errorf("slow: %.2f%%; want %.2f%% once the swaps cancel the twins' difference", o.Pct, enginetest.ExpectedOverheadPct(0, 0.05))
		}
	})
}

// A twin that fails before its phase starts stops the other at the
// meeting point instead of leaving it waiting, and the experiment stops
// with the failing twin named.
func TestDuetTwinFailsBeforePhase(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		opts := memOptions(0, map[string]float64{"slow": 0.05})
		a := enginetest.New(opts)
		opts.Faults.FailApply = "slow"
		b := enginetest.New(opts)
		cfg := duetConfig(t, a, b, experiment.MethodDuet)
		cfg.Observers = cfg.Observers[:2] // baseline, slow
		_, err := experiment.Run(t.Context(), cfg)
		if err == nil {
			t.Fatal("no error; want the failed apply of twin b")
		}
		t.Log(err)
		if !strings.Contains(err.Error(), "twin b") {
			t.Errorf("error %q does not name twin b", err)
		}
	})
}

// A duet of fixed work (dss-mix's --blocks): each twin runs the same
// statements and ends when they are done, the phase when both are; the
// ratio of their throughputs is the ratio of their times. Under the same
// drift, slow's cost is found within a point, and each twin ran every
// statement of its blocks. Only the observer's twin's last few percent
// run alone, under a drift the other twin no longer shares, so a phase
// alone is held to 2 points, not to the exact figure of a timed phase.
func TestDuetFixedWork(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		opts := memOptions(0, map[string]float64{"slow": 0.05})
		opts.Drift = machineDrift
		a, b := enginetest.New(opts), enginetest.New(opts)
		cfg := duetConfig(t, a, b, experiment.MethodDuet)
		wl, err := workload.Lookup("dss-mix")
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Workload, err = wl.WithParams(map[string]int{"blocks": 1}); err != nil {
			t.Fatal(err)
		}
		cfg.Observers = []observer.Observer{baseline, slow}
		cfg.Driver.Warmup, cfg.Driver.Duration = 0, time.Hour // a cap, as the run sets it for fixed work
		runs := run(t, cfg)
		want := enginetest.ExpectedOverheadPct(0, 0.05)
		for _, r := range byCondition(runs)["slow"] {
			if r.Error != "" || r.Duet == nil {
				t.Fatalf("phase %d: error %q, duet %v", r.Round, r.Error, r.Duet)
			}
			if n := int64(cfg.Driver.Clients * 101); r.Driver.Measured != n || r.Duet.Off.Measured != n {
				t.Errorf("phase %d: %d and %d statements; want each twin's %d (one block of 101 per session)", r.Round, r.Driver.Measured, r.Duet.Off.Measured, n)
			}
			if got := 100 * (1 - r.Driver.Throughput/r.Duet.Off.Throughput); math.Abs(got-want) > 2 {
				t.Errorf("phase %d: %.2f%% slower than its twin; want %.2f%% within 2 points", r.Round, got, want)
			}
		}
		conds := summarize(t, runs)
		checkOverhead(t, conds, "slow", want, 2)
		checkOverhead(t, conds, experiment.AAName, 0, 2)
	})
}

// An observer that leaves part of its cost behind in its twin for the
// next phase (a log being written back, a cache its restart emptied)
// must not bias the arms that follow it. With one A,B,B,A order for all
// arms, the A/A arm's observer's twin would mostly be the one the phase
// before slowed; each arm's order is drawn from the seed, so over seeds
// the A/A arm is as often helped as hurt, and no arm's twin is mostly
// the slowed one.
func TestDuetOrderDrawnPerArm(t *testing.T) {
	const seeds = 8
	var aa, same, phases float64
	flipped := 0
	for seed := uint64(1); seed <= seeds; seed++ {
		synctest.Test(t, func(t *testing.T) {
			opts := memOptions(0, map[string]float64{"slow": 0.3, "free": 0.3})
			opts.Linger = 1
			a, b := enginetest.New(opts), enginetest.New(opts)
			cfg := duetConfig(t, a, b, experiment.MethodDuet)
			cfg.Seed = seed
			runs := run(t, cfg)
			aa += summarize(t, runs)[experiment.AAName].Overhead.Pct
			var prev result.Run
			for _, r := range runs {
				if r.Round == 1 && r.Duet.On == "b" {
					flipped++
				}
				if r.Condition == experiment.AAName && prev.Duet != nil && prev.Condition != experiment.AAName {
					phases++
					if prev.Duet.On == r.Duet.On {
						same++
					}
				}
				prev = r
			}
		})
	}
	aa /= seeds
	t.Logf("A/A %.2f%% on average; the phase before an A/A phase had its observer in the A/A's observer's twin in %.0f of %.0f; %d of %d arms started in twin b", aa, same, phases, flipped, 3*seeds)
	if flipped == 0 || flipped == 3*seeds {
		t.Errorf("%d of %d arms started in twin b; want the order drawn per arm", flipped, 3*seeds)
	}
	if f := same / phases; f < 0.3 || f > 0.7 {
		t.Errorf("the A/A's observer's twin was the one the phase before slowed in %.0f%% of its phases; want about half", 100*f)
	}
	// What lingers slows the twin that had it by 23% (0.3/1.3) in the
	// next phase: one order for all arms shows most of it in the A/A
	// (17% over these seeds); drawn per arm, it is noise that averages
	// out over seeds, to within a quarter of it.
	if lingers := enginetest.ExpectedOverheadPct(0, 0.3); math.Abs(aa) > lingers/4 {
		t.Errorf("A/A %.2f%% on average over %d seeds; want within %.1f points of 0", aa, seeds, lingers/4)
	}
}

// --target-resolution grows a duet: after its planned phases, the A/A
// arm's say how many more each arm needs to resolve the target, in whole
// blocks of four, as far as --max-time allows; a quiet machine needs none.
func TestDuetTargetResolution(t *testing.T) {
	for _, tt := range []struct {
		name    string
		noise   float64
		maxTime time.Duration
		grows   bool
	}{
		{"noisy, time enough", 0.05, 2 * time.Hour, true},
		{"noisy, no time left", 0.05, time.Minute, false},
		{"quiet", 0, 2 * time.Hour, false},
	} {
		synctest.Test(t, func(t *testing.T) {
			opts := memOptions(tt.noise, map[string]float64{"slow": 0.05})
			a := enginetest.New(opts)
			opts.Seed++ // each twin's own noise
			b := enginetest.New(opts)
			cfg := duetConfig(t, a, b, experiment.MethodDuet)
			cfg.TargetResolution, cfg.MaxTime = 3, tt.maxTime
			var logged []string
			cfg.Log = func(f string, args ...any) { logged = append(logged, fmt.Sprintf(f, args...)) }
			by := byCondition(run(t, cfg))
			t.Logf("%s: %d phases; %q", tt.name, len(by[experiment.AAName]), logged)
			n := len(by[experiment.AAName])
			for _, name := range []string{"slow", "free"} {
				if len(by[name]) != n {
					t.Errorf("%s: %s ran %d phases, the A/A arm %d; want every arm alike", tt.name, name, len(by[name]), n)
				}
			}
			switch {
			case n%4 != 0 || n < 16:
				t.Errorf("%s: %d phases; want 16 or more, in blocks of four", tt.name, n)
			case tt.grows && n == 16, !tt.grows && n != 16:
				t.Errorf("%s: %d phases (log %q); grown: want %v", tt.name, n, logged, tt.grows)
			case len(logged) == 0 || !strings.Contains(strings.Join(logged, "\n"), "resolution plan:"):
				t.Errorf("%s: log %q; want the plan said", tt.name, logged)
			}
		})
	}
}
