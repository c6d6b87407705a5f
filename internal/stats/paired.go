package stats

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// PairedOverhead estimates the overhead from paired throughput ratios
// r_i = T_on_i / T_off_i, with a two-sided confidence interval at level
// 1 - alpha. Each r_i compares an observer-on stretch with the observer-off
// stretches next to it in time: the on-phases of one run against the mean
// of the neighbouring off-phases, or one observer run against the mean of
// the baseline runs adjacent to it.
//
// Why pairs: on a noisy machine throughput drifts slowly (thermal state,
// cache and buffer warm-up, background jobs, table bloat). Dividing by the
// immediate neighbours cancels that drift, which an unpaired comparison
// (CompareThroughput) counts as noise, so the same effect is resolved with
// far fewer measurements.
//
// Why the one-sample Hodges–Lehmann estimate: on d_i = ln r_i a constant
// relative slowdown is a shift of the distribution of d. The point estimate
// is the median of the M = n(n+1)/2 Walsh averages (d_i + d_j)/2, i <= j,
// and the interval is [W_(k), W_(M+1-k)] with k taken from the exact null
// distribution of the Wilcoxon signed-rank statistic T+ (normal
// approximation with continuity correction for n > 300). It is
// distribution-free: it only assumes the noise of d_i is symmetric about
// its centre, not that it is normal, and one disturbed phase moves it
// little. Since T+ counts the positive Walsh averages, the interval is
// exactly the set of shifts that the two-sided signed-rank test does not
// reject, so "interval excludes 0" and "the Wilcoxon test is significant at
// alpha" never disagree. Coverage is at least 1 - alpha for untied data.
//
// The result has N1 = N2 = n, and Significant refers to the signed-rank
// test. With fewer than MinPairs(alpha) pairs no interval exists: Reachable
// is then false and CILow, CIHigh span all Walsh averages.
//
// The exact distribution assumes no ties among |d_i| and no d_i = 0 (a
// ratio of exactly 1). Both are reported in Warnings; the result is still
// computed (zeros are kept, not dropped) and is then only approximately at
// the nominal level.
//
// It returns an error for empty input, ratios that are not finite and
// positive, and alpha outside (0, 1).
func PairedOverhead(ratios []float64, alpha float64) (Overhead, error) {
	if len(ratios) == 0 {
		return Overhead{}, errors.New("stats: need at least one paired ratio")
	}
	if !(alpha > 0 && alpha < 1) {
		return Overhead{}, fmt.Errorf("stats: alpha = %v, want 0 < alpha < 1", alpha)
	}
	n := len(ratios)
	d := make([]float64, n)
	for i, r := range ratios {
		if !(r > 0) || math.IsInf(r, 1) {
			return Overhead{}, fmt.Errorf("stats: ratio %d is %v, want a finite positive value", i, r)
		}
		d[i] = math.Log(r)
	}

	w := walsh(d)
	o := Overhead{
		Pct:        pct(percentileSorted(w, 0.5)),
		Confidence: 1 - alpha,
		N1:         n,
		N2:         n,
	}
	o.Warnings = pairedWarnings(d, o.Confidence)

	o.setInterval(w, signedRankK(n, alpha), fmt.Sprintf(
		"%d pairs cannot give a %.4g%% interval: need at least %d pairs; CI is the range of all Walsh averages",
		n, 100*o.Confidence, MinPairs(alpha)))
	return o, nil
}

// pairedWarnings reports zeros and ties among |d_i|, which the exact
// signed-rank distribution assumes away.
func pairedWarnings(d []float64, confidence float64) []string {
	var warn []string
	abs := make([]float64, 0, len(d))
	zeros := 0
	for _, v := range d {
		if v == 0 {
			zeros++
		} else {
			abs = append(abs, math.Abs(v))
		}
	}
	if zeros > 0 {
		warn = append(warn, fmt.Sprintf(
			"%d ratios are exactly 1 (zero log difference): the exact signed-rank distribution assumes none, so the %.4g%% level is approximate", zeros, 100*confidence))
	}
	slices.Sort(abs)
	t := 0
	for i := 1; i < len(abs); i++ {
		if abs[i] == abs[i-1] {
			t++
		}
	}
	if t > 0 {
		warn = append(warn, fmt.Sprintf(
			"ties among |ln ratio| (%d repeated values): the exact signed-rank distribution assumes none, so the %.4g%% level is approximate", t, 100*confidence))
	}
	return warn
}

// Shift is a paired comparison on the values' own scale (not a ratio):
// the Hodges–Lehmann estimate of the centre of the differences, with the
// signed-rank interval, as PairedOverhead computes on log ratios.
type Shift struct {
	Estimate, CILow, CIHigh float64
	Confidence              float64
	N                       int
	// Reachable and Significant are as in Overhead.
	Reachable, Significant bool
}

// PairedShift estimates the centre of paired differences d_i (e.g. the
// added microseconds of CPU per execution, one difference per pair of
// runs) with a two-sided interval at level 1 - alpha: the median of the
// Walsh averages and the signed-rank interval, as in PairedOverhead but
// without the logarithm, for differences whose scale is additive. With
// fewer than MinPairs(alpha) pairs the interval is the range of all Walsh
// averages and Reachable is false.
func PairedShift(diffs []float64, alpha float64) (Shift, error) {
	if len(diffs) == 0 {
		return Shift{}, errors.New("stats: need at least one paired difference")
	}
	if !(alpha > 0 && alpha < 1) {
		return Shift{}, fmt.Errorf("stats: alpha = %v, want 0 < alpha < 1", alpha)
	}
	for i, d := range diffs {
		if math.IsNaN(d) || math.IsInf(d, 0) {
			return Shift{}, fmt.Errorf("stats: difference %d is %v, want a finite value", i, d)
		}
	}
	w := walsh(diffs)
	s := Shift{Estimate: percentileSorted(w, 0.5), Confidence: 1 - alpha, N: len(diffs)}
	k := signedRankK(len(diffs), alpha)
	if k == 0 {
		s.CILow, s.CIHigh = w[0], w[len(w)-1]
		return s, nil
	}
	s.CILow, s.CIHigh, s.Reachable = w[k-1], w[len(w)-k], true
	s.Significant = s.CILow > 0 || s.CIHigh < 0
	return s, nil
}

// walsh returns the n(n+1)/2 Walsh averages (d_i + d_j)/2, i <= j, sorted.
func walsh(d []float64) []float64 {
	w := make([]float64, 0, len(d)*(len(d)+1)/2)
	for i, a := range d {
		for _, b := range d[i:] {
			w = append(w, (a+b)/2)
		}
	}
	slices.Sort(w)
	return w
}
