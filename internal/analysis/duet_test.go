package analysis

import (
	"math"
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
	ov, change, method, _, ds, cost := duetOverhead(runs, 0.05)
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
