package spec

// The checks of the counted runs that the spec alone can tell, which the
// experiment makes in its order among those that need the workload and
// the engine (app's checkCounting).

// CountFlags set or gate the counted runs.
var CountFlags = []string{"count", "count-statements", "count-warmup", "count-rounds", "count-sessions", "count-shrink", "count-per-query", "count-width", "max-counted-overhead"}

// ValidateCountWidth refuses a --count-width given where fewer than
// minRounds first rounds are counted, too few to plan more from.
func (s Spec) ValidateCountWidth(minRounds int) error {
	if !s.IsChosen("count-width") || s.Count.Width == 0 {
		return nil
	}
	flag, rounds := "--count-rounds", s.Count.Rounds
	if s.Method.Counted() {
		flag, rounds = "--rounds", s.Rounds
	}
	if rounds < minRounds {
		return Invalidf("--count-width %g: more rounds are planned from %d first rounds or more, and %s %d counts %d", s.Count.Width, minRounds, flag, rounds, rounds)
	}
	return nil
}

// ChosenCountFlag is the first count flag given, "" if none.
func (s Spec) ChosenCountFlag() string {
	for _, f := range CountFlags {
		if s.IsChosen(f) {
			return f
		}
	}
	return ""
}

// ValidateCountOff refuses a count flag other than --count given where
// a timed experiment counts nothing (Count.After false).
func (s Spec) ValidateCountOff() error {
	if s.Count.After {
		return nil
	}
	for _, f := range CountFlags[1:] {
		verb := "sets"
		if f == "max-counted-overhead" {
			verb = "gates"
		}
		switch {
		case !s.IsChosen(f):
		case s.IsChosen("count"):
			return Invalidf("--%s %s the counted runs, which --count=false leaves out", f, verb)
		default:
			return Invalidf("--%s %s the counted runs, which are off unless --count is given", f, verb)
		}
	}
	return nil
}

// ValidateInstructionsFlags refuses the settings of timed runs, and a
// counted part added to them, in a counted experiment (--method
// instructions).
func (s Spec) ValidateInstructionsFlags() error {
	for _, f := range TimingFlags {
		if s.IsChosen(f) {
			return Invalidf("--%s sets timed runs; --method instructions counts a fixed number of statements in a fixed number of sessions (--count-statements, --count-warmup, --count-sessions)", f)
		}
	}
	if s.IsChosen("count-rounds") || (s.IsChosen("count") && s.Count.After) {
		return Invalidf("--count and --count-rounds add a counted part to a timed experiment; --method instructions counts alone, --rounds times each condition")
	}
	return nil
}
