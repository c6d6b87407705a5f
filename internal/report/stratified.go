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
	fmt.Fprintln(w, "queries happened to overlap and queue, not of the machine's speed changing between them; srv CPU added:")
	fmt.Fprintln(w, "the server CPU an execution gains, each query weighted by its precision, so the cheapest count most")
	fmt.Fprintln(w, "(a fixed cost per statement at its size; a cost that grows with a statement's work at a short one's)")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "condition\tpairs\ttime overhead % [CI]\tverdict\tsrv CPU/exec Δ% [CI]\tverdict\tsrv CPU added µs/exec [CI]\tverdict\t")
	var notes []string
	for _, c := range rows {
		st := c.Stratified
		cpu, cpuVerdict := changeCell(st.CPU), "-"
		if st.CPU != nil {
			cpuVerdict = cpuVerdictOf(st.CPUOverhead)
		} else if st.CPUNote != "" {
			notes = append(notes, fmt.Sprintf("%s: no server CPU per execution: %s", c.Name, st.CPUNote))
		}
		verdict := "-"
		if st.Time != nil {
			verdict = st.Time.Verdict
		}
		addedVerdict := "-"
		if st.CPUAdded != nil {
			addedVerdict = st.CPUAdded.Verdict
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t\n", c.Name, st.Pairs, overheadCell(st.Time), verdict, cpu, cpuVerdict, addedCell(st.CPUAdded), addedVerdict)
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
	m := statementCells(s, func(st result.StatementLatency) (string, bool) {
		return fmt.Sprintf("%.3f", st.CPUMeanMS), st.CPUCount > 0
	})
	var rows []counterRow
	for _, r := range m.Rows {
		if slices.ContainsFunc(r.Values, func(v string) bool { return v != "-" }) {
			rows = append(rows, r)
		}
	}
	if len(rows) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\nserver CPU per statement (mean ms of the session's server process or thread, user and kernel):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  statement\t"+strings.Join(m.Names, "\t")+"\t")
	for _, r := range rows {
		fmt.Fprintln(tw, "  "+r.Name+"\t"+strings.Join(r.Values, "\t")+"\t")
	}
	return tw.Flush()
}
