// Package experiment plans and executes an experiment: rounds of runs, each
// round running every arm once in a seeded random order, each run applied,
// measured, reverted, checked and written durably before the next.
package experiment

import "math/rand/v2"

// Step is one planned run.
type Step struct {
	Round int // from 1
	Arm   int // index into the experiment's arms
}

// Plan orders the runs of arms that are repeated reps[i] times. Round r
// holds each arm with reps >= r once, shuffled with a generator seeded by
// (seed, r): slow drift of the machine then falls on all arms alike instead
// of on whichever ran last, and the same seed gives the same order.
func Plan(reps []int, seed uint64) []Step {
	var steps []Step
	for r := 1; ; r++ {
		var arms []int
		for i, n := range reps {
			if n >= r {
				arms = append(arms, i)
			}
		}
		if len(arms) == 0 {
			return steps
		}
		rng := rand.New(rand.NewPCG(seed, uint64(r)))
		for _, k := range rng.Perm(len(arms)) {
			steps = append(steps, Step{Round: r, Arm: arms[k]})
		}
	}
}

// planArms plans the experiment's arms. With a pilot, arm aa (the A/A arm)
// runs first on its own and its remaining runs are planned from round 2.
func planArms(arms []Arm, aa int, pilot bool, seed uint64) []Step {
	reps := make([]int, len(arms))
	for i, a := range arms {
		reps[i] = a.Reps
	}
	var steps []Step
	if pilot {
		steps = append(steps, Step{Round: 1, Arm: aa})
		reps[aa]--
	}
	for _, st := range Plan(reps, seed) {
		if pilot && st.Arm == aa {
			st.Round++
		}
		steps = append(steps, st)
	}
	return steps
}
