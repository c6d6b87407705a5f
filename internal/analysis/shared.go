package analysis

import (
	"math"

	"github.com/obsbench/obsbench/internal/result"
)

// sharedParts sets, on each row measured whole whose observer was also
// split beside it, the whole overhead less the per-session one: what
// all sessions share (a preloaded library's hooks, the log's collector,
// what is computed for every statement whoever reads it). Both are read
// on the same basis: server CPU per statement where both rows were, else
// throughput.
func sharedParts(conditions []result.ConditionSummary) {
	for i := range conditions {
		whole := &conditions[i]
		if whole.Measures != result.MeasuresWhole {
			continue
		}
		for _, per := range conditions {
			if per.Name == whole.Name+result.SplitSuffix && per.Measures == result.MeasuresPerSession {
				whole.Shared = sharedOf(whole, &per)
			}
		}
	}
}

// sharedOf is whole's overhead less per's, in points, with an interval
// from both (independent estimates at the same level: each side's
// distances added in quadrature); nil when either is not measured.
func sharedOf(whole, per *result.ConditionSummary) *result.SharedSummary {
	w, p := whole.Overhead, per.Overhead
	if w.Measured() && p.Measured() && w.Basis != p.Basis {
		w, p = throughputOf(whole), throughputOf(per)
	}
	if !w.Measured() || !p.Measured() {
		return nil
	}
	d := w.Pct - p.Pct
	return &result.SharedSummary{
		Pct:    d,
		CILow:  d - math.Hypot(w.Pct-w.CILow, p.CIHigh-p.Pct),
		CIHigh: d + math.Hypot(w.CIHigh-w.Pct, p.Pct-p.CILow),
		Basis:  w.Basis,
	}
}

// throughputOf is a row's throughput overhead: Overhead, unless that is
// read from server CPU and the throughput figure is beside it.
func throughputOf(cs *result.ConditionSummary) *result.OverheadSummary {
	if cs.ThroughputOverhead != nil {
		return cs.ThroughputOverhead
	}
	return cs.Overhead
}
