package report

import (
	"fmt"
	"io"

	"github.com/obsbench/obsbench/internal/result"
	"github.com/obsbench/obsbench/internal/study"
)

// studyWaits is how many waits a study row shows.
const studyWaits = 3

// conditionsByName indexes s's conditions by name.
func conditionsByName(s result.Summary) map[string]result.ConditionSummary {
	by := make(map[string]result.ConditionSummary, len(s.Conditions))
	for _, c := range s.Conditions {
		by[c.Name] = c
	}
	return by
}

// Study writes a study's own table: each set-up's throughput, overhead
// and events recorded against statements executed; then, a line each,
// the original set-up it stands for and its top waits, signatures marked.
// Every line fits textWidth.
func Study(w io.Writer, st study.Study, s result.Summary) error {
	studyHeading(w, st)
	byName := conditionsByName(s)
	t := columns{head: []string{"set-up", "stmts/s", "overhead % [CI]", "events rec/exec"}, left: []bool{true}}
	for _, r := range st.Rows {
		c, ok := byName[r.Observer]
		if !ok {
			t.add(r.Observer, "not run")
			continue
		}
		t.add(r.Observer, thousands(c.Throughput.Median), overheadCell(c.Overhead), events(c.Events))
	}
	if err := t.write(w); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nwhat each set-up stands for; its top waits, % of samples (the baseline's), * a signature:")
	for _, r := range st.Rows {
		line := r.Observer + ": " + r.Original
		if c, ok := byName[r.Observer]; ok && c.Waits != nil {
			line += "; waits: " + WaitLine(c.Waits, studyWaits)
			if c.Overhead != nil && c.Overhead.Significant && len(c.Waits.Signatures) == 0 {
				line += " (no signature)"
			}
		}
		notef(w, "%s", line)
	}
	for _, u := range st.Unmapped {
		notef(w, "not reproduced: %s", u)
	}
	return nil
}
