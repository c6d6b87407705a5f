package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Student's t quantiles as the tables give them (two-sided 95%: the
// 0.975 quantile).
func TestTQuantile(t *testing.T) {
	for _, tt := range []struct {
		p    float64
		df   int
		want float64
	}{
		{0.975, 1, 12.706}, {0.975, 2, 4.303}, {0.975, 5, 2.571}, {0.975, 30, 2.042},
		{0.995, 10, 3.169}, {0.025, 5, -2.571}, {0.5, 7, 0},
	} {
		if got := TQuantile(tt.p, tt.df); math.Abs(got-tt.want) > 0.0005 {
			t.Errorf("TQuantile(%v, %d) = %.4f; want %.3f", tt.p, tt.df, got, tt.want)
		}
	}
	if !math.IsNaN(TQuantile(1, 3)) || !math.IsNaN(TQuantile(0.5, 0)) {
		t.Error("TQuantile outside its domain is not NaN")
	}
	m, lo, hi, ok := MeanCI([]float64{1, 2, 3}, 0.95)
	// mean 2, sd 1, half-width 4.303/sqrt(3).
	if !ok || m != 2 || math.Abs(hi-lo-2*4.3027/math.Sqrt(3)) > 0.001 {
		t.Errorf("MeanCI = %v [%v, %v] %v", m, lo, hi, ok)
	}
}

// Two-stage counts (counting's --count-width): rounds added as the first
// rounds' spread asks. The t interval over all rounds covers less than
// 95% then; the staged interval at least 95%. Normal values whose first
// eight give about ±0.07 where ±0.05 is wanted, as a counted observer's
// change does at the layouts of eight rounds.
func TestStagedMeanCICovers(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const trials, first, most, want, sigma = 6000, 8, 24, 0.05, 0.08
	var plain, staged, narrow int
	for range trials {
		xs := make([]float64, first, most)
		for i := range xs {
			xs[i] = rng.NormFloat64() * sigma
		}
		_, lo, hi, _ := MeanCI(xs, 0.95)
		for range SteinRounds(first, (hi-lo)/2, want, most) - first {
			xs = append(xs, rng.NormFloat64()*sigma)
		}
		if _, lo, hi, _ := MeanCI(xs, 0.95); lo <= 0 && 0 <= hi {
			plain++
		}
		_, lo, hi, _ = StagedMeanCI(xs, first, 0.95)
		if lo <= 0 && 0 <= hi {
			staged++
		}
		if (hi-lo)/2 <= want {
			narrow++
		}
	}
	p, s := float64(plain)/trials, float64(staged)/trials
	t.Logf("coverage: t interval %.4f, staged %.4f; within ±%.2f: %.3f", p, s, want, float64(narrow)/trials)
	if s < 0.94 {
		t.Errorf("the staged interval covers %.4f; want at least 0.95 (0.94 with the simulation's error)", s)
	}
	if p >= s {
		t.Errorf("the t interval covers %.4f, the staged %.4f: the staged should cover more", p, s)
	}
}

func TestStagedMeanCI(t *testing.T) {
	xs := []float64{1, 2, 3, 2, 2, 2, 2}
	m, lo, hi, _ := MeanCI(xs, 0.95)
	for _, first := range []int{0, 1, len(xs)} {
		if sm, slo, shi, _ := StagedMeanCI(xs, first, 0.95); sm != m || slo != lo || shi != hi {
			t.Errorf("first %d: %v [%v, %v]; want MeanCI's %v [%v, %v]", first, sm, slo, shi, m, lo, hi)
		}
	}
	// The first three spread 1, the rest not at all: Stein's half-width
	// 4.303/sqrt(7), wider than the t interval over all seven.
	sm, slo, shi, ok := StagedMeanCI(xs, 3, 0.95)
	if !ok || sm != m || math.Abs((shi-slo)/2-4.3027/math.Sqrt(7)) > 0.001 || slo > lo || shi < hi {
		t.Errorf("first 3: %v [%v, %v]; want %v ± %.4f", sm, slo, shi, m, 4.3027/math.Sqrt(7))
	}
}

func TestSteinRounds(t *testing.T) {
	for _, tt := range []struct {
		got, want float64
		n         int
	}{
		{0.04, 0.05, 8}, {0.05, 0.05, 8}, {0.07, 0.05, 16}, {0.1, 0.05, 24}, {0.06, 0, 8},
	} {
		if n := SteinRounds(8, tt.got, tt.want, 24); n != tt.n {
			t.Errorf("SteinRounds(8, %v, %v, 24) = %d; want %d", tt.got, tt.want, n, tt.n)
		}
	}
}
