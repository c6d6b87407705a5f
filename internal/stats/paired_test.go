package stats

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func hasWarning(ws []string, sub string) bool {
	return slices.ContainsFunc(ws, func(w string) bool { return strings.Contains(w, sub) })
}

// TestPairedOverheadKnown checks cases whose Walsh averages, and hence
// estimate and interval, can be worked out by hand.
func TestPairedOverheadKnown(t *testing.T) {
	// r_i = 1.01^-e, e = 1..6: in units of -ln 1.01 the 21 Walsh averages
	// are symmetric about 3.5 (the median) and sorted run 1, 1.5, 2, 2,
	// 2.5, ... 5, 5, 5.5, 6. With 6 pairs P(T+ <= 0) = 1/64 <= 0.025 <
	// P(T+ <= 1) = 2/64, so k = 1 at alpha = 0.05; at alpha = 0.1,
	// P(T+ <= 2) = 3/64 <= 0.05 < P(T+ <= 3) = 5/64, so k = 3, giving the
	// interval [W_(3), W_(19)] = [2, 5].
	var six, mirror []float64
	for e := 1; e <= 6; e++ {
		six = append(six, math.Pow(1.01, -float64(e)))
	}
	for _, e := range []float64{1, 3, 4, 8, 9, 12} {
		mirror = append(mirror, math.Exp(0.001*e), math.Exp(-0.001*e))
	}
	ov := func(r float64) float64 { return (1 - r) * 100 }

	for _, c := range []struct {
		name           string
		ratios         []float64
		alpha          float64
		pct, low, high float64 // low, high NaN: only check Pct in CI
		reachable, sig bool
		ties, zeros    bool
		anyTies        bool // do not check the tie warning
		need           int  // > 0: expect "need at least need pairs"
	}{
		{
			name: "six, k = 1", ratios: six, alpha: 0.05,
			pct: ov(math.Pow(1.01, -3.5)), low: ov(1 / 1.01), high: ov(math.Pow(1.01, -6)),
			reachable: true, sig: true,
		},
		{
			name: "six, k = 3", ratios: six, alpha: 0.1,
			pct: ov(math.Pow(1.01, -3.5)), low: ov(math.Pow(1.01, -2)), high: ov(math.Pow(1.01, -5)),
			reachable: true, sig: true,
		},
		{
			// Five pairs at 0.05: 2^-5 > 0.025, no interval; the range of
			// the Walsh averages is [e = 1, e = 5].
			name: "five, unreachable", ratios: six[:5], alpha: 0.05,
			pct: ov(math.Pow(1.01, -3)), low: ov(1 / 1.01), high: ov(math.Pow(1.01, -5)),
			reachable: false, sig: false, need: 6,
		},
		{
			name: "one pair", ratios: []float64{0.9}, alpha: 0.05,
			pct: 10, low: 10, high: 10, reachable: false, need: 6,
		},
		{
			// Mirrored noise: Walsh averages symmetric about 0 (up to
			// rounding, which also decides whether |ln r| tie).
			name: "symmetric around 1", ratios: mirror, alpha: 0.05,
			pct: 0, low: math.NaN(), high: math.NaN(),
			reachable: true, sig: false, anyTies: true,
		},
		{
			name: "constant", ratios: []float64{0.97, 0.97, 0.97, 0.97, 0.97, 0.97, 0.97}, alpha: 0.05,
			pct: 3, low: 3, high: 3, reachable: true, sig: true, ties: true,
		},
		{
			name: "zeros", ratios: []float64{1, 1, 1, 1, 1, 1, 1.01}, alpha: 0.05,
			pct: 0, low: ov(math.Sqrt(1.01)), high: 0, reachable: true, sig: false, zeros: true,
		},
		{
			// Faster with the observer on: negative overhead.
			name: "faster", ratios: []float64{1.10, 1.12, 1.09, 1.11, 1.13, 1.08, 1.105, 1.115}, alpha: 0.01,
			pct: math.NaN(), low: ov(1.13), high: ov(1.08), reachable: true, sig: true,
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := PairedOverhead(c.ratios, c.alpha)
			if err != nil {
				t.Fatalf("PairedOverhead(%v, %v) error %v", c.ratios, c.alpha, err)
			}
			n := len(c.ratios)
			handWorked{c.pct, c.low, c.high, c.reachable, c.sig, n, n, c.alpha}.check(t, got)
			if w := hasWarning(got.Warnings, "ties"); w != c.ties && !c.anyTies {
				t.Errorf("tie warning = %v; want %v (warnings %q)", w, c.ties, got.Warnings)
			}
			if w := hasWarning(got.Warnings, "exactly 1"); w != c.zeros {
				t.Errorf("zero warning = %v; want %v (warnings %q)", w, c.zeros, got.Warnings)
			}
			if w := hasWarning(got.Warnings, "need at least"); w != (c.need > 0) {
				t.Errorf("'need at least' warning = %v; want %v (warnings %q)", w, c.need > 0, got.Warnings)
			}
			if c.need > 0 && !hasWarning(got.Warnings, fmt.Sprintf("need at least %d pairs", c.need)) {
				t.Errorf("warnings = %q; want one saying 'need at least %d pairs'", got.Warnings, c.need)
			}
		})
	}
}

// TestPairedOverheadMatchesSignedRankTest checks on random tie-free samples
// that the interval excludes 0 exactly when the two-sided Wilcoxon
// signed-rank p-value, from brute-force enumeration of all sign
// assignments, is <= alpha, and that the interval is [W_(k), W_(M+1-k)]
// with k from the same enumeration.
func TestPairedOverheadMatchesSignedRankTest(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	counts := map[int][]int{}
	alphas := []float64{0.5, 0.2, 0.1, 0.05, 0.0125, 0.01}
	var tally verdicts
	for range 3000 {
		n := 1 + rng.IntN(14)
		alpha := alphas[rng.IntN(len(alphas))]
		shift := 0.05 * (2*rng.Float64() - 1)
		ratios := make([]float64, n)
		d := make([]float64, n)
		for i := range ratios {
			ratios[i] = math.Exp(shift + 0.03*rng.NormFloat64())
			d[i] = math.Log(ratios[i])
		}
		if counts[n] == nil {
			counts[n] = bruteSignedRankCounts(n)
		}
		cnt := counts[n]
		total := 1 << n

		// T+ = sum of the ranks of |d_i| over the positive d_i.
		order := make([]int, n)
		for i := range order {
			order[i] = i
		}
		slices.SortFunc(order, func(a, b int) int { return cmp.Compare(math.Abs(d[a]), math.Abs(d[b])) })
		tplus := 0
		for r, i := range order {
			if d[i] > 0 {
				tplus += r + 1
			}
		}
		p, k := exactTest(cnt, total, tplus, alpha)
		var w []float64
		for i := range d {
			for j := i; j < n; j++ {
				w = append(w, (d[i]+d[j])/2)
			}
		}
		slices.Sort(w)

		call := fmt.Sprintf("PairedOverhead(%v, %v)", ratios, alpha)
		got, err := PairedOverhead(ratios, alpha)
		if err != nil {
			t.Fatalf("%s error %v", call, err)
		}
		checkExact(t, call, got, p, k, alpha, w)
		if len(got.Warnings) > 0 && k > 0 {
			t.Errorf("%s.Warnings = %q; want none for tie-free data", call, got.Warnings)
		}
		tally.add(got)
	}
	tally.check(t, 300)
}

// TestPairedOverheadRecoversSlowdown: a constant 3% slowdown with small
// noise is found with 12 pairs at alpha = 0.05.
func TestPairedOverheadRecoversSlowdown(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 9))
		ratios := make([]float64, 12)
		for i := range ratios {
			ratios[i] = 0.97 * math.Exp(0.005*rng.NormFloat64())
		}
		got := mustPaired(t, ratios, 0.05)
		if !got.Reachable || !got.Significant || got.CILow > 3 || got.CIHigh < 3 || !near(got.Pct, 3, 0.5) {
			t.Errorf("PairedOverhead(%v, 0.05) = %+v; want significant, Pct about 3, CI containing 3", ratios, got)
		}
	}
}

// TestPairedOverheadNull checks that symmetric noise around 1 is rarely
// significant (at most about alpha of the time) and that the interval
// covers 0 otherwise.
func TestPairedOverheadNull(t *testing.T) {
	rng := rand.New(rand.NewPCG(10, 11))
	checkNullRate(t, func(alpha float64) Overhead {
		ratios := make([]float64, 15)
		for i := range ratios {
			// Uniform, hence symmetric, log noise.
			ratios[i] = math.Exp(0.02 * (2*rng.Float64() - 1))
		}
		got := mustPaired(t, ratios, alpha)
		if !got.Significant && (got.CILow > 0 || got.CIHigh < 0) {
			t.Errorf("PairedOverhead(%v, %v) = %+v; want CI containing 0 when not significant", ratios, alpha, got)
		}
		return got
	})
}

// TestPairedOverheadLarge exercises the normal approximation
// (n > maxExactSignedRank).
func TestPairedOverheadLarge(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 13))
	slow := make([]float64, 400)
	same := make([]float64, 400)
	for i := range slow {
		slow[i] = 0.99 * math.Exp(0.02*rng.NormFloat64())
		same[i] = math.Exp(0.02 * rng.NormFloat64())
	}
	checkFindsShift(t, 1, "PairedOverhead(1% slower, 400 pairs)", mustPaired(t, slow, 0.01),
		"PairedOverhead(no shift, 400 pairs)", mustPaired(t, same, 0.01))
}

func TestPairedOverheadErrors(t *testing.T) {
	ok := []float64{0.99, 1.01, 0.98}
	for _, c := range []struct {
		name   string
		ratios []float64
		alpha  float64
	}{
		{"nil", nil, 0.05},
		{"empty", []float64{}, 0.05},
		{"zero", []float64{0.99, 0}, 0.05},
		{"negative", []float64{-1, 1}, 0.05},
		{"NaN", []float64{math.NaN()}, 0.05},
		{"+Inf", []float64{1, math.Inf(1)}, 0.05},
		{"-Inf", []float64{math.Inf(-1)}, 0.05},
		{"alpha 0", ok, 0},
		{"alpha 1", ok, 1},
		{"alpha negative", ok, -0.05},
		{"alpha NaN", ok, math.NaN()},
	} {
		if got, err := PairedOverhead(c.ratios, c.alpha); err == nil {
			t.Errorf("%s: PairedOverhead(%v, %v) = %+v, nil; want error", c.name, c.ratios, c.alpha, got)
		}
	}
}

// PairedShift is PairedOverhead without the logarithm: on log ratios it
// gives the same estimate and interval, and on additive differences its
// interval covers the true shift at least as often as it says.
func TestPairedShift(t *testing.T) {
	ratios := []float64{0.93, 0.97, 0.91, 1.02, 0.95, 0.96, 0.94, 0.99}
	logs := make([]float64, len(ratios))
	for i, r := range ratios {
		logs[i] = math.Log(r)
	}
	o := mustPaired(t, ratios, 0.05)
	s := mustShift(t, logs, 0.05)
	if !s.Reachable || math.Abs(pct(s.Estimate)-o.Pct) > 1e-9 || math.Abs(pct(s.CIHigh)-o.CILow) > 1e-9 || math.Abs(pct(s.CILow)-o.CIHigh) > 1e-9 || s.Significant != o.Significant {
		t.Errorf("shift %+v on log ratios; overhead %+v", s, o)
	}
	if _, err := PairedShift(nil, 0.05); err == nil {
		t.Error("no differences: want an error")
	}
	if _, err := PairedShift([]float64{1, math.NaN()}, 0.05); err == nil {
		t.Error("NaN difference: want an error")
	}
	if s, _ := PairedShift([]float64{1, 2, 3}, 0.05); s.Reachable || s.CILow != 1 || s.CIHigh != 3 {
		t.Errorf("3 pairs: %+v; want no interval at 95%%, the Walsh averages' range", s)
	}
	r := rand.New(rand.NewPCG(3, 5))
	const sims, shift = 4000, 1.6
	covered := 0
	for range sims {
		d := make([]float64, 8)
		for i := range d {
			d[i] = shift + 0.4*r.NormFloat64()
		}
		if s := mustShift(t, d, 0.05); s.CILow <= shift && shift <= s.CIHigh {
			covered++
		}
	}
	if c := float64(covered) / sims; c < 0.94 || c > 0.985 {
		t.Errorf("coverage %.3f of the 95%% interval; want about 0.95 (exact: at least)", c)
	}
}
