package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// simulatedDuet is a duet's 16 phases of one arm in the order ABBA
// (flipped: BAAB), with a known effect: the machine's speed drifts and
// falls on both twins alike, the twins differ by a gap that drifts
// linearly, each twin's throughput has noise of its own, and now and then
// a neighbour takes CPU from one twin only.
func simulatedDuet(rng *rand.Rand, effect float64, flipped bool) (ph []Phase, pairRatios []float64) {
	const phases = 16
	gap, drift := rng.NormFloat64()*0.03, rng.NormFloat64()*0.002
	speed := 0.0
	ratio := make([]float64, phases)
	for k := range phases {
		round := k + 1
		inA := (k%4 == 0 || k%4 == 3) != flipped
		speed += rng.NormFloat64() * 0.08 // the machine: both twins at once
		twin := func(a bool) float64 {
			v := speed + rng.NormFloat64()*0.012
			if a {
				v += (gap + drift*float64(round)) / 2
			} else {
				v -= (gap + drift*float64(round)) / 2
			}
			if rng.Float64() < 0.1 { // a neighbour on this twin's core
				v -= 0.04 * rng.Float64()
			}
			return v
		}
		on, off := twin(inA)+math.Log1p(-effect), twin(!inA)
		ratio[k] = math.Exp(on - off)
		ph = append(ph, Phase{Value: on - off, InA: inA, Time: float64(round)})
	}
	for k := 0; k+1 < phases; k += 2 {
		pairRatios = append(pairRatios, math.Sqrt(ratio[k]*ratio[k+1]))
	}
	return ph, pairRatios
}

// The phase model's interval holds a known effect as often as it says,
// on phases with the twins' gap and its drift, the machine's drift and a
// neighbour's hits, and is narrower than the signed-rank interval over
// the pairs of phases that it replaced.
func TestPhaseModelCovers(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const trials = 3000
	for _, alpha := range []float64{0.05, 0.0125} {
		for _, effect := range []float64{0, 0.01, 0.05, 0.2} {
			var held int
			var bias float64
			var model, pairs []float64
			for i := range trials {
				ph, pr := simulatedDuet(rng, effect, i%2 == 1)
				o, err := PhaseOverhead(ph, alpha)
				if err != nil {
					t.Fatal(err)
				}
				want := 100 * effect
				if o.CILow <= want && want <= o.CIHigh {
					held++
				}
				bias += (o.Pct - want) / trials
				model = append(model, (o.CIHigh-o.CILow)/2)
				p, err := PairedOverhead(pr, alpha)
				if err != nil {
					t.Fatal(err)
				}
				pairs = append(pairs, (p.CIHigh-p.CILow)/2)
			}
			cover := float64(held) / trials
			mw, pw := Median(model), Median(pairs)
			t.Logf("alpha %.4f, effect %4.1f%%: coverage %.3f, bias %+.3f point, median half-width %.2f (pairs' signed-rank %.2f)",
				alpha, 100*effect, cover, bias, mw, pw)
			// 3000 trials: the coverage's standard error is about 0.004.
			if cover < 1-alpha-0.012 {
				t.Errorf("alpha %v, effect %v: the interval held the effect in %.3f of trials; want %.3f", alpha, effect, cover, 1-alpha)
			}
			if math.Abs(bias) > 0.05 {
				t.Errorf("alpha %v, effect %v: mean bias %+.3f point; want within ±0.05", alpha, effect, bias)
			}
			if mw >= pw {
				t.Errorf("alpha %v, effect %v: median half-width %.2f, the pairs' %.2f: want narrower", alpha, effect, mw, pw)
			}
		}
	}
}

func TestPhaseModel(t *testing.T) {
	// Twin a reads 2% above b throughout; the observer costs 10%: each
	// phase is exactly its model's value, so the fit is exact.
	var ph []Phase
	for k := range 8 {
		inA := k%4 == 0 || k%4 == 3
		v := math.Log(0.9)
		if inA {
			v += 0.01
		} else {
			v -= 0.01
		}
		ph = append(ph, Phase{Value: v, InA: inA, Time: float64(k + 1)})
	}
	e, err := PhaseModel(ph, 0.05)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(e.Est-math.Log(0.9)) > 1e-12 || math.Abs(e.TwinGap-0.02) > 1e-12 || e.DF != 5 || e.High-e.Low > 1e-9 {
		t.Errorf("fit %+v; want effect ln 0.9, gap 0.02, 5 degrees of freedom, no width", e)
	}
	o, _ := PhaseOverhead(ph, 0.05)
	if math.Abs(o.Pct-10) > 1e-9 || !o.Significant {
		t.Errorf("overhead %+v; want 10%%, significant", o)
	}

	for _, c := range []struct {
		name string
		ph   []Phase
	}{
		{"three phases", ph[:3]},
		{"one twin only", slices.DeleteFunc(slices.Clone(ph), func(p Phase) bool { return !p.InA })},
		{"not a number", append(slices.Clone(ph[:7]), Phase{Value: math.NaN(), InA: true, Time: 8})},
	} {
		if _, err := PhaseModel(c.ph, 0.05); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
	// Four or five phases fit without the drift term.
	if e, err := PhaseModel(ph[:4], 0.05); err != nil || e.DF != 2 {
		t.Errorf("4 phases: %+v, %v; want 2 degrees of freedom", e, err)
	}
}
