package stats

import (
	"math"

	moremath "github.com/aclements/go-moremath/stats"
)

// TQuantile is the p-quantile of Student's t distribution with df
// degrees of freedom (p in (0, 1), df >= 1), found by bisection on its
// CDF to 1e-9.
func TQuantile(p float64, df int) float64 {
	if p <= 0 || p >= 1 || df < 1 {
		return math.NaN()
	}
	if p < 0.5 {
		return -TQuantile(1-p, df)
	}
	t := moremath.TDist{V: float64(df)}
	lo, hi := 0.0, 1.0
	for t.CDF(hi) < p {
		hi *= 2
	}
	for hi-lo > 1e-9 {
		mid := (lo + hi) / 2
		if t.CDF(mid) < p {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// MeanCI is the mean of xs and its two-sided confidence interval at
// level (0.95: 95%), from Student's t; with one value the interval is
// the value itself and ok is false.
func MeanCI(xs []float64, level float64) (mean, lo, hi float64, ok bool) {
	n := len(xs)
	if n == 0 {
		return math.NaN(), math.NaN(), math.NaN(), false
	}
	for _, x := range xs {
		mean += x
	}
	mean /= float64(n)
	if n == 1 {
		return mean, mean, mean, false
	}
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	half := TQuantile(1-(1-level)/2, n-1) * math.Sqrt(ss/float64(n-1)/float64(n))
	return mean, mean - half, mean + half, true
}
