package experiment_test

import (
	"math/rand/v2"
	"testing"

	"github.com/obsbench/obsbench/internal/experiment"
)

func TestSchedule(t *testing.T) {
	for seed := uint64(0); seed < 200; seed++ {
		total := 10 + int(seed%60)
		p := experiment.Schedule(total, 2, 4, rand.New(rand.NewPCG(seed, 1)))
		if p[0].On || p[len(p)-1].On || p[0].Start != 0 || p[len(p)-1].End != total {
			t.Fatalf("seed %d: %+v; want off first and last, covering 0..%d", seed, p, total)
		}
		for i, ph := range p {
			if i > 0 && (ph.Start != p[i-1].End || ph.On == p[i-1].On) {
				t.Fatalf("seed %d: phases %d and %d do not alternate contiguously: %+v", seed, i-1, i, p)
			}
			if n := ph.End - ph.Start; n < 2 || (n > 4 && i != len(p)-1) {
				t.Fatalf("seed %d: phase %d lasts %d s; want 2-4 (the last may be longer)", seed, i, n)
			}
		}
	}
	if p := experiment.Schedule(50, 2, 4, rand.New(rand.NewPCG(1, 1))); len(p) < 11 {
		t.Errorf("50 s gave %d phases; want at least 11 (5 on phases)", len(p))
	}
}
