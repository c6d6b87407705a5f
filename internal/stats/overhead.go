// Package stats turns per-run throughput samples into an overhead estimate
// with a confidence interval. It is pure logic: no I/O, no global state.
//
// An observer's overhead is the relative throughput it costs,
// (1 - T_cond/T_base) * 100 percent. Runs are few (typically 5 to 30 per
// condition) and their noise is neither normal nor symmetric (a run can hit
// a checkpoint or an autovacuum), so the comparison is distribution-free:
// the Hodges–Lehmann shift estimate with the Moses confidence interval,
// computed on log throughput.
package stats

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// Overhead is the result of comparing the runs of one condition with the
// baseline runs.
type Overhead struct {
	// Pct is the estimated overhead in percent, (1 - T_cond/T_base)*100:
	// positive when the condition is slower than the baseline.
	Pct float64
	// CILow <= Pct <= CIHigh is the confidence interval for Pct.
	CILow, CIHigh float64
	// Confidence is the nominal two-sided confidence level, 1 - alpha. The
	// exact coverage of the interval is at least this (ranks are discrete).
	Confidence float64
	// N1 and N2 are the numbers of baseline and condition samples (for a
	// paired comparison both are the number of pairs).
	N1, N2 int
	// Reachable is false when n1 and n2 are too small for any interval at
	// this confidence. CILow and CIHigh then span all pairwise estimates
	// and Significant is false.
	Reachable bool
	// Significant reports that the interval excludes 0: equivalently, the
	// two-sided rank test (Mann–Whitney, or Wilcoxon signed-rank for pairs)
	// rejects "no shift" at level alpha.
	Significant bool
	// Warnings explain why the result may be less trustworthy than it looks.
	Warnings []string
}

// CompareThroughput estimates the overhead of a condition from its per-run
// throughputs cond relative to the baseline runs, with a two-sided
// confidence interval at level 1 - alpha.
//
// Why log scale: overhead is a ratio, T_c/T_b, so the comparison is done on
// d_ij = ln(c_j) - ln(b_i) for every pair of runs. A constant relative
// slowdown is then a pure shift, which is what the shift estimators below
// assume, and the result does not depend on the unit of throughput.
//
// Why Hodges–Lehmann / Moses: the point estimate is the median of all
// pairwise d_ij and the interval is [d_(k), d_(n1*n2+1-k)] with k taken from
// the null distribution of the Mann–Whitney U. This needs no assumption about
// the noise distribution beyond "the condition shifts it", is robust to an
// outlier run, and is exactly the set of shifts that the two-sided rank-sum
// test does not reject, so "interval excludes 0" and "the test is
// significant" never disagree. For the run counts used here (n1*n2 <=
// 10000) the null distribution is computed exactly, so the coverage is at
// least 1 - alpha without asymptotics; larger samples use the normal
// approximation with continuity correction.
//
// The exact distribution assumes no ties among the pooled samples. Ties are
// reported in Warnings; the result is still computed and is then only
// approximately at the nominal level.
//
// It returns an error for empty inputs, values that are not finite and
// positive, and alpha outside (0, 1).
func CompareThroughput(baseline, cond []float64, alpha float64) (Overhead, error) {
	if len(baseline) == 0 || len(cond) == 0 {
		return Overhead{}, errors.New("stats: need at least one baseline and one condition run")
	}
	if !(alpha > 0 && alpha < 1) {
		return Overhead{}, fmt.Errorf("stats: alpha = %v, want 0 < alpha < 1", alpha)
	}
	lb, err := logs("baseline", baseline)
	if err != nil {
		return Overhead{}, err
	}
	lc, err := logs("condition", cond)
	if err != nil {
		return Overhead{}, err
	}

	n1, n2 := len(baseline), len(cond)
	d := make([]float64, 0, n1*n2)
	for _, b := range lb {
		for _, c := range lc {
			d = append(d, c-b)
		}
	}
	slices.Sort(d)

	o := Overhead{
		Pct:        pct(percentileSorted(d, 0.5)),
		Confidence: 1 - alpha,
		N1:         n1,
		N2:         n2,
	}
	if t := ties(baseline, cond); t > 0 {
		o.Warnings = append(o.Warnings, fmt.Sprintf(
			"ties among the pooled runs (%d repeated values): the exact rank distribution assumes none, so the %.4g%% level is approximate", t, 100*o.Confidence))
	}

	// Even "every condition run on one side of every baseline run" may not
	// be significant with few runs: then the range of pairwise estimates
	// stands in for the interval.
	o.setInterval(d, criticalK(n1, n2, alpha), fmt.Sprintf(
		"%d baseline and %d condition runs cannot give a %.4g%% interval: need at least %d runs of each; CI is the range of all pairwise estimates",
		n1, n2, 100*o.Confidence, MinRuns(alpha)))
	return o, nil
}

// setInterval sets the interval [est_(k), est_(N+1-k)] from the sorted
// log-ratio estimates, or, for k = 0 (no interval at this level), their
// whole range with the warning unreachable.
func (o *Overhead) setInterval(sorted []float64, k int, unreachable string) {
	if k == 0 {
		o.CILow, o.CIHigh = pct(sorted[len(sorted)-1]), pct(sorted[0])
		o.Warnings = append(o.Warnings, unreachable)
		return
	}
	lo, hi := sorted[k-1], sorted[len(sorted)-k]
	o.Reachable = true
	o.CILow, o.CIHigh = pct(hi), pct(lo) // pct is decreasing in d
	o.Significant = lo > 0 || hi < 0
}

// Bonferroni returns the per-comparison alpha that keeps the familywise
// error rate at most alpha over m comparisons: Bonferroni(0.05, m) gives a
// familywise 95% level over m observer-vs-baseline comparisons. It needs no
// assumption about how the comparisons (which share the baseline) depend on
// each other. m < 1 is treated as 1.
func Bonferroni(alpha float64, m int) float64 {
	return alpha / float64(max(m, 1))
}

// pct converts a log ratio ln(T_c/T_b) to overhead in percent. Expm1 keeps
// precision for the small shifts that matter most.
func pct(d float64) float64 {
	return -math.Expm1(d) * 100
}

// logs validates xs as throughputs and returns their natural logarithms.
func logs(name string, xs []float64) ([]float64, error) {
	out := make([]float64, len(xs))
	for i, x := range xs {
		if !(x > 0) || math.IsInf(x, 1) {
			return nil, fmt.Errorf("stats: %s run %d has throughput %v, want a finite positive value", name, i, x)
		}
		out[i] = math.Log(x)
	}
	return out, nil
}

// ties returns how many pooled values equal an earlier one in sorted order
// (0 when all n1+n2 values are distinct).
func ties(a, b []float64) int {
	pooled := slices.Concat(a, b)
	slices.Sort(pooled)
	t := 0
	for i := 1; i < len(pooled); i++ {
		if pooled[i] == pooled[i-1] {
			t++
		}
	}
	return t
}
