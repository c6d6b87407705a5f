package stats

import "math"

// This file plans paired measurements: how small an overhead a given number
// of pairs can resolve, and how many pairs a target resolution needs. Both
// use the normal-theory (paired z-test) formula on log ratios. The
// signed-rank interval of PairedOverhead needs about 5% more pairs than
// that under normal noise (asymptotic relative efficiency 3/pi) and fewer
// under heavy-tailed noise; with a handful of pairs the z quantiles are
// optimistic. Treat the results as planning figures, not guarantees.

// normQuantile returns Phi^-1(p), the p-quantile of the standard normal
// distribution, for p in (0, 1).
func normQuantile(p float64) float64 {
	return -math.Sqrt2 * math.Erfcinv(2*p)
}

// zSum returns z_{1-alpha/2} + z_power, or NaN if alpha or power is outside
// (0, 1).
func zSum(alpha, power float64) float64 {
	if !(alpha > 0 && alpha < 1) || !(power > 0 && power < 1) {
		return math.NaN()
	}
	return normQuantile(1-alpha/2) + normQuantile(power)
}

// MDE returns the minimum detectable effect, in percent, of a paired
// design with n = len(logDiffs) pairs: the overhead that a two-sided test
// at level alpha detects with probability power,
//
//	delta = (z_{1-alpha/2} + z_power) * sd / sqrt(n),  MDE = expm1(delta)*100,
//
// where sd is the sample standard deviation (n-1) of logDiffs. logDiffs are
// the log ratios of an A/A measurement (the observer off in both halves of
// each pair), so sd is the per-pair noise that pairing leaves over.
// Expm1(delta)*100 is the speed-up form of the shift; a slowdown of the
// same log size is (1 - e^-delta)*100 percent overhead, which is smaller,
// so the result is conservative for both directions. It returns NaN for
// fewer than two values and for alpha or power outside (0, 1).
func MDE(logDiffs []float64, alpha, power float64) float64 {
	n := len(logDiffs)
	if n < 2 {
		return math.NaN()
	}
	mean := 0.0
	for _, v := range logDiffs {
		mean += v
	}
	mean /= float64(n)
	ss := 0.0
	for _, v := range logDiffs {
		ss += (v - mean) * (v - mean)
	}
	sd := math.Sqrt(ss / float64(n-1))
	return math.Expm1(zSum(alpha, power)*sd/math.Sqrt(float64(n))) * 100
}

// MDEFromSD is MDE for n pairs whose log ratios have standard deviation
// sdLog: what a planned number of pairs will resolve.
func MDEFromSD(sdLog float64, n int, alpha, power float64) float64 {
	if n < 1 || !(sdLog >= 0) {
		return math.NaN()
	}
	return math.Expm1(zSum(alpha, power)*sdLog/math.Sqrt(float64(n))) * 100
}

// RequiredPairs returns the number of pairs for which the MDE at level alpha
// and the given power is at most targetPct, given the per-pair standard
// deviation sdLog of the log ratios (e.g. from an A/A run):
//
//	n = ceil(((z_{1-alpha/2} + z_power) * sdLog / ln(1 + targetPct/100))^2),
//
// and at least MinPairs(alpha), below which no result can be significant.
// A relative slack of 1e-9 keeps float rounding from adding a pair when the
// formula lands on an integer. The result is capped at math.MaxInt. It
// returns 0 for sdLog negative or NaN, targetPct not positive, and alpha or
// power outside (0, 1).
func RequiredPairs(sdLog, targetPct, alpha, power float64) int {
	z := zSum(alpha, power)
	if math.IsNaN(z) || !(sdLog >= 0) || !(targetPct > 0) {
		return 0
	}
	x := z * sdLog / math.Log1p(targetPct/100)
	n := math.Ceil(x * x * (1 - relTol))
	if !(n < math.MaxInt) { // also +Inf
		return math.MaxInt
	}
	return max(int(n), MinPairs(alpha))
}
