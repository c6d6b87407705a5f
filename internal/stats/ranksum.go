package stats

import "math"

// This file holds the null distribution of the Mann–Whitney statistic U and
// the critical values derived from it. U counts the (baseline, condition)
// pairs in which the condition run is the smaller one; with n1 and n2 runs it
// ranges over 0..n1*n2 and, when both samples come from the same continuous
// distribution, every assignment of the pooled ranks to the two groups is
// equally likely.

// maxExactPairs bounds n1*n2 for the exact distribution. Up to it (which
// covers 100 vs 100 runs) the dynamic programme below takes at most about
// 50 ms; beyond it the normal approximation is off by well under a tenth
// of a standard deviation of U (and errs on the conservative side in the
// far tail, where U is lighter-tailed than the normal).
const maxExactPairs = 10000

// relTol is the relative slack used when comparing a tail probability with
// alpha/2. Tail probabilities are rationals such as 1/20, and levels such as
// alpha = 0.1 hit them exactly; without the slack the outcome at that
// boundary would depend on float rounding rather than on the mathematics.
const relTol = 1e-9

// atMost reports whether the probability p is <= level, allowing relTol.
func atMost(p, level float64) bool {
	return p <= level*(1+relTol)
}

// uPMF returns P(U = u) for u = 0..h (h <= n1*n2) under the null
// hypothesis, computed exactly (up to float rounding) with the recurrence on
// the largest pooled value: it belongs to the first sample with probability
// m/(m+n), in which case it beats all n values of the second sample, so
//
//	p[m,n](u) = m/(m+n) * p[m-1,n](u-n) + n/(m+n) * p[m,n-1](u).
//
// Working with probabilities rather than counts avoids overflow (C(120,60)
// is about 1e35) and only ever adds non-negative terms, so it is stable.
// Entry u only depends on entries <= u, so every intermediate table is cut
// at h; criticalK needs just the lower half. The distribution is the same
// with the roles of the samples swapped.
func uPMF(n1, n2, h int) []float64 {
	if n1 < n2 {
		n1, n2 = n2, n1 // outer loop over the larger size keeps rows small
	}
	h = min(h, n1*n2)
	// Row i holds p[i, j] for j = 0..n2 back to back, table j starting at
	// curOff[j] with length size(i, j). The two rows (i-1 and i) are
	// allocated once at their final size and swapped.
	size := func(i, j int) int { return min(i*j, h) + 1 }
	total := 0
	for j := 0; j <= n2; j++ {
		total += size(n1, j)
	}
	prev, cur := make([]float64, total), make([]float64, total)
	prevOff, curOff := make([]int, n2+1), make([]int, n2+1)
	for j := range prevOff { // row 0: U = 0 with certainty
		prevOff[j] = j
		prev[j] = 1
	}
	for i := 1; i <= n1; i++ {
		o := 0
		for j := 0; j <= n2; j++ {
			curOff[j] = o
			p := cur[o : o+size(i, j)]
			clear(p)
			o += len(p)
			if j == 0 {
				p[0] = 1
				continue
			}
			a := float64(i) / float64(i+j)
			b := float64(j) / float64(i+j)
			if len(p) > j {
				for u, v := range prev[prevOff[j] : prevOff[j]+min(size(i-1, j), len(p)-j)] {
					p[u+j] += a * v
				}
			}
			for u, v := range cur[curOff[j-1] : curOff[j-1]+size(i, j-1)] {
				p[u] += b * v
			}
		}
		prev, cur = cur, prev
		prevOff, curOff = curOff, prevOff
	}
	return prev[prevOff[n2] : prevOff[n2]+size(n1, n2)]
}

// criticalK returns the k of the Moses interval [d_(k), d_(N+1-k)], N = n1*n2:
// the largest k >= 1 with P(U <= k-1) <= alpha/2. It returns 0 when even
// P(U <= 0) = 1/C(n1+n2, n1) exceeds alpha/2, i.e. when no interval at that
// level exists. The result never exceeds (N+1)/2, so d_(k) <= d_(N+1-k).
func criticalK(n1, n2 int, alpha float64) int {
	n := n1 * n2
	var k int
	if n <= maxExactPairs {
		cum := 0.0
		for u, p := range uPMF(n1, n2, n/2) {
			cum += p
			if !atMost(cum, alpha/2) {
				break
			}
			k = u + 1
		}
	} else {
		k = normalCriticalK(n1, n2, alpha)
	}
	return min(k, (n+1)/2)
}

// normalCDF approximates P(U <= u) by the normal distribution with the
// null mean and variance of U and a continuity correction of 1/2.
func normalCDF(n1, n2, u int) float64 {
	n := float64(n1) * float64(n2)
	mu := n / 2
	sigma := math.Sqrt(n * float64(n1+n2+1) / 12)
	return 0.5 * math.Erfc(-(float64(u)+0.5-mu)/(sigma*math.Sqrt2))
}

// normalCriticalK is criticalK under the normal approximation: it starts
// from the analytic solution and then steps to the exact boundary of
// normalCDF, so the result agrees with the CDF it is defined by.
func normalCriticalK(n1, n2 int, alpha float64) int {
	n := float64(n1) * float64(n2)
	mu := n / 2
	sigma := math.Sqrt(n * float64(n1+n2+1) / 12)
	z := -math.Sqrt2 * math.Erfcinv(alpha) // Phi^-1(alpha/2)
	u := int(math.Floor(mu - 0.5 + z*sigma))
	u = max(-1, min(u, n1*n2))
	for u >= 0 && !atMost(normalCDF(n1, n2, u), alpha/2) {
		u--
	}
	for u+1 <= n1*n2 && atMost(normalCDF(n1, n2, u+1), alpha/2) {
		u++
	}
	return u + 1
}

// MinRuns returns the smallest n such that n baseline and n condition runs
// can give a significant result at two-sided level alpha at all, i.e. such
// that the most extreme outcome (every condition run below every baseline
// run) has P(U <= 0) = 1/C(2n, n) <= alpha/2. Fewer runs can never be
// significant, however large the overhead: MinRuns(0.05) = 4 and
// MinRuns(0.01) = 5. For a family of m comparisons pass Bonferroni(0.05, m).
// It returns 0 for alpha outside (0, 1).
func MinRuns(alpha float64) int {
	if !(alpha > 0 && alpha < 1) {
		return 0
	}
	p := 1.0 // 1/C(2n, n), starting at n = 0
	for n := 1; ; n++ {
		// C(2n, n) = C(2n-2, n-1) * 2(2n-1)/n. p underflows to 0 after a
		// few hundred steps, so the loop ends for every alpha > 0.
		p *= float64(n) / float64(2*(2*n-1))
		if atMost(p, alpha/2) {
			return n
		}
	}
}
