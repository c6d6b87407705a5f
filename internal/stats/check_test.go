package stats

import (
	"math"
	"testing"
)

// must is v, or the test fails with err.
func must[T any](t *testing.T, v T, err error) T {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// mustCompare is CompareThroughput, or the test fails with its error.
func mustCompare(t *testing.T, base, cond []float64, alpha float64) Overhead {
	t.Helper()
	o, err := CompareThroughput(base, cond, alpha)
	return must(t, o, err)
}

// mustPaired is PairedOverhead, or the test fails with its error.
func mustPaired(t *testing.T, ratios []float64, alpha float64) Overhead {
	t.Helper()
	o, err := PairedOverhead(ratios, alpha)
	return must(t, o, err)
}

// mustShift is PairedShift, or the test fails with its error.
func mustShift(t *testing.T, diffs []float64, alpha float64) Shift {
	t.Helper()
	s, err := PairedShift(diffs, alpha)
	return must(t, s, err)
}

// handWorked is what an Overhead of a case worked out by hand must be: its
// Pct (NaN: only that the interval holds it), its interval [low, high]
// (low NaN: only that it holds the Pct), whether an interval is reachable
// and significant, and from n1 and n2 runs (pairs: n1 = n2) at alpha.
type handWorked struct {
	pct, low, high float64
	reachable, sig bool
	n1, n2         int
	alpha          float64
}

func (w handWorked) check(t *testing.T, got Overhead) {
	t.Helper()
	if !math.IsNaN(w.pct) && !near(got.Pct, w.pct, 1e-9) {
		t.Errorf("Pct = %v; want %v", got.Pct, w.pct)
	}
	if !math.IsNaN(w.low) && (!near(got.CILow, w.low, 1e-9) || !near(got.CIHigh, w.high, 1e-9)) {
		t.Errorf("CI = [%v, %v]; want [%v, %v]", got.CILow, got.CIHigh, w.low, w.high)
	}
	if !(got.CILow <= got.Pct && got.Pct <= got.CIHigh) {
		t.Errorf("CI = [%v, %v] does not contain Pct = %v", got.CILow, got.CIHigh, got.Pct)
	}
	if got.Reachable != w.reachable || got.Significant != w.sig {
		t.Errorf("Reachable, Significant = %v, %v; want %v, %v", got.Reachable, got.Significant, w.reachable, w.sig)
	}
	if got.N1 != w.n1 || got.N2 != w.n2 || got.Confidence != 1-w.alpha {
		t.Errorf("N1, N2, Confidence = %d, %d, %v; want %d, %d, %v", got.N1, got.N2, got.Confidence, w.n1, w.n2, 1-w.alpha)
	}
}

// checkExact checks got, from call, against the exact test of its rank
// statistic at alpha: p its two-sided p-value, k the order statistic
// that bounds the interval (0: none), of the sorted estimates (pairwise
// log ratios, or Walsh averages of log ratios).
func checkExact(t *testing.T, call string, got Overhead, p float64, k int, alpha float64, sorted []float64) {
	t.Helper()
	if wantSig := p <= alpha*(1+1e-9); got.Significant != wantSig {
		t.Errorf("%s.Significant = %v; want %v (p = %v, CI [%v, %v])", call, got.Significant, wantSig, p, got.CILow, got.CIHigh)
	}
	if got.Reachable != (k > 0) {
		t.Errorf("%s.Reachable = %v; want %v", call, got.Reachable, k > 0)
	}
	wantLow, wantHigh := pct(sorted[len(sorted)-1]), pct(sorted[0])
	if k > 0 {
		wantLow, wantHigh = pct(sorted[len(sorted)-k]), pct(sorted[k-1])
	}
	if got.CILow != wantLow || got.CIHigh != wantHigh {
		t.Errorf("%s CI = [%v, %v]; want [%v, %v]", call, got.CILow, got.CIHigh, wantLow, wantHigh)
	}
	if !(got.CILow <= got.Pct && got.Pct <= got.CIHigh) {
		t.Errorf("%s CI = [%v, %v] does not contain Pct = %v", call, got.CILow, got.CIHigh, got.Pct)
	}
}

// verdicts counts the significant and other random cases, to check that
// both came often enough for the check to mean something.
type verdicts struct{ sig, not int }

func (v *verdicts) add(o Overhead) {
	if o.Significant {
		v.sig++
	} else {
		v.not++
	}
}

// check checks there were at least least of each.
func (v verdicts) check(t *testing.T, least int) {
	t.Helper()
	if v.sig < least || v.not < least {
		t.Errorf("significant/not = %d/%d; want both >= %d for a meaningful check", v.sig, v.not, least)
	}
}

// checkNullRate runs 1000 trials of comparisons of no difference at
// alpha 0.05, each made by trial, and checks that at most about alpha of
// them are significant.
func checkNullRate(t *testing.T, trial func(alpha float64) Overhead) {
	t.Helper()
	const trials, alpha = 1000, 0.05
	sig := 0
	for range trials {
		if trial(alpha).Significant {
			sig++
		}
	}
	if sig > 80 { // expectation <= 50, sd about 7
		t.Errorf("significant in %d of %d null trials; want about <= %d", sig, trials, int(alpha*trials))
	}
}

// checkFindsShift checks two comparisons of large samples: with a shift
// of pct percent, significant, an interval reached and holding pct; with
// none, not significant, the interval holding 0. The names say which
// comparison failed.
func checkFindsShift(t *testing.T, pct float64, shiftedName string, shifted Overhead, sameName string, same Overhead) {
	t.Helper()
	if !shifted.Significant || !shifted.Reachable || shifted.CILow > pct || shifted.CIHigh < pct {
		t.Errorf("%s = %+v; want significant, CI containing %v", shiftedName, shifted, pct)
	}
	if same.Significant || same.CILow > 0 || same.CIHigh < 0 {
		t.Errorf("%s = %+v; want not significant", sameName, same)
	}
}

// minimum is a case of MinRuns or MinPairs.
type minimum struct {
	alpha float64
	want  int
}

// checkMinimum checks the function name, f, on cases, and that the
// smallest alpha there is needs at least least.
func checkMinimum(t *testing.T, name string, f func(float64) int, cases []minimum, least int) {
	t.Helper()
	for _, c := range cases {
		if got := f(c.alpha); got != c.want {
			t.Errorf("%s(%v) = %d; want %d", name, c.alpha, got, c.want)
		}
	}
	if got := f(math.SmallestNonzeroFloat64); got < least {
		t.Errorf("%s(%v) = %d; want >= %d", name, math.SmallestNonzeroFloat64, got, least)
	}
}

// checkMinimumConsistent checks that the minimum size name, f, agrees at
// each alpha with k, the critical values a method uses: n = f(alpha)
// reaches an interval (k >= 1), n-1 does not. call shows k's call.
func checkMinimumConsistent(t *testing.T, name string, f func(float64) int, k func(n int, alpha float64) int, call func(n int, alpha float64) string, alphas []float64) {
	t.Helper()
	for _, alpha := range alphas {
		n := f(alpha)
		if k(n, alpha) == 0 {
			t.Errorf("%s = 0; want >= 1 (n = %s)", call(n, alpha), name)
		}
		if got := k(n-1, alpha); n > 1 && got != 0 {
			t.Errorf("%s = %d; want 0 (n-1 < %s)", call(n-1, alpha), got, name)
		}
	}
}
