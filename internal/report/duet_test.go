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
