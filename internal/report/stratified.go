package report

import (
	"fmt"
	"io"
	"slices"

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
	fmt.Fprintln(w)
	notef(w, "query by query: each run's queries against the same queries in its round's baseline run (alternation: "+
		"each on phase's against the off phases beside it, executions wholly inside a phase), the ratios weighted "+
		"by each query's share of the baseline's latency (server CPU): the cost of the whole mix, free of which "+
		"queries happened to overlap and queue, not of the machine's speed changing between them; srv CPU added: "+
		"the server CPU an execution gains, each query weighted by its precision, so the cheapest count most "+
		"(a fixed cost per statement at its size; a cost that grows with a statement's work at a short one's)")
	// Two tables, stacked, to fit a terminal: time, then server CPU.
	time := columns{head: []string{"condition", "pairs", "time overhead % [CI]", "verdict"}, left: []bool{true, false, false, true}}
	cpu := columns{head: []string{"condition", "srv CPU/exec Δ% [CI]", "verdict", "srv CPU added µs/exec [CI]", "verdict"}, left: []bool{true, false, true, false, true}}
	var notes []string
	for _, c := range rows {
		st := c.Stratified
		cpuChange, cpuVerdict := changeCell(st.CPU), "-"
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
		time.add(c.Name, fmt.Sprint(st.Pairs), overheadCell(st.Time), shortVerdict(verdict))
		cpu.add(c.Name, cpuChange, shortVerdict(cpuVerdict), addedCell(st.CPUAdded), shortVerdict(addedVerdict))
	}
	if err := time.write(w); err != nil {
		return err
	}
	fmt.Fprintln(w)
	if err := cpu.write(w); err != nil {
		return err
	}
	for _, n := range notes {
		notef(w, "%s", n)
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
	return statementTable(w, m.Names, rows)
}
