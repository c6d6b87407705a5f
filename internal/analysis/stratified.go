package analysis

import (
	"fmt"
	"math"

	"github.com/obsbench/obsbench/internal/observer"
	"github.com/obsbench/obsbench/internal/result"
	"github.com/obsbench/obsbench/internal/stats"
)

// latencyStrata and cpuStrata are a run's statements as strata: each
// statement's completions with their total latency, or total server CPU.
func latencyStrata(r result.Run) []stats.Stratum {
	out := make([]stats.Stratum, len(r.Driver.Statements))
	for i, s := range r.Driver.Statements {
		out[i] = stats.Stratum{N: s.Count, Total: s.MeanMS * float64(s.Count)}
	}
	return out
}

func cpuStrata(r result.Run) []stats.Stratum {
	out := make([]stats.Stratum, len(r.Driver.Statements))
	for i, s := range r.Driver.Statements {
		out[i] = stats.Stratum{N: s.CPUCount, Total: s.CPUMeanMS * float64(s.CPUCount)}
	}
	return out
}

// hasStrata says whether a run can be compared query by query: its
// workload named its statements (dss-mix, a user's scripts).
func hasStrata(r result.Run) bool { return r.Error == "" && len(r.Driver.Statements) > 0 }

// stratifiedOverhead compares each run of condition name with the
// baseline run of its round (roundBaseline), query by
// query (stats.StratifiedRatio): on latency per execution, as an
// overhead in the table's form (1 - 1/ratio: the throughput the mix loses
// if each query costs that much more), and on server CPU per execution as
// a change (ratio - 1). Each query's weight is its share of the baseline
// runs' total latency (server CPU): the comparison is of the mix's total
// cost, each query counted as often as the mix runs it. Nil when the runs
// do not name their statements.
func stratifiedOverhead(runs []result.Run, name string, alpha float64) *result.StratifiedSummary {
	var baseLat, baseCPU [][]stats.Stratum
	for _, r := range runs {
		if r.Condition == observer.Baseline && hasStrata(r) {
			baseLat, baseCPU = append(baseLat, latencyStrata(r)), append(baseCPU, cpuStrata(r))
		}
	}
	if len(baseLat) == 0 {
		return nil
	}
	wLat, wCPU := stats.StratumWeights(baseLat), stats.StratumWeights(baseCPU)
	wAdd, mAdd := stats.AddedWeights(baseCPU)
	var latRatios, cpuRatios, added []float64
	var condLat, condCPU, refLat, refCPU [][]stats.Stratum
	for i, r := range runs {
		if r.Condition != name || !hasStrata(r) {
			continue
		}
		b, ok := roundBaseline(runs, i)
		if !ok {
			continue
		}
		bl, bc := latencyStrata(b), cpuStrata(b)
		cl, cc := latencyStrata(r), cpuStrata(r)
		condLat, condCPU = append(condLat, cl), append(condCPU, cc)
		refLat, refCPU = append(refLat, bl), append(refCPU, bc)
		if x, err := stats.StratifiedRatio(bl, cl, wLat); err == nil {
			latRatios = append(latRatios, 1/x)
		}
		if x, err := stats.StratifiedRatio(bc, cc, wCPU); err == nil {
			cpuRatios = append(cpuRatios, 1/x)
		}
		if x, err := stats.StratifiedAdded(bc, cc, wAdd, mAdd); err == nil {
			added = append(added, 1000*x) // ms to µs
		}
	}
	if len(condLat) == 0 {
		return nil
	}
	s := summarizeStratified(latRatios, cpuRatios, added, alpha)
	if s.CPU == nil {
		s.CPUNote = cpuMissing(runs, name)
	}
	s.Queries = queryEffects(statementNames(runs), stats.Pooled(refLat...), stats.Pooled(condLat...), stats.Pooled(refCPU...), stats.Pooled(condCPU...), wLat, 1)
	return s
}

// summarizeStratified turns per-pair ratios (reference cost over the
// condition's) into the summary: latency as an overhead, server CPU as a
// change; and the per-pair added server CPU (µs per execution).
func summarizeStratified(latRatios, cpuRatios, added []float64, alpha float64) *result.StratifiedSummary {
	s := &result.StratifiedSummary{Pairs: len(latRatios)}
	s.Time = summarizeOverhead(pairedOrNot(latRatios, alpha))
	if len(cpuRatios) > 0 {
		if o, err := pairedOrNot(cpuRatios, alpha); err == nil {
			// 1/ratio went in, so -Pct is not the change: undo the log.
			s.CPU = &result.ChangeSummary{Pct: rise(o.Pct), CILow: rise(o.CILow), CIHigh: rise(o.CIHigh)}
			s.CPUOverhead = summarizeOverhead(o, nil)
		}
	}
	if s.CPU != nil && len(added) > 0 {
		if a, err := stats.PairedShift(added, alpha); err == nil {
			s.CPUAdded = summarizeAdded(a)
		}
	}
	return s
}

// summarizeAdded is a paired shift as the summary's added cost.
func summarizeAdded(a stats.Shift) *result.AddedSummary {
	return &result.AddedSummary{US: a.Estimate, CILow: a.CILow, CIHigh: a.CIHigh, Confidence: 100 * a.Confidence,
		Verdict: verdict(a.Reachable, a.Significant, a.Estimate > 0, "more", "less")}
}

// roundBaseline is the baseline run to compare run i with: the one of its
// round, else the one nearest in time. One per round, not the two
// neighbours roundsOverhead averages: a baseline run shared by two pairs
// makes them correlated, and the signed-rank interval, which takes pairs
// as independent, then covers less than it says (TestStratifiedCoverage
// measures it).
func roundBaseline(runs []result.Run, i int) (result.Run, bool) {
	for _, b := range runs {
		if b.Condition == observer.Baseline && b.Round == runs[i].Round && hasStrata(b) {
			return b, true
		}
	}
	for d := 1; d < len(runs); d++ {
		for _, j := range []int{i - d, i + d} {
			if j >= 0 && j < len(runs) && runs[j].Condition == observer.Baseline && hasStrata(runs[j]) {
				return runs[j], true
			}
		}
	}
	return result.Run{}, false
}

// pairedOrNot is stats.PairedOverhead, refusing fewer pairs than any
// interval needs with the verdict's reason.
func pairedOrNot(ratios []float64, alpha float64) (stats.Overhead, error) {
	if len(ratios) == 0 {
		return stats.Overhead{}, fmt.Errorf("no run has a baseline run to compare with")
	}
	return stats.PairedOverhead(ratios, alpha)
}

// rise turns an overhead in the throughput form, 1 - 1/c, into the rise
// of cost c - 1, both in percent.
func rise(overheadPct float64) float64 {
	return 100 * (1/(1-overheadPct/100) - 1)
}

// cpuMissing says why a condition's runs (all runs, for name "") have no
// server CPU per query.
func cpuMissing(runs []result.Run, name string) string {
	for _, r := range runs {
		if (name == "" || r.Condition == name) && r.Driver.ExecutionsNote != "" {
			return r.Driver.ExecutionsNote
		}
	}
	return "no execution's server CPU was read"
}

// statementNames are the statements of the first run that names them.
func statementNames(runs []result.Run) []string {
	for _, r := range runs {
		if hasStrata(r) {
			var names []string
			for _, s := range r.Driver.Statements {
				names = append(names, s.Statement)
			}
			return names
		}
	}
	return nil
}

// queryEffects is each query's mean latency and server CPU with the
// observer and in what it was compared with, pooled, with the query's
// weight; toMS converts the strata's unit to milliseconds.
func queryEffects(names []string, refLat, condLat, refCPU, condCPU []stats.Stratum, weights []float64, toMS float64) []result.QueryEffect {
	var out []result.QueryEffect
	for q, name := range names {
		e := result.QueryEffect{Query: name}
		if q < len(weights) {
			e.WeightPct = 100 * weights[q]
		}
		if q < len(condLat) && q < len(refLat) {
			e.Executions = condLat[q].N
			e.BaselineMS, e.MS = finite(toMS*refLat[q].Mean()), finite(toMS*condLat[q].Mean())
		}
		if q < len(condCPU) && q < len(refCPU) && condCPU[q].N > 0 && refCPU[q].N > 0 {
			b, c := toMS*refCPU[q].Mean(), toMS*condCPU[q].Mean()
			e.BaselineCPUMS, e.CPUMS = &b, &c
		}
		out = append(out, e)
	}
	return out
}

// finite is 0 for NaN (no executions): JSON has no NaN.
func finite(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0
	}
	return x
}

// PhaseStrata sorts run r's executions into its phases: an execution
// counts in a phase when it started and ended inside the phase's usable
// seconds (after its first second, as phases does), so that it ran wholly
// with the observer on or wholly off. Nil entries are unusable phases.
func PhaseStrata(r result.Run) (lat, cpu [][]stats.Stratum) {
	ps := phases(r)
	lat, cpu = make([][]stats.Stratum, len(ps)), make([][]stats.Stratum, len(ps))
	n := len(r.Driver.Statements)
	for i, p := range ps {
		if p != nil {
			lat[i], cpu[i] = make([]stats.Stratum, n), make([]stats.Stratum, n)
		}
	}
	for _, e := range r.Driver.Executions {
		if e.Statement < 0 || e.Statement >= n {
			continue
		}
		start, end := e.EndUS-e.LatencyUS, e.EndUS
		for i, ph := range r.Phases {
			if lat[i] == nil || start < int64(ph.Start+1)*1e6 || end > int64(ph.End)*1e6 {
				continue
			}
			lat[i][e.Statement].N++
			lat[i][e.Statement].Total += float64(e.LatencyUS)
			if e.ServerCPUUS >= 0 {
				cpu[i][e.Statement].N++
				cpu[i][e.Statement].Total += float64(e.ServerCPUUS)
			}
			break
		}
	}
	return lat, cpu
}

// stratifiedAlternation compares, in each of the runs' alternation runs,
// every on phase with the off phases on both sides query by query, from
// the executions that ran wholly inside a phase; the weights are each
// query's share of the off phases' cost. Nil when the runs kept no
// executions.
func stratifiedAlternation(runs []result.Run, alpha float64) *result.StratifiedSummary {
	type split struct {
		phases   []result.Phase
		lat, cpu [][]stats.Stratum
	}
	var all []split
	var offLat, offCPU [][]stats.Stratum
	for _, r := range runs {
		if !hasStrata(r) || len(r.Driver.Executions) == 0 {
			continue
		}
		lat, cpu := PhaseStrata(r)
		all = append(all, split{r.Phases, lat, cpu})
		for i, ph := range r.Phases {
			if lat[i] != nil && !ph.On {
				offLat, offCPU = append(offLat, lat[i]), append(offCPU, cpu[i])
			}
		}
	}
	if len(all) == 0 {
		return nil
	}
	wLat, wCPU := stats.StratumWeights(offLat), stats.StratumWeights(offCPU)
	wAdd, mAdd := stats.AddedWeights(offCPU)
	var latRatios, cpuRatios, added []float64
	var onLat, onCPU, refLat, refCPU [][]stats.Stratum
	for _, sp := range all {
		ph := sp.phases
		for i := 1; i+1 < len(ph); i++ {
			if sp.lat[i] == nil || sp.lat[i-1] == nil || sp.lat[i+1] == nil || !ph[i].On || ph[i-1].On || ph[i+1].On {
				continue
			}
			bLat, bCPU := stats.Pooled(sp.lat[i-1], sp.lat[i+1]), stats.Pooled(sp.cpu[i-1], sp.cpu[i+1])
			onLat, onCPU = append(onLat, sp.lat[i]), append(onCPU, sp.cpu[i])
			refLat, refCPU = append(refLat, bLat), append(refCPU, bCPU)
			if x, err := stats.StratifiedRatio(bLat, sp.lat[i], wLat); err == nil {
				latRatios = append(latRatios, 1/x)
			}
			if x, err := stats.StratifiedRatio(bCPU, sp.cpu[i], wCPU); err == nil {
				cpuRatios = append(cpuRatios, 1/x)
			}
			if x, err := stats.StratifiedAdded(bCPU, sp.cpu[i], wAdd, mAdd); err == nil {
				added = append(added, x) // already µs
			}
		}
	}
	s := summarizeStratified(latRatios, cpuRatios, added, alpha)
	if s.CPU == nil {
		s.CPUNote = cpuMissing(runs, "")
	}
	s.Queries = queryEffects(statementNames(runs), stats.Pooled(refLat...), stats.Pooled(onLat...), stats.Pooled(refCPU...), stats.Pooled(onCPU...), wLat, 1.0/1000)
	return s
}
