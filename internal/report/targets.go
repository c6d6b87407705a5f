package report

import (
	"fmt"
	"io"
	"slices"
	"text/tabwriter"

	"github.com/obsbench/obsbench/internal/result"
)

// Targets writes study 3's condensed table: one line per target, one
// column per variant, each cell the observer's overhead % [95% CI]; then
// the filtered-out round, each target's filtered-out variant beside the
// target as is; then which observer each cell is.
func Targets(w io.Writer, st StudyTable, s result.Summary) error {
	fmt.Fprintf(w, "%s\n%s\n\n", st.Title, st.Question)
	byName := conditionsByName(s)
	cell := func(observer string) string {
		c, ok := byName[observer]
		if !ok {
			return "not run"
		}
		return overheadCell(c.Overhead)
	}
	var targets []string
	at := map[[2]string]string{} // target, variant -> observer
	for _, c := range st.Matrix {
		if !slices.Contains(targets, c.Target) {
			targets = append(targets, c.Target)
		}
		at[[2]string{c.Target, c.Variant}] = c.Observer
	}

	fmt.Fprintln(w, "overhead % [95% CI] by target and variant (- : no such variant)")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "target")
	for _, v := range st.Columns {
		fmt.Fprintf(tw, "\t%s", v)
	}
	fmt.Fprintln(tw)
	for _, t := range targets {
		fmt.Fprint(tw, t)
		for _, v := range st.Columns {
			o, ok := at[[2]string{t, v}]
			if !ok {
				fmt.Fprint(tw, "\t-")
				continue
			}
			fmt.Fprintf(tw, "\t%s", cell(o))
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	fmt.Fprintln(w, "\nfiltered-out round: the same target recording nothing (a filter no event passes)")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "target\tas is\tfiltered out\tevents recorded (filtered out)")
	for _, t := range targets {
		f, ok := at[[2]string{t, VariantFilteredOut}]
		if !ok {
			continue
		}
		asIs := "-"
		if o, ok := at[[2]string{t, VariantAsIs}]; ok {
			asIs = cell(o)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", t, asIs, cell(f), events(byName[f].Events))
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	fmt.Fprintln(w, "\ncells:")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, c := range st.Matrix {
		fmt.Fprintf(tw, "  %s, %s\t%s\tevents rec/exec %s\n", c.Target, c.Variant, c.Observer, events(byName[c.Observer].Events))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, u := range st.Unmapped {
		fmt.Fprintf(w, "not reproduced: %s\n", u)
	}
	return nil
}
