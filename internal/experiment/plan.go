// Package experiment plans and executes an experiment: rounds of runs, each
// round running every condition once in a seeded random order, each run
// applied, measured, reverted, checked and written durably before the next.
package experiment

import "math/rand/v2"

// Step is one planned run.
type Step struct {
	Round     int // from 1
	Condition int // index into the experiment's conditions
}

// Plan orders rounds x conditions. Every round holds each condition once,
// shuffled with a generator seeded by (seed, round): slow drift of the
// machine then falls on all conditions alike instead of on whichever ran
// last, and the same seed gives the same order.
func Plan(conditions, rounds int, seed uint64) []Step {
	steps := make([]Step, 0, conditions*rounds)
	for r := 1; r <= rounds; r++ {
		rng := rand.New(rand.NewPCG(seed, uint64(r)))
		for _, c := range rng.Perm(conditions) {
			steps = append(steps, Step{Round: r, Condition: c})
		}
	}
	return steps
}
