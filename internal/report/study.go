package report

import (
	"fmt"
	"io"
	"text/tabwriter"

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

// Study writes a study's own table: each set-up with the original set-up
// it stands for, throughput, overhead, top waits with signatures marked,
// and events recorded against statements executed.
func Study(w io.Writer, st study.Study, s result.Summary) error {
	fmt.Fprintf(w, "%s\n%s\n\n", st.Title, st.Question)
	byName := conditionsByName(s)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "set-up\tstands for\tstmts/s\toverhead % [CI]\ttop waits, % of samples (* = signature)\tevents rec/exec")
	for _, r := range st.Rows {
		c, ok := byName[r.Observer]
		if !ok {
			fmt.Fprintf(tw, "%s\t%s\tnot run\n", r.Observer, r.Original)
			continue
		}
		ov := overheadCell(c.Overhead)
		waits, sig := "-", ""
		if c.Waits != nil {
			waits = WaitLine(c.Waits, studyWaits)
			if c.Overhead != nil && c.Overhead.Significant && len(c.Waits.Signatures) == 0 {
				sig = " (no signature)"
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s%s\t%s\n", r.Observer, r.Original, thousands(c.Throughput.Median), ov, waits, sig, events(c.Events))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, u := range st.Unmapped {
		fmt.Fprintf(w, "not reproduced: %s\n", u)
	}
	return nil
}
