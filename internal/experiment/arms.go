package experiment

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/obsbench/obsbench/internal/observer"
	"github.com/obsbench/obsbench/internal/result"
)

// Method is how an observer is compared with the baseline: the method
// each run records, result.Method, named in the runner too (as os names
// io/fs's FileMode) so that what plans an experiment reads as the
// runner's.
type Method = result.Method

// The methods the runner plans arms for (MethodDuet in duet.go).
const (
	MethodRounds      = result.MethodRounds
	MethodAlternation = result.MethodAlternation
	MethodAuto        = result.MethodAuto
)

// SwitchableSuffix ends the name of the arm that measures only the
// switchable part of an observer that is also measured whole.
const SwitchableSuffix = " (switchable)"

// AAName is the arm that alternates nothing: baseline against baseline.
// Its phase ratios show how far apart two identical phases fall, which is
// the resolution of every alternation comparison.
const AAName = result.AAName

// Alternation configures alternation runs.
type Alternation struct {
	Duration           time.Duration // measured window of one run
	MinPhase, MaxPhase int           // phase lengths in seconds
	Reps               int           // runs per alternating arm
	// CheckDuration is the run with the observer in force throughout that
	// counts its events against the statements executed
	// (DefaultCheckDuration unless a caller has reason to differ).
	CheckDuration time.Duration
}

// DefaultCheckDuration is an alternating observer's events check run.
const DefaultCheckDuration = 2 * time.Second

// Arm is one condition as the experiment runs it.
type Arm struct {
	Name     string
	Observer observer.Observer
	Method   Method
	Reps     int
	// Measures is whose cost the arm measures: result.MeasuresWhole or
	// result.MeasuresSwitchable ("" for the baselines).
	Measures string
	// Flipped: a duet arm's twins take the observer in the order B, A,
	// A, B rather than A, B, B, A (DuetOn); a split arm's groups likewise.
	Flipped bool
	// Part is a split arm's division of its observer: what is applied to
	// the server, and what the observed group's sessions set.
	Part *observer.SessionPart
}

// Arms are the experiment's arms: a duet's, a split's or both
// (duetArms, splitArms, splitDuetArms), else each observer's by the
// method that suits it (timedArms).
func Arms(ctx context.Context, cfg Config) ([]Arm, error) {
	switch cfg.Method {
	case MethodDuet:
		return duetArms(cfg), nil
	case MethodSplit:
		return splitArms(cfg)
	case MethodSplitDuet:
		return splitDuetArms(cfg)
	}
	return timedArms(ctx, cfg)
}

// timedArms decides each observer's method. With MethodAuto and a split
// (Config.Split: one server, no twin) an observer that splits between
// groups of sessions is measured by split, with its own A/A arm
// (SplitAAName), and the others as follows. With MethodAuto an observer is
// measured whole (rounds, or alternation when a reload switches all of
// it) and, when part of it stays in force, its switchable part too
// (alternation, in an arm named with SwitchableSuffix): the whole cost is
// what enabling the observer costs, the switchable part's is the sharper
// figure. With alternation the baseline also runs as an A/A alternation,
// and it runs in rounds when some observer does.
func timedArms(ctx context.Context, cfg Config) ([]Arm, error) {
	var arms []Arm
	var base observer.Observer
	anyRounds, anyAlt := false, false
	var current map[string]string // the server's settings, read once
	add := func(name string, o observer.Observer, m Method, measures string) {
		reps := cfg.Rounds
		if m == MethodAlternation {
			reps = cfg.Alternation.Reps
			anyAlt = true
		} else {
			anyRounds = true
		}
		arms = append(arms, Arm{Name: name, Observer: o, Method: m, Reps: reps, Measures: measures})
	}
	// holds says whether the held part changes the server as it is.
	holds := func(held observer.Observer) (bool, error) {
		if current == nil {
			var err error
			if current, err = cfg.Target.Settings(ctx); err != nil {
				return false, err
			}
		}
		return changes(held, current), nil
	}
	anySplit := false
	for _, o := range cfg.Observers {
		if o.Name == observer.Baseline {
			base = o
			continue
		}
		if a, ok := cfg.splitArm(o); ok {
			arms, anySplit = append(arms, a), true
			continue
		}
		if cfg.Method == MethodRounds {
			add(o.Name, o, MethodRounds, result.MeasuresWhole)
			continue
		}
		held, sw, err := cfg.Target.Split(ctx, o)
		if err != nil {
			return nil, err
		}
		switchable := len(sw.Settings) > 0 || len(sw.EnableSQL) > 0
		if cfg.Method == MethodAuto && !switchable {
			add(o.Name, o, MethodRounds, result.MeasuresWhole)
			continue
		}
		if cfg.Method == MethodAlternation && !switchable {
			return nil, fmt.Errorf("observer %s cannot alternate: none of it switches without a restart; use --method rounds or auto", o.Name)
		}
		held0, err := holds(held)
		switch {
		case err != nil:
			return nil, err
		case !held0:
			add(o.Name, o, MethodAlternation, result.MeasuresWhole) // all of it switches
		case cfg.Method == MethodAlternation:
			add(o.Name, o, MethodAlternation, result.MeasuresSwitchable)
		default:
			add(o.Name, o, MethodRounds, result.MeasuresWhole)
			add(o.Name+SwitchableSuffix, o, MethodAlternation, result.MeasuresSwitchable)
		}
	}
	if cfg.Probes.MeasureCost && cfg.Probes.WaitInterval > 0 {
		// The baseline with the wait sampler paused in off phases.
		arms = append(arms, Arm{Name: CollectorArm, Observer: base, Method: MethodAlternation, Reps: cfg.Alternation.Reps})
		anyAlt = true
	}
	if len(arms) == 0 && cfg.Method == MethodAlternation {
		anyAlt = true // baseline alone, alternating: an A/A experiment
	}
	return append(cfg.baselineArms(base, anyRounds, anyAlt, anySplit), arms...), nil
}

// baselineArms are what a timed plan compares its observers with: the
// baseline's rounds where an observer runs in rounds (or nothing else
// runs), the A/A alternation where one alternates, the A/A split where
// one is split.
func (cfg Config) baselineArms(base observer.Observer, rounds, alternation, split bool) []Arm {
	var head []Arm
	if rounds || (!alternation && !split) {
		head = append(head, Arm{Name: observer.Baseline, Observer: base, Method: MethodRounds, Reps: cfg.Rounds})
	}
	if alternation {
		head = append(head, Arm{Name: AAName, Observer: base, Method: MethodAlternation, Reps: cfg.Alternation.Reps})
	}
	if split {
		head = append(head, Arm{Name: SplitAAName, Observer: base, Method: MethodSplit, Reps: cfg.Rounds, Flipped: DuetFlipped(cfg.Seed, SplitAAName)})
	}
	return head
}

// changes reports whether the held part of an observer changes anything
// on a server whose settings are current: a library, an extension or a
// sink, or a setting not already at its value (an external server with
// the logging collector on holds nothing for a statement log).
func changes(held observer.Observer, current map[string]string) bool {
	if len(held.Preload) > 0 || len(held.Extensions) > 0 || held.Sink != nil {
		return true
	}
	for name, v := range held.Settings {
		if normalize(current[name]) != normalize(v) {
			return true
		}
	}
	return false
}

// normalize makes a catalog value ('csvlog', ON) comparable with the
// server's (csvlog, on).
func normalize(v string) string {
	return strings.ToLower(strings.Trim(strings.TrimSpace(v), "'\""))
}
