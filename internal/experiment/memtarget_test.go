package experiment_test

import (
	"math"
	"testing"
	"time"

	"github.com/obsbench/obsbench/internal/analysis"
	"github.com/obsbench/obsbench/internal/dataset"
	"github.com/obsbench/obsbench/internal/driver"
	"github.com/obsbench/obsbench/internal/engine/enginetest"
	"github.com/obsbench/obsbench/internal/experiment"
	"github.com/obsbench/obsbench/internal/observer"
	"github.com/obsbench/obsbench/internal/result"
	"github.com/obsbench/obsbench/internal/workload"
)

// The tests of the runner against the in-memory target (tier 1) run it
// inside testing/synctest bubbles: the memory server spends each
// statement's service time asleep, so the bubble's fake clock runs a 40 s
// alternation run in a fraction of a real second and the throughput
// follows the server's schedule exactly (with the noise the options ask
// for, drawn second by second from a seed). The experiments below are
// therefore as long as a real one needs to resolve what they check, and
// their outcome is the same on every run: no flakiness to tolerate.

// stmtCost and capacity give a memory server of 2000 statements/s.
const (
	stmtCost = time.Millisecond
	capacity = 2
)

var (
	baseline = observer.Observer{Name: observer.Baseline}
	// slow costs what its Overheads entry says; its setting lets a
	// revert be checked.
	slow = observer.Observer{Name: "slow", Settings: map[string]string{"slow_log": "on"}}
	// free changes a setting and costs nothing: an A/A comparison in
	// rounds.
	free = observer.Observer{Name: "free", Settings: map[string]string{"free_log": "on"}}
)

// memOptions are a memory server's options for these tests: 2000
// statements/s, a speed that varies by noise (relative SD) from second to
// second, the observers' costs.
func memOptions(noise float64, overheads map[string]float64) enginetest.Options {
	return enginetest.Options{StatementCost: stmtCost, Capacity: capacity, Noise: noise, Seed: 7,
		Overheads: overheads, Settings: map[string]string{"slow_log": "off", "free_log": "off"}}
}

// newConfig is an experiment of the credit-top1 workload on srv, with the
// credit dataset loaded: 8 sessions, rounds of 0.5 s after 0.1 s of
// warm-up, alternation runs of 40 s in phases of 2 to 3 s.
func newConfig(t *testing.T, srv *enginetest.Server, method experiment.Method, obs ...observer.Observer) experiment.Config {
	t.Helper()
	wl, err := workload.Lookup("credit-top1")
	if err != nil {
		t.Fatal(err)
	}
	ds, err := dataset.Lookup(wl.Dataset)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Load(t.Context(), ds); err != nil {
		t.Fatal(err)
	}
	return experiment.Config{
		Target: srv, Workload: wl, Dataset: ds, Observers: obs, Method: method, Rounds: 3,
		Alternation: experiment.Alternation{Duration: 40 * time.Second, MinPhase: 2, MaxPhase: 3, Reps: 2, CheckDuration: time.Second},
		Seed:        11,
		Driver:      driver.Config{Clients: 8, Warmup: 100 * time.Millisecond, Duration: 500 * time.Millisecond},
		Out:         t.TempDir(),
	}
}

// run runs the experiment cfg, or the test fails with its error.
func run(t *testing.T, cfg experiment.Config) []result.Run {
	t.Helper()
	runs, err := experiment.Run(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return runs
}

// summarize is the runs' summary, by condition name.
func summarize(t *testing.T, runs []result.Run) map[string]result.ConditionSummary {
	t.Helper()
	s := summaryOf(runs)
	out := map[string]result.ConditionSummary{}
	for _, c := range s.Conditions {
		out[c.Name] = c
	}
	return out
}

// summaryOf is what the report of runs would say.
func summaryOf(runs []result.Run) result.Summary {
	return analysis.Summarize(result.Summary{}, nil, runs)
}

// checkOverhead asserts that condition name's overhead interval holds
// want (percent) and is a real interval (narrower than maxWidth points),
// and that it is significant exactly when want is not 0.
func checkOverhead(t *testing.T, conds map[string]result.ConditionSummary, name string, want, maxWidth float64) {
	t.Helper()
	c, ok := conds[name]
	if !ok {
		t.Errorf("%s: not in the summary", name)
		return
	}
	o := c.Overhead
	if o == nil {
		t.Errorf("%s: no overhead", name)
		return
	}
	t.Logf("%s: %.2f%% [%.2f, %.2f] %s (%s); want %.2f%%", name, o.Pct, o.CILow, o.CIHigh, o.Verdict, c.Method, want)
	// The bounds are exact order statistics: an interval of equal
	// phases may be a point a rounding off the true value.
	const eps = 0.05
	if !(o.CILow-eps <= want && want <= o.CIHigh+eps) {
		t.Errorf("%s: overhead %.2f%% [%.2f, %.2f] does not hold the true %.2f%%", name, o.Pct, o.CILow, o.CIHigh, want)
	}
	if w := o.CIHigh - o.CILow; math.IsNaN(w) || w > maxWidth {
		t.Errorf("%s: interval [%.2f, %.2f] wider than %.0f points: it says nothing", name, o.CILow, o.CIHigh, maxWidth)
	}
	switch wantVerdict := "slower"; {
	case want == 0 && (o.Significant || o.Verdict != "no detectable difference"):
		t.Errorf("%s: verdict %q (significant %v); want no detectable difference", name, o.Verdict, o.Significant)
	case want > 0 && (!o.Significant || o.Verdict != wantVerdict):
		t.Errorf("%s: verdict %q (significant %v); want %s", name, o.Verdict, o.Significant, wantVerdict)
	}
}

// byCondition groups runs by condition.
func byCondition(runs []result.Run) map[string][]result.Run {
	out := map[string][]result.Run{}
	for _, r := range runs {
		out[r.Condition] = append(out[r.Condition], r)
	}
	return out
}
