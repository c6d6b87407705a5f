package spec

import "testing"

// The counted runs' checks that need only the spec refuse what they say
// and pass the same settings without the contradiction.
func TestValidateCounted(t *testing.T) {
	for _, tt := range []struct {
		name  string
		edit  func(*Spec)
		check func(Spec) error
		flag  string // in the error; "" for none
	}{
		{"width at 4 first rounds", func(s *Spec) { s.Choose("count-width"); s.Count.Width, s.Count.Rounds = 0.05, 4 }, widthFrom4, ""},
		{"width at 3 first rounds", func(s *Spec) { s.Choose("count-width"); s.Count.Width, s.Count.Rounds = 0.05, 3 }, widthFrom4, "--count-rounds 3"},
		{"width of a counted experiment", func(s *Spec) {
			s.Choose("count-width")
			s.Method, s.Count.Width, s.Rounds, s.Count.Rounds = "instructions", 0.05, 3, 8
		}, widthFrom4, "--rounds 3"},
		{"width 0 is off", func(s *Spec) { s.Choose("count-width"); s.Count.Rounds = 1 }, widthFrom4, ""},
		{"width not given", func(s *Spec) { s.Count.Width, s.Count.Rounds = 0.05, 1 }, widthFrom4, ""},
		{"count off, a count flag given", func(s *Spec) { s.Choose("count-rounds") }, Spec.ValidateCountOff, "which are off unless --count is given"},
		{"count=false, a gate given", func(s *Spec) { s.Choose("count", "max-counted-overhead") }, Spec.ValidateCountOff, "--max-counted-overhead gates the counted runs, which --count=false"},
		{"count on, a count flag given", func(s *Spec) { s.Choose("count-rounds"); s.Count.After = true }, Spec.ValidateCountOff, ""},
		{"instructions with a timing flag", func(s *Spec) { s.Choose("warmup") }, Spec.ValidateInstructionsFlags, "--warmup sets timed runs"},
		{"instructions with --count-rounds", func(s *Spec) { s.Choose("count-rounds") }, Spec.ValidateInstructionsFlags, "--count and --count-rounds"},
		{"instructions with --count", func(s *Spec) { s.Choose("count"); s.Count.After = true }, Spec.ValidateInstructionsFlags, "--count and --count-rounds"},
		{"instructions with --count=false", func(s *Spec) { s.Choose("count") }, Spec.ValidateInstructionsFlags, ""},
		{"instructions with its own flags", func(s *Spec) { s.Choose("count-statements", "rounds") }, Spec.ValidateInstructionsFlags, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := valid()
			tt.edit(&s)
			checkInvalid(t, s, tt.check(s), tt.flag)
		})
	}
	s := valid()
	if got := s.ChosenCountFlag(); got != "" {
		t.Errorf("ChosenCountFlag of no count flag = %q", got)
	}
	s.Choose("count-width", "count-statements")
	if got := s.ChosenCountFlag(); got != "count-statements" {
		t.Errorf("ChosenCountFlag = %q; want the first in CountFlags' order, count-statements", got)
	}
}

func widthFrom4(s Spec) error { return s.ValidateCountWidth(4) }
