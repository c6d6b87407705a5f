package app

import (
	"fmt"
	"slices"
	"strings"

	"github.com/obsbench/obsbench/internal/experiment"
)

// Flags that only one method uses: given to an experiment whose plan has
// no condition of that method, they would change nothing, silently.
var (
	roundsFlags      = []string{"rounds", "duration"}
	alternationFlags = []string{"alt-duration", "alt-rounds", "phase-min", "phase-max", "target-resolution", "max-time"}
)

// unusedFlags names the given flags that none of the experiment's arms
// uses, as warnings.
func unusedFlags(c Experiment, arms []experiment.Arm) []string {
	rounds, alternation := false, false
	for _, a := range arms {
		if a.Method == experiment.MethodAlternation {
			alternation = true
		} else {
			rounds = true
		}
	}
	var warns []string
	if given := c.givenOf(roundsFlags); !rounds && len(given) > 0 {
		warns = append(warns, fmt.Sprintf("%s: no condition runs in rounds (every observer of this run alternates), so they change nothing; --method rounds measures in rounds",
			strings.Join(given, " ")))
	}
	altFlags := alternationFlags
	// A duet takes --max-time as its phases' budget, or with
	// --target-resolution as their cap.
	if growing := c.Method.Twins() && c.TargetResolution > 0; growing || c.duetBudgeted() {
		altFlags = slices.DeleteFunc(slices.Clone(altFlags), func(f string) bool { return f == "max-time" || (growing && f == "target-resolution") })
	}
	if given := c.givenOf(altFlags); !alternation && len(given) > 0 {
		warns = append(warns, fmt.Sprintf("%s: no condition alternates (--method %s), so they change nothing", strings.Join(given, " "), c.Method))
	}
	if c.ClosedLoop && !c.OpensByDefault(c.wl.FixedWork()) {
		warns = append(warns, "--closed-loop changes nothing: this run is a closed loop anyway (only a duet on managed twins runs at --load 50 unless told otherwise)")
	}
	return warns
}

// givenOf lists those of names that were given, with their values.
func (c Experiment) givenOf(names []string) []string {
	values := map[string]string{
		"rounds": fmt.Sprint(c.Rounds), "duration": c.Duration.String(), "alt-duration": c.Alternation.Duration.String(),
		"alt-rounds": fmt.Sprint(c.Alternation.Reps), "phase-min": fmt.Sprint(c.Alternation.PhaseMin), "phase-max": fmt.Sprint(c.Alternation.PhaseMax),
		"target-resolution": fmt.Sprint(c.TargetResolution), "max-time": c.MaxTime.String(),
	}
	var out []string
	for _, n := range names {
		if c.IsChosen(n) {
			out = append(out, "--"+n+" "+values[n])
		}
	}
	return out
}
