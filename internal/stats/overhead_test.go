package stats

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func near(got, want, tol float64) bool {
	return math.Abs(got-want) <= tol
}

// TestCompareThroughputKnown checks cases whose pairwise ratios, and hence
// estimate and interval, can be worked out by hand.
func TestCompareThroughputKnown(t *testing.T) {
	// cond = 1.01^c, base = 1.01^a with a = {0,2,4,6,8}, c = {1,3,5,7,9}:
	// d/ln(1.01) = c - a takes the values -7..9 (odd) with multiplicities
	// 1,2,3,4,5,4,3,2,1, so d_(3) = -5, d_(13) = 1, d_(23) = 7 (log 1.01).
	// With 5 vs 5 runs at alpha = 0.05, P(U <= 2) = 4/252 <= 0.025 <
	// P(U <= 3) = 7/252, so k = 3.
	var powBase, powCond []float64
	for _, e := range []float64{0, 2, 4, 6, 8} {
		powBase = append(powBase, 1000*math.Pow(1.01, e))
		powCond = append(powCond, 1000*math.Pow(1.01, e+1))
	}
	ov := func(r float64) float64 { return (1 - r) * 100 }

	for _, c := range []struct {
		name           string
		base, cond     []float64
		alpha          float64
		pct, low, high float64
		reachable, sig bool
		ties           bool
	}{
		{
			// Every condition run is 0.9x every baseline run.
			name: "constant 10%", alpha: 0.05,
			base: []float64{100, 100, 100, 100, 100}, cond: []float64{90, 90, 90, 90, 90},
			pct: 10, low: 10, high: 10, reachable: true, sig: true, ties: true,
		},
		{
			// Identical samples: every ratio between 100/110 and 110/100.
			name: "identical", alpha: 0.05,
			base: []float64{100, 105, 110, 95, 102}, cond: []float64{100, 105, 110, 95, 102},
			pct: 0, reachable: true, sig: false, ties: true,
			low: math.NaN(), high: math.NaN(),
		},
		{
			// cond = 0.9 * base, every cond run below every baseline run.
			// k = 1 at alpha/2 = 0.00625 (1/252 <= 0.00625 < 2/252), so the
			// interval is [min ratio, max ratio] = [891/1010, 909/990]; the
			// ratios b_j/b_i are symmetric about 1, so HL = ln 0.9 exactly.
			name: "clear 10% slowdown", alpha: 0.05 / 4,
			base:      []float64{990, 995, 1000, 1005, 1010},
			cond:      []float64{891, 895.5, 900, 904.5, 909},
			pct:       10,
			low:       ov(909.0 / 990),  // 8.18%
			high:      ov(891.0 / 1010), // 11.78%
			reachable: true, sig: true,
		},
		{
			name: "interleaved, k = 3", alpha: 0.05,
			base: powBase, cond: powCond,
			pct: ov(1.01), low: ov(math.Pow(1.01, 7)), high: ov(math.Pow(1.01, -5)),
			reachable: true, sig: false,
		},
		{
			// 2 vs 2 runs: P(U <= 0) = 1/6 > 0.025, no interval exists.
			// Ratios 90/100, 90/110, 99/100, 99/110 = 0.9, 0.818, 0.99, 0.9.
			name: "unreachable 2 vs 2", alpha: 0.05,
			base: []float64{100, 110}, cond: []float64{90, 99},
			pct: 10, low: 1, high: ov(90.0 / 110),
			reachable: false, sig: false,
		},
		{
			// Faster condition: negative overhead.
			name: "20% faster", alpha: 0.05,
			base: []float64{100, 101, 102, 103}, cond: []float64{120, 121.2, 122.4, 123.6},
			pct: -20, low: ov(123.6 / 100), high: ov(120.0 / 103),
			reachable: true, sig: true,
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := CompareThroughput(c.base, c.cond, c.alpha)
			if err != nil {
				t.Fatalf("CompareThroughput(%v, %v, %v) error %v", c.base, c.cond, c.alpha, err)
			}
			handWorked{c.pct, c.low, c.high, c.reachable, c.sig, len(c.base), len(c.cond), c.alpha}.check(t, got)
			if hasTies := hasWarning(got.Warnings, "ties"); hasTies != c.ties {
				t.Errorf("tie warning = %v; want %v (warnings %q)", hasTies, c.ties, got.Warnings)
			}
			if needRuns := hasWarning(got.Warnings, "need at least 4 runs"); needRuns != !c.reachable {
				t.Errorf("'need at least 4 runs' warning = %v; want %v (warnings %q)", needRuns, !c.reachable, got.Warnings)
			}
		})
	}
}

// TestCompareThroughputMatchesRankSumTest checks on random tie-free samples
// that the interval excludes 0 exactly when the two-sided Mann–Whitney
// p-value, from brute-force enumeration of all rank assignments, is <=
// alpha, and that the interval is [d_(k), d_(N+1-k)] with k from the same
// enumeration.
func TestCompareThroughputMatchesRankSumTest(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	counts := map[[2]int][]int{}
	alphas := []float64{0.5, 0.2, 0.1, 0.05, 0.0125, 0.01}
	var tally verdicts
	for iter := 0; iter < 2000; iter++ {
		n1, n2 := 1+rng.IntN(7), 1+rng.IntN(7)
		alpha := alphas[rng.IntN(len(alphas))]
		shift := 0.3 * (2*rng.Float64() - 1)
		base := make([]float64, n1)
		cond := make([]float64, n2)
		for i := range base {
			base[i] = 1000 * math.Exp(0.1*rng.NormFloat64())
		}
		for j := range cond {
			cond[j] = 1000 * math.Exp(shift+0.1*rng.NormFloat64())
		}

		key := [2]int{n1, n2}
		if counts[key] == nil {
			counts[key] = bruteCounts(n1, n2)
		}
		cnt := counts[key]
		total := 0
		for _, v := range cnt {
			total += v
		}
		w := 0 // pairs with the condition run below the baseline run
		var d []float64
		for _, b := range base {
			for _, c := range cond {
				if c < b {
					w++
				}
				d = append(d, math.Log(c)-math.Log(b))
			}
		}
		slices.Sort(d)
		p, k := exactTest(cnt, total, w, alpha)

		call := fmt.Sprintf("CompareThroughput(%v, %v, %v)", base, cond, alpha)
		got, err := CompareThroughput(base, cond, alpha)
		if err != nil {
			t.Fatalf("%s error %v", call, err)
		}
		checkExact(t, call, got, p, k, alpha, d)
		tally.add(got)
	}
	tally.check(t, 200)
}

// TestCompareThroughputSameDistribution checks that samples drawn from one
// distribution are rarely significant (at most about alpha of the time).
func TestCompareThroughputSameDistribution(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	checkNullRate(t, func(alpha float64) Overhead {
		base := make([]float64, 10)
		cond := make([]float64, 10)
		for i := range base {
			base[i] = 1000 * math.Exp(0.05*rng.NormFloat64())
			cond[i] = 1000 * math.Exp(0.05*rng.NormFloat64())
		}
		return mustCompare(t, base, cond, alpha)
	})
}

// TestCompareThroughputLarge exercises the normal approximation
// (n1*n2 > maxExactPairs).
func TestCompareThroughputLarge(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	base := make([]float64, 120)
	slow := make([]float64, 120)
	same := make([]float64, 120)
	for i := range base {
		base[i] = 1000 * math.Exp(0.05*rng.NormFloat64())
		slow[i] = 950 * math.Exp(0.05*rng.NormFloat64())
		same[i] = 1000 * math.Exp(0.05*rng.NormFloat64())
	}
	checkFindsShift(t, 5, "CompareThroughput(5% slower, 120 vs 120)", mustCompare(t, base, slow, 0.01),
		"CompareThroughput(same, 120 vs 120)", mustCompare(t, base, same, 0.01))
}

func TestCompareThroughputErrors(t *testing.T) {
	ok := []float64{100, 101, 102}
	for _, c := range []struct {
		name       string
		base, cond []float64
		alpha      float64
	}{
		{"empty baseline", nil, ok, 0.05},
		{"empty cond", ok, []float64{}, 0.05},
		{"zero", ok, []float64{100, 0}, 0.05},
		{"negative", []float64{-1, 100}, ok, 0.05},
		{"NaN", ok, []float64{math.NaN()}, 0.05},
		{"+Inf", []float64{math.Inf(1)}, ok, 0.05},
		{"-Inf", ok, []float64{math.Inf(-1)}, 0.05},
		{"alpha 0", ok, ok, 0},
		{"alpha 1", ok, ok, 1},
		{"alpha negative", ok, ok, -0.05},
		{"alpha NaN", ok, ok, math.NaN()},
	} {
		if got, err := CompareThroughput(c.base, c.cond, c.alpha); err == nil {
			t.Errorf("%s: CompareThroughput(%v, %v, %v) = %+v, nil; want error", c.name, c.base, c.cond, c.alpha, got)
		}
	}
}

func TestBonferroni(t *testing.T) {
	for _, c := range []struct {
		alpha float64
		m     int
		want  float64
	}{
		{0.05, 1, 0.05}, {0.05, 4, 0.0125}, {0.05, 10, 0.005}, {0.05, 0, 0.05},
	} {
		if got := Bonferroni(c.alpha, c.m); !near(got, c.want, 1e-15) {
			t.Errorf("Bonferroni(%v, %d) = %v; want %v", c.alpha, c.m, got, c.want)
		}
	}
}

// exactTest reads, from the null distribution cnt of a rank statistic
// (cnt[v] of total equally likely outcomes have value v), the two-sided
// p-value of the observed value stat and k, the order statistic that
// bounds the 1-alpha interval (0: no interval reaches that confidence).
func exactTest(cnt []int, total, stat int, alpha float64) (p float64, k int) {
	lo, hi := 0, 0
	for v, c := range cnt {
		if v <= stat {
			lo += c
		}
		if v >= stat {
			hi += c
		}
	}
	p = min(1, 2*float64(min(lo, hi))/float64(total))
	cum := 0
	for v, c := range cnt {
		cum += c
		if float64(cum)/float64(total) > alpha/2*(1+1e-9) {
			break
		}
		k = v + 1
	}
	return p, k
}
