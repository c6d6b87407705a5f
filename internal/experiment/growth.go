package experiment

import (
	"fmt"
	"math"
	"time"

	"github.com/obsbench/obsbench/internal/analysis"
	"github.com/obsbench/obsbench/internal/result"
	"github.com/obsbench/obsbench/internal/stats"
)

// maxDuetPhases is the most phases --target-resolution gives a duet arm.
const maxDuetPhases = 1000

// duetGrowth says how many more phases (rounds) each arm of a duet needs
// once its planned rounds are done, so that the A/A arm's phases resolve
// cfg.TargetResolution with 80% power at the experiment's corrected level,
// as far as cfg.MaxTime allows, in whole blocks of four (A,B,B,A); 0 when
// it is resolved, cannot be told, or no time is left. A phase model's
// standard error shrinks as one over the root of its phases, so the
// phases needed are the ones run times the square of the resolution got
// over the one asked. msg says what it decided ("" when there is nothing
// to decide).
func duetGrowth(cfg Config, arms []Arm, runs []result.Run, rounds int, spent time.Duration) (more int, msg string) {
	if cfg.TargetResolution <= 0 || !cfg.Method.Paired() || rounds == 0 {
		return 0, ""
	}
	var aa []result.Run
	m := 0
	for _, r := range runs {
		if r.Condition == AAName && r.Error == "" {
			aa = append(aa, r)
		}
	}
	for _, a := range arms {
		if a.Name != AAName { // as the summary counts its comparisons
			m++
		}
	}
	mde := analysis.DuetMDE(aa, stats.Bonferroni(analysis.FamilyAlpha, max(m, 1)))
	switch {
	case math.IsNaN(mde):
		return 0, fmt.Sprintf("resolution plan: the A/A arm's %d phases cannot tell the resolution; keeping %d phases", len(aa), rounds)
	case mde <= cfg.TargetResolution:
		return 0, fmt.Sprintf("resolution plan: %d phases resolve %.1f%% (A/A arm), within --target-resolution %g%%", rounds, mde, cfg.TargetResolution)
	}
	need := int(math.Ceil(float64(rounds)*(mde/cfg.TargetResolution)*(mde/cfg.TargetResolution)/4)) * 4
	need = min(need, maxDuetPhases)
	perRound := spent / time.Duration(rounds)
	fits := int((cfg.MaxTime-spent)/max(perRound, time.Millisecond)) / 4 * 4
	more = min(need-rounds, fits)
	if more <= 0 {
		return 0, fmt.Sprintf("resolution plan: %d phases resolve %.1f%% (A/A arm); %g%% needs about %d, which --max-time %v does not leave time for",
			rounds, mde, cfg.TargetResolution, need, cfg.MaxTime)
	}
	msg = fmt.Sprintf("resolution plan: %d phases resolve %.1f%% (A/A arm); %g%% needs about %d: %d more per arm, about %v",
		rounds, mde, cfg.TargetResolution, need, more, (time.Duration(more) * perRound).Round(time.Second))
	if more < need-rounds {
		msg += fmt.Sprintf(" (as many as --max-time %v leaves)", cfg.MaxTime)
	}
	return more, msg
}
