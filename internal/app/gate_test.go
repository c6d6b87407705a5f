package app

import (
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
	}{{-1, ""}, {5, "costly 20.0% [15.0, 25.0]"}, {3.5, "costly-maybe 8.0% [4.0, 12.0]; costly 20.0%"}, {30, ""}} {
		var c runConfig
		if tt.limit >= 0 {
			c.MaxOverhead = &tt.limit
		}
		err := gate(c, sum, nil)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("limit %g: %v; want no error", tt.limit, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("limit %g: %v; want %q", tt.limit, err, tt.want)
		}
	}
}
