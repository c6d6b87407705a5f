package stats

import (
	"errors"
	"fmt"
	"math"
)

// Phase is one phase of a duet: a comparison of the observer's twin with
// the other over the same seconds.
type Phase struct {
	// Value is what the phase measured: the log of the twins' throughput
	// ratio, or the server CPU per statement one twin added.
	Value float64
	// InA says the observer was in force in the first twin.
	InA bool
	// Time is the phase's place in the experiment (its round).
	Time float64
}

// PhaseEffect is the effect common to a duet's phases with its interval.
type PhaseEffect struct {
	Est, Low, High float64
	// SE is Est's standard error, DF its degrees of freedom.
	SE float64
	DF int
	// Confidence is the interval's level, 1 - alpha.
	Confidence float64
	// TwinGap is the estimated difference between the twins (the first
	// twin's Value above the second's, half of it each way), which the
	// model takes out of the effect.
	TwinGap float64
}

// MinPhases is the fewest phases PhaseModel fits: the effect and the
// twins' difference, and two degrees of freedom for the residual; the
// drift is fitted from driftPhases on.
const (
	MinPhases   = 4
	driftPhases = 6
)

// PhaseModel estimates the effect common to a duet's phases by least
// squares, with the twins' difference and its linear drift taken out:
//
//	Value = effect + z*(gap + drift*Time) + noise,  z = +1 in twin a, -1 in b
//
// A phase compares two twins over the same seconds, so what the machine
// does to both at once cancels inside its Value; what is left is how the
// twins differ (their data's place on disk, the cores they were given)
// and how that difference moves, which the model fits instead of pairing
// neighbouring phases. Every phase then counts, not one value per pair,
// and the interval is Student's t on the residual's n-3 degrees of
// freedom rather than the order statistics of a handful of pairs (for 8
// pairs at 98.75%, the range of all 8).
//
// With the observer in one twin only, the twins' difference cannot be
// told from the effect and an error says so; with too few phases to fit
// the drift, the drift term is left out.
func PhaseModel(ph []Phase, alpha float64) (PhaseEffect, error) {
	if !(alpha > 0 && alpha < 1) {
		return PhaseEffect{}, fmt.Errorf("stats: alpha = %v, want 0 < alpha < 1", alpha)
	}
	var inA, inB int
	var tMean float64
	for _, p := range ph {
		if math.IsNaN(p.Value) || math.IsInf(p.Value, 0) {
			return PhaseEffect{}, fmt.Errorf("stats: a phase's value is %v", p.Value)
		}
		if p.InA {
			inA++
		} else {
			inB++
		}
		tMean += p.Time
	}
	if len(ph) < MinPhases {
		return PhaseEffect{}, fmt.Errorf("stats: %d phases; need at least %d", len(ph), MinPhases)
	}
	if inA == 0 || inB == 0 {
		return PhaseEffect{}, errors.New("stats: the observer was in one twin only: the twins' difference cannot be told from its effect")
	}
	tMean /= float64(len(ph))
	terms := 3
	if len(ph) < driftPhases {
		terms = 2
	}
	for ; terms >= 2; terms-- {
		e, err := fitPhases(ph, tMean, terms, alpha)
		if err == nil {
			return e, nil
		}
	}
	return PhaseEffect{}, errors.New("stats: the phases do not separate the observer from the twins")
}

// fitPhases fits the model's first terms (effect, gap, drift) by least
// squares, through the normal equations.
func fitPhases(ph []Phase, tMean float64, terms int, alpha float64) (PhaseEffect, error) {
	row := func(p Phase) []float64 {
		z := -1.0
		if p.InA {
			z = 1
		}
		return []float64{1, z, z * (p.Time - tMean)}[:terms]
	}
	xtx := make([][]float64, terms)
	for i := range xtx {
		xtx[i] = make([]float64, terms)
	}
	xty := make([]float64, terms)
	for _, p := range ph {
		x := row(p)
		for i := range terms {
			xty[i] += x[i] * p.Value
			for j := range terms {
				xtx[i][j] += x[i] * x[j]
			}
		}
	}
	inv, ok := invert(xtx)
	if !ok {
		return PhaseEffect{}, errors.New("stats: singular")
	}
	beta := make([]float64, terms)
	for i := range terms {
		for j := range terms {
			beta[i] += inv[i][j] * xty[j]
		}
	}
	var rss float64
	for _, p := range ph {
		x, fit := row(p), 0.0
		for i := range terms {
			fit += x[i] * beta[i]
		}
		rss += (p.Value - fit) * (p.Value - fit)
	}
	df := len(ph) - terms
	se := math.Sqrt(rss / float64(df) * inv[0][0])
	h := TQuantile(1-alpha/2, df) * se
	return PhaseEffect{Est: beta[0], Low: beta[0] - h, High: beta[0] + h, SE: se, DF: df, Confidence: 1 - alpha, TwinGap: 2 * beta[1]}, nil
}

// invert inverts a small symmetric positive matrix by Gauss-Jordan
// elimination; ok is false when it is (nearly) singular.
func invert(m [][]float64) ([][]float64, bool) {
	n := len(m)
	a := make([][]float64, n)
	for i := range m {
		a[i] = make([]float64, 2*n)
		copy(a[i], m[i])
		a[i][n+i] = 1
	}
	for c := range n {
		p := c
		for r := c + 1; r < n; r++ {
			if math.Abs(a[r][c]) > math.Abs(a[p][c]) {
				p = r
			}
		}
		if math.Abs(a[p][c]) < 1e-9*(1+math.Abs(m[c][c])) {
			return nil, false
		}
		a[c], a[p] = a[p], a[c]
		piv := a[c][c]
		for j := range a[c] {
			a[c][j] /= piv
		}
		for r := range n {
			if r != c && a[r][c] != 0 {
				f := a[r][c]
				for j := range a[r] {
					a[r][j] -= f * a[c][j]
				}
			}
		}
	}
	inv := make([][]float64, n)
	for i := range a {
		inv[i] = a[i][n:]
	}
	return inv, true
}

// MDE is the least effect, in percent of the ratio, that a model of the
// same phases and noise detects with the given power at the interval's
// level (two-sided; the effect's t quantile, then power's normal one).
func (e PhaseEffect) MDE(power float64) float64 {
	alpha := 1 - e.Confidence
	return 100 * (TQuantile(1-alpha/2, e.DF) + normQuantile(power)) * e.SE
}

// PhaseOverhead is PhaseModel on the log throughput ratios of a duet's
// phases (the observer's twin over the other), as an overhead in percent:
// 1 - ratio.
func PhaseOverhead(ph []Phase, alpha float64) (Overhead, error) {
	e, err := PhaseModel(ph, alpha)
	if err != nil {
		return Overhead{}, err
	}
	// The log ratio's interval [Low, High] is the overhead's
	// [1 - exp(High), 1 - exp(Low)].
	o := Overhead{Pct: pct(e.Est), CILow: pct(e.High), CIHigh: pct(e.Low), Confidence: e.Confidence,
		N1: len(ph), N2: len(ph), Reachable: true}
	o.Significant = o.CILow > 0 || o.CIHigh < 0
	return o, nil
}
