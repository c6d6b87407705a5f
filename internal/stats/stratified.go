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

// AddedWeights returns, from the baseline's runs pooled, each stratum's
// mean cost and its weight for StratifiedAdded: its executions over its
// mean cost squared. A run's mean cost of a query moves by a share of
// itself (the machine's speed), so a query of 0.3 ms tells what a fixed
// cost per execution is far more precisely than one of 2 s: the weights
// are the inverse of each difference's variance under that noise, with
// more executions helping.
func AddedWeights(runs [][]Stratum) (weights, means []float64) {
	pooled := Pooled(runs...)
	weights, means = make([]float64, len(pooled)), make([]float64, len(pooled))
	for q, s := range pooled {
		if m := s.Mean(); m > 0 && !math.IsInf(m, 0) {
			weights[q], means[q] = float64(s.N)/(m*m), m
		}
	}
	return weights, means
}

// StratifiedAdded is what cond's executions cost more than base's, in the
// strata's unit per execution: over the strata both runs have executions
// of, the weighted mean of each stratum's relative change times its
// baseline mean (AddedWeights). The relative change, not the difference,
// so that the two runs' speed cancels as in StratifiedRatio: a
// difference would carry the observer's run's speed into its cost. It
// is the added cost of an execution where the weights lie, the cheapest
// queries: a fixed cost per statement (a log record, a hook) is the same
// in every query; a cost that grows with a statement's work shows there
// only at those queries' size. It returns an error when no stratum with
// weight has executions on both sides.
func StratifiedAdded(base, cond []Stratum, weights, means []float64) (float64, error) {
	var sum, wsum float64
	for q, w := range weights {
		if w <= 0 || q >= len(base) || q >= len(cond) || q >= len(means) || base[q].N == 0 || cond[q].N == 0 {
			continue
		}
		b := base[q].Mean()
		if !(b > 0) {
			return 0, fmt.Errorf("stats: stratum %d: baseline mean cost %v, want > 0", q, b)
		}
		sum += w * means[q] * (cond[q].Mean()/b - 1)
		wsum += w
	}
	if wsum == 0 {
		return 0, errors.New("stats: no stratum with weight has executions in both runs")
	}
	return sum / wsum, nil
}

// Pooled adds runs' strata together, stratum by stratum (each run's
// executions of a query); runs may list different numbers of strata.
func Pooled(runs ...[]Stratum) []Stratum {
	var out []Stratum
	for _, r := range runs {
		for q, s := range r {
			for len(out) <= q {
				out = append(out, Stratum{})
			}
			out[q].N += s.N
			out[q].Total += s.Total
		}
	}
	return out
}
