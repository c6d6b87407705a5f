// Package analysis turns an experiment's runs into its Summary: per
// condition, throughput, overhead against the baseline with a confidence
// interval corrected for multiple comparisons, latency, CPU and events;
// and the gates that fail an experiment on it (--max-overhead).
package analysis

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/obsbench/obsbench/internal/collect"
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

// DisturbedPct is the share of the machine other processes may take in
// the experiment's median run before the summary warns that the machine
// was busy throughout (a run is flagged by its own against that median:
// disturbances).
const DisturbedPct = 10

const aaName = result.AAName

// Summarize aggregates runs. head carries the experiment's description
// (engine, workload, seed, ...); conditions gives the observers' order.
// Round-based conditions are compared with the baseline runs next to them in
// time, alternation runs phase by phase with their neighbouring off phases.
func Summarize(head result.Summary, conditions []string, runs []result.Run) result.Summary {
	s := head
	s.Conditions = nil
	byCond, inRuns := byCondition(runs)
	whatRan(&s, runs)
	names := conditionOrder(byCond, inRuns, conditions)
	m := 0
	for _, n := range names {
		if n != observer.Baseline && !result.IsAA(n) {
			m++
		}
	}
	alpha := stats.Bonferroni(FamilyAlpha, max(m, 1))
	s.Method = methodNote(runs, m, alpha)
	base := throughputs(byCond[observer.Baseline])
	aa := byCond[aaName]
	if len(aa) == 0 {
		aa = byCond[result.SplitAAName]
	}
	resolution(&s, base, aa, alpha)
	disturbed := disturbances(runs)
	if disturbed.median > DisturbedPct {
		s.Warnings = append(s.Warnings, fmt.Sprintf("other processes took %.0f%% of the machine in the median run (over %d%%): the machine was busy throughout, and every figure is a busy machine's",
			disturbed.median, DisturbedPct))
	}
	baseWaits, _, _ := waitProfiles(byCond[observer.Baseline])
	b := basis{runs: runs, alpha: alpha, baseWaits: baseWaits, baseLevel: median(base), disturbed: disturbed}
	for _, name := range names {
		cs, warnings := b.condition(name, byCond[name])
		s.Warnings = append(s.Warnings, warnings...)
		s.Conditions = append(s.Conditions, cs)
	}
	sharedParts(s.Conditions)
	if len(base) > 0 && m > 0 {
		if need := stats.MinRuns(alpha); len(base) < need {
			s.Warnings = append(s.Warnings, fmt.Sprintf("%d baseline runs cannot show any overhead as significant with %d comparisons: use --rounds %d or more",
				len(base), m, need))
		}
	}
	return s
}

// byCondition groups the runs by condition, each in the order it ran;
// inRuns are the conditions in the order of their first run.
func byCondition(runs []result.Run) (byCond map[string][]result.Run, inRuns []string) {
	byCond = map[string][]result.Run{}
	for _, r := range runs {
		if len(byCond[r.Condition]) == 0 {
			inRuns = append(inRuns, r.Condition)
		}
		byCond[r.Condition] = append(byCond[r.Condition], r)
	}
	return byCond, inRuns
}

// whatRan sets the summary's alternation length and rounds from what ran,
// not what was asked for: a resolution plan may have changed the
// alternation runs' length, and flags of a method no condition used did
// nothing.
func whatRan(s *result.Summary, runs []result.Run) {
	altSeconds, rounds := 0.0, 0
	for _, r := range runs {
		if r.Method.Alternates() && r.Error == "" {
			altSeconds = max(altSeconds, r.Driver.Seconds)
		}
		if !r.Method.Alternates() {
			rounds = max(rounds, r.Round) // a duet's phases too
		}
	}
	s.AltSeconds = altSeconds
	if rounds == 0 {
		s.Rounds, s.Seconds = 0, 0
	}
}

// conditionOrder is the order of the summary's rows: the baseline, the
// A/A arm, then the observers as given, each with its other measurements
// ("name (switchable)") next to it, then any other condition that ran.
func conditionOrder(byCond map[string][]result.Run, inRuns, conditions []string) []string {
	names := []string{}
	add := func(n string) {
		if len(byCond[n]) > 0 && !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	for _, n := range append([]string{observer.Baseline, aaName, result.SplitAAName}, conditions...) {
		add(n)
		for _, m := range inRuns {
			if strings.HasPrefix(m, n+" (") {
				add(m)
			}
		}
	}
	for _, n := range inRuns { // none is left out
		add(n)
	}
	return names
}

// resolution sets the noise floor, from two baseline runs or more, and the
// smallest overhead detectable, from the A/A arm's runs.
func resolution(s *result.Summary, base []float64, aa []result.Run, alpha float64) {
	if len(base) >= 2 {
		nf := stats.NoiseFloor(base)
		s.NoiseFloorPct = &nf
	}
	if len(aa) == 0 {
		return
	}
	mde := DuetMDE(aa, alpha)
	if !aa[0].Method.Paired() {
		var logs []float64
		for _, r := range aa {
			tput, _ := phaseRatios(r)
			for _, x := range tput {
				logs = append(logs, math.Log(x))
			}
		}
		mde = stats.MDE(logs, alpha, 0.8)
	}
	if !math.IsNaN(mde) {
		s.MDEPct = &mde
	}
}

// basis is what every condition is summarized against: the
// experiment's runs, the family's alpha, the baseline's waits and median
// throughput, and the runs other processes disturbed.
type basis struct {
	runs      []result.Run
	alpha     float64
	baseWaits collect.Waits
	baseLevel float64
	disturbed disturbance
}

// condition summarizes the runs of condition name, with the warnings
// they call for.
func (b basis) condition(name string, runs []result.Run) (result.ConditionSummary, []string) {
	cs := summarizeCondition(name, runs)
	timeline(&cs, runs, b.baseLevel)
	b.waits(&cs, name, runs)
	warnings := b.overhead(&cs, name, runs)
	if cs.Rate == nil { // not paired: the condition's own runs
		if cs.Rate = rateSummary(runs, b.alpha); cs.Rate != nil {
			cs.Overhead = cpuOverhead(cs.Overhead, cs.CPUChange)
		}
		warnings = append(warnings, rateWarnings(name, cs.Rate, 0)...)
	}
	cs.Workers = workers(runs)
	warnings = append(warnings, workerWarnings(name, cs.Workers)...)
	if cs.CPU.DriverPct > DriverCPUWarnPct {
		warnings = append(warnings, fmt.Sprintf("%s: the driver used %.0f%% of the machine (over %d%%): it competes with the server for CPU",
			name, cs.CPU.DriverPct, DriverCPUWarnPct))
	}
	if cs.Disturbed = b.disturbed.count(runs); cs.Disturbed > 0 {
		warnings = append(warnings, b.disturbed.warning(name, runs, b.alpha))
	}
	if w := lopsidedWarning(name, runs, b.alpha); w != "" {
		warnings = append(warnings, w)
	}
	if o := cs.Overhead; o != nil && o.Significant && o.Pct > 0 && cs.Waits != nil && cs.Waits.Top[0].BaselinePct != nil && len(cs.Waits.Signatures) == 0 {
		warnings = append(warnings, fmt.Sprintf("%s: %.0f%% slower, yet no wait appeared that the baseline lacks: its wait statistics would not reveal it",
			name, o.Pct))
	}
	return cs, append(warnings, eventWarnings(name, cs.Events)...)
}

// waits sets the condition's wait profile, against the baseline's (or,
// alternating, against its own off phases), and its counters.
func (b basis) waits(cs *result.ConditionSummary, name string, runs []result.Run) {
	on, off, engine := waitProfiles(runs)
	switch {
	case name == observer.Baseline:
		cs.Waits = summarizeWaits(on, collect.Waits{}, engine)
	case runs[0].Method.Alternates():
		cs.Waits = summarizeWaits(on, off, engine)
	default:
		cs.Waits = summarizeWaits(on, b.baseWaits, engine)
	}
	cs.Counters = medianCounters(runs)
	if cs.Waits != nil {
		cs.Waits.SamplerCPUPct = samplerCPU(runs)
	}
}

// overhead compares the condition with what its method compares it with
// (the baseline has none), and returns a duet's warnings.
func (b basis) overhead(cs *result.ConditionSummary, name string, runs []result.Run) []string {
	switch {
	case name == observer.Baseline:
		cs.Window = result.WindowRuns
	case runs[0].Method.Paired():
		f := duetOverhead(runs, b.alpha)
		cs.Overhead, cs.ThroughputOverhead, cs.CPUChange, cs.Method, cs.Reference, cs.Duet, cs.ServerCost = f.Overhead, f.Throughput, f.Change, f.Method, f.Reference, f.Duet, f.Cost
		cs.Window = result.WindowRuns
		switch {
		case result.IsAA(name):
		case runs[0].Method == result.MethodSplit:
			cs.Measures = result.MeasuresPerSession
		default:
			cs.Measures = result.MeasuresWhole
		}
		if cs.Rate = rateSummary(runs, b.alpha); cs.Rate != nil {
			// Below its quota a twin leaves CPU idle by design.
			share := 0.0
			if cs.Duet != nil {
				share = cs.Duet.ShareCPUs
			}
			cs.Rate.WithCapacity(share)
			return rateWarnings(name, cs.Rate, share)
		}
		return duetWarnings(name, cs.Duet)
	case runs[0].Method.Alternates():
		cs.Overhead, cs.CPUChange, cs.Method = alternationOverhead(runs, b.alpha)
		cs.Stratified = stratifiedAlternation(runs, b.alpha)
		onPhases(cs, runs)
		if name != aaName {
			cs.Measures = measures(runs)
		}
	default:
		cs.Overhead, cs.CPUChange, cs.Method, cs.Reference = roundsOverhead(b.runs, name, b.alpha)
		cs.Measures, cs.Window = result.MeasuresWhole, result.WindowRuns
		cs.Stratified = stratifiedOverhead(b.runs, name, b.alpha)
	}
	return nil
}

// eventWarnings say what the event count of a condition found amiss:
// events missing or extra, buffers the engine dropped or waited for.
func eventWarnings(name string, e *result.Events) []string {
	if e == nil {
		return nil
	}
	var warnings []string
	if lo, hi, outside := e.OutsideSample(); outside && e.Error == "" {
		warnings = append(warnings, fmt.Sprintf("%s: recorded %d events for %d statements executed, sampled at %g: outside the %d-%d a sample of that rate records 999 times in 1,000",
			name, e.Recorded, e.Executed, e.SampleRate, lo, hi))
	}
	if !e.Volume && e.SampleRate == 0 && e.Recorded != e.Executed && e.Error == "" {
		warnings = append(warnings, fmt.Sprintf("%s: recorded %d events for %d statements executed (%+d)",
			name, e.Recorded, e.Executed, e.Recorded-e.Executed))
	}
	if b := e.EngineLostBuffers; b != nil && *b > 0 {
		warnings = append(warnings, fmt.Sprintf("%s: the engine dropped %d whole buffer(s) of events", name, *b))
	}
	if b := e.EngineBlocked; b != nil && *b > 0 {
		warnings = append(warnings, fmt.Sprintf("%s: event firing was blocked for %d (the session's blocked_event_fire_time, in a unit its documentation does not give) waiting for free event buffers rather than drop events", name, *b))
	}
	for _, note := range e.Notes {
		warnings = append(warnings, name+": "+note)
	}
	return warnings
}

// measures says whose cost an alternation condition's overhead is, as the
// runs were planned; runs recorded before that was kept: the whole
// observer's when nothing of it was held in force in both phases.
func measures(runs []result.Run) string {
	for _, r := range runs {
		if r.Measures != "" {
			return r.Measures
		}
	}
	for _, r := range runs {
		if r.Error == "" && r.Held != "" && r.Held != "no change" {
			return result.MeasuresSwitchable
		}
	}
	return result.MeasuresWhole
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
	var p50, p99, drv, drvPer, srv, srvPer, secs []float64
	for _, r := range runs {
		if r.Error != "" {
			cs.Failed++
			continue
		}
		cs.Throughput.Runs = append(cs.Throughput.Runs, r.Driver.Throughput)
		secs = append(secs, r.Driver.Seconds)
		cs.StatementErrors += r.Driver.Errors
		for _, msg := range r.Driver.ErrorSamples {
			if len(cs.ErrorSamples) < 3 && !slices.Contains(cs.ErrorSamples, msg) {
				cs.ErrorSamples = append(cs.ErrorSamples, msg)
			}
		}
		p50 = append(p50, r.Driver.Latency.P50)
		p99 = append(p99, r.Driver.Latency.P99)
		cs.Statements = poolStatements(cs.Statements, r.Driver.Statements)
		drv = append(drv, r.Usage.Driver.Pct)
		n := float64(r.Driver.Measured)
		if r.Method == result.MethodSplit && r.Duet != nil {
			// The server and the driver served both groups.
			n += float64(r.Duet.Off.Measured)
		}
		if n > 0 {
			drvPer = append(drvPer, 1e6*r.Usage.Driver.Seconds/n)
			if r.Usage.Server != nil {
				srvPer = append(srvPer, 1e6*r.Usage.Server.Seconds/n)
			}
		}
		if r.Usage.Server != nil {
			srv = append(srv, r.Usage.Server.Pct)
		}
		if r.Events != nil {
			if cs.Events == nil {
				cs.Events = &result.Events{}
			}
			cs.Events.Recorded += r.Events.Recorded
			cs.Events.Executed += r.Events.Executed
			cs.Events.Volume = r.Events.Volume
			cs.Events.SampleRate = r.Events.SampleRate
			addCount(&cs.Events.EngineLost, r.Events.EngineLost)
			addCount(&cs.Events.EngineLostBuffers, r.Events.EngineLostBuffers)
			addCount(&cs.Events.EngineBlocked, r.Events.EngineBlocked)
			for _, note := range r.Events.Notes {
				if !slices.Contains(cs.Events.Notes, note) {
					cs.Events.Notes = append(cs.Events.Notes, note)
				}
			}
			if r.Events.Error != "" {
				cs.Events.Error = r.Events.Error
			}
		}
	}
	cs.Throughput.Median = median(cs.Throughput.Runs)
	cs.RunSeconds = median(secs)
	cs.LatencyMS = result.LatencySummary{P50: median(p50), P99: median(p99)}
	cs.CPU.DriverPct = median(drv)
	cs.CPU.DriverUSPerStmt = median(drvPer)
	if len(srv) > 0 {
		v, per := median(srv), median(srvPer)
		cs.CPU.ServerPct, cs.CPU.ServerUSPerStmt = &v, &per
	}
	return cs
}

// summarizeOverhead turns a stats result into the summary's form.
func summarizeOverhead(o stats.Overhead, err error) *result.OverheadSummary {
	if err != nil {
		return &result.OverheadSummary{Verdict: "not measured: " + err.Error()}
	}
	return &result.OverheadSummary{
		Pct: o.Pct, CILow: o.CILow, CIHigh: o.CIHigh, Confidence: 100 * o.Confidence,
		Significant: o.Significant, Verdict: verdict(o.Reachable, o.Significant, o.Pct > 0, "slower", "faster"),
		Warnings: o.Warnings,
	}
}

// methodNote says how the overheads were estimated: by the phase model
// where every run was a duet's, by ranks otherwise, and the correction.
func methodNote(runs []result.Run, m int, alpha float64) string {
	duet, other, split, twins := false, false, false, false
	for _, r := range runs {
		duet, other = duet || r.Method.Paired(), other || !r.Method.Paired()
		split = split || r.Method == result.MethodSplit
		twins = twins || r.Method == result.MethodDuet
	}
	est := "Hodges-Lehmann estimate on log throughput with an exact distribution-free interval " +
		"(Wilcoxon signed-rank for paired comparisons, Mann-Whitney otherwise)"
	switch {
	case split && twins && !other:
		est = duetEstimate + "; " + splitEstimate
	case split && !other:
		est = splitEstimate
	case split:
		est = splitEstimate + "; the other methods' by " + est
	case duet && !other:
		est = duetEstimate
	case duet:
		est = duetEstimate + "; the other methods' by " + est
	}
	head := "overhead = 1 - T/T(baseline), " + est
	switch {
	case !atRate(runs):
	case !duet || other:
		head += "; at a fixed arrival rate, the throughput being the rate's, a row's overhead is read from its change C in server CPU per statement as 1 - 1/(1+C)"
	default:
		head = "at a fixed arrival rate, overhead = 1 - C(baseline)/C, C the server CPU per statement, " +
			"by least squares over every phase's log ratio of the two sides' C, their difference and its drift taken out, with Student's t interval on the residual; " +
			"latency added the same over each phase's difference in ms"
	}
	return fmt.Sprintf("%s; Bonferroni correction over %d comparisons (each interval at %.4g%%, together 95%%)", head, m, 100*(1-alpha))
}

// duetEstimate is how a duet's overhead is estimated.
const duetEstimate = "a duet's by least squares over every phase's log throughput ratio (a row marked * the ratio with equal CPU, from the twins' server CPU per statement), the twins' difference and its drift taken out, " +
	"with Student's t interval on the residual"

// splitEstimate is how a split's overhead is estimated.
const splitEstimate = "a split's by least squares over every phase's log throughput ratio of its two groups of sessions (a row marked * the ratio with equal CPU, from each group's backends' CPU per statement), the groups' difference and its drift taken out, " +
	"with Student's t interval on the residual"

// verdict words a comparison: up or down (above or below no change) when
// its interval excludes no change, else why it does not tell.
func verdict(reachable, significant, above bool, up, down string) string {
	switch {
	case !reachable:
		return "too few samples to tell"
	case significant && above:
		return up
	case significant:
		return down
	}
	return "no detectable difference"
}

// median is 0, not NaN, for no values: JSON has no NaN.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	return stats.Median(xs)
}

// addCount adds a run's count to a condition's, where the run has one: a
// condition has a count only if some run had.
func addCount(sum **int64, run *int64) {
	if run == nil {
		return
	}
	n := *run
	if *sum != nil {
		n += **sum
	}
	*sum = &n
}

// poolStatements adds one run's per-statement latencies (and server CPU)
// to those of the runs before: counts add up, means are weighted by them.
func poolStatements(pool, run []result.StatementLatency) []result.StatementLatency {
	for _, st := range run {
		i := slices.IndexFunc(pool, func(p result.StatementLatency) bool { return p.Statement == st.Statement })
		if i < 0 {
			pool = append(pool, result.StatementLatency{Statement: st.Statement})
			i = len(pool) - 1
		}
		p := &pool[i]
		p.MeanMS, p.Count = weightedMean(p.MeanMS, p.Count, st.MeanMS, st.Count)
		p.CPUMeanMS, p.CPUCount = weightedMean(p.CPUMeanMS, p.CPUCount, st.CPUMeanMS, st.CPUCount)
	}
	return pool
}

// weightedMean pools two means of n1 and n2 values.
func weightedMean(m1 float64, n1 int64, m2 float64, n2 int64) (float64, int64) {
	n := n1 + n2
	if n == 0 {
		return m1, 0
	}
	return (m1*float64(n1) + m2*float64(n2)) / float64(n), n
}
