package analysis

import (
	"math"
	"strings"
	"testing"

	"github.com/obsbench/obsbench/internal/result"
)

// duetRun is a duet phase whose observer's twin's server spends onUS per
// statement and the other offUS, each server at its full share (so
// throughput is the share over the CPU per statement), twin a 3% faster
// than b throughout.
func duetRun(round int, on string, onUS, offUS float64) result.Run {
	speed := map[string]float64{"a": 1.015, "b": 1 / 1.015}
	off := map[string]string{"a": "b", "b": "a"}[on]
	onUS, offUS = onUS/speed[on], offUS/speed[off]
	drv := func(us float64) result.DriverResult {
		tput := 0.5e6 / us
		return result.DriverResult{Seconds: 2, Measured: int64(2 * tput), Throughput: tput}
	}
	return result.Run{Round: round, Condition: "x", Method: "duet", Driver: drv(onUS),
		Duet: &result.Duet{On: on, Off: drv(offUS), ShareCPUs: 0.5, OnCPUs: 0.5, OffCPUs: 0.5,
			OnServerUS: onUS, OffServerUS: offUS, LoadApart: true, OnLoadCPUs: 0.1, OffLoadCPUs: 0.1}}
}

// A duet's overhead is its server's: an observer adding 20 µs to a 60 µs
// statement costs 20/80 of a CPU-bound server's throughput, the server
// cost reads the 20 µs added and that share, and the twins' difference,
// which falls on both sides in turn, is taken out of all three.
func TestDuetServerCost(t *testing.T) {
	var runs []result.Run
	for k := 1; k <= 16; k++ {
		on := "a"
		if k%4 == 2 || k%4 == 3 {
			on = "b"
		}
		// A little noise of each phase's own, symmetric over the
		// pairs, so that the intervals have a width.
		e := 0.3 * math.Sin(float64(k))
		runs = append(runs, duetRun(k, on, 80+e, 60))
	}
	f := duetOverhead(runs, 0.05)
	ov, change, method, ds, cost := f.Overhead, f.Change, f.Method, f.Duet, f.Cost
	if math.Abs(ov.Pct-25) > 0.5 || ov.CILow > 25 || ov.CIHigh < 25 {
		t.Errorf("overhead %+v; want about 25%% = 20/80", ov)
	}
	if change == nil || math.Abs(change.Pct-100.0/3) > 1 {
		t.Errorf("CPU change %+v; want about +33%% = 20/60", change)
	}
	if cost == nil || math.Abs(cost.Added.US-20) > 0.5 || math.Abs(cost.Share.Pct-25) > 0.5 || cost.Added.Verdict != "more" {
		t.Fatalf("server cost %+v; want about 20 µs added, a 25%% share", cost)
	}
	if !ds.LoadApart || ds.OnLoadCPUs != 0.1 || method == "" {
		t.Errorf("duet summary %+v, method %q; want the loads apart", ds, method)
	}
}

// A duet's overhead is read from the twins' server CPU per statement
// where the observer's twin used its CPU as the other did: a neighbour
// that takes CPU from one twin in some phases moves their throughput and
// not their CPU per statement. An observer whose twin waits (uses less
// CPU in every phase) costs time, which only throughput shows.
func TestDuetOverheadBasis(t *testing.T) {
	phases := func(change func(k int, r *result.Run)) []result.Run {
		var runs []result.Run
		for k := 1; k <= 16; k++ {
			on := "a"
			if k%4 == 2 || k%4 == 3 {
				on = "b"
			}
			r := duetRun(k, on, 80+0.3*math.Sin(float64(k)), 60)
			change(k, &r)
			runs = append(runs, r)
		}
		return runs
	}
	robbed := phases(func(k int, r *result.Run) {
		switch k % 5 {
		case 1: // the other twin got 70% of its share
			r.Duet.OffCPUs, r.Duet.Off.Throughput = 0.35, 0.7*r.Duet.Off.Throughput
		case 3: // the observer's twin did
			r.Duet.OnCPUs, r.Driver.Throughput = 0.35, 0.7*r.Driver.Throughput
		}
	})
	f := duetOverhead(robbed, 0.05)
	tp := f.Throughput
	switch o := f.Overhead; {
	case o.Basis != result.BasisServerCPU || tp == nil || tp.Basis != result.BasisThroughput:
		t.Fatalf("robbed phases: basis %q, throughput %+v; want server CPU, with the throughput figure beside it", o.Basis, tp)
	case math.Abs(o.Pct-25) > 0.5 || o.CILow > 25 || o.CIHigh < 25:
		t.Errorf("robbed phases: overhead %+v; want about 25%% = 20/80", o)
	case o.CIHigh-o.CILow > (tp.CIHigh-tp.CILow)/3:
		t.Errorf("robbed phases: server CPU's interval [%.2f, %.2f] not a third of throughput's [%.2f, %.2f]", o.CILow, o.CIHigh, tp.CILow, tp.CIHigh)
	case !strings.Contains(f.Method, "CPU per statement"):
		t.Errorf("method %q; want the basis named", f.Method)
	}

	waits := phases(func(_ int, r *result.Run) {
		r.Duet.OnCPUs, r.Driver.Throughput = 0.4, 0.8*r.Driver.Throughput
	})
	f = duetOverhead(waits, 0.05)
	if o := f.Overhead; o.Basis != result.BasisThroughput || f.Throughput != nil || math.Abs(o.Pct-40) > 0.5 {
		t.Errorf("a twin that waits: overhead %+v (throughput %+v); want 40%% = 1 - 0.8 x 60/80 from throughput alone", o, f.Throughput)
	}
}
