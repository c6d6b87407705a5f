package report

import (
	"fmt"
	"io"
	"slices"

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
	studyHeading(w, st)
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
	notef(w, "overhead %% [95%% CI] by target and variant (%s; - : no such variant)", basis)
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

	if err := filteredOutRound(w, targets, at, cell, byName); err != nil {
		return err
	}

	fmt.Fprintln(w, "\ncells:")
	counted := hasCounted(s)
	cells := columns{head: []string{"observer", "overhead % [CI]", "verdict", "srv CPU/exec Δ% [CI]", "srv CPU added µs/exec [CI]"}, left: []bool{true, false, true}}
	if counted {
		cells.head = append(cells.head, "instr/exec Δ% [CI]")
	}
	var notes []string
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
		row := []string{c.Observer, overheadCell(o), verdict, cpu, added}
		if counted {
			row = append(row, countedCell(s.Counted, c.Observer))
		}
		cells.add(row...)
		note := fmt.Sprintf("%s: %s, %s", c.Observer, c.Target, c.Variant)
		if cs.Events != nil {
			note += "; events " + events(cs.Events)
		}
		notes = append(notes, note)
	}
	return endCells(w, cells, notes, st)
}

// filteredOutRound writes study 3's filtered-out round: each target's
// filtered-out variant beside the target as is, with what it recorded.
func filteredOutRound(w io.Writer, targets []string, at map[[2]string]string, cell func(string) string, byName map[string]result.ConditionSummary) error {
	fmt.Fprintln(w, "\nfiltered-out round: the same target recording nothing (a filter no event passes)")
	round := columns{head: []string{"target", "as is", "filtered out", "events recorded (filtered out)"}, left: []bool{true}}
	for _, t := range targets {
		f, ok := at[[2]string{t, study.VariantFilteredOut}]
		if !ok {
			continue
		}
		asIs := "-"
		if o, ok := at[[2]string{t, study.VariantAsIs}]; ok {
			asIs = cell(o)
		}
		round.add(t, asIs, cell(f), events(byName[f].Events))
	}
	return round.writeFitted(w, 1)
}

// TargetsCounted writes study 3's tables of a counted run alone
// (--method instructions): the condensed table of counted changes, then
// each cell's observer with its change in the session's instructions and
// in the server's other processes'.
func TargetsCounted(w io.Writer, st study.Study, k *result.Counted) error {
	studyHeading(w, st)
	if err := countedMatrix(w, st, k); err != nil {
		return err
	}
	fmt.Fprintln(w, "\ncells:")
	cells := columns{head: []string{"observer", "instr/exec Δ% [CI]", otherProcesses(k.Threads) + " instr/run Δ% [CI]"}, left: []bool{true}}
	var notes []string
	for _, c := range st.Matrix {
		helpers := "-"
		if cc := k.Condition(c.Observer); cc != nil {
			helpers = countedChange(cc.HelperChange)
		}
		cells.add(c.Observer, countedCell(k, c.Observer), helpers)
		notes = append(notes, fmt.Sprintf("%s: %s, %s", c.Observer, c.Target, c.Variant))
	}
	return endCells(w, cells, notes, st)
}

// studyHeading writes a study's title and question, wrapped.
func studyHeading(w io.Writer, st study.Study) {
	notef(w, "%s", st.Title)
	notef(w, "%s", st.Question)
	fmt.Fprintln(w)
}

// endCells writes the table of cells, fitted to the width, each cell's
// note under it (its target and variant, what it recorded), and the
// study's set-ups that have no analogue on the engine.
func endCells(w io.Writer, cells columns, notes []string, st study.Study) error {
	if err := cells.writeFitted(w, 1); err != nil {
		return err
	}
	fmt.Fprintln(w)
	for _, n := range notes {
		notef(w, "%s", n)
	}
	for _, u := range st.Unmapped {
		notef(w, "not reproduced: %s", u)
	}
	return nil
}

// countedMatrix writes study 3's condensed table of counted changes, with
// the line that says what was counted.
func countedMatrix(w io.Writer, st study.Study, k *result.Counted) error {
	notef(w, "counted: change in the server's instructions per execution, %% [95%% CI] (%d statements after %d%s, %d run(s) each, under valgrind; A/A: the baseline's own runs' spread)",
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
	t := columns{head: append([]string{"target"}, st.Columns()...), left: []bool{true}}
	for _, tg := range targets {
		row := []string{tg}
		for _, v := range st.Columns() {
			c := "-"
			if o, ok := at[[2]string{tg, v}]; ok {
				c = cell(o)
			}
			row = append(row, c)
		}
		t.add(row...)
	}
	return t.writeFitted(w, 1)
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
