package report

import (
	"fmt"
	"io"
	"slices"
	"text/tabwriter"

	"github.com/obsbench/obsbench/internal/result"
	"github.com/obsbench/obsbench/internal/study"
)

// Targets writes study 3's condensed table: one line per target, one
// column per variant, each cell the observer's overhead % [95% CI]
// (query by query where the runs allow it, else whole runs), and the
// same table of counted changes where the study counted; then the
// filtered-out round, each target's filtered-out variant beside the
// target as is; then each cell's observer with its overhead on time and
// on server CPU, events and verdict.
func Targets(w io.Writer, st study.Study, s result.Summary) error {
	fmt.Fprintf(w, "%s\n%s\n\n", st.Title, st.Question)
	byName := conditionsByName(s)
	cell := func(observer string) string {
		c, ok := byName[observer]
		if !ok {
			return "not run"
		}
		return overheadCell(headline(c))
	}
	targets, at := matrixIndex(st)

	basis := "whole runs"
	for _, c := range s.Conditions {
		if c.Stratified != nil {
			basis = "on latency, query by query"
		}
	}
	fmt.Fprintf(w, "overhead %% [95%% CI] by target and variant (%s; - : no such variant)\n", basis)
	if err := matrixTable(w, st, targets, at, cell); err != nil {
		return err
	}

	if hasCounted(s) {
		// What the observer adds to the work of a statement, unmoved by
		// the machine's drift, which the timed cell cannot tell from
		// noise when it is small.
		fmt.Fprintln(w)
		if err := countedMatrix(w, st, s.Counted); err != nil {
			return err
		}
	}

	fmt.Fprintln(w, "\nfiltered-out round: the same target recording nothing (a filter no event passes)")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "target\tas is\tfiltered out\tevents recorded (filtered out)")
	for _, t := range targets {
		f, ok := at[[2]string{t, study.VariantFilteredOut}]
		if !ok {
			continue
		}
		asIs := "-"
		if o, ok := at[[2]string{t, study.VariantAsIs}]; ok {
			asIs = cell(o)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", t, asIs, cell(f), events(byName[f].Events))
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	fmt.Fprintln(w, "\ncells:")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	counted := hasCounted(s)
	countedHead := ""
	if counted {
		countedHead = "\tinstr/exec Δ% [CI]"
	}
	fmt.Fprintf(tw, "  target, variant\tobserver\toverhead %% [CI]\tsrv CPU/exec Δ%% [CI]\tsrv CPU added µs/exec [CI]%s\tevents rec/exec\tverdict\t\n", countedHead)
	for _, c := range st.Matrix {
		cs := byName[c.Observer]
		o, cpu, added := headline(cs), "-", "-"
		if x := cs.Stratified; x != nil && x.CPU != nil {
			cpu, added = changeCell(x.CPU), addedCell(x.CPUAdded)
		} else if d := cs.CPUChange; d != nil {
			cpu = changeCell(d) + " (whole runs)"
		}
		verdict := "-"
		if o != nil {
			verdict = o.Verdict
		}
		if counted {
			added += "\t" + countedCell(s.Counted, c.Observer)
		}
		fmt.Fprintf(tw, "  %s, %s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", c.Target, c.Variant, c.Observer, overheadCell(o), cpu, added, events(cs.Events), verdict)
	}
	return endCells(w, tw, st)
}

// TargetsCounted writes study 3's tables of a counted run alone
// (--method instructions): the condensed table of counted changes, then
// each cell's observer with its change in the session's instructions and
// in the server's other processes'.
func TargetsCounted(w io.Writer, st study.Study, k *result.Counted) error {
	fmt.Fprintf(w, "%s\n%s\n\n", st.Title, st.Question)
	if err := countedMatrix(w, st, k); err != nil {
		return err
	}
	fmt.Fprintln(w, "\ncells:")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  target, variant\tobserver\tinstr/exec Δ%% [CI]\t%s instr/run Δ%% [CI]\t\n", otherProcesses(k.Threads))
	for _, c := range st.Matrix {
		helpers := "-"
		if cc := k.Condition(c.Observer); cc != nil {
			helpers = countedChange(cc.HelperChange)
		}
		fmt.Fprintf(tw, "  %s, %s\t%s\t%s\t%s\t\n", c.Target, c.Variant, c.Observer, countedCell(k, c.Observer), helpers)
	}
	return endCells(w, tw, st)
}

// endCells flushes the table of cells tw and writes under it the
// study's set-ups that have no analogue on the engine.
func endCells(w io.Writer, tw *tabwriter.Writer, st study.Study) error {
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, u := range st.Unmapped {
		fmt.Fprintf(w, "not reproduced: %s\n", u)
	}
	return nil
}

// countedMatrix writes study 3's condensed table of counted changes, with
// the line that says what was counted.
func countedMatrix(w io.Writer, st study.Study, k *result.Counted) error {
	fmt.Fprintf(w, "counted: change in the server's instructions per execution, %% [95%% CI] (%d statements after %d%s, %d run(s) each, under valgrind; A/A: the baseline's own runs' spread)\n",
		k.Statements, k.Warmup, inEach(k.Sessions), k.Rounds)
	targets, at := matrixIndex(st)
	return matrixTable(w, st, targets, at, func(o string) string { return countedCell(k, o) })
}

// matrixIndex is study 3's matrix as its targets in table order and, by
// target and variant, the observer of each cell.
func matrixIndex(st study.Study) (targets []string, at map[[2]string]string) {
	at = map[[2]string]string{}
	for _, c := range st.Matrix {
		if !slices.Contains(targets, c.Target) {
			targets = append(targets, c.Target)
		}
		at[[2]string{c.Target, c.Variant}] = c.Observer
	}
	return targets, at
}

// headline is the overhead a study cell shows: query by query on latency
// where the runs allow it (a mix whose statements are named), else the
// whole runs'.
func headline(c result.ConditionSummary) *result.OverheadSummary {
	if st := c.Stratified; st != nil && st.Time.Measured() {
		return st.Time
	}
	return c.Overhead
}

// matrixTable writes study 3's condensed table: a line per target, a
// column per variant, each cell what cell says of its observer ("-"
// where the target has no such variant).
func matrixTable(w io.Writer, st study.Study, targets []string, at map[[2]string]string, cell func(observer string) string) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "target")
	for _, v := range st.Columns() {
		fmt.Fprintf(tw, "\t%s", v)
	}
	fmt.Fprintln(tw)
	for _, t := range targets {
		fmt.Fprint(tw, t)
		for _, v := range st.Columns() {
			c := "-"
			if o, ok := at[[2]string{t, v}]; ok {
				c = cell(o)
			}
			fmt.Fprintf(tw, "\t%s", c)
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

// countedCell is observer's counted change in a study table: the A/A
// cell (no counted condition of its own) shows how far the baseline's
// runs spread, the least change the counts can tell.
func countedCell(k *result.Counted, observer string) string {
	if c := k.Condition(observer); c != nil {
		return countedChange(c.BackendChange)
	}
	if observer == result.AAName || observer == "baseline-again" {
		if b := k.Condition("baseline"); b != nil && b.Runs > 1 {
			return fmt.Sprintf("spread %.3f%%", b.BackendSpreadPct)
		}
	}
	return "not counted"
}
