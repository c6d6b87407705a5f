package stats

import "math"

// This file holds the null distribution of the Wilcoxon signed-rank
// statistic T+ and the critical values derived from it. For n paired log
// ratios d_i, T+ is the sum of the ranks of |d_i| over the positive d_i; it
// ranges over 0..n(n+1)/2 and, when each d_i is symmetric about 0, each of
// the 2^n sign assignments is equally likely. Equivalently, T+ is the number
// of Walsh averages (d_i + d_j)/2, i <= j, that are positive, which is what
// ties the test to the Hodges–Lehmann interval in PairedOverhead.

// maxExactSignedRank bounds n for the exact distribution. Up to it the
// dynamic programme below takes about n^3/4 (7 million at n = 300)
// additions; beyond it the normal approximation with continuity correction
// is off by about a hundredth of a standard deviation of T+ at usual levels
// (T+ is a sum of n independent terms and converges quickly), and errs on
// the conservative side in the far tail, where T+ is lighter-tailed than
// the normal.
const maxExactSignedRank = 300

// tPMF returns P(T+ = t) for t = 0..h (h <= n(n+1)/2) under the null
// hypothesis, computed with the recurrence on the largest rank: it is
// positive with probability 1/2, in which case it adds n to T+, so
//
//	p[n](t) = (p[n-1](t) + p[n-1](t-n)) / 2.
//
// Probabilities rather than counts avoid overflow (the counts reach 2^n),
// and entries stay exact multiples of 2^-n while the counts fit in 53 bits.
// Entry t only depends on entries <= t, so the table is cut at h.
func tPMF(n, h int) []float64 {
	h = min(h, n*(n+1)/2)
	p := make([]float64, h+1)
	p[0] = 1
	for m := 1; m <= n; m++ {
		// In place, from the top down, so p[t-m] is still row m-1.
		for t := min(h, m*(m+1)/2); t >= m; t-- {
			p[t] = (p[t] + p[t-m]) / 2
		}
		for t := range min(m, h+1) {
			p[t] /= 2
		}
	}
	return p
}

// signedRankK returns the k of the one-sample Hodges–Lehmann interval
// [W_(k), W_(M+1-k)], M = n(n+1)/2: the largest k >= 1 with
// P(T+ <= k-1) <= alpha/2. It returns 0 when even P(T+ <= 0) = 2^-n exceeds
// alpha/2, i.e. when no interval at that level exists. The result never
// exceeds (M+1)/2, so W_(k) <= W_(M+1-k).
func signedRankK(n int, alpha float64) int {
	m := n * (n + 1) / 2
	var k int
	if n <= maxExactSignedRank {
		cum := 0.0
		for t, p := range tPMF(n, m/2) {
			cum += p
			if !atMost(cum, alpha/2) {
				break
			}
			k = t + 1
		}
	} else {
		k = signedRankNormalK(n, alpha)
	}
	return min(k, (m+1)/2)
}

// signedRankMoments returns the null mean and standard deviation of T+.
func signedRankMoments(n int) (mu, sigma float64) {
	f := float64(n)
	return f * (f + 1) / 4, math.Sqrt(f * (f + 1) * (2*f + 1) / 24)
}

// signedRankNormalCDF approximates P(T+ <= t) by the normal distribution
// with the null mean and variance of T+ and a continuity correction of 1/2.
func signedRankNormalCDF(n, t int) float64 {
	mu, sigma := signedRankMoments(n)
	return 0.5 * math.Erfc(-(float64(t)+0.5-mu)/(sigma*math.Sqrt2))
}

// signedRankNormalK is signedRankK under the normal approximation: it starts
// from the analytic solution and then steps to the exact boundary of
// signedRankNormalCDF, so the result agrees with the CDF it is defined by.
func signedRankNormalK(n int, alpha float64) int {
	mu, sigma := signedRankMoments(n)
	m := n * (n + 1) / 2
	z := -math.Sqrt2 * math.Erfcinv(alpha) // Phi^-1(alpha/2)
	t := int(math.Floor(mu - 0.5 + z*sigma))
	t = max(-1, min(t, m))
	for t >= 0 && !atMost(signedRankNormalCDF(n, t), alpha/2) {
		t--
	}
	for t+1 <= m && atMost(signedRankNormalCDF(n, t+1), alpha/2) {
		t++
	}
	return t + 1
}

// MinPairs returns the smallest number of pairs n for which PairedOverhead
// can be significant at two-sided level alpha at all, i.e. for which the
// most extreme outcome (every ratio on the same side of 1) has
// P(T+ <= 0) = 2^-n <= alpha/2. Fewer pairs can never be significant,
// however large the overhead: MinPairs(0.05) = 6, MinPairs(0.01) = 8. For a
// family of m comparisons pass Bonferroni(0.05, m). It returns 0 for alpha
// outside (0, 1).
//
// For alpha below about 2^-300 (far beyond any practical level) n exceeds
// maxExactSignedRank, where PairedOverhead uses the normal approximation,
// whose tail is heavier than 2^-n, so n pairs may still be unreachable there.
func MinPairs(alpha float64) int {
	if !(alpha > 0 && alpha < 1) {
		return 0
	}
	p := 1.0 // 2^-n, exact; underflows to 0 after 1075 halvings at most
	for n := 1; ; n++ {
		p /= 2
		if atMost(p, alpha/2) {
			return n
		}
	}
}
