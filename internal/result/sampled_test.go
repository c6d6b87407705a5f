package result

import (
	"math/rand/v2"
	"testing"
)

// A sample of a known rate falls inside SampledInterval about 999 times
// in 1,000, and a count of every statement, or of half the rate, does not.
func TestSampledIntervalCovers(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tt := range []struct {
		rate     float64
		executed int64
	}{{0.1, 10_000}, {0.01, 50_000}, {0.5, 2_000}, {0.1, 300}} {
		misses := 0
		const trials = 2000
		for range trials {
			var rec int64
			for range tt.executed {
				if rng.Float64() < tt.rate {
					rec++
				}
			}
			e := Events{Recorded: rec, Executed: tt.executed, SampleRate: tt.rate}
			if lo, hi, _ := e.SampledInterval(); rec < lo || rec > hi {
				misses++
			}
		}
		// 2 misses expected; 10 would be over 5 standard deviations.
		if misses > 10 {
			t.Errorf("rate %g of %d: %d of %d samples outside the interval; want about 2", tt.rate, tt.executed, misses, trials)
		}
		all := Events{Recorded: tt.executed, Executed: tt.executed, SampleRate: tt.rate}
		half := Events{Recorded: int64(float64(tt.executed) * tt.rate / 2), Executed: tt.executed, SampleRate: tt.rate}
		for _, e := range []Events{all, half} {
			if lo, hi, _ := e.SampledInterval(); e.Recorded >= lo && e.Recorded <= hi && tt.executed >= 2000 {
				t.Errorf("rate %g: %d of %d recorded lies in [%d, %d]; want it outside", tt.rate, e.Recorded, tt.executed, lo, hi)
			}
		}
	}
	if _, _, ok := (&Events{Recorded: 5, Executed: 5}).SampledInterval(); ok {
		t.Errorf("an observer that records every statement has a sample interval")
	}
}
