package analysis

import (
	"fmt"

	"github.com/obsbench/obsbench/internal/observer"
	"github.com/obsbench/obsbench/internal/result"
	"github.com/obsbench/obsbench/internal/stats"
)

// maxSwitchMS is how long a switch may take and still leave its phase
// usable: the first second of every phase is dropped, so a switch that
// finished within it does not touch the seconds that are compared.
const maxSwitchMS = 900

// phase is what one usable phase of an alternation run measured.
type phase struct {
	on         bool
	stmts      float64 // statements in its usable seconds
	seconds    float64
	serverCPU  float64 // seconds of server CPU in those seconds; <0: unknown
	throughput float64
}

// phases returns r's phases with the first second of each dropped (the
// switch settles in it); a phase with no second left, or whose switch took
// too long, is marked unusable by a nil entry.
func phases(r result.Run) []*phase {
	perSecond := TotalPerSecond(r.Driver.PerSecond)
	out := make([]*phase, len(r.Phases))
	for i, ph := range r.Phases {
		if ph.SwitchMS > maxSwitchMS || ph.End-ph.Start < 2 {
			continue
		}
		p := &phase{on: ph.On}
		for sec := ph.Start + 1; sec < ph.End && sec < len(perSecond); sec++ {
			p.stmts += perSecond[sec]
			p.seconds++
			if sec < len(r.Usage.PerSecond) && p.serverCPU >= 0 {
				p.serverCPU += r.Usage.PerSecond[sec].Server
			} else {
				p.serverCPU = -1
			}
		}
		if p.seconds == 0 || p.stmts == 0 {
			continue
		}
		p.throughput = p.stmts / p.seconds
		out[i] = p
	}
	return out
}

// phaseRatios compares every usable on phase that has usable off phases on
// both sides with the mean of those two: throughput on/off, and server CPU
// per statement on/off (empty when CPU was not measured).
// PhaseRatios is exported for the runner's resolution planning.
func PhaseRatios(r result.Run) (tput, cpu []float64) { return phaseRatios(r) }

func phaseRatios(r result.Run) (tput, cpu []float64) {
	ps := phases(r)
	for i := 1; i+1 < len(ps); i++ {
		on, before, after := ps[i], ps[i-1], ps[i+1]
		if on == nil || before == nil || after == nil || !on.on || before.on || after.on {
			continue
		}
		tput = append(tput, on.throughput/((before.throughput+after.throughput)/2))
		if on.serverCPU > 0 && before.serverCPU > 0 && after.serverCPU > 0 {
			per := func(p *phase) float64 { return p.serverCPU / p.stmts }
			cpu = append(cpu, per(on)/((per(before)+per(after))/2))
		}
	}
	return tput, cpu
}

// alternationOverhead pools the phase ratios of all of a condition's
// alternation runs.
func alternationOverhead(runs []result.Run, alpha float64) (*result.OverheadSummary, *result.ChangeSummary, string) {
	var tput, cpu []float64
	held := ""
	for _, r := range runs {
		if r.Error != "" {
			continue
		}
		t, c := phaseRatios(r)
		tput, cpu = append(tput, t...), append(cpu, c...)
		held = r.Held
	}
	method := fmt.Sprintf("alternation: %d on phases, each against the off phases on both sides", len(tput))
	if held != "" && held != "no change" {
		method += "; in force in both phases: " + held
	}
	if len(tput) == 0 {
		return &result.OverheadSummary{Verdict: "not measured: no usable phases"}, nil, method
	}
	var change *result.ChangeSummary
	if len(cpu) > 0 {
		if o, err := stats.PairedOverhead(cpu, alpha); err == nil {
			// Overhead of CPU per statement, sign turned: more CPU is +.
			change = &result.ChangeSummary{Pct: -o.Pct, CILow: -o.CIHigh, CIHigh: -o.CILow}
		}
	}
	return summarizeOverhead(stats.PairedOverhead(tput, alpha)), change, method
}

// roundsOverhead compares each run of condition name with the baseline runs
// right before and after it in time: neighbours share the machine's state,
// pooled medians do not. With too few runs for a paired interval it falls
// back to comparing the two groups of runs, and says so. Server CPU per
// statement is compared the same way, when there are enough pairs.
func roundsOverhead(runs []result.Run, name string, alpha float64) (*result.OverheadSummary, *result.ChangeSummary, string) {
	var ratios, cpuRatios, base, cond []float64
	for i, r := range runs {
		if r.Condition != name || r.Error != "" {
			continue
		}
		cond = append(cond, r.Driver.Throughput)
		var sum, cpuSum, n, cpuN float64
		for _, step := range []int{-1, 1} {
			for j := i + step; j >= 0 && j < len(runs); j += step {
				if b := runs[j]; b.Condition == observer.Baseline && b.Error == "" {
					sum += b.Driver.Throughput
					n++
					if c := cpuPerStmt(b); c > 0 {
						cpuSum += c
						cpuN++
					}
					break
				}
			}
		}
		if n > 0 {
			ratios = append(ratios, r.Driver.Throughput/(sum/n))
		}
		if c := cpuPerStmt(r); c > 0 && cpuN > 0 {
			cpuRatios = append(cpuRatios, c/(cpuSum/cpuN))
		}
	}
	for _, r := range runs {
		if r.Condition == observer.Baseline && r.Error == "" {
			base = append(base, r.Driver.Throughput)
		}
	}
	if len(cond) == 0 || len(base) == 0 {
		return &result.OverheadSummary{Verdict: "not measured: no successful runs"}, nil, "rounds"
	}
	need := stats.MinPairs(alpha)
	var change *result.ChangeSummary
	if len(cpuRatios) >= need {
		if o, err := stats.PairedOverhead(cpuRatios, alpha); err == nil {
			change = &result.ChangeSummary{Pct: -o.Pct, CILow: -o.CIHigh, CIHigh: -o.CILow}
		}
	}
	if len(ratios) >= need {
		return summarizeOverhead(stats.PairedOverhead(ratios, alpha)), change,
			fmt.Sprintf("rounds: %d runs, each against the baseline runs next to it in time", len(ratios))
	}
	return summarizeOverhead(stats.CompareThroughput(base, cond, alpha)), change,
		fmt.Sprintf("rounds: %d runs against %d baseline runs, unpaired (pairing needs %d runs)", len(cond), len(base), need)
}

// cpuPerStmt is a run's server CPU per measured statement, 0 if unknown.
func cpuPerStmt(r result.Run) float64 {
	if r.Usage.Server == nil || r.Driver.Measured == 0 {
		return 0
	}
	return r.Usage.Server.Seconds / float64(r.Driver.Measured)
}

// onPhases replaces the whole-run throughput and server CPU per statement
// of an alternation condition by those of its on phases: the whole run is
// half observer, half not.
func onPhases(cs *result.ConditionSummary, runs []result.Run) {
	cs.Throughput.Runs = cs.Throughput.Runs[:0]
	var perStmt []float64
	for _, r := range runs {
		if r.Error != "" {
			continue
		}
		var stmts, secs, cpu float64
		cpuKnown := true
		for _, p := range phases(r) {
			if p == nil || !p.on {
				continue
			}
			stmts, secs, cpu = stmts+p.stmts, secs+p.seconds, cpu+p.serverCPU
			cpuKnown = cpuKnown && p.serverCPU >= 0
		}
		if secs > 0 {
			cs.Throughput.Runs = append(cs.Throughput.Runs, stmts/secs)
			if cpuKnown {
				perStmt = append(perStmt, 1e6*cpu/stmts)
			}
		}
	}
	cs.Throughput.Median = median(cs.Throughput.Runs)
	if len(perStmt) > 0 && cs.CPU.ServerUSPerStmt != nil {
		v := median(perStmt)
		cs.CPU.ServerUSPerStmt = &v
	}
}
