package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/obsbench/obsbench/internal/result"
)

// The latency of twins held to a quota is said to hold the quota's wait;
// twins not held to one get no such line.
func TestDuetSaysLatencyIsUnderTheQuota(t *testing.T) {
	for _, share := range []float64{0.7, 0} {
		s := result.Summary{Conditions: []result.ConditionSummary{{Name: "log", Duet: &result.DuetSummary{Phases: 16, ShareCPUs: share}}}}
		var b bytes.Buffer
		Duet(&b, s)
		if got := strings.Contains(b.String(), "p99 holds that wait"); got != (share > 0) {
			t.Errorf("share %g: latency note %v; want %v:\n%s", share, got, share > 0, b.String())
		}
	}
}

// A duet's server cost is a column of its own: narrow, the µs added and
// the share; wide, each with its interval. A row without one reads "-".
func TestServerCostCell(t *testing.T) {
	c := &result.ServerCost{BaseUS: 60, Added: result.AddedSummary{US: 2.345, CILow: 1.5, CIHigh: 3.25},
		Share: result.ChangeSummary{Pct: 3.76, CILow: 2.4, CIHigh: 5.1}}
	for _, tt := range []struct {
		c    *result.ServerCost
		wide bool
		want string
	}{
		{c, false, "+2.35 (3.8%)"},
		{c, true, "+2.35 [+1.50, +3.25]\t+3.8 [2.4, 5.1]"},
		{nil, false, "-"},
		{nil, true, "-\t-"},
	} {
		if got := serverCostCell(tt.c, tt.wide); got != tt.want {
			t.Errorf("serverCostCell(%v, wide %v) = %q; want %q", tt.c, tt.wide, got, tt.want)
		}
	}
}

// A duet overhead read from server CPU per statement is starred, the
// note says what that means and gives its throughput figure; a table
// without one has no note.
func TestCPUBasisStarred(t *testing.T) {
	o := func(pct float64, basis string) *result.OverheadSummary {
		return &result.OverheadSummary{Basis: basis, Pct: pct, CILow: pct - 2, CIHigh: pct + 2, Confidence: 95, Significant: true, Verdict: "slower"}
	}
	s := result.Summary{Conditions: []result.ConditionSummary{
		{Name: "baseline"},
		{Name: "audit", Overhead: o(19.1, result.BasisServerCPU), ThroughputOverhead: o(17.5, result.BasisThroughput)},
		{Name: "log", Overhead: o(4.2, result.BasisThroughput)},
	}}
	for _, wide := range []bool{false, true} {
		var b bytes.Buffer
		if err := text(&b, s, wide); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		for _, want := range []string{"19.1 [17.1, 21.1]*", "overhead %*: read from each twin server's CPU per statement", "From throughput: audit 17.5 [15.5, 19.5]."} {
			if !strings.Contains(out, want) {
				t.Errorf("wide %v: text lacks %q:\n%s", wide, want, out)
			}
		}
		if strings.Contains(out, "4.2 [2.2, 6.2]*") {
			t.Errorf("wide %v: the throughput row is starred:\n%s", wide, out)
		}
	}
	s.Conditions[1] = result.ConditionSummary{Name: "audit", Overhead: o(19.1, result.BasisThroughput)}
	var b bytes.Buffer
	if err := Text(&b, s); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "*") {
		t.Errorf("no overhead from CPU, yet a star:\n%s", b.String())
	}
}
