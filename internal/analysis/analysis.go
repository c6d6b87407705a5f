// Package analysis turns an experiment's runs into its Summary: per
// condition, throughput, overhead against the baseline with a confidence
// interval corrected for multiple comparisons, latency, CPU and events.
package analysis

import (
	"fmt"

	"github.com/obsbench/obsbench/internal/observer"
	"github.com/obsbench/obsbench/internal/result"
	"github.com/obsbench/obsbench/internal/stats"
)

// FamilyAlpha is the familywise error rate: all observer-vs-baseline
// intervals together hold with 95% confidence.
const FamilyAlpha = 0.05

// DriverCPUWarnPct is the share of the machine above which the driver may be
// stealing CPU from the server and distorting every comparison.
const DriverCPUWarnPct = 25

// Summarize aggregates runs. head carries the experiment's description
// (engine, workload, seed, ...); conditions gives their order, baseline
// first.
func Summarize(head result.Summary, conditions []string, runs []result.Run) result.Summary {
	s := head
	s.Conditions = nil
	byCond := map[string][]result.Run{}
	for _, r := range runs {
		byCond[r.Condition] = append(byCond[r.Condition], r)
	}
	m := 0
	for _, c := range conditions {
		if c != observer.Baseline {
			m++
		}
	}
	alpha := stats.Bonferroni(FamilyAlpha, max(m, 1))
	s.Method = fmt.Sprintf("overhead = 1 - T/T(baseline): Hodges-Lehmann estimate on log throughput, "+
		"Moses interval (inverted Mann-Whitney test), exact; Bonferroni correction over %d comparisons "+
		"(each interval at %.4g%%, together 95%%)", m, 100*(1-alpha))
	base := throughputs(byCond[observer.Baseline])
	s.NoiseFloorPct = stats.NoiseFloor(base)
	for _, name := range conditions {
		cs := summarizeCondition(name, byCond[name])
		if name != observer.Baseline {
			cs.Overhead = overhead(base, cs.Throughput.Runs, alpha)
		}
		if cs.CPU.DriverPct > DriverCPUWarnPct {
			s.Warnings = append(s.Warnings, fmt.Sprintf("%s: the driver used %.0f%% of the machine (over %d%%): it competes with the server for CPU",
				name, cs.CPU.DriverPct, DriverCPUWarnPct))
		}
		if cs.Events != nil && cs.Events.Recorded != cs.Events.Executed && cs.Events.Error == "" {
			s.Warnings = append(s.Warnings, fmt.Sprintf("%s: recorded %d events for %d statements executed (%+d)",
				name, cs.Events.Recorded, cs.Events.Executed, cs.Events.Recorded-cs.Events.Executed))
		}
		s.Conditions = append(s.Conditions, cs)
	}
	if need := stats.MinRuns(alpha); len(base) < need {
		s.Warnings = append(s.Warnings, fmt.Sprintf("%d baseline runs cannot show any overhead as significant with %d comparisons: use --rounds %d or more",
			len(base), m, need))
	}
	return s
}

func throughputs(runs []result.Run) []float64 {
	var out []float64
	for _, r := range runs {
		if r.Error == "" {
			out = append(out, r.Driver.Throughput)
		}
	}
	return out
}

func summarizeCondition(name string, runs []result.Run) result.ConditionSummary {
	cs := result.ConditionSummary{Name: name, Throughput: result.ThroughputSummary{Runs: []float64{}}}
	var p50, p99, drv, drvPer, srv, srvPer []float64
	for _, r := range runs {
		if r.Error != "" {
			cs.Failed++
			continue
		}
		cs.Throughput.Runs = append(cs.Throughput.Runs, r.Driver.Throughput)
		p50 = append(p50, r.Driver.Latency.P50)
		p99 = append(p99, r.Driver.Latency.P99)
		drv = append(drv, r.DriverCPU.Pct)
		if n := float64(r.Driver.Measured); n > 0 {
			drvPer = append(drvPer, 1e6*r.DriverCPU.Seconds/n)
			if r.ServerCPU != nil {
				srvPer = append(srvPer, 1e6*r.ServerCPU.Seconds/n)
			}
		}
		if r.ServerCPU != nil {
			srv = append(srv, r.ServerCPU.Pct)
		}
		if r.Events != nil {
			if cs.Events == nil {
				cs.Events = &result.Events{}
			}
			cs.Events.Recorded += r.Events.Recorded
			cs.Events.Executed += r.Events.Executed
			if r.Events.Error != "" {
				cs.Events.Error = r.Events.Error
			}
		}
	}
	cs.Throughput.Median = median(cs.Throughput.Runs)
	cs.LatencyMS = result.LatencySummary{P50: median(p50), P99: median(p99)}
	cs.CPU.DriverPct = median(drv)
	cs.CPU.DriverUSPerStmt = median(drvPer)
	if len(srv) > 0 {
		v, per := median(srv), median(srvPer)
		cs.CPU.ServerPct, cs.CPU.ServerUSPerStmt = &v, &per
	}
	return cs
}

func overhead(base, cond []float64, alpha float64) *result.OverheadSummary {
	if len(base) == 0 || len(cond) == 0 {
		return &result.OverheadSummary{Verdict: "not measured: no successful runs"}
	}
	o, err := stats.CompareThroughput(base, cond, alpha)
	if err != nil {
		return &result.OverheadSummary{Verdict: "not measured: " + err.Error()}
	}
	v := "no detectable difference"
	switch {
	case !o.Reachable:
		v = "too few runs to tell"
	case o.Significant && o.Pct > 0:
		v = "slower"
	case o.Significant:
		v = "faster"
	}
	return &result.OverheadSummary{
		Pct: o.Pct, CILow: o.CILow, CIHigh: o.CIHigh, Confidence: 100 * o.Confidence,
		Significant: o.Significant, Verdict: v, Warnings: o.Warnings,
	}
}

// median is 0, not NaN, for no values: JSON has no NaN.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	return stats.Median(xs)
}
