package stats

import (
	"math"
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
