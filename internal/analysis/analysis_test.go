package analysis_test

import (
	"math"
	"strings"
	"testing"

	"github.com/obsbench/obsbench/internal/analysis"
	"github.com/obsbench/obsbench/internal/collect"
	"github.com/obsbench/obsbench/internal/driver"
	"github.com/obsbench/obsbench/internal/result"
)

func run(cond string, tput float64, events *result.Events) result.Run {
	return result.Run{
		Condition: cond,
		Driver:    driver.Result{Throughput: tput, Measured: int64(tput * 10), Seconds: 10, Latency: driver.Latency{P50: 1000 / tput, P99: 5000 / tput}},
		Usage: collect.Usage{
			Server: &collect.CPU{Seconds: 12, Pct: 60},
			Driver: collect.CPU{Seconds: 4, Pct: 20},
		},
		Events: events,
	}
}

func TestSummarize(t *testing.T) {
	var runs []result.Run
	for i, b := range []float64{1000, 1020, 980, 1010, 990} {
		runs = append(runs, run("baseline", b, nil))
		runs = append(runs, run("slow", 0.8*b+float64(i), &result.Events{Recorded: 100, Executed: 100}))
		runs = append(runs, run("same", b+3, nil))
	}
	failed := run("slow", 1, nil)
	failed.Error = "connection reset"
	runs = append(runs, failed)

	s := analysis.Summarize(result.Summary{Engine: "postgres"}, []string{"baseline", "slow", "same"}, runs)
	if len(s.Conditions) != 3 || s.Conditions[0].Name != "baseline" {
		t.Fatalf("conditions = %+v", s.Conditions)
	}
	base, slow, same := s.Conditions[0], s.Conditions[1], s.Conditions[2]
	if base.Overhead != nil {
		t.Errorf("baseline overhead = %+v; want nil", base.Overhead)
	}
	if base.Throughput.Median != 1000 || len(base.Throughput.Runs) != 5 {
		t.Errorf("baseline throughput = %+v; want median 1000 over 5 runs", base.Throughput)
	}
	if o := slow.Overhead; o == nil || !o.Significant || o.Verdict != "slower" || math.Abs(o.Pct-20) > 1 || o.CILow > 20 || o.CIHigh < 19 {
		t.Errorf("slow overhead = %+v; want significant, about 20%%", slow.Overhead)
	}
	if slow.Failed != 1 || len(slow.Throughput.Runs) != 5 {
		t.Errorf("slow: %d failed, %d runs; want 1 failed, 5 runs", slow.Failed, len(slow.Throughput.Runs))
	}
	if slow.Events == nil || slow.Events.Recorded != 500 || slow.Events.Executed != 500 {
		t.Errorf("slow events = %+v; want 500/500", slow.Events)
	}
	if o := same.Overhead; o == nil || o.Significant || o.Verdict != "no detectable difference" || o.CILow > 0 || o.CIHigh < 0 {
		t.Errorf("same overhead = %+v; want no detectable difference, interval around 0", same.Overhead)
	}
	if same.Events != nil {
		t.Errorf("same events = %+v; want nil (records none)", same.Events)
	}
	if c := base.CPU; c.ServerPct == nil || *c.ServerPct != 60 || c.DriverPct != 20 || *c.ServerUSPerStmt != 1e6*12/10000 {
		t.Errorf("baseline cpu = %+v", c)
	}
	if !strings.Contains(s.Method, "Bonferroni correction over 2 comparisons") {
		t.Errorf("Method = %q; want the correction named", s.Method)
	}
	// Pairs of baseline runs differ by at most 4% (980 vs 1020).
	if s.NoiseFloorPct <= 0 || s.NoiseFloorPct > 100*(1-980.0/1020) {
		t.Errorf("NoiseFloorPct = %v; want in (0, %v]", s.NoiseFloorPct, 100*(1-980.0/1020))
	}
	if len(s.Warnings) != 0 {
		t.Errorf("Warnings = %q; want none", s.Warnings)
	}
}

func TestSummarizeWarns(t *testing.T) {
	hot := run("baseline", 1000, nil)
	hot.Usage.Driver.Pct = 40 // median with the other baseline run (20%): 30%
	lost := run("logger", 900, &result.Events{Recorded: 90, Executed: 100})
	s := analysis.Summarize(result.Summary{}, []string{"baseline", "logger"}, []result.Run{hot, run("baseline", 1000, nil), lost, lost})
	want := []string{"driver used 30% of the machine", "recorded 180 events for 200 statements executed (-20)", "use --rounds 4 or more"}
	all := strings.Join(s.Warnings, "\n")
	for _, w := range want {
		if !strings.Contains(all, w) {
			t.Errorf("Warnings = %q; want one containing %q", s.Warnings, w)
		}
	}
	if v := s.Conditions[1].Overhead.Verdict; v != "too few samples to tell" {
		t.Errorf("verdict with 2 runs = %q; want too few samples to tell", v)
	}
}
