package report

import (
	"fmt"
	"io"

	"github.com/obsbench/obsbench/internal/result"
)

// hasCounted says s holds counted figures to show beside the timed ones.
func hasCounted(s result.Summary) bool {
	return s.Counted != nil && len(s.Counted.Conditions) > 0
}

// countedFor is the counted condition a row stands for: the row of the
// same name that measures the whole observer, as the count does; nil for
// a switchable part's row, and where nothing was counted.
func countedFor(s result.Summary, row result.ConditionSummary) *result.CountedCondition {
	if row.Measures == result.MeasuresSwitchable {
		return nil
	}
	return s.Counted.Condition(row.Name)
}

// countedShort is a counted change as the narrow table shows it, its
// interval as a half-width: a counted interval is nearly symmetric
// (Counted.Conditions and -v hold its bounds).
func countedShort(s result.Summary, row result.ConditionSummary) string {
	c := countedFor(s, row)
	if c == nil {
		return "-"
	}
	if d := c.BackendChange; d != nil && d.HasCI {
		return fmt.Sprintf("%+.2f ±%.2f", d.Pct, (d.High-d.Low)/2)
	}
	return countChangeText(c.BackendChange, "")
}

// countedCells are a row's counted changes: the session's instructions
// per statement, and the server's other processes'. A row the count does
// not stand for (the baseline, an A/A arm, an observer's switchable part)
// has "-".
func countedCells(s result.Summary, row result.ConditionSummary) (session, others string) {
	c := countedFor(s, row)
	if c == nil {
		return "-", "-"
	}
	return countedChange(c.BackendChange), countedChange(c.HelperChange)
}

// countedSession is a row's counted change in the session's
// instructions per statement, with its interval.
func countedSession(s result.Summary, row result.ConditionSummary) string {
	session, _ := countedCells(s, row)
	return session
}

// countedChange is a counted change with its interval, unsigned bounds as
// the overhead's.
func countedChange(c *result.CountChange) string { return countChangeText(c, "[%.2f, %.2f]") }

// countChangeText is a counted change, two decimals (counts repeat
// closely), then its interval's bounds in the format bounds; "-" for
// none, and "(1 run)" where one round gives no interval.
func countChangeText(c *result.CountChange, bounds string) string {
	switch {
	case c == nil:
		return "-"
	case !c.HasCI:
		return fmt.Sprintf("%+.2f (1 run)", c.Pct)
	}
	return fmt.Sprintf("%+.2f "+bounds, c.Pct, c.Low, c.High)
}

// atOnce says how many sessions a counted phase ran.
func atOnce(sessions int) string {
	if sessions > 1 {
		return fmt.Sprintf("%d sessions at once", sessions)
	}
	return "one session at a time"
}

// runsEach says how many runs each condition was counted ("each" says
// each): rounds, and where some were counted more because their change
// was wider than width after those, how many at the most.
func runsEach(rounds int, width float64, conds []result.CountedCondition, each string) string {
	most := rounds
	for _, c := range conds {
		most = max(most, c.Runs)
	}
	if most == rounds {
		return fmt.Sprintf("%d run(s) %s", rounds, each)
	}
	return fmt.Sprintf("%d run(s) %s, up to %d where the first %d left a change wider than ±%g point, their interval two-stage", rounds, each, most, rounds, width)
}

// inEach says what a counted run's statement counts are of.
func inEach(sessions int) string {
	if sessions > 1 {
		return " in each session"
	}
	return ""
}

// countedNotes say under a table what its counted columns are and what
// they do not see, or why there are none.
func countedNotes(w io.Writer, s result.Summary, bullet string, halfWidth bool) {
	k := s.Counted
	switch {
	case k == nil:
		return
	case len(k.Conditions) == 0 && k.Error != "":
		fmt.Fprintf(w, "%sinstr/stmt: not counted: %s\n", bullet, k.Error)
		return
	case len(k.Conditions) == 0:
		fmt.Fprintf(w, "%sinstr/stmt: not counted: %s\n", bullet, k.Missing)
		return
	}
	interval, wideOnly := "[the 95% interval]", ""
	if halfWidth {
		interval, wideOnly = "±: half the 95% interval", " (-v)"
	}
	what, others := "the session's user-space instructions per statement", "the server's other processes' (over each counted server's life)"
	if k.Threads {
		what, others = "the user-space instructions per statement the server spent serving the session's commands", "the rest of the server's threads' (over each counted server's life)"
	}
	fmt.Fprintf(w, "%sinstr/stmt Δ%%: the change in %s, counted under valgrind after the timed runs, "+
		"%s (%d statements after %d%s, %s; %s, paired by run, each pair at a memory layout of its own); others Δ%%%s: %s.\n",
		bullet, what, atOnce(k.Sessions), k.Statements, k.Warmup, inEach(k.Sessions), runsEach(k.Rounds, k.Width, k.Conditions, "each"), interval, wideOnly, others)
	contention := "and contention between sessions"
	if k.Sessions > 1 {
		contention = "and the time sessions wait on each other (the instructions their contention costs are counted, and grow on a loaded machine)"
	}
	fmt.Fprintf(w, "%s  Not counted: the kernel (system calls, fsync), waiting (I/O, locks, a slow log device) %s; "+
		"an observer whose cost is there counts +0%% and still costs time. Every counted figure: instructions.json.\n", bullet, contention)
	if k.Error != "" {
		fmt.Fprintf(w, "%sinstr/stmt: counting stopped partway: %s\n", bullet, k.Error)
	}
}
