package stats

import (
	"fmt"
	"math"
	"slices"
	"testing"
)

// bruteSignedRankCounts enumerates all 2^n sign assignments of the ranks
// 1..n (bit r set = rank r+1 positive) and counts how often each T+ occurs.
func bruteSignedRankCounts(n int) []int {
	counts := make([]int, n*(n+1)/2+1)
	for mask := 0; mask < 1<<n; mask++ {
		t := 0
		for r := range n {
			if mask&(1<<r) != 0 {
				t += r + 1
			}
		}
		counts[t]++
	}
	return counts
}

func TestTPMFMatchesEnumeration(t *testing.T) {
	for n := 1; n <= 10; n++ {
		counts := bruteSignedRankCounts(n)
		got := tPMF(n, n*(n+1)/2)
		if len(got) != len(counts) {
			t.Fatalf("len(tPMF(%d)) = %d; want %d", n, len(got), len(counts))
		}
		for v := range got {
			if want := float64(counts[v]) / float64(int(1)<<n); got[v] != want {
				t.Errorf("tPMF(%d)[%d] = %v; want %v", n, v, got[v], want)
			}
		}
	}
}

// TestTPMFTruncated checks that cutting the table at h gives exactly the
// first h+1 entries of the full distribution.
func TestTPMFTruncated(t *testing.T) {
	for _, c := range []struct{ n, h int }{{5, 0}, {5, 3}, {8, 18}, {10, 54}, {12, 40}, {12, 200}} {
		full := tPMF(c.n, c.n*(c.n+1)/2)
		got := tPMF(c.n, c.h)
		if want := full[:min(c.h, len(full)-1)+1]; !slices.Equal(got, want) {
			t.Errorf("tPMF(%d, %d) = %v; want %v", c.n, c.h, got, want)
		}
	}
}

func TestTPMFLargeIsDistribution(t *testing.T) {
	const n = 300
	p := tPMF(n, n*(n+1)/2)
	sum := 0.0
	for v, x := range p {
		sum += x
		if y := p[len(p)-1-v]; math.Abs(x-y) > 1e-15 {
			t.Fatalf("tPMF(%d)[%d] = %v; want %v (symmetry)", n, v, x, y)
		}
	}
	if math.Abs(sum-1) > 1e-12 {
		t.Errorf("sum(tPMF(%d)) = %v; want 1", n, sum)
	}
	if want := math.Ldexp(1, -n); p[0] != want {
		t.Errorf("tPMF(%d)[0] = %v; want %v", n, p[0], want)
	}
}

// TestSignedRankKTable checks k-1 against published two-sided critical
// values of the Wilcoxon signed-rank statistic (largest T with
// P(T+ <= T) <= alpha/2).
func TestSignedRankKTable(t *testing.T) {
	for _, c := range []struct {
		n     int
		alpha float64
		tcrit int // -1: no critical value
	}{
		{5, 0.05, -1}, {6, 0.05, 0}, {7, 0.05, 2}, {8, 0.05, 3}, {9, 0.05, 5},
		{10, 0.05, 8}, {11, 0.05, 10}, {12, 0.05, 13}, {15, 0.05, 25},
		{20, 0.05, 52}, {25, 0.05, 89}, {30, 0.05, 137},
		{7, 0.01, -1}, {8, 0.01, 0}, {9, 0.01, 1}, {10, 0.01, 3}, {12, 0.01, 7},
		{15, 0.01, 15}, {20, 0.01, 37}, {30, 0.01, 109},
		{5, 0.1, 0},   // P(T+ <= 0) = 1/32 <= 0.05
		{4, 0.125, 0}, // P(T+ <= 0) = 1/16 = alpha/2 exactly
		{1, 0.99, -1},
	} {
		if got := signedRankK(c.n, c.alpha) - 1; got != c.tcrit {
			t.Errorf("signedRankK(%d, %v)-1 = %d; want %d", c.n, c.alpha, got, c.tcrit)
		}
	}
}

// TestSignedRankNormalNearExact checks that the normal approximation used
// beyond maxExactSignedRank is close to the exact answer where both are
// available, within a tenth of a standard deviation of T+, and errs on the
// conservative side (T+ is lighter-tailed than the normal).
func TestSignedRankNormalNearExact(t *testing.T) {
	for _, n := range []int{60, 100, 200, 300} {
		_, sigma := signedRankMoments(n)
		for _, alpha := range []float64{0.05, 0.01, 0.001} {
			exact := signedRankK(n, alpha)
			approx := signedRankNormalK(n, alpha)
			if approx > exact || float64(exact-approx) > max(2, 0.1*sigma) {
				t.Errorf("signedRankNormalK(%d, %v) = %d; want %d - [0, %.1f]", n, alpha, approx, exact, max(2, 0.1*sigma))
			}
		}
	}
}

func TestMinPairs(t *testing.T) {
	checkMinimum(t, "MinPairs", MinPairs, []minimum{
		{0.05, 6}, {0.0125, 8}, {0.01, 8}, {0.1, 5}, {0.125, 4}, {0.5, 2},
		{0.99, 2}, {0.001, 11}, {Bonferroni(0.05, 10), 9},
		{0, 0}, {1, 0}, {-0.1, 0}, {math.NaN(), 0},
	}, 1000)
}

// TestMinPairsConsistent checks that MinPairs agrees with the critical
// values PairedOverhead uses: n pairs reach an interval, n-1 do not.
func TestMinPairsConsistent(t *testing.T) {
	checkMinimumConsistent(t, "MinPairs", MinPairs, signedRankK,
		func(n int, alpha float64) string { return fmt.Sprintf("signedRankK(%d, %v)", n, alpha) },
		[]float64{0.5, 0.2, 0.1, 0.05, 0.0125, 0.01, 0.001, 1e-6, 1e-12, 1e-80})
}
