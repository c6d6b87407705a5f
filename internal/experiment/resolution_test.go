package experiment

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/obsbench/obsbench/internal/driver"
	"github.com/obsbench/obsbench/internal/result"
)

// pilot makes an A/A alternation run whose per-second throughput has
// about sd relative noise.
func pilot(sd float64, seconds int) result.Run {
	rng := rand.New(rand.NewPCG(1, 2))
	counts := make([]int64, seconds)
	for i := range counts {
		counts[i] = int64(40000 * (1 + sd*rng.NormFloat64()))
	}
	return result.Run{
		Condition: AAName, Method: MethodAlternation,
		Driver: driver.Result{PerSecond: [][]int64{counts}},
		Phases: Schedule(seconds, 2, 4, rand.New(rand.NewPCG(3, 4))),
	}
}

func TestPlanResolution(t *testing.T) {
	arms := []Arm{{Name: AAName, Method: MethodAlternation, Reps: 1}, {Name: "x", Method: MethodAlternation, Reps: 1}}
	cfg := Config{TargetResolution: 2, MaxTime: time.Hour,
		Alternation: Alternation{Duration: 60 * time.Second, MinPhase: 2, MaxPhase: 4, Reps: 1},
		Driver:      driver.Config{Warmup: 2 * time.Second}}

	// Quiet machine: 2% needs few phases; the configured 60 s is kept.
	p := planResolution(cfg, arms, pilot(0.005, 60), time.Minute)
	t.Log(p.Message)
	if p.Duration != 60*time.Second || !strings.Contains(p.Message, "needs") {
		t.Errorf("quiet: %v %q; want 60s kept", p.Duration, p.Message)
	}
	// Noisy machine: 2% needs far longer runs, which fit in an hour.
	noisy := planResolution(cfg, arms, pilot(0.08, 60), time.Minute)
	t.Log(noisy.Message)
	if noisy.Duration <= 2*time.Minute || !strings.Contains(noisy.Message, "per alternation run") {
		t.Errorf("noisy: %v %q; want a longer run", noisy.Duration, noisy.Message)
	}
	// The same within 5 minutes cannot be done, and says what it buys.
	cfg.MaxTime = 5 * time.Minute
	short := planResolution(cfg, arms, pilot(0.08, 60), time.Minute)
	t.Log(short.Message)
	if !strings.Contains(short.Message, "cannot be reached within --max-time 5m0s") || short.Duration >= noisy.Duration {
		t.Errorf("short: %v %q; want a refusal with a shorter run", short.Duration, short.Message)
	}
}

// With a pilot, the A/A arm runs first and still runs its planned number
// of times in all.
func TestPlanArmsPilot(t *testing.T) {
	arms := []Arm{{Name: AAName, Reps: 2}, {Name: "x", Reps: 2}, {Name: "y", Reps: 2}}
	steps := planArms(arms, 0, true, 9)
	if len(steps) != 6 || steps[0] != (Step{Round: 1, Arm: 0}) {
		t.Fatalf("planArms = %+v; want 6 steps, the A/A arm first", steps)
	}
	n := 0
	for _, s := range steps[1:] {
		if s.Arm == 0 {
			n++
			if s.Round < 2 {
				t.Errorf("A/A's second run is in round %d; want round 2 or later", s.Round)
			}
		}
	}
	if n != 1 {
		t.Errorf("A/A runs %d more times after the pilot; want 1", n)
	}
}

// The driver's latency labels follow the phases, without the first second
// of each (the analysis drops it too).
func TestPhaseLabels(t *testing.T) {
	phases := []result.Phase{{Start: 0, End: 3}, {Start: 3, End: 5, On: true}, {Start: 5, End: 8}}
	got := phaseLabels(phases, 8)
	want := []string{"", "off", "off", "", "on", "", "off", "off"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("labels %q; want %q", got, want)
	}
}
