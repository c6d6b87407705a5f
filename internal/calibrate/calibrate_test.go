package calibrate

import (
	"strings"
	"testing"

	"github.com/obsbench/obsbench/internal/result"
)

// The verdict line prints the expected overhead and the interval with as
// many decimals as it takes to see which side of a bound the expectation
// is on, so that "NOT recovered" never stands beside a figure that reads
// as inside the interval.
func TestRecoveredVerdictReadsAsItJudges(t *testing.T) {
	for _, c := range []struct {
		expected, lo, hi float64
		want             string
	}{
		{10.06, 10.08, 10.4, "expected overhead 10.06% (server CPU/stmt +15.0%), measured 10.20% [10.08, 10.40]: NOT recovered"},
		{10.3, 9.1, 11.4, "expected overhead 10.3% (server CPU/stmt +15.0%), measured 10.2% [9.1, 11.4]: recovered"},
		{10.41, 10.08, 10.4, "expected overhead 10.41% (server CPU/stmt +15.0%), measured 10.20% [10.08, 10.40]: NOT recovered"},
		{10.4004, 10.08, 10.4, "expected overhead 10.400% (server CPU/stmt +15.0%), measured 10.200% [10.080, 10.400]: NOT recovered"},
	} {
		cals := []Calibration{{Name: "calibration-10%", Loops: 74, ExtraUS: 3.9, ExpectedPct: c.expected, ExpectedCPUPct: 15}}
		sum := result.Summary{Conditions: []result.ConditionSummary{{Name: "calibration-10%",
			Overhead: &result.OverheadSummary{Pct: 10.2, CILow: c.lo, CIHigh: c.hi, Verdict: "more"}}}}
		var b strings.Builder
		printRecovered(&b, sum, cals)
		if !strings.Contains(b.String(), c.want) {
			t.Errorf("expected %v, interval [%v, %v]:\n%s\nwant %q", c.expected, c.lo, c.hi, b.String(), c.want)
		}
	}
}
