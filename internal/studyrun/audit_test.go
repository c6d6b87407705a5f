package studyrun

import (
	"strings"
	"testing"

	"github.com/obsbench/obsbench/internal/report"
	"github.com/obsbench/obsbench/internal/result"
)

func TestThresholdVerdict(t *testing.T) {
	point := func(n int, ov *result.OverheadSummary) report.SweepPoint {
		return report.SweepPoint{Sessions: n, Summary: result.Summary{Conditions: []result.ConditionSummary{{Name: "audit", Overhead: ov}}}}
	}
	under := &result.OverheadSummary{Pct: 1, CILow: -1, CIHigh: 3, Verdict: "no detectable difference"}
	over := &result.OverheadSummary{Pct: 9, CILow: 7, CIHigh: 11, Verdict: "slower", Significant: true}
	spans := &result.OverheadSummary{Pct: 4, CILow: 2, CIHigh: 6, Verdict: "slower", Significant: true}
	few := &result.OverheadSummary{Pct: 9, CILow: 9, CIHigh: 9, Verdict: "too few samples to tell"}
	for _, tc := range []struct {
		sessions []int
		points   []report.SweepPoint
		want     string
	}{
		{[]int{1, 2}, []report.SweepPoint{point(1, under), point(2, under)}, "stays under 5% at every session count"},
		{[]int{1, 4}, []report.SweepPoint{point(1, under), point(4, over)}, "above 5% at 4 session(s)"},
		{[]int{1, 2}, []report.SweepPoint{point(1, spans), point(2, few)}, "not shown under 5% at 1, 2 session(s)"},
		{[]int{8}, []report.SweepPoint{point(8, nil)}, "not measured at 8 session(s)"},
		{[]int{1, 16}, []report.SweepPoint{point(1, under)}, "not measured at 16 session(s)"},
	} {
		if got := thresholdVerdict("audit", tc.sessions, tc.points, 5); !strings.Contains(got, tc.want) {
			t.Errorf("thresholdVerdict = %q; want %q", got, tc.want)
		}
	}
}
