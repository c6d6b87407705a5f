package analysis

import (
	"fmt"
	"math"
	"slices"

	"github.com/obsbench/obsbench/internal/result"
	"github.com/obsbench/obsbench/internal/stats"
)

// ShortOfShare is the fraction of its CPU share below which a twin is
// said to have waited rather than computed: its share was not lent to the
// other twin (the quota holds it), but the ratio then includes the wait.
const ShortOfShare = 0.9

// serverPerStmt is each twin's server CPU per statement of a duet run,
// in seconds: from the twins' own groups where they were read (the
// server's alone), else from the processes the run sampled.
func serverPerStmt(r result.Run) (on, off float64) {
	if d := r.Duet; d.OnServerUS > 0 && d.OffServerUS > 0 {
		return d.OnServerUS / 1e6, d.OffServerUS / 1e6
	}
	if r.Method == result.MethodSplit {
		// One server serves both groups: its CPU is not either's.
		return 0, 0
	}
	return cpuPerStmt(r), cpuPerStmt(offRun(r))
}

// offRun is the other twin of a duet run as a run of its own.
func offRun(r result.Run) result.Run {
	return result.Run{Driver: r.Duet.Off, Usage: r.Duet.OffUsage}
}

// duetPhases are a duet condition's successful phases for the phase
// model: the log throughput ratio of the observer's twin over the other;
// cpu the log ratio of their server CPU per statement and added the µs
// per statement the observer's twin's server spent more, for the phases
// whose CPU was read.
func duetPhases(runs []result.Run) (tput, cpu, added []stats.Phase) {
	for _, r := range runs {
		d := r.Duet
		if r.Error != "" || d == nil || d.Off.Throughput <= 0 || r.Driver.Throughput <= 0 {
			continue
		}
		p := stats.Phase{Value: math.Log(r.Driver.Throughput / d.Off.Throughput), InA: d.On == "a", Time: float64(r.Round)}
		tput = append(tput, p)
		if on, off := serverPerStmt(r); on > 0 && off > 0 {
			p.Value = math.Log(on / off)
			cpu = append(cpu, p)
			p.Value = 1e6 * (on - off)
			added = append(added, p)
		}
	}
	return tput, cpu, added
}

// duetFigures are what a duet condition's phases give: its overhead (the
// headline, on the basis overheadBasis chose), the throughput overhead
// beside it when the headline is read from CPU, the change in server CPU
// per statement, how it was measured, the twin without the observer as
// reference, the twins' CPU, and the server cost added per statement.
type duetFigures struct {
	Overhead, Throughput *result.OverheadSummary
	Change               *result.ChangeSummary
	Method               string
	Reference            *result.Reference
	Duet                 *result.DuetSummary
	Cost                 *result.ServerCost
}

// CPUBasisShare is how much of the other twin's CPU the observer's twin
// must have used in the median phase for the overhead to be read from
// the twins' server CPU per statement: below it the observer's twin
// waited, and its cost is in time, which only throughput shows.
const CPUBasisShare = 0.97

// duetOverhead compares a duet condition's twins phase by phase with the
// phase model (stats.PhaseModel: the twins' difference and its drift
// taken out); its reference is the twin without the observer.
func duetOverhead(runs []result.Run, alpha float64) duetFigures {
	var refTput, refP50, refP99, refCPU, onCPUs, offCPUs, onHeld, offHeld, onLoad, offLoad, loadHeld []float64
	share, apart := 0.0, false
	for _, r := range runs {
		if r.Error != "" || r.Duet == nil {
			continue
		}
		d := r.Duet
		refTput, refP50, refP99 = append(refTput, d.Off.Throughput), append(refP50, d.Off.Latency.P50), append(refP99, d.Off.Latency.P99)
		if _, off := serverPerStmt(r); off > 0 {
			refCPU = append(refCPU, 1e6*off)
		}
		onCPUs, offCPUs = append(onCPUs, d.OnCPUs), append(offCPUs, d.OffCPUs)
		onHeld, offHeld = append(onHeld, d.OnThrottledS), append(offHeld, d.OffThrottledS)
		onLoad, offLoad, loadHeld = append(onLoad, d.OnLoadCPUs), append(offLoad, d.OffLoadCPUs), append(loadHeld, d.LoadThrottledS)
		share, apart = d.ShareCPUs, apart || d.LoadApart
	}
	tput, cpu, added := duetPhases(runs)
	isolation := "not isolated"
	switch {
	case share > 0 && apart:
		isolation = fmt.Sprintf("each twin's server held to %.3g CPU, its load apart", share)
	case share > 0:
		isolation = fmt.Sprintf("each twin held to %.3g CPU", share)
	}
	method := fmt.Sprintf("%s: %d phases, the observer's twin against its twin server in the same seconds, in each twin alike (A,B,B,A or B,A,A,B; %s)", result.MethodDuet, len(tput), isolation)
	if len(runs) > 0 && runs[0].Method == result.MethodSplit {
		method = fmt.Sprintf("%s: %d phases, the observer's group of sessions against the other group on the same server in the same seconds, in each group alike (A,B,B,A or B,A,A,B); what both groups share is in neither", result.MethodSplit, len(tput))
		if held := sharedPart(runs); held != "" {
			method += " (of this observer: " + held + ")"
		}
	}
	if len(tput) == 0 {
		return duetFigures{Overhead: &result.OverheadSummary{Verdict: "not measured: no successful phase"}, Method: method}
	}
	ref := &result.Reference{StmtsPerS: median(refTput), LatencyMS: result.LatencySummary{P50: median(refP50), P99: median(refP99)}}
	if len(refCPU) > 0 {
		v := median(refCPU)
		ref.ServerUSPerStmt = &v
	}
	var change *result.ChangeSummary
	if e, err := stats.PhaseModel(cpu, alpha); err == nil {
		change = &result.ChangeSummary{Pct: 100 * math.Expm1(e.Est), CILow: 100 * math.Expm1(e.Low), CIHigh: 100 * math.Expm1(e.High)}
	}
	ds := &result.DuetSummary{Phases: len(refTput), ShareCPUs: share, OnCPUs: median(onCPUs), OffCPUs: median(offCPUs),
		OnThrottledS: median(onHeld), OffThrottledS: median(offHeld), LoadApart: apart}
	if apart {
		ds.OnLoadCPUs, ds.OffLoadCPUs, ds.LoadThrottledS = median(onLoad), median(offLoad), slices.Max(loadHeld)
	}
	f := duetFigures{Overhead: summarizeOverhead(stats.PhaseOverhead(tput, alpha)), Change: change, Method: method, Reference: ref, Duet: ds,
		Cost: serverCost(added, median(refCPU), alpha)}
	f.Overhead.Basis = result.BasisThroughput
	rate := atRate(runs)
	if len(cpu) == len(tput) && ds.OffCPUs > 0 && (rate || ds.OnCPUs >= CPUBasisShare*ds.OffCPUs) {
		if o := summarizeOverhead(stats.PhaseOverhead(equalCPU(cpu), alpha)); o.Measured() {
			o.Basis = result.BasisServerCPU
			f.Overhead, f.Throughput = o, f.Overhead
			if rate {
				// At a rate both sides complete what arrives: throughput
				// is the rate's, and the cost is in CPU per statement.
				f.Throughput = nil
				f.Method += "; at a fixed arrival rate, overhead from each side's server CPU per statement, the throughput being the rate's"
				return f
			}
			if runs[0].Method == result.MethodSplit {
				f.Method += fmt.Sprintf("; overhead from each group's server CPU per statement, its sessions' backends' own (the observer's group used %.0f%% of the other's CPU, median phase)", 100*ds.OnCPUs/ds.OffCPUs)
			} else {
				f.Method += fmt.Sprintf("; overhead from each twin server's CPU per statement (the observer's twin used %.0f%% of the other's CPU, median phase)", 100*ds.OnCPUs/ds.OffCPUs)
			}
		}
	}
	return f
}

// sharedPart is what of a split's observer was in force for both groups
// of sessions, as its runs recorded it; empty when nothing was.
func sharedPart(runs []result.Run) string {
	for _, r := range runs {
		if r.Error == "" && r.Held != "" {
			return r.Held
		}
	}
	return ""
}

// equalCPU turns phases of the log of the twins' server CPU per
// statement (the observer's twin's over the other's) into the log of
// the throughput ratio they would have with equal CPU: a server that
// spends r times the CPU on a statement completes 1/r as many with the
// same CPU. That is the throughput ratio of a CPU-bound server, less
// what the twins' CPU differed by in each phase (a neighbour taking CPU
// from one twin), which throughput under the quota keeps.
func equalCPU(cpu []stats.Phase) []stats.Phase {
	out := slices.Clone(cpu)
	for i := range out {
		out[i].Value = -out[i].Value
	}
	return out
}

// serverCost is the server CPU per statement an observer added, twin
// against twin, and that as a share of its twin's server CPU per
// statement: X/(S+X), what a CPU-bound server whose clients run
// elsewhere loses of its throughput. base is the other twin's µs per
// statement (S).
func serverCost(added []stats.Phase, base, alpha float64) *result.ServerCost {
	e, err := stats.PhaseModel(added, alpha)
	if err != nil || base <= 0 {
		return nil
	}
	share := func(x float64) float64 { return 100 * x / (base + x) }
	a := result.AddedSummary{US: e.Est, CILow: e.Low, CIHigh: e.High, Confidence: 100 * e.Confidence,
		Verdict: verdict(true, e.Low > 0 || e.High < 0, e.Est > 0, "more", "less")}
	return &result.ServerCost{BaseUS: base, Added: a,
		Share: result.ChangeSummary{Pct: share(e.Est), CILow: share(e.Low), CIHigh: share(e.High)}}
}

// DuetMDE is the least overhead a duet detects with 80% power at alpha,
// in percent, from the A/A arm's phases; NaN when they are too few.
func DuetMDE(aa []result.Run, alpha float64) float64 {
	tput, cpu, _ := duetPhases(aa)
	if atRate(aa) {
		// At a rate the figure is read from CPU per statement.
		tput = cpu
	}
	e, err := stats.PhaseModel(tput, alpha)
	if err != nil {
		return math.NaN()
	}
	return e.MDE(0.8)
}

// duetWarnings say when a twin used less than its CPU share in the
// median phase. The observer's twin alone: it waited (a blocking sink, a
// lock) instead of computing, so its cost is in time rather than CPU, and
// the quota kept the other twin from taking the CPU it left. Both: the
// workload leaves CPU idle, and the shares are not what limits it.
func duetWarnings(name string, d *result.DuetSummary) []string {
	if d == nil || d.ShareCPUs <= 0 {
		return nil
	}
	short := func(used float64) bool { return used < ShortOfShare*d.ShareCPUs }
	switch {
	case short(d.OnCPUs) && short(d.OffCPUs):
		return []string{fmt.Sprintf("%s: neither twin used its %.3g CPU share (%.2f with the observer, %.2f without, median phase): the workload leaves CPU idle",
			name, d.ShareCPUs, d.OnCPUs, d.OffCPUs)}
	case short(d.OnCPUs):
		return []string{fmt.Sprintf("%s: the observer's twin used %.2f of its %.3g CPU share against %.2f without it (median phase): it waited rather than computed, and the quota kept the other twin from taking what it left",
			name, d.OnCPUs, d.ShareCPUs, d.OffCPUs)}
	}
	return nil
}
