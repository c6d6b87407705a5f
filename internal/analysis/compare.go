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
	driverCPU  float64 // seconds of the driver's CPU in those seconds; <0: unknown
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
			if sec < len(r.Usage.PerSecond) && p.driverCPU >= 0 {
				p.driverCPU += r.Usage.PerSecond[sec].Driver
			} else {
				p.driverCPU = -1
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
	method := fmt.Sprintf("%s: %d on phases, each against the off phases on both sides", result.MethodAlternation, len(tput))
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
func roundsOverhead(runs []result.Run, name string, alpha float64) (*result.OverheadSummary, *result.ChangeSummary, string, *result.Reference) {
	var ratios, cpuRatios, base, cond []float64
	var refTput, refP50, refP99, refCPU []float64
	for i, r := range runs {
		if r.Condition != name || r.Error != "" {
			continue
		}
		cond = append(cond, r.Driver.Throughput)
		var sum, p50, p99, cpuSum, n, cpuN float64
		for _, step := range []int{-1, 1} {
			for j := i + step; j >= 0 && j < len(runs); j += step {
				if b := runs[j]; b.Condition == observer.Baseline && b.Error == "" {
					sum += b.Driver.Throughput
					p50 += b.Driver.Latency.P50
					p99 += b.Driver.Latency.P99
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
			refTput, refP50, refP99 = append(refTput, sum/n), append(refP50, p50/n), append(refP99, p99/n)
		}
		if cpuN > 0 {
			refCPU = append(refCPU, 1e6*cpuSum/cpuN)
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
	var ref *result.Reference
	if len(refTput) > 0 {
		ref = &result.Reference{StmtsPerS: median(refTput), LatencyMS: result.LatencySummary{P50: median(refP50), P99: median(refP99)}}
		if len(refCPU) > 0 {
			v := median(refCPU)
			ref.ServerUSPerStmt = &v
		}
	}
	if len(cond) == 0 || len(base) == 0 {
		return &result.OverheadSummary{Verdict: "not measured: no successful runs"}, nil, string(result.MethodRounds), ref
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
			fmt.Sprintf("%s: %d runs, each against the baseline runs next to it in time", result.MethodRounds, len(ratios)), ref
	}
	// Unpaired, the comparison is with the baseline runs as a group: so
	// is the reference.
	ref = baselineReference(runs)
	return summarizeOverhead(stats.CompareThroughput(base, cond, alpha)), change,
		fmt.Sprintf("%s: %d runs against %d baseline runs, unpaired (pairing needs %d runs)", result.MethodRounds, len(cond), len(base), need), ref
}

// baselineReference is the baseline runs' figures, medians over them.
func baselineReference(runs []result.Run) *result.Reference {
	var tput, p50, p99, cpu []float64
	for _, b := range runs {
		if b.Condition != observer.Baseline || b.Error != "" {
			continue
		}
		tput, p50, p99 = append(tput, b.Driver.Throughput), append(p50, b.Driver.Latency.P50), append(p99, b.Driver.Latency.P99)
		if c := cpuPerStmt(b); c > 0 {
			cpu = append(cpu, 1e6*c)
		}
	}
	if len(tput) == 0 {
		return nil
	}
	ref := &result.Reference{StmtsPerS: median(tput), LatencyMS: result.LatencySummary{P50: median(p50), P99: median(p99)}}
	if len(cpu) > 0 {
		v := median(cpu)
		ref.ServerUSPerStmt = &v
	}
	return ref
}

// cpuPerStmt is a run's server CPU per measured statement, 0 if unknown.
func cpuPerStmt(r result.Run) float64 {
	if r.Usage.Server == nil || r.Driver.Measured == 0 {
		return 0
	}
	return r.Usage.Server.Seconds / float64(r.Driver.Measured)
}

// onPhases puts an alternation condition's figures over its on phases
// (the window its overhead is measured in: the whole run is half
// observer, half not), and the same figures over its off phases as its
// reference. Latency comes from the driver's on and off seconds; runs
// recorded without them keep the whole run's, and Window says so.
func onPhases(cs *result.ConditionSummary, runs []result.Run) {
	cs.Throughput.Runs = cs.Throughput.Runs[:0]
	var onCPU, offCPU, srvPct, drvPct, offTput []float64
	var on50, on99, off50, off99 []float64
	var onStmts []result.StatementLatency
	latencyByPhase := true
	for _, r := range runs {
		if r.Error != "" {
			continue
		}
		var on, off phaseSum
		for _, p := range phases(r) {
			if p == nil {
				continue
			}
			if p.on {
				on.add(p)
			} else {
				off.add(p)
			}
		}
		if on.secs > 0 {
			cs.Throughput.Runs = append(cs.Throughput.Runs, on.stmts/on.secs)
			if on.cpuKnown {
				onCPU = append(onCPU, 1e6*on.srv/on.stmts)
			}
			if k := pctPerCPUSecond(r); k > 0 && on.cpuKnown {
				srvPct = append(srvPct, k*on.srv/on.secs)
				drvPct = append(drvPct, k*on.drv/on.secs)
			}
		}
		if off.secs > 0 {
			offTput = append(offTput, off.stmts/off.secs)
			if off.cpuKnown {
				offCPU = append(offCPU, 1e6*off.srv/off.stmts)
			}
		}
		onStmts = poolStatements(onStmts, r.Driver.StatementsBy["on"])
		lOn, okOn := r.Driver.LatencyBy["on"]
		lOff, okOff := r.Driver.LatencyBy["off"]
		if !okOn || !okOff {
			latencyByPhase = false
			continue
		}
		on50, on99 = append(on50, lOn.P50), append(on99, lOn.P99)
		off50, off99 = append(off50, lOff.P50), append(off99, lOff.P99)
	}
	cs.Throughput.Median = median(cs.Throughput.Runs)
	cs.Window = result.WindowOnPhases
	cs.Statements = onStmts
	if len(onCPU) > 0 && cs.CPU.ServerUSPerStmt != nil {
		v := median(onCPU)
		cs.CPU.ServerUSPerStmt = &v
	}
	if len(srvPct) > 0 && cs.CPU.ServerPct != nil {
		v := median(srvPct)
		cs.CPU.ServerPct = &v
		cs.CPU.DriverPct = median(drvPct)
	}
	ref := &result.Reference{StmtsPerS: median(offTput)}
	if len(offCPU) > 0 {
		v := median(offCPU)
		ref.ServerUSPerStmt = &v
	}
	if latencyByPhase && len(on50) > 0 {
		cs.LatencyMS = result.LatencySummary{P50: median(on50), P99: median(on99)}
		ref.LatencyMS = result.LatencySummary{P50: median(off50), P99: median(off99)}
	} else {
		cs.Window += "; latency over whole runs"
	}
	cs.Reference = ref
}

// phaseSum adds up phases of one kind.
type phaseSum struct {
	stmts, secs, srv, drv float64
	cpuKnown              bool
	n                     int
}

func (s *phaseSum) add(p *phase) {
	if s.n == 0 {
		s.cpuKnown = true
	}
	s.n++
	s.stmts, s.secs = s.stmts+p.stmts, s.secs+p.seconds
	s.srv, s.drv = s.srv+p.serverCPU, s.drv+p.driverCPU
	s.cpuKnown = s.cpuKnown && p.serverCPU >= 0 && p.driverCPU >= 0
}

// pctPerCPUSecond converts CPU seconds per second into % of the machine,
// as the run's own sampler did (its whole-window share over its seconds):
// the machine the results are read on may have other cores. 0 when the
// run has no server CPU.
func pctPerCPUSecond(r result.Run) float64 {
	u := r.Usage.Server
	if u == nil || u.Seconds <= 0 || r.Driver.Seconds <= 0 {
		return 0
	}
	return u.Pct * r.Driver.Seconds / u.Seconds
}
