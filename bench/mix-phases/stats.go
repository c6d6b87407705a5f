package main

import (
	"math"

	moremath "github.com/aclements/go-moremath/stats"
)

// correlation is Pearson's, NaN for fewer than 3 points.
func correlation(x, y []float64) float64 {
	if len(x) != len(y) || len(x) < 3 {
		return math.NaN()
	}
	mx, my := moremath.Mean(x), moremath.Mean(y)
	var sxy, sxx, syy float64
	for i := range x {
		sxy += (x[i] - mx) * (y[i] - my)
		sxx += (x[i] - mx) * (x[i] - mx)
		syy += (y[i] - my) * (y[i] - my)
	}
	return sxy / math.Sqrt(sxx*syy)
}

// slope is the least-squares slope of y on x, 0 for fewer than 3 points.
func slope(x, y []float64) float64 {
	if len(x) != len(y) || len(x) < 3 {
		return 0
	}
	mx, my := moremath.Mean(x), moremath.Mean(y)
	var sxy, sxx float64
	for i := range x {
		sxy += (x[i] - mx) * (y[i] - my)
		sxx += (x[i] - mx) * (x[i] - mx)
	}
	if sxx == 0 {
		return 0
	}
	return sxy / sxx
}
