package analysis

import (
	"errors"
	"strings"
	"testing"

	"github.com/obsbench/obsbench/internal/result"
)

// The gate fails only on an interval wholly above the limit, and never on
// the A/A or collector arms.
func TestGate(t *testing.T) {
	cond := func(name string, pct, lo, hi float64, sig bool) result.ConditionSummary {
		return result.ConditionSummary{Name: name, Overhead: &result.OverheadSummary{Pct: pct, CILow: lo, CIHigh: hi, Significant: sig}}
	}
	sum := &result.Summary{Conditions: []result.ConditionSummary{
		{Name: "baseline"},
		cond("baseline A/A", 9, 6, 12, true),
		cond("cheap", 2, 1, 3, true),
		cond("costly-maybe", 8, 4, 12, true),
		cond("costly", 20, 15, 25, true),
		cond("collector: wait sampler", 9, 7, 11, true),
	}}
	for _, tt := range []struct {
		limit float64
		want  string
	}{{5, "costly 20.0% [15.0, 25.0]"}, {3.5, "costly-maybe 8.0% [4.0, 12.0]; costly 20.0%"}, {30, ""}} {
		err := GateTimed(tt.limit, *sum)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("limit %g: %v; want no error", tt.limit, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("limit %g: %v; want %q", tt.limit, err, tt.want)
		}
	}
}

// A counted experiment is gated on the session's instructions per
// statement, an interval wholly above the limit, and says so.
func TestGateCounted(t *testing.T) {
	cond := func(name string, pct, lo, hi float64) result.CountedCondition {
		return result.CountedCondition{Name: name, BackendChange: &result.CountChange{Pct: pct, Low: lo, High: hi, HasCI: true, Signif: lo > 0 || hi < 0}}
	}
	conds := []result.CountedCondition{
		{Name: "baseline"},
		cond("pg-stat-statements", 0.37, 0.36, 0.38),
		cond("log-statements-file", 2.53, 2.52, 2.54),
		cond("straddles", 3.1, 2.9, 3.3),
		cond("unmoved", 0.001, -0.01, 0.012),
	}
	for _, tt := range []struct {
		limit float64
		want  string
	}{
		{3, ""},
		{0.5, "counted instructions per statement above --max-overhead 0.5% with 95% confidence: log-statements-file +2.53% [+2.52, +2.54]; straddles"},
		{0, "pg-stat-statements +0.37% [+0.36, +0.38]; log-statements-file"},
	} {
		err := GateCounted("max-overhead", tt.limit, conds)
		var oe *OverheadError
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("limit %g: %v; want no error", tt.limit, err)
		case tt.want != "" && (!errors.As(err, &oe) || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("limit %g: %v; want an *OverheadError with %q", tt.limit, err, tt.want)
		case tt.want != "" && strings.Contains(err.Error(), "unmoved"):
			t.Errorf("limit %g: %v; an interval around 0 is not above any limit", tt.limit, err)
		}
	}
	err := GateCounted("max-counted-overhead", 1, conds)
	if want := "counted instructions per statement above --max-counted-overhead 1% with 95% confidence: log-statements-file"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("limit 1 by --max-counted-overhead: %v; want %q", err, want)
	}
}

// At a rate, an observer fails --max-latency-added when its p99 added
// lies wholly above the limit, or when its side could not keep the rate
// the other side kept; the baselines are not gated, and a summary with
// no latency compared side by side cannot be gated at all.
func TestGateLatency(t *testing.T) {
	held := result.RateSide{Runs: 4}
	sat := result.RateSide{Runs: 4, SaturatedRuns: 3, BacklogMax: 900}
	added := func(ms, lo, hi float64) *result.LatencyAdded {
		return &result.LatencyAdded{MS: ms, CILow: lo, CIHigh: hi}
	}
	sum := result.Summary{Conditions: []result.ConditionSummary{
		{Name: "baseline A/A", Rate: &result.RateSummary{Side: held, Reference: &held, P99Added: added(9, 8, 10)}},
		{Name: "slow-sink", Rate: &result.RateSummary{Side: held, Reference: &held, P99Added: added(6, 5.5, 6.5)}},
		{Name: "cheap", Rate: &result.RateSummary{Side: held, Reference: &held, P99Added: added(6, 4, 8)}},
		{Name: "blocking", Rate: &result.RateSummary{Side: sat, Reference: &held}},
	}}
	err := GateLatency(5, sum)
	var oe *OverheadError
	if !errors.As(err, &oe) || len(oe.Over) != 2 || !strings.HasPrefix(oe.Over[0], "slow-sink +6.000 ms") || !strings.Contains(oe.Over[1], "blocking saturated at this rate (backlog up to 900)") {
		t.Fatalf("GateLatency: %v; want slow-sink and blocking over", err)
	}
	if !strings.Contains(err.Error(), "p99 latency added above --max-latency-added 5 ms") {
		t.Errorf("error %q; want the limit in ms", err)
	}
	if err := GateLatency(7, sum); !errors.As(err, &oe) || len(oe.Over) != 1 {
		t.Errorf("limit 7: %v; want only the saturated observer", err)
	}
	// Behind in one run of four: the machine's, not gated.
	now := result.RateSide{Runs: 4, SaturatedRuns: 1, BacklogMax: 90}
	once := result.Summary{Conditions: []result.ConditionSummary{{Name: "x", Rate: &result.RateSummary{Side: now, Reference: &held}}}}
	if err := GateLatency(5, once); err != nil {
		t.Errorf("an observer behind in 1 run of 4: %v; want it not gated", err)
	}
	closed := result.Summary{Conditions: []result.ConditionSummary{{Name: "x"}}}
	if err := GateLatency(5, closed); err == nil || errors.As(err, &oe) {
		t.Errorf("closed loop: %v; want an error that nothing is gated", err)
	}
}
