package analysis

import (
	"math"
	"testing"

	"github.com/obsbench/obsbench/internal/result"
)

// The shared part is the whole row's overhead less its split row's, each
// side of its interval the two intervals' sides in quadrature; on
// throughput where the rows were read on different bases; none without
// both rows measured.
func TestSharedParts(t *testing.T) {
	ov := func(pct, lo, hi float64, basis string) *result.OverheadSummary {
		return &result.OverheadSummary{Pct: pct, CILow: lo, CIHigh: hi, Basis: basis}
	}
	cpu, tput := result.BasisServerCPU, result.BasisThroughput
	for _, tt := range []struct {
		name       string
		whole, per result.ConditionSummary
		want       *result.SharedSummary
	}{
		{"same basis",
			result.ConditionSummary{Name: "x", Measures: result.MeasuresWhole, Overhead: ov(10, 7, 14, cpu)},
			result.ConditionSummary{Name: "x (split)", Measures: result.MeasuresPerSession, Overhead: ov(2, 1, 3, cpu)},
			&result.SharedSummary{Pct: 8, CILow: 8 - math.Hypot(3, 1), CIHigh: 8 + math.Hypot(4, 1), Basis: cpu}},
		{"bases differ: throughput",
			result.ConditionSummary{Name: "x", Measures: result.MeasuresWhole, Overhead: ov(10, 7, 14, cpu), ThroughputOverhead: ov(9, 5, 13, tput)},
			result.ConditionSummary{Name: "x (split)", Measures: result.MeasuresPerSession, Overhead: ov(3, 1, 5, tput)},
			&result.SharedSummary{Pct: 6, CILow: 6 - math.Hypot(4, 2), CIHigh: 6 + math.Hypot(4, 2), Basis: tput}},
		{"split row not measured",
			result.ConditionSummary{Name: "x", Measures: result.MeasuresWhole, Overhead: ov(10, 7, 14, cpu)},
			result.ConditionSummary{Name: "x (split)", Measures: result.MeasuresPerSession, Overhead: &result.OverheadSummary{Verdict: "not measured: no phases"}},
			nil},
		{"another observer's split",
			result.ConditionSummary{Name: "x", Measures: result.MeasuresWhole, Overhead: ov(10, 7, 14, cpu)},
			result.ConditionSummary{Name: "y (split)", Measures: result.MeasuresPerSession, Overhead: ov(2, 1, 3, cpu)},
			nil},
	} {
		rows := []result.ConditionSummary{tt.whole, tt.per}
		sharedParts(rows)
		got := rows[0].Shared
		if (got == nil) != (tt.want == nil) || (got != nil && (math.Abs(got.Pct-tt.want.Pct) > 1e-9 || math.Abs(got.CILow-tt.want.CILow) > 1e-9 ||
			math.Abs(got.CIHigh-tt.want.CIHigh) > 1e-9 || got.Basis != tt.want.Basis)) {
			t.Errorf("%s: shared %+v; want %+v", tt.name, got, tt.want)
		}
		if rows[1].Shared != nil {
			t.Errorf("%s: the split row has a shared part %+v; want it on the whole row only", tt.name, rows[1].Shared)
		}
	}
}
