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

// StagedMeanCI is MeanCI for a two-stage sample: xs[:first] are the
// first stage, from whose spread the size of the whole was chosen (the
// rounds they ask for to reach a width), and the rest came after. The
// t interval over all of xs covers less than level then: the stages
// that stop early are those whose first values happened to lie close
// together. Stein's interval, the mean of all of xs with the first
// stage's standard deviation and its t quantile, covers level exactly
// for normal values whatever the rule that chose the size from that
// deviation. The interval returned is the wider of the two on each
// side, so it covers at least level whether the later values are
// spread like the first or wider. first of 0, of len(xs) or under 2 is
// one stage: MeanCI.
func StagedMeanCI(xs []float64, first int, level float64) (mean, lo, hi float64, ok bool) {
	mean, lo, hi, ok = MeanCI(xs, level)
	if !ok || first < 2 || first >= len(xs) {
		return mean, lo, hi, ok
	}
	// The first stage's own interval has Stein's quantile and deviation,
	// over the first stage's count instead of the whole's.
	_, lo1, hi1, _ := MeanCI(xs[:first], level)
	half := (hi1 - lo1) / 2 * math.Sqrt(float64(first)/float64(len(xs)))
	return mean, math.Min(lo, mean-half), math.Max(hi, mean+half), true
}

// SteinRounds is how many values in all Stein's two-stage rule asks
// for, first of them taken, so that its interval (StagedMeanCI) has a
// half-width of at most want, where those first values' interval has
// half-width got: the first stage's deviation is taken as the whole's.
// It is at least first and at most most.
func SteinRounds(first int, got, want float64, most int) int {
	if !(got > want) || want <= 0 {
		return first
	}
	n := int(math.Ceil(float64(first) * (got / want) * (got / want)))
	return max(first, min(n, most))
}
