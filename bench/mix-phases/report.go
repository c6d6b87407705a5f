package main

import (
	"path/filepath"
	"strings"

	"github.com/obsbench/obsbench/bench/internal/sidebyside"
	"github.com/obsbench/obsbench/internal/result"
)

// studyComparisons is study 3's count of comparisons on PostgreSQL (its
// observers and the A/A cell), over which its intervals are corrected.
const studyComparisons = 19

func report(c config, args []string, a findings, s result.Summary) error {
	w := sidebyside.NewReport("How far the mix's server CPU moves between alternation phases", c.command)
	p := w.Line
	p("- run: managed PostgreSQL %s, `obsbench %s` (an A/A alternation: nothing switched)", s.Server, strings.Join(args[:len(args)-2], " "))
	p("- probe: a thread of this bench timing, every 20 ms, 100,000 multiplications (core) and 500 steps through a 64 MiB random cycle (memory), by its own CPU clock\n")

	p("| phase | on | seconds | executions | factor | probe: core | probe: memory |")
	p("|---:|---|---:|---:|---:|---:|---:|")
	secs := 0
	for i, ph := range a.phases {
		var n int64
		for _, st := range ph.strata {
			n += st.N
		}
		p("| %d | %v | %d | %d | %.3f | %.3f | %.3f |", i+1, ph.On, ph.End-ph.Start, n, ph.factor, ph.compute, ph.memory)
		secs += ph.End - ph.Start
	}
	p("\nfactor: the median over the queries (at least 3 executions in the phase) of the query's mean server CPU per execution in the phase over its mean in the whole run; executions wholly inside the phase, its first second left out. probe: the median loop time in the phase over the run's.\n")

	p("## What it shows\n")
	p("- **The server's CPU per execution moves by %.1f%% (coefficient of variation of the factor) from phase to phase**, every query with it, while nothing changes.", 100*a.factorCV)
	p("- **The probe does not see it:** its core loop moves by %.1f%% (correlation with the factor %.2f; memory loop %.2f); the factor over the core loop still moves by %.1f%%.",
		100*a.computeCV, a.corrCompute, a.corrMemory, 100*a.residualCV)
	for _, q := range a.spread {
		p("- %s (%.0f%% of the server CPU): %.0f executions, server CPU per execution p10 %.1f ms, median %.1f ms, p90 %.1f ms.", q.name, q.sharePct, q.count, q.p10, q.p50, q.p90)
	}
	meanPhase := float64(secs) / float64(len(a.phases))
	alone, study := pairsFor(a.pairLogSD, 5, 0.95), pairsFor(a.pairLogSD, 5, 1-0.05/studyComparisons)
	p("- **The stratified comparison's pairs** (each \"on\" phase's server CPU per execution, CPU-weighted query by query, against the phases beside it): %d pairs, per-pair noise %.1f%% (sd of the log ratio). For an interval of ±5 points that noise needs about %d pairs for one comparison at 95%%, and %d for each of study 3's %d comparisons (Bonferroni: each at %.2f%%): at phases of %.0f s, about %.0f minutes of alternation per observer.",
		a.pairs, 100*a.pairLogSD, alone, study, studyComparisons, 100*(1-0.05/studyComparisons), meanPhase, float64(2*study)*meanPhase/60)
	for i, name := range []string{"core", "memory"} {
		if i < len(a.adjusted) {
			x := a.adjusted[i]
			p("- The same pairs with each phase's costs divided by the probe's %s loop time to the power %.1f (the factor regressed on it over the off phases, in-sample): per-pair noise %.1f%%, needing about %d pairs for ±5 points over %d comparisons.",
				name, x.slope, 100*x.pairLogSD, pairsFor(x.pairLogSD, 5, 1-0.05/studyComparisons), studyComparisons)
		}
	}
	for _, cs := range s.Conditions {
		if cs.Stratified != nil && cs.Stratified.CPU != nil {
			x := cs.Stratified.CPU
			p("- obsbench's own figure for this A/A (%s, server CPU per execution, query by query): %+.1f%% [%+.1f, %+.1f].", cs.Name, x.Pct, x.CILow, x.CIHigh)
		}
	}
	p("\nobsbench's text output: [output.txt](output.txt). What it means for study 3: bench/mix-phases/README.md.")
	return sidebyside.Publish(filepath.Join(c.dir, "RESULT.md"), w.String())
}
