package stats

import (
	"math"
	"testing"
)

func TestNormQuantile(t *testing.T) {
	for _, c := range []struct{ p, want float64 }{
		{0.5, 0}, {0.975, 1.959963984540054}, {0.8, 0.8416212335729143},
		{0.995, 2.5758293035489004}, {0.9, 1.2815515655446004}, {0.025, -1.959963984540054},
	} {
		if got := normQuantile(c.p); !near(got, c.want, 1e-12) {
			t.Errorf("normQuantile(%v) = %v; want %v", c.p, got, c.want)
		}
	}
}

// z_0.975 + z_0.8, z_0.995 + z_0.9.
const (
	z05p80 = 1.959963984540054 + 0.8416212335729143
	z01p90 = 2.5758293035489004 + 1.2815515655446004
)

func TestMDE(t *testing.T) {
	for _, c := range []struct {
		name         string
		logDiffs     []float64
		alpha, power float64
		want         float64
	}{
		// sd = sqrt(4e-4/3) = 0.011547, n = 4: expm1(2.80159*0.011547/2).
		{"alternating", []float64{-0.01, 0.01, -0.01, 0.01}, 0.05, 0.8, 1.6306482629222747},
		// sd = sqrt(1e-3/4) = 0.015811, n = 5, mean not 0.
		{"ramp", []float64{0.01, 0.02, 0.03, 0.04, 0.05}, 0.05, 0.8, 2.000772322629253},
		{"ramp 99% 90% power", []float64{0.05, 0.04, 0.03, 0.02, 0.01}, 0.01, 0.9, 2.765119162938139},
		{"no noise", []float64{0.02, 0.02, 0.02}, 0.05, 0.8, 0},
	} {
		if got := MDE(c.logDiffs, c.alpha, c.power); !near(got, c.want, 1e-9) {
			t.Errorf("%s: MDE(%v, %v, %v) = %v; want %v", c.name, c.logDiffs, c.alpha, c.power, got, c.want)
		}
	}
	for _, c := range []struct {
		logDiffs     []float64
		alpha, power float64
	}{
		{nil, 0.05, 0.8}, {[]float64{0.01}, 0.05, 0.8},
		{[]float64{0.01, 0.02}, 0, 0.8}, {[]float64{0.01, 0.02}, 1, 0.8},
		{[]float64{0.01, 0.02}, 0.05, 0}, {[]float64{0.01, 0.02}, 0.05, 1},
		{[]float64{0.01, 0.02}, math.NaN(), 0.8}, {[]float64{0.01, math.NaN()}, 0.05, 0.8},
	} {
		if got := MDE(c.logDiffs, c.alpha, c.power); !math.IsNaN(got) {
			t.Errorf("MDE(%v, %v, %v) = %v; want NaN", c.logDiffs, c.alpha, c.power, got)
		}
	}
}

func TestRequiredPairs(t *testing.T) {
	for _, c := range []struct {
		sd, target, alpha, power float64
		want                     int
	}{
		// (2.80159*0.02/ln 1.01)^2 = 31.71.
		{0.02, 1, 0.05, 0.8, 32},
		// (3.85738*0.05/ln 1.02)^2 = 94.86.
		{0.05, 2, 0.01, 0.9, 95},
		// 0.33 and 2.84 pairs: raised to MinPairs(0.05) = 6.
		{0.01, 5, 0.05, 0.8, 6},
		{0.003, 0.5, 0.05, 0.8, 6},
		{0, 1, 0.01, 0.8, 8},
		// Exactly 100 pairs by construction: no extra pair from rounding.
		{10 * math.Log1p(0.03) / z05p80, 3, 0.05, 0.8, 100},
		{math.Inf(1), 1, 0.05, 0.8, math.MaxInt},
		{1e200, 1e-200, 0.05, 0.8, math.MaxInt},
		// Invalid inputs.
		{-0.01, 1, 0.05, 0.8, 0}, {math.NaN(), 1, 0.05, 0.8, 0},
		{0.01, 0, 0.05, 0.8, 0}, {0.01, -1, 0.05, 0.8, 0}, {0.01, math.NaN(), 0.05, 0.8, 0},
		{0.01, 1, 0, 0.8, 0}, {0.01, 1, 1, 0.8, 0}, {0.01, 1, 0.05, 0, 0}, {0.01, 1, 0.05, 1, 0},
	} {
		if got := RequiredPairs(c.sd, c.target, c.alpha, c.power); got != c.want {
			t.Errorf("RequiredPairs(%v, %v, %v, %v) = %d; want %d", c.sd, c.target, c.alpha, c.power, got, c.want)
		}
	}
}

// TestRequiredPairsInvertsMDE checks that n = RequiredPairs pairs of noise
// sd reach the target MDE and n-1 do not (when above MinPairs).
func TestRequiredPairsInvertsMDE(t *testing.T) {
	mdeAt := func(sd float64, n int, alpha, power float64) float64 {
		return math.Expm1(zSum(alpha, power)*sd/math.Sqrt(float64(n))) * 100
	}
	for _, sd := range []float64{0.005, 0.01, 0.03, 0.1} {
		for _, target := range []float64{0.5, 1, 2, 5} {
			for _, ap := range [][2]float64{{0.05, 0.8}, {0.0125, 0.9}} {
				n := RequiredPairs(sd, target, ap[0], ap[1])
				if got := mdeAt(sd, n, ap[0], ap[1]); got > target*(1+1e-9) {
					t.Errorf("MDE(sd %v, RequiredPairs = %d, %v, %v) = %v; want <= %v", sd, n, ap[0], ap[1], got, target)
				}
				if n > MinPairs(ap[0]) {
					if got := mdeAt(sd, n-1, ap[0], ap[1]); got <= target {
						t.Errorf("MDE(sd %v, RequiredPairs-1 = %d, %v, %v) = %v; want > %v", sd, n-1, ap[0], ap[1], got, target)
					}
				}
			}
		}
	}
}
