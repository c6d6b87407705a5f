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
