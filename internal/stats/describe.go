package stats

import (
	"math"
	"slices"
)

// Median returns the median of xs (the mean of the two middle values for an
// even count), or NaN if xs is empty. It does not modify xs.
func Median(xs []float64) float64 {
	return Percentile(xs, 0.5)
}

// Percentile returns the q-quantile of xs, q in [0, 1], interpolating
// linearly between order statistics: position q*(n-1) in the sorted data,
// the same as numpy's default ("linear") method. It returns NaN for empty
// xs, for q outside [0, 1] and if xs contains NaN. It does not modify xs.
func Percentile(xs []float64, q float64) float64 {
	if len(xs) == 0 || !(q >= 0 && q <= 1) || slices.ContainsFunc(xs, math.IsNaN) {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return percentileSorted(s, q)
}

// percentileSorted is Percentile for non-empty sorted data and q in [0, 1].
func percentileSorted(s []float64, q float64) float64 {
	pos := q * float64(len(s)-1)
	i := int(math.Floor(pos))
	f := pos - float64(i)
	if f == 0 || i+1 >= len(s) {
		return s[i]
	}
	return s[i] + f*(s[i+1]-s[i])
}

// NoiseFloor returns the overhead that the baseline shows against itself:
// the 95th percentile, over all pairs of baseline runs, of
// 100*(1 - min/max). It is what one baseline run would report as the
// "overhead" of another, so an estimated overhead below it is within
// run-to-run noise, whatever the interval says. It returns 0 for fewer than
// two runs. The runs are assumed finite and positive, as CompareThroughput
// requires.
func NoiseFloor(baseline []float64) float64 {
	n := len(baseline)
	if n < 2 {
		return 0
	}
	r := make([]float64, 0, n*(n-1)/2)
	for i := range n {
		for j := i + 1; j < n; j++ {
			lo, hi := min(baseline[i], baseline[j]), max(baseline[i], baseline[j])
			r = append(r, 100*(1-lo/hi))
		}
	}
	slices.Sort(r)
	return percentileSorted(r, 0.95)
}
