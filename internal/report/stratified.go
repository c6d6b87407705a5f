package report

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/obsbench/obsbench/internal/result"
)

// Stratified prints the comparison query by query of a mix's conditions
// (analysis' stratified estimate): overhead on latency and change of
// server CPU per execution, each with its interval and verdict; then each
// query's server CPU per execution by condition. Nothing for workloads
// that do not name their statements.
func Stratified(w io.Writer, s result.Summary) error {
	var rows []result.ConditionSummary
	for _, c := range s.Conditions {
		if c.Stratified != nil {
			rows = append(rows, c)
		}
	}
	if len(rows) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\nquery by query: each run's queries against the same queries in its round's baseline run (alternation:")
	fmt.Fprintln(w, "each on phase's against the off phases beside it, executions wholly inside a phase), the ratios weighted")
	fmt.Fprintln(w, "by each query's share of the baseline's latency (server CPU): the cost of the whole mix, free of which")
	fmt.Fprintln(w, "queries happened to overlap and queue, not of the machine's speed changing between them")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "condition\tpairs\ttime overhead % [CI]\tverdict\tsrv CPU/exec Δ% [CI]\tverdict\t")
	var notes []string
	for _, c := range rows {
		st := c.Stratified
		cpu, cpuVerdict := "-", "-"
		if st.CPU != nil {
			cpu = fmt.Sprintf("%+.1f [%+.1f, %+.1f]", st.CPU.Pct, st.CPU.CILow, st.CPU.CIHigh)
			cpuVerdict = cpuVerdictOf(st.CPUOverhead)
		} else if st.CPUNote != "" {
			notes = append(notes, fmt.Sprintf("%s: no server CPU per execution: %s", c.Name, st.CPUNote))
		}
		verdict := "-"
		if st.Time != nil {
			verdict = st.Time.Verdict
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t\n", c.Name, st.Pairs, overheadCell(st.Time), verdict, cpu, cpuVerdict)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, n := range notes {
		fmt.Fprintln(w, n)
	}
	return serverCPUMatrix(w, s)
}

// cpuVerdictOf words a CPU comparison's verdict as more or less CPU.
func cpuVerdictOf(o *result.OverheadSummary) string {
	switch {
	case o == nil:
		return "-"
	case o.Verdict == "slower":
		return "more CPU"
	case o.Verdict == "faster":
		return "less CPU"
	}
	return o.Verdict
}

// serverCPUMatrix prints each statement's mean server CPU per condition,
// where the driver read it.
func serverCPUMatrix(w io.Writer, s result.Summary) error {
	var names []string
	var stmts []string
	for _, c := range s.Conditions {
		names = append(names, c.Name)
		for _, st := range c.Statements {
			if st.CPUCount > 0 && !slices.Contains(stmts, st.Statement) {
				stmts = append(stmts, st.Statement)
			}
		}
	}
	if len(stmts) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\nserver CPU per statement (mean ms of the session's server process or thread, user and kernel):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  statement\t"+strings.Join(names, "\t")+"\t")
	for _, name := range stmts {
		fmt.Fprint(tw, "  "+name)
		for _, c := range s.Conditions {
			cell := "-"
			for _, st := range c.Statements {
				if st.Statement == name && st.CPUCount > 0 {
					cell = fmt.Sprintf("%.3f", st.CPUMeanMS)
				}
			}
			fmt.Fprint(tw, "\t"+cell)
		}
		fmt.Fprintln(tw, "\t")
	}
	return tw.Flush()
}
