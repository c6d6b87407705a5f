package experiment

import (
	"math/rand/v2"

	"github.com/obsbench/obsbench/internal/result"
)

// Schedule cuts total seconds into alternating phases, off first and off
// last, each between minLen and maxLen seconds long (the last off phase may
// be longer, to fill the window). Lengths are random so that nothing
// periodic in the machine (a timer, a flush) lines up with the switching;
// starting and ending off gives every on phase an off phase on both sides.
func Schedule(total, minLen, maxLen int, rng *rand.Rand) []result.Phase {
	var phases []result.Phase
	at, on := 0, false
	for {
		n := minLen + rng.IntN(maxLen-minLen+1)
		rest := total - at - n
		// An on phase must leave room for a closing off phase.
		if (on && rest < minLen) || (!on && rest < 2*minLen) {
			// No room for another on phase: the rest is one closing off
			// phase (joined to the previous one if that was off too).
			phases = append(phases, result.Phase{Start: at, End: total})
			return mergeTrailing(phases)
		}
		phases = append(phases, result.Phase{Start: at, End: at + n, On: on})
		at += n
		on = !on
	}
}

// mergeTrailing joins two adjacent off phases at the end into one.
func mergeTrailing(p []result.Phase) []result.Phase {
	if n := len(p); n >= 2 && !p[n-1].On && !p[n-2].On {
		p[n-2].End = p[n-1].End
		return p[:n-1]
	}
	return p
}
