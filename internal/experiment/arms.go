package experiment

import (
	"context"
	"fmt"
	"time"

	"github.com/obsbench/obsbench/internal/observer"
)

// Method is how an observer is compared with the baseline.
type Method string

const (
	// MethodRounds runs the workload once per round with the observer in
	// force for the whole run, and compares runs with baseline runs.
	MethodRounds Method = "rounds"
	// MethodAlternation switches the observer on and off while the
	// workload runs and compares each on phase with its neighbours.
	MethodAlternation Method = "alternation"
	// MethodAuto alternates what a reload can switch and uses rounds for
	// the rest.
	MethodAuto Method = "auto"
)

// AAName is the arm that alternates nothing: baseline against baseline.
// Its phase ratios show how far apart two identical phases fall, which is
// the resolution of every alternation comparison.
const AAName = "baseline A/A"

// Alternation configures alternation runs.
type Alternation struct {
	Duration           time.Duration // measured window of one run
	MinPhase, MaxPhase int           // phase lengths in seconds
	Reps               int           // runs per alternating arm
	// CheckDuration is the run with the observer in force throughout that
	// counts its events against the statements executed.
	CheckDuration time.Duration
}

// Arm is one condition as the experiment runs it.
type Arm struct {
	Name     string
	Observer observer.Observer
	Method   Method
	Reps     int
}

// Arms decides each observer's method. With MethodAuto an observer
// alternates when a reload can switch some of it; the baseline then also
// runs as an A/A alternation, and it runs in rounds when some observer
// does.
func Arms(ctx context.Context, cfg Config) ([]Arm, error) {
	var arms []Arm
	var base observer.Observer
	anyRounds, anyAlt := false, false
	for _, o := range cfg.Observers {
		if o.Name == observer.Baseline {
			base = o
			continue
		}
		m := cfg.Method
		if m == MethodAuto || m == MethodAlternation {
			_, sw, err := cfg.Target.Split(ctx, o)
			if err != nil {
				return nil, err
			}
			switch {
			case len(sw.Settings) > 0 || len(sw.EnableSQL) > 0:
				m = MethodAlternation
			case m == MethodAlternation:
				return nil, fmt.Errorf("observer %s cannot alternate: none of it switches without a restart; use --method rounds or auto", o.Name)
			default:
				m = MethodRounds
			}
		}
		reps := cfg.Rounds
		if m == MethodAlternation {
			reps = cfg.Alternation.Reps
			anyAlt = true
		} else {
			anyRounds = true
		}
		arms = append(arms, Arm{Name: o.Name, Observer: o, Method: m, Reps: reps})
	}
	if cfg.Probes.MeasureCost && cfg.Probes.WaitInterval > 0 {
		// The baseline with the wait sampler paused in off phases.
		arms = append(arms, Arm{Name: CollectorArm, Observer: base, Method: MethodAlternation, Reps: cfg.Alternation.Reps})
		anyAlt = true
	}
	var head []Arm
	if len(arms) == 0 && cfg.Method == MethodAlternation {
		anyAlt = true // baseline alone, alternating: an A/A experiment
	}
	if anyRounds || !anyAlt {
		head = append(head, Arm{Name: observer.Baseline, Observer: base, Method: MethodRounds, Reps: cfg.Rounds})
	}
	if anyAlt {
		head = append(head, Arm{Name: AAName, Observer: base, Method: MethodAlternation, Reps: cfg.Alternation.Reps})
	}
	return append(head, arms...), nil
}
