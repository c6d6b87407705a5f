package stats

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"testing"
)

// bruteCounts enumerates every assignment of the ranks 1..n1+n2 to the two
// samples (bit set = first sample) and counts how often each U occurs, U
// being the number of (first, second) pairs with the first-sample rank
// above the second-sample rank.
func bruteCounts(n1, n2 int) []int {
	counts := make([]int, n1*n2+1)
	for mask := 0; mask < 1<<(n1+n2); mask++ {
		if bits.OnesCount(uint(mask)) != n1 {
			continue
		}
		u, below := 0, 0 // below = second-sample ranks seen so far
		for r := 0; r < n1+n2; r++ {
			if mask&(1<<r) != 0 {
				u += below
			} else {
				below++
			}
		}
		counts[u]++
	}
	return counts
}

func TestUPMFMatchesEnumeration(t *testing.T) {
	for _, c := range []struct{ n1, n2 int }{
		{1, 1}, {1, 5}, {2, 2}, {3, 4}, {4, 3}, {5, 5}, {2, 9}, {6, 7}, {8, 8},
	} {
		counts := bruteCounts(c.n1, c.n2)
		total := 0
		for _, v := range counts {
			total += v
		}
		got := uPMF(c.n1, c.n2, c.n1*c.n2)
		if len(got) != len(counts) {
			t.Fatalf("len(uPMF(%d, %d)) = %d; want %d", c.n1, c.n2, len(got), len(counts))
		}
		for u := range got {
			want := float64(counts[u]) / float64(total)
			if math.Abs(got[u]-want) > 1e-14 {
				t.Errorf("uPMF(%d, %d)[%d] = %v; want %v", c.n1, c.n2, u, got[u], want)
			}
		}
	}
}

// TestUPMFTruncated checks that cutting the tables at h gives exactly the
// first h+1 entries of the full distribution.
func TestUPMFTruncated(t *testing.T) {
	for _, c := range []struct{ n1, n2, h int }{{5, 5, 12}, {3, 7, 0}, {7, 3, 5}, {9, 4, 18}, {6, 6, 36}} {
		full := uPMF(c.n1, c.n2, c.n1*c.n2)
		got := uPMF(c.n1, c.n2, c.h)
		if !slices.Equal(got, full[:c.h+1]) {
			t.Errorf("uPMF(%d, %d, %d) = %v; want %v", c.n1, c.n2, c.h, got, full[:c.h+1])
		}
	}
}

func TestUPMFLargeIsDistribution(t *testing.T) {
	p := uPMF(60, 60, 3600)
	sum := 0.0
	for u, v := range p {
		sum += v
		if w := p[len(p)-1-u]; math.Abs(v-w) > 1e-15 {
			t.Fatalf("uPMF(60, 60)[%d] = %v; want %v (symmetry)", u, v, w)
		}
	}
	if math.Abs(sum-1) > 1e-12 {
		t.Errorf("sum(uPMF(60, 60)) = %v; want 1", sum)
	}
	// P(U = 0) = 1/C(120, 60).
	want := math.Exp(2*lgamma(61) - lgamma(121))
	if math.Abs(p[0]/want-1) > 1e-10 {
		t.Errorf("uPMF(60, 60)[0] = %v; want %v", p[0], want)
	}
}

func lgamma(x float64) float64 {
	v, _ := math.Lgamma(x)
	return v
}

// TestCriticalKTable checks k-1 against published two-sided critical values
// of the Mann–Whitney U (largest U with P(U <= U_crit) <= alpha/2).
func TestCriticalKTable(t *testing.T) {
	for _, c := range []struct {
		n1, n2 int
		alpha  float64
		ucrit  int // -1: no critical value
	}{
		{2, 2, 0.05, -1}, {3, 3, 0.05, -1}, {4, 4, 0.05, 0}, {5, 5, 0.05, 2},
		{6, 6, 0.05, 5}, {7, 7, 0.05, 8}, {8, 8, 0.05, 13}, {9, 9, 0.05, 17},
		{10, 10, 0.05, 23}, {20, 20, 0.05, 127}, {3, 5, 0.05, 0}, {5, 10, 0.05, 8},
		{4, 4, 0.01, -1}, {5, 5, 0.01, 0}, {6, 6, 0.01, 2}, {7, 7, 0.01, 4},
		{8, 8, 0.01, 7}, {9, 9, 0.01, 11}, {10, 10, 0.01, 16}, {20, 20, 0.01, 105},
		{3, 3, 0.1, 0}, // P(U <= 0) = 1/20 = alpha/2 exactly
	} {
		if got := criticalK(c.n1, c.n2, c.alpha) - 1; got != c.ucrit {
			t.Errorf("criticalK(%d, %d, %v)-1 = %d; want %d", c.n1, c.n2, c.alpha, got, c.ucrit)
		}
	}
}

// TestCriticalKNormalNearExact checks that the normal approximation used
// beyond maxExactPairs is close to the exact answer where both are
// available: within a tenth of a standard deviation of U (it is slightly
// conservative in the far tail, where U is lighter-tailed than the normal).
func TestCriticalKNormalNearExact(t *testing.T) {
	for _, c := range []struct{ n1, n2 int }{{30, 30}, {60, 60}, {100, 100}, {20, 200}, {1, 5000}} {
		sigma := math.Sqrt(float64(c.n1*c.n2*(c.n1+c.n2+1)) / 12)
		for _, alpha := range []float64{0.05, 0.01, 0.001} {
			exact := criticalK(c.n1, c.n2, alpha)
			approx := normalCriticalK(c.n1, c.n2, alpha)
			if d := math.Abs(float64(approx - exact)); d > max(2, 0.1*sigma) {
				t.Errorf("normalCriticalK(%d, %d, %v) = %d; want %d +- %.1f", c.n1, c.n2, alpha, approx, exact, max(2, 0.1*sigma))
			}
		}
	}
}

func TestMinRuns(t *testing.T) {
	checkMinimum(t, "MinRuns", MinRuns, []minimum{
		{0.05, 4}, {0.01, 5}, {0.0125, 5}, {0.1, 3}, {0.2, 3}, {0.5, 2},
		{0.99, 2}, {0.001, 7}, {Bonferroni(0.05, 10), 6},
		{0, 0}, {1, 0}, {-0.1, 0}, {math.NaN(), 0},
	}, 500)
}

// TestMinRunsConsistent checks that MinRuns agrees with the critical values
// CompareThroughput uses: n runs each reach an interval, n-1 do not.
func TestMinRunsConsistent(t *testing.T) {
	checkMinimumConsistent(t, "MinRuns", MinRuns,
		func(n int, alpha float64) int { return criticalK(n, n, alpha) },
		func(n int, alpha float64) string { return fmt.Sprintf("criticalK(%d, %d, %v)", n, n, alpha) },
		[]float64{0.5, 0.2, 0.1, 0.05, 0.0125, 0.01, 0.001, 1e-6, 1e-12})
}
