package stats

import (
	"errors"
	"fmt"
	"math"
)

// This file compares two runs of a mix query by query. A mix of few, long
// queries on a busy machine gives a run's duration that depends on which
// queries overlap and queue: a whole run is one noisy number. Each query
// compared with itself (its mean cost with the observer against without)
// removes that, and the per-query ratios are combined with each query's
// share of the baseline's cost as weight, so the result is the change of
// the mix's total cost, with every query's executions counted as often
// as the mix runs it.

// Stratum is one query's executions in one run: how many, and their total
// cost (latency or server CPU, in any one unit).
type Stratum struct {
	N     int64
	Total float64
}

// Mean is the stratum's cost per execution, NaN when it has none.
func (s Stratum) Mean() float64 {
	if s.N == 0 {
		return math.NaN()
	}
	return s.Total / float64(s.N)
}

// StratumWeights returns each stratum's share of the total cost of runs
// (the baseline's), summed over them: the weights StratifiedRatio
// combines per-query ratios with. Runs may list different numbers of
// strata; missing ones count as empty.
func StratumWeights(runs [][]Stratum) []float64 {
	var w []float64
	var sum float64
	for _, r := range runs {
		for q, s := range r {
			for len(w) <= q {
				w = append(w, 0)
			}
			if s.Total > 0 && !math.IsInf(s.Total, 0) {
				w[q] += s.Total
				sum += s.Total
			}
		}
	}
	for q := range w {
		if sum > 0 {
			w[q] /= sum
		}
	}
	return w
}

// StratifiedRatio is cond's cost relative to base: the weighted mean over
// strata of mean cost in cond over mean cost in base, the weights
// renormalised over the strata both runs have executions of. 1 is no
// change, 1.05 five percent more. It returns an error when no stratum
// with weight has executions on both sides or a base mean is not
// positive.
func StratifiedRatio(base, cond []Stratum, weights []float64) (float64, error) {
	var sum, wsum float64
	for q, w := range weights {
		if w <= 0 || q >= len(base) || q >= len(cond) || base[q].N == 0 || cond[q].N == 0 {
			continue
		}
		b := base[q].Mean()
		if !(b > 0) {
			return 0, fmt.Errorf("stats: stratum %d: baseline mean cost %v, want > 0", q, b)
		}
		sum += w * cond[q].Mean() / b
		wsum += w
	}
	if wsum == 0 {
		return 0, errors.New("stats: no stratum with weight has executions in both runs")
	}
	return sum / wsum, nil
}
