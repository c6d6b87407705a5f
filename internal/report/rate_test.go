package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/obsbench/obsbench/internal/result"
)

// At a rate the text report lists each condition's sides with their
// latency from the schedule and what the observer added; a side that
// could not keep the rate shows its backlog instead of a latency. A
// closed loop has no such section.
func TestRateSection(t *testing.T) {
	held := result.RateSide{Runs: 4, AchievedPerS: 998, Latency: &result.RateLatency{P50: 0.2, P99: 1.5, P999: 3}, LagP99MS: 0.1, BusyCPUs: 0.31, CapacityPerS: 1610}
	sat := result.RateSide{Runs: 4, AchievedPerS: 700, SaturatedRuns: 3, BacklogMax: 12345, BusyCPUs: 0.5}
	s := result.Summary{Conditions: []result.ConditionSummary{
		{Name: "baseline A/A", Rate: &result.RateSummary{AskedPerS: 1000, Side: held, Reference: &held,
			P99Added: &result.LatencyAdded{MS: 0.01, CILow: -0.2, CIHigh: 0.2}}},
		{Name: "plans-file-slow", Rate: &result.RateSummary{AskedPerS: 1000, Side: sat, Reference: &held}},
	}}
	var b bytes.Buffer
	if err := Rate(&b, s); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	flat := strings.Join(strings.Fields(got), " ") // the notes unwrapped
	for _, want := range []string{"at a fixed rate of 1,000 units/s", "with", "without", "1.500", "+0.010 [-0.200, 0.200]", "saturated (", "plans-file-slow (with) in 3 of 4 runs, backlog up to 12,345", "backlog", "12,345", "capacity/s", "1,610"} {
		if !strings.Contains(got, want) && !strings.Contains(flat, want) {
			t.Errorf("rate section lacks %q:\n%s", want, got)
		}
	}
	for _, line := range strings.Split(got, "\n") {
		if strings.HasPrefix(line, "plans-file-slow ") && strings.Contains(line, "1.500") {
			t.Errorf("a saturated side shows a latency: %q", line)
		}
	}
	// The HTML report's table holds the same cells, a row per side.
	v := rateTable(s)
	if v.Asked != "1,000" || len(v.Rows) != 4 || v.Rows[2][3] != "saturated (3/4 runs)" || v.Rows[0][12] != "+0.010 [-0.200, 0.200]" || len(v.Rows[1]) != len(v.Rows[0]) || v.Rows[0][8] != "1,610" {
		t.Errorf("HTML rate table %+v; want 4 rows of 13 cells, the saturated side's backlog, the capacity", v)
	}
	b.Reset()
	Rate(&b, result.Summary{Conditions: []result.ConditionSummary{{Name: "x"}}})
	if b.Len() != 0 {
		t.Errorf("closed loop: %q; want no rate section", b.String())
	}
}

// A sweep of loads lists each condition's rows by load: the rate, both
// sides' server CPU and latency, and the p99 added; a saturated side says
// so in place of its latency.
// loadSweepPoints are a sweep of two loads: at 25% both sides kept the
// rate, at 90% the observer's side did not.
func loadSweepPoints() []SweepPoint {
	held := result.RateSide{Runs: 4, Latency: &result.RateLatency{P50: 0.25, P99: 1.5, P999: 3}, BusyCPUs: 0.2}
	sat := result.RateSide{Runs: 4, SaturatedRuns: 4, BusyCPUs: 0.5}
	point := func(load, rate float64, side result.RateSide) SweepPoint {
		return SweepPoint{LoadPct: load, Dir: fmt.Sprintf("load-%g", load), Summary: result.Summary{Engine: "postgres", Conditions: []result.ConditionSummary{
			{Name: "log-statements-file", Overhead: &result.OverheadSummary{Pct: 18, CILow: 16, CIHigh: 20},
				Rate: &result.RateSummary{AskedPerS: rate, Side: side, Reference: &held, P99Added: &result.LatencyAdded{MS: 0.4, CILow: 0.1, CIHigh: 0.7}}}}}}
	}
	return []SweepPoint{point(25, 900, held), point(90, 3300, sat)}
}

func TestLoadSweepTable(t *testing.T) {
	var b bytes.Buffer
	if err := LoadSweep(&b, loadSweepPoints()); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	for _, want := range []string{"25%", "900", "0.20/0.20", "0.250/0.250", "1.500/1.500", "+0.400 [0.100, 0.700]", "90%", "3,300", "saturated/1.500"} {
		if !strings.Contains(got, want) {
			t.Errorf("load sweep lacks %q:\n%s", want, got)
		}
	}
}

// The load sweep's page has a chart per condition, whose data leave out
// (null) the load its observer's side could not keep, says so, and
// carries the table's rows.
func TestLoadSweepHTML(t *testing.T) {
	var b bytes.Buffer
	rec := SweepRecord{Workload: "tpcb-like", Loads: []float64{25, 50, 90}, Points: loadSweepPoints()}
	if err := LoadSweepHTML(&b, rec); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	for _, want := range []string{`id="chart-load-0"`, "saturated: with the observer at 90%", "0.400 [0.100, 0.700]", "Not measured: load 50%",
		`"loads":[25,90]`, `"p50_with":[0.25,null]`, `"p99_without":[1.5,1.5]`} {
		if !strings.Contains(got, want) {
			t.Errorf("load sweep page lacks %q", want)
		}
	}
	if strings.Contains(got, `id="chart-load-1"`) {
		t.Error("one condition, two charts")
	}
}
