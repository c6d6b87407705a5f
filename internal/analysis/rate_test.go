package analysis

import (
	"math"
	"strings"
	"testing"

	"github.com/obsbench/obsbench/internal/result"
)

// rateRun is duetRun at a fixed rate: both twins complete the rate's
// 1,000 units a second whatever their CPU per statement, the observer's
// twin under its share (it used onUS/offUS of the other's CPU), with p99s
// of onP99 and offP99 ms; a backlog of saturated arrivals on the
// observer's side.
func rateRun(round int, on string, onUS, offUS, onP99, offP99 float64, backlog int64) result.Run {
	r := duetRun(round, on, onUS, offUS)
	side := func(d *result.DriverResult, p99 float64, backlog int64) {
		d.Throughput, d.Measured = 1000, 2000
		d.Rate = &result.RateResult{Asked: 1000, Scheduled: 2000, Started: 2000 - backlog, Backlog: backlog, Completed: 2000 - backlog,
			Achieved: float64(2000-backlog) / 2, Latency: result.Latency{P50: p99 / 10, P99: p99, P999: 2 * p99}, Lag: result.Latency{P99: 0.1}}
	}
	side(&r.Driver, onP99, backlog)
	side(&r.Duet.Off, offP99, 0)
	r.Duet.OnCPUs, r.Duet.OffCPUs = 0.3*onUS/offUS, 0.3
	return r
}

func ratePhases(onUS, onP99 float64, backlog int64) []result.Run {
	var runs []result.Run
	for k := 1; k <= 8; k++ {
		on := "a"
		if k%4 == 2 || k%4 == 3 {
			on = "b"
		}
		e := 0.3 * math.Sin(float64(k))
		runs = append(runs, rateRun(k, on, onUS+e, 60, onP99+e, 2, backlog))
	}
	return runs
}

// At a rate a duet's overhead is its server CPU per statement's, though
// the observer's twin used more CPU than the other (below its quota, it
// could); the throughput overhead, the rate's, is not shown; the p99 an
// observer added is recovered phase against phase.
func TestRateDuetFigures(t *testing.T) {
	runs := ratePhases(80, 7, 0)
	f := duetOverhead(runs, 0.05)
	if f.Overhead.Basis != result.BasisServerCPU || math.Abs(f.Overhead.Pct-25) > 0.5 || f.Throughput != nil {
		t.Errorf("overhead %+v, throughput %+v; want 25%% = 20/80 from CPU per statement alone", f.Overhead, f.Throughput)
	}
	s := rateSummary(runs, 0.05)
	if s == nil || s.Reference == nil || s.P99Added == nil {
		t.Fatalf("rate summary %+v; want both sides and the p99 added", s)
	}
	if a := s.P99Added; math.Abs(a.MS-5) > 0.3 || a.CILow > 5 || a.CIHigh < 5 || a.Verdict != "slower" {
		t.Errorf("p99 added %+v; want about 5 ms, slower", a)
	}
	// p99.9 is twice p99 on both sides: 10 ms added.
	if a := s.P999Added; a == nil || math.Abs(a.MS-10) > 0.6 || a.CILow > 10 || a.CIHigh < 10 {
		t.Errorf("p99.9 added %+v; want about 10 ms", a)
	}
	if s.Side.Latency == nil || s.Side.BusyCPUs <= s.Reference.BusyCPUs || s.AskedPerS != 1000 {
		t.Errorf("sides %+v and %+v; want latency and more CPU busy with the observer", s.Side, *s.Reference)
	}
	if w := rateWarnings("x", s, 0.5); len(w) != 0 {
		t.Errorf("warnings %q for a rate held", w)
	}
	// The capacity at saturation scales each side's rate by its idle
	// share: the observer's side, busier for the same rate, has less.
	s.WithCapacity(0.5)
	for _, side := range []result.RateSide{s.Side, *s.Reference} {
		if want := 0.5 * side.AchievedPerS / side.BusyCPUs; math.Abs(side.CapacityPerS-want) > 1e-9 {
			t.Errorf("capacity %.1f/s; want %.1f (share × achieved ÷ busy)", side.CapacityPerS, want)
		}
	}
	if s.Side.CapacityPerS >= s.Reference.CapacityPerS {
		t.Errorf("capacity with the observer %.0f/s, without %.0f/s; want less with it", s.Side.CapacityPerS, s.Reference.CapacityPerS)
	}
	if runs[0].Duet.OnCPUs < CPUBasisShare*runs[0].Duet.OffCPUs {
		t.Fatal("the test's observer's twin should use more CPU than the other")
	}
}

// A side that could not keep its rate shows its backlog and no latency,
// nor a latency added, and is named in a warning.
func TestRateSaturatedSide(t *testing.T) {
	s := rateSummary(ratePhases(80, 7, 500), 0.05)
	if s.Side.SaturatedRuns != 8 || s.Side.Latency != nil || s.Side.BacklogMax != 500 || s.P99Added != nil || s.P50Added != nil || s.P999Added != nil {
		t.Errorf("side %+v, p99 added %+v; want 8 runs saturated, backlog 500, no latency", s.Side, s.P99Added)
	}
	if s.Reference.Latency == nil {
		t.Errorf("the side without the observer kept its rate: want its latency")
	}
	w := rateWarnings("x", s, 0)
	if len(w) != 1 || !strings.Contains(w[0], "the observer's side could not keep the rate of 1000 a second in 8 of 8 runs (backlog up to 500") || !strings.Contains(w[0], "saturated at this rate") {
		t.Errorf("warnings %q; want the observer's side named saturated", w)
	}
	// Its server well under a twin's share: not for want of CPU.
	w = rateWarnings("x", s, 1)
	if len(w) != 1 || !strings.Contains(w[0], "its server used only 0.40 of its 1 CPU, so it waited rather than computed") {
		t.Errorf("warnings %q; want it said that the server did not lack CPU", w)
	}
}

// At a rate a method that is not paired reads its overhead from its
// change in server CPU per statement, X/(S+X); without one it says it
// did not measure it. A closed loop has no rate summary.
func TestRateCPUOverhead(t *testing.T) {
	o := cpuOverhead(&result.OverheadSummary{Confidence: 95}, &result.ChangeSummary{Pct: 100.0 / 3, CILow: 25, CIHigh: 50})
	if o.Basis != result.BasisServerCPU || math.Abs(o.Pct-25) > 1e-9 || math.Abs(o.CILow-20) > 1e-9 || math.Abs(o.CIHigh-100.0/3) > 1e-9 || !o.Significant {
		t.Errorf("overhead %+v; want 25 [20, 33.3] from a CPU change of +33.3 [25, 50]", o)
	}
	if o := cpuOverhead(&result.OverheadSummary{}, nil); o.Measured() || !strings.Contains(o.Verdict, "throughput is the rate's") {
		t.Errorf("overhead %+v without a CPU change; want not measured, and why", o)
	}
	closed := duetRun(1, "a", 80, 60)
	if s := rateSummary([]result.Run{closed}, 0.05); s != nil {
		t.Errorf("closed loop: rate summary %+v; want none", s)
	}
}
