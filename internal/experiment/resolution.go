package experiment

import (
	"fmt"
	"math"
	"time"

	"github.com/obsbench/obsbench/internal/analysis"
	"github.com/obsbench/obsbench/internal/result"
	"github.com/obsbench/obsbench/internal/stats"
)

// resolutionPlan is how long the observers' alternation runs must be to
// resolve the target, as far as the time budget allows.
type resolutionPlan struct {
	Duration time.Duration
	Message  string
}

// planResolution sizes the alternation runs from the pilot A/A run: its
// phase ratios give the noise of one comparison, which says how many on
// phases a comparison needs to detect the target overhead with 80% power
// at the experiment's corrected level. When that does not fit in MaxTime it
// fits what it can and says what resolution that buys.
func planResolution(cfg Config, arms []Arm, pilot result.Run, spent time.Duration) resolutionPlan {
	ratios, _ := analysis.PhaseRatios(pilot)
	logs := make([]float64, len(ratios))
	for i, r := range ratios {
		logs[i] = math.Log(r)
	}
	// What is left to run: alternation runs (the A/A arm's after the
	// pilot included), which the plan lengthens, and round-based runs,
	// which keep their length.
	alt, m := 0, 0
	var rounds time.Duration
	for _, a := range arms {
		switch {
		case a.Name == AAName:
			alt += a.Reps - 1
		case a.Method == MethodAlternation:
			alt += a.Reps
		default:
			rounds += time.Duration(a.Reps) * (cfg.Driver.Duration + cfg.Driver.Warmup + 3*time.Second)
		}
		if !result.IsAA(a.Name) && a.Name != "baseline" {
			m++
		}
	}
	alpha := stats.Bonferroni(0.05, max(m, 1))
	keep := resolutionPlan{Duration: cfg.Alternation.Duration}
	if len(logs) < 3 || alt == 0 {
		keep.Message = fmt.Sprintf("resolution plan: the pilot A/A run gave %d usable phase pairs, too few to plan; keeping %v per run", len(logs), keep.Duration)
		return keep
	}
	sd := stddev(logs)
	pairs := stats.RequiredPairs(sd, cfg.TargetResolution, alpha, 0.8)
	phase := float64(cfg.Alternation.MinPhase+cfg.Alternation.MaxPhase) / 2
	perRun := func(p int) time.Duration { // a pair is an on and an off phase, plus the closing off phase
		return time.Duration((2*float64(p)+1)*phase) * time.Second
	}
	reps := max(cfg.Alternation.Reps, 1)
	need := perRun((pairs + reps - 1) / reps)
	// Each run also restarts, warms up and checks events: about 8 s more.
	overhead := cfg.Driver.Warmup + 8*time.Second
	dur := max(need, cfg.Alternation.Duration)
	total := time.Duration(alt)*(dur+overhead) + rounds
	budget := cfg.MaxTime - spent
	if total <= budget {
		return resolutionPlan{Duration: dur, Message: fmt.Sprintf(
			"resolution plan: one phase pair varies by %.1f%% (A/A); %.1f%% needs %d on phases per observer: %v per alternation run, about %v more",
			100*sd, cfg.TargetResolution, pairs, dur.Round(time.Second), total.Round(time.Second))}
	}
	fit := (budget-rounds)/time.Duration(alt) - overhead
	if fit < perRun(stats.MinPairs(alpha)) {
		fit = perRun(stats.MinPairs(alpha))
	}
	got := int(fit.Seconds()/phase-1) / 2 * reps
	mde := stats.MDEFromSD(sd, max(got, 1), alpha, 0.8)
	return resolutionPlan{Duration: fit, Message: fmt.Sprintf(
		"resolution plan: %.1f%% cannot be reached within --max-time %v: it needs %d on phases per observer (about %v in all); "+
			"running %v per alternation run instead, which resolves about %.1f%%",
		cfg.TargetResolution, cfg.MaxTime, pairs, (time.Duration(alt)*(need+overhead) + rounds).Round(time.Second), fit.Round(time.Second), mde)}
}

func stddev(xs []float64) float64 {
	var mean, ss float64
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return math.Sqrt(ss / float64(len(xs)-1))
}
