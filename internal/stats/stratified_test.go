package stats

import (
	"math"
	"testing"
)

// A fixed cost added to every execution is found at its size, whatever
// the queries' own cost; the cheapest query weighs most; strata without
// executions on both sides are left out, and none at all is an error.
func TestStratifiedAdded(t *testing.T) {
	means := []float64{0.3, 2, 1500} // ms: a lookup, a small report, a big one
	base := make([]Stratum, len(means))
	cond := make([]Stratum, len(means))
	for q, m := range means {
		base[q] = Stratum{N: 10, Total: 10 * m}
		cond[q] = Stratum{N: 10, Total: 10 * (m + 0.25)}
	}
	w, m := AddedWeights([][]Stratum{base})
	if !(w[0] > w[1] && w[1] > w[2]) || m[2] != 1500 {
		t.Errorf("weights %v, means %v; want the cheapest query weighted most", w, m)
	}
	got, err := StratifiedAdded(base, cond, w, m)
	if err != nil || math.Abs(got-0.25) > 1e-12 {
		t.Errorf("added %v, %v; want 0.25 ms", got, err)
	}
	// Without the lookup's executions in the condition's run, the others
	// still give the same fixed cost.
	cond[0] = Stratum{}
	if got, err := StratifiedAdded(base, cond, w, m); err != nil || math.Abs(got-0.25) > 1e-9 {
		t.Errorf("added without the lookup %v, %v; want 0.25 ms", got, err)
	}
	if _, err := StratifiedAdded(base, make([]Stratum, 3), w, m); err == nil {
		t.Error("no executions on the condition's side: want an error")
	}
	if p := Pooled(base[:1], base); p[0].N != 20 || p[1].N != 10 || len(p) != 3 {
		t.Errorf("pooled %v", p)
	}
}
