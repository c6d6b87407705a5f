package studyrun

import (
	"strings"

	"github.com/obsbench/obsbench/internal/spec"
	"github.com/obsbench/obsbench/internal/study"
)

// countedOnly is study st's experiment s as its counted part alone, for
// --method instructions: the same conditions, statements, sessions and
// dataset as the counted part that follows the study's timed runs, with
// the study's timed settings that the user did not give left out, and
// the counted rounds unless the user gave --rounds. On a machine too
// noisy for the timed part, this is the part that still answers.
func countedOnly(st study.Study, s spec.Spec, user spec.Chosen) (spec.Spec, error) {
	if st.Count == nil {
		return s, spec.Invalidf("--method instructions: study %s has no counted part (studies that count: %s); count its observers with 'obsbench run --method instructions'", st.Name, strings.Join(countingStudies(st.Engine), ", "))
	}
	for _, f := range append([]string{"rounds"}, spec.TimingFlags...) {
		if !user[f] {
			s.Unchoose(f)
		}
	}
	s.Count.After = false
	return s, nil
}

// countingStudies names engine's studies that count their conditions.
func countingStudies(engine string) []string {
	var out []string
	for _, name := range study.Names(engine) {
		if st, err := study.Lookup(engine, name); err == nil && st.Count != nil {
			out = append(out, name)
		}
	}
	return out
}
