// Package report renders for people what obsbench measures: a Summary (a
// terminal table), and an experiment's progress as it runs. It only
// formats: every figure of a Summary comes computed in it.
package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/obsbench/obsbench/internal/result"
)

// Text writes s as a terminal shows it, every line within textWidth
// columns: per condition the figures that answer "what does it cost"
// (overhead, verdict, the server CPU added, the counted or timed change
// per statement), then what each side ran and recorded (throughput, p99,
// events recorded of executed), a line in words per observer, and the
// notes. TextWide has the other columns, in one wide table.
func Text(w io.Writer, s result.Summary) error { return text(w, s, false) }

// TextWide is Text with every column: the reference's statements/s, the
// median latency, the CPU of server and driver, the workers and the duet
// twins' CPU.
func TextWide(w io.Writer, s result.Summary) error { return text(w, s, true) }

func text(w io.Writer, s result.Summary, wide bool) error {
	for _, line := range wrapWords(headingWords(s), textWidth, "", "  ") {
		fmt.Fprintln(w, line)
	}
	fmt.Fprintln(w)
	l := layoutOf(s, wide)
	if wide {
		if err := l.wideTable(w, s); err != nil {
			return err
		}
	} else if err := l.tables(w, s); err != nil {
		return err
	}
	wrapped(w, func(w io.Writer) { l.legend(w, s) })
	if err := details(w, s, wide); err != nil {
		return err
	}
	fmt.Fprintln(w)
	wrapped(w, func(w io.Writer) {
		methodNotes(w, s, wide)
		l.closingNotes(w, s)
	})
	return nil
}

// textLayout is what decides the text tables' columns.
type textLayout struct {
	wide bool
	// over is the "measures, over" every observer's row shares, "" when
	// rows differ (a column then), "-" when no row has one.
	over string
	// counted: counted figures take the cost table's last column; the
	// timed CPU per statement answers the same question less precisely,
	// and moves to -v.
	counted bool
	// costs: a duet's server cost sits beside the overhead, the µs of
	// server CPU the observer added to a statement and that as the
	// server's share, which a CPU-bound server with remote clients loses.
	costs bool
	// atRate: the runs were driven at a fixed rate. The share of the
	// server cost is then the overhead itself (X/(S+X) both), and shows
	// in -v only; the latency that counts is the rate table's.
	atRate bool
	// side names whose statements the runs table's throughput and p99
	// are: "twin" (a duet's), "group" (a split's), "side" (both), ""
	// (the condition's runs).
	side string
}

func layoutOf(s result.Summary, wide bool) textLayout {
	l := textLayout{wide: wide, over: sharedMeasures(s), counted: hasCounted(s), costs: hasServerCost(s), atRate: askedRate(s) > 0}
	if !hasMeasures(s) {
		l.over = "-"
	}
	switch split, duet := uses(s, result.MethodSplit), uses(s, result.MethodDuet); {
	case split && duet:
		l.side = "side"
	case split:
		l.side = "group"
	case duet:
		l.side = "twin"
	}
	return l
}

// sided is a runs table's label for the figures of the observer's side.
func (l textLayout) sided(label string) string {
	if l.side == "" {
		return label
	}
	return l.side + " " + label
}

// tables writes the default report's two tables, stacked, each row a
// condition's: what it costs, then what its side ran and recorded; and
// under them a line in words per observer.
func (l textLayout) tables(w io.Writer, s result.Summary) error {
	last := "CPU/stmt Δ%"
	if l.counted {
		last = "instr/stmt Δ%"
	}
	cost := columns{head: []string{"condition", "overhead % [CI]", "verdict"}, left: []bool{true, false, true}}
	switch {
	case l.costs && l.atRate:
		cost.head = append(cost.head, "srv +µs/stmt")
	case l.costs:
		cost.head = append(cost.head, "srv +µs/stmt (share)")
	}
	cost.head = append(cost.head, last)
	runs := columns{head: []string{"condition"}, left: []bool{true}}
	if l.over == "" {
		runs.head, runs.left = append(runs.head, "measures, over"), append(runs.left, true)
	}
	runs.head = append(runs.head, l.sided("stmts/s"), l.sided("p99 ms"), "events rec/exec")
	for _, c := range s.Conditions {
		ov, _, _ := overheadCells(c)
		row := []string{c.Name, ov, shortVerdict(verdictCell(c))}
		switch {
		case l.costs && l.atRate:
			row = append(row, serverAddedCell(c.ServerCost))
		case l.costs:
			row = append(row, serverCostCell(c.ServerCost, false))
		}
		last := shortChange(c.CPUChange)
		if l.counted {
			last = countedShort(s, c)
		}
		cost.add(append(row, last)...)
		row = []string{c.Name}
		if l.over == "" {
			row = append(row, measuresCell(c))
		}
		// How many events were lost is in -v: the column stays narrow.
		runs.add(append(row, thousands(c.Throughput.Median), fmt.Sprintf("%.3f", c.LatencyMS.P99), eventsCell(c.Events, false))...)
	}
	if err := cost.write(w); err != nil {
		return err
	}
	fmt.Fprintln(w)
	if err := runs.write(w); err != nil {
		return err
	}
	if lines := readings(s); len(lines) > 0 {
		fmt.Fprintln(w)
		for _, words := range lines {
			for _, line := range wrapWords(words, textWidth, "", "  ") {
				fmt.Fprintln(w, line)
			}
		}
	}
	return nil
}

// wideTable writes -v's table: every column, a row per condition.
func (l textLayout) wideTable(w io.Writer, s result.Summary) error {
	t := columns{head: []string{"condition", "measures, over", "stmts/s", "ref stmts/s", "overhead % [CI]", "verdict"},
		left: []bool{true, true, false, false, false, true}}
	if l.costs {
		t.head = append(t.head, "srv +µs/stmt [CI]", "srv share % [CI]")
	}
	t.head = append(t.head, l.sided("p50 ms"), l.sided("p99 ms"), "events rec/exec", "server CPU", "driver CPU", "srv µs/stmt", "srv CPU/stmt Δ% [CI]")
	if l.counted {
		t.head = append(t.head, "instr/stmt Δ% [CI]", "others Δ% [CI]")
	}
	for _, c := range s.Conditions {
		ov, verdict, ref := overheadCells(c)
		row := []string{c.Name, measuresCell(c), thousands(c.Throughput.Median), ref, ov, verdict}
		if l.costs {
			row = append(row, strings.Split(serverCostCell(c.ServerCost, true), "\t")...)
		}
		row = append(row, fmt.Sprintf("%.3f", c.LatencyMS.P50), fmt.Sprintf("%.3f", c.LatencyMS.P99), events(c.Events),
			pct(c.CPU.ServerPct), fmt.Sprintf("%.0f%%", c.CPU.DriverPct), perStmt(c.CPU.ServerUSPerStmt), changeCell(c.CPUChange))
		if l.counted {
			session, others := countedCells(s, c)
			row = append(row, session, others)
		}
		t.add(row...)
	}
	return t.write(w)
}

// shortVerdict is a verdict as the default table words it, its interval
// beside it: "not resolved" where the interval holds no change, a reason
// not measured left to the line in words under the table.
func shortVerdict(v string) string {
	switch {
	case v == "no detectable difference":
		return "not resolved"
	case strings.HasPrefix(v, "too few "):
		return strings.TrimSuffix(v, " to tell")
	case strings.HasPrefix(v, "not measured"):
		return "not measured"
	}
	return v
}

// verdictLegend says what the default tables' verdicts mean.
const verdictLegend = "verdict: slower or faster where the interval excludes no change; not resolved where it holds it " +
	"(the cost lies anywhere in the interval, 0 included); too few samples (or runs): too few for any interval to exclude it."

// serverAddedCell is a duet condition's server CPU added to a statement
// at a rate, where its share is the overhead.
func serverAddedCell(c *result.ServerCost) string {
	if c == nil {
		return "-"
	}
	return fmt.Sprintf("%+.2f", c.Added.US)
}

// legend says under the tables what their rows and columns mean, and
// which conditions had failed runs: a line each, wrapped by Text.
func (l textLayout) legend(w io.Writer, s result.Summary) {
	wide := l.wide
	if !wide || hasMeasures(s) {
		fmt.Fprintln(w)
	}
	if !wide {
		for _, c := range s.Conditions {
			if c.Failed > 0 {
				fmt.Fprintf(w, "%s: %d of its runs failed; its figures are over the others\n", c.Name, c.Failed)
			}
		}
	}
	if hasMeasures(s) {
		measuresLegend(w, s, wide, l.over)
	}
	cpuBasisNote(w, s)
	rateLegend(w, s)
	if wide {
		return
	}
	fmt.Fprintln(w, verdictLegend)
	if !l.counted {
		fmt.Fprintln(w, "CPU/stmt Δ%: the change in the server's CPU time per statement, observer on against off [interval at the level the method line names].")
	}
	if l.costs {
		head, whose := "srv +µs/stmt (share)", "twin against twin, from each twin server's own CPU accounting"
		switch split, duet := uses(s, result.MethodSplit), uses(s, result.MethodDuet); {
		case split && duet:
			whose = "twin against twin from each twin server's own CPU accounting, or in a split's rows group against group from each session's backend's CPU"
		case split:
			whose = "group against group, from each session's backend's CPU"
		}
		share := "and that as a share of its server CPU per statement: what a CPU-bound server whose clients run elsewhere loses (intervals: -v)."
		if l.atRate {
			head = "srv +µs/stmt"
			share = "as a share of its server CPU per statement it is the overhead % (-v: that share estimated on its own, and the intervals)."
		}
		fmt.Fprintf(w, "%s: the server CPU the observer added to a statement, %s; %s\n", head, whose, share)
	}
	l.runsLegend(w)
}

// runsLegend says whose statements the runs table's throughput and p99
// are, and where the latency at a rate is.
func (l textLayout) runsLegend(w io.Writer) {
	var what []string
	switch l.side {
	case "twin":
		what = append(what, "the observer's twin's statements (the A/A arm's: one twin's), each timed from its send, under its server's CPU quota: "+
			"its p99 holds the wait for the next quota period, in both twins alike")
	case "group", "side":
		what = append(what, "the statements of the observer's "+l.side+" (its twin's, or its group of sessions'), each timed from its send")
	case "":
		if !l.atRate {
			return
		}
		what = append(what, "each statement timed from its send")
	}
	if l.atRate {
		what = append(what, "at a fixed rate the latency that counts, from each unit's scheduled start, is the rate table's below")
	}
	fmt.Fprintf(w, "%s, %s: %s.\n", l.sided("stmts/s"), l.sided("p99 ms"), strings.Join(what, "; "))
}

// measuresLegend says what "measures" and "over" mean: in a sentence
// where every observer's row measures the same over the same, else for
// the column that says it of each.
func measuresLegend(w io.Writer, s result.Summary, wide bool, over string) {
	if !wide && over != "" {
		fmt.Fprintln(w, measuresSentence(s, " (named below)"))
		return
	}
	fmt.Fprintln(w, "measures: whole = the observer switched on from the server as it was (restart and preloaded library included); "+
		"switchable = only what a reload switches, the rest in force on both sides (named below).")
	if uses(s, result.MethodSplit) {
		fmt.Fprintln(w, "  per-session = what the observer costs the sessions it is set in; what both groups of sessions share (a preloaded "+
			"library, the log's collector, a sink) falls on both and is in neither (the row's method line names it).")
	}
	if !wide {
		fmt.Fprintln(w, "over: what every figure of the row is over (whole runs, or on phases without their first second).")
		return
	}
	ref := "or the baseline runs next to each run"
	switch {
	case uses(s, result.MethodSplit) && uses(s, result.MethodDuet):
		ref = "the twin server or the group of sessions without the observer in the same seconds"
	case uses(s, result.MethodSplit):
		ref = "the baseline runs next to each run, or the group of sessions without the observer in the same seconds"
	case uses(s, result.MethodDuet):
		ref = "the baseline runs next to each run, or the twin server without the observer in the same seconds"
	}
	fmt.Fprintf(w, "over: what every figure of the row is over (whole runs, or on phases without their first second); "+
		"ref stmts/s: the same over what the overhead compares with (the off phases next to each on phase, %s).\n", ref)
}

// measuresSentence says in words what every observer's row measures and
// over what, when all say the same; named says where a switchable
// part's report names what stays in force.
func measuresSentence(s result.Summary, named string) string {
	var c result.ConditionSummary
	for _, c = range s.Conditions {
		if c.Measures != "" {
			break
		}
	}
	what := c.Measures
	switch c.Measures {
	case result.MeasuresWhole:
		what = "of the whole observer, switched on from the server as it was (its restart and preloaded library included)"
	case result.MeasuresSwitchable:
		what = "of only what a reload switches, the rest of the observer in force on both sides" + named
	case result.MeasuresPerSession:
		what = "the observer puts on the sessions it is set in (what both groups of sessions share, a preloaded library, " +
			"the log's collector or a sink, falls on both and is in neither: the method line names it)"
	}
	window, qualifier, _ := strings.Cut(c.Window, ";")
	over := "whole runs"
	if window == result.WindowOnPhases {
		over = "its on phases, each without its first second"
	}
	if q := strings.TrimSpace(qualifier); q != "" {
		over += " (" + q + ")"
	}
	return fmt.Sprintf("Every observer's row is the cost %s, over %s.", what, over)
}

// details are the sections after the table: counted notes, waits,
// counters, workers, the duet's twins, statements, strata.
func details(w io.Writer, s result.Summary, wide bool) error {
	wrapped(w, func(w io.Writer) { countedNotes(w, s, "", !wide) })
	if s.Counted != nil {
		queryCounts(w, s.Counted.Conditions)
	}
	if err := Rate(w, s); err != nil {
		return err
	}
	Waits(w, s)
	Counters(w, s)
	if wide || scaledOut(s) {
		Workers(w, s)
	}
	if wide {
		wrapped(w, func(w io.Writer) { Duet(w, s) })
	}
	if err := Statements(w, s); err != nil {
		return err
	}
	return Stratified(w, s)
}

// methodNotes say how each row was measured, the experiment's resolution
// or noise floor, and the statistics.
func methodNotes(w io.Writer, s result.Summary, wide bool) {
	same := sameMethod(s)
	if same != "" && !wide {
		fmt.Fprintf(w, "every row: %s\n", same)
	}
	for _, c := range s.Conditions {
		if c.Method != "" && (same == "" || wide) {
			fmt.Fprintf(w, "%s: %s\n", c.Name, c.Method)
		}
		if _, rest, ok := strings.Cut(c.Window, ";"); ok {
			fmt.Fprintf(w, "%s*: %s\n", c.Name, strings.TrimSpace(rest))
		}
	}
	if s.MDEPct != nil {
		fmt.Fprintf(w, "resolution: %s detects an overhead of %.1f%% or more with 80%% power (from the A/A phases)\n", resolvedBy(s), *s.MDEPct)
	}
	sharedNotes(w, s)
	switch {
	case s.NoiseFloorPct != nil:
		fmt.Fprintf(w, "noise floor: %.1f%% (95th percentile of the difference between two baseline runs)\n", *s.NoiseFloorPct)
	case hasRounds(s):
		fmt.Fprintf(w, "noise floor: not measured (fewer than two successful baseline runs)\n")
	}
	fmt.Fprintf(w, "method: %s\n", s.Method)
}

// closingNotes say where the other columns are, then the warnings,
// transients and statement errors.
func (l textLayout) closingNotes(w io.Writer, s result.Summary) {
	if !l.wide {
		more := "reference stmts/s, p50, server and driver CPU"
		if l.costs {
			more += ", the server CPU added with its interval and share"
		}
		if l.counted {
			more += ", timed CPU/stmt Δ%, the other processes' counted Δ%"
		}
		fmt.Fprintf(w, "more columns (%s, the verdicts in full, how many events were lost, each worker, the duet twins) in one table: -v; "+
			"every figure: --format json\n", more)
	}
	for _, warn := range s.Warnings {
		fmt.Fprintf(w, "warning: %s\n", warn)
	}
	for _, c := range s.Conditions {
		for _, t := range c.Transients {
			fmt.Fprintf(w, "transient: %s, round %d: %s\n", c.Name, t.Round, t.Note)
		}
		if c.StatementErrors > 0 {
			fmt.Fprintf(w, "statement errors: %s: %s statements failed and the sessions went on; e.g. %s\n",
				c.Name, thousands(float64(c.StatementErrors)), strings.Join(c.ErrorSamples, "; "))
		}
	}
}

// cpuBasisNote says what a starred overhead is, and each one's
// throughput figure.
func cpuBasisNote(w io.Writer, s result.Summary) {
	var tput []string
	for _, c := range s.Conditions {
		if c.ThroughputOverhead != nil {
			tput = append(tput, c.Name+" "+overheadCell(c.ThroughputOverhead))
		}
	}
	if len(tput) == 0 {
		return
	}
	if uses(s, result.MethodSplit) {
		fmt.Fprintln(w, "overhead %*: read from each group's server CPU per statement (its sessions' backends'), where the observer's group used "+
			"its CPU as the other did: the loss of a CPU-bound server, without the CPU one group took from the other in a phase.")
	}
	if uses(s, result.MethodDuet) || !uses(s, result.MethodSplit) {
		fmt.Fprintln(w, "overhead %*: read from each twin server's CPU per statement, where the observer's twin used its CPU as the other did: "+
			"the loss of a CPU-bound server, as throughput is, without the CPU a neighbour took from one twin in a phase.")
	}
	fmt.Fprintf(w, "  From throughput: %s.\n", strings.Join(tput, "; "))
}

// overheadCells are a condition's overhead with its interval, its
// verdict (with its failed runs) and its reference's statements/s, as
// the text and markdown tables show them.
func overheadCells(c result.ConditionSummary) (overhead, verdict, ref string) {
	overhead, verdict, ref = overheadCell(c.Overhead), verdictCell(c), "-"
	if c.ThroughputOverhead != nil && overhead != "-" {
		overhead += "*" // read from server CPU per statement (cpuBasisNote)
	}
	if c.Failed > 0 {
		verdict += fmt.Sprintf(" (%d failed)", c.Failed)
	}
	if r := c.Reference; r != nil {
		ref = thousands(r.StmtsPerS)
	}
	return overhead, verdict, ref
}

// verdictCell is a condition's verdict, "-" for none.
func verdictCell(c result.ConditionSummary) string {
	if o := c.Overhead; o != nil {
		return o.Verdict
	}
	return "-"
}

// changeCell is a change in percent with its interval, "-" for none.
func changeCell(d *result.ChangeSummary) string {
	if d == nil {
		return "-"
	}
	return fmt.Sprintf("%+.1f [%+.1f, %+.1f]", d.Pct, d.CILow, d.CIHigh)
}

// shortChange is changeCell with the interval's bounds unsigned, as the
// overhead's are: two columns fewer in the narrow table.
func shortChange(d *result.ChangeSummary) string {
	if d == nil {
		return "-"
	}
	return fmt.Sprintf("%+.1f [%.1f, %.1f]", d.Pct, d.CILow, d.CIHigh)
}

// hasServerCost says whether a condition of s has a server cost (a
// duet's).
func hasServerCost(s result.Summary) bool {
	for _, c := range s.Conditions {
		if c.ServerCost != nil {
			return true
		}
	}
	return false
}

// serverCostCell is a duet condition's server cost: narrow, the µs
// added and the share; wide, each with its interval in a column of its
// own.
func serverCostCell(c *result.ServerCost, wide bool) string {
	switch {
	case c == nil && wide:
		return "-\t-"
	case c == nil:
		return "-"
	case wide:
		a := c.Added
		return fmt.Sprintf("%+.2f [%+.2f, %+.2f]\t", a.US, a.CILow, a.CIHigh) + shortChange(&c.Share)
	}
	return fmt.Sprintf("%+.2f (%.1f%%)", c.Added.US, c.Share.Pct)
}

// addedCell is an added cost per execution with its interval, in µs.
func addedCell(a *result.AddedSummary) string {
	if a == nil {
		return "-"
	}
	return fmt.Sprintf("%+.0f [%+.0f, %+.0f]", a.US, a.CILow, a.CIHigh)
}

// longestRun is the longest median run time of s's conditions.
func longestRun(s result.Summary) float64 {
	longest := 0.0
	for _, c := range s.Conditions {
		longest = max(longest, c.RunSeconds)
	}
	return longest
}

// uses reports whether a condition of s was measured by method.
func uses(s result.Summary, method result.Method) bool {
	for _, c := range s.Conditions {
		if strings.HasPrefix(c.Method, string(method)) {
			return true
		}
	}
	return false
}

// hasRounds reports whether s has round-based baseline runs.
func hasRounds(s result.Summary) bool {
	for _, c := range s.Conditions {
		if c.Name == "baseline" {
			return true
		}
	}
	return false
}

func events(e *result.Events) string { return eventsCell(e, true) }

// eventsCell is events recorded of executed, with what the engine says it
// lost and a * when warnings hold notes on the count; counted says how
// many a LOST or EXTRA is.
func eventsCell(e *result.Events, counted bool) string {
	s := recordedVsExecuted(e, counted)
	if e == nil {
		return s
	}
	lost := (e.EngineLost != nil && *e.EngineLost > 0) || (e.EngineLostBuffers != nil && *e.EngineLostBuffers > 0)
	if len(e.Notes) > 0 && !lost && e.Error == "" && !e.Volume && e.SampleRate == 0 && e.Recorded < e.Executed {
		// The engine lost nothing: what is missing is what the count
		// cannot see (a ring that wrapped, deleted rollover files).
		s = fmt.Sprintf("%s/%s, %s not counted", thousands(float64(e.Recorded)), thousands(float64(e.Executed)), thousands(float64(e.Executed-e.Recorded)))
	}
	var engine []string
	if e.EngineLost != nil && *e.EngineLost > 0 {
		engine = append(engine, thousands(float64(*e.EngineLost))+" lost")
	}
	if e.EngineLostBuffers != nil && *e.EngineLostBuffers > 0 {
		engine = append(engine, thousands(float64(*e.EngineLostBuffers))+" buffers lost")
	}
	if e.EngineBlocked != nil && *e.EngineBlocked > 0 {
		// blocked_event_fire_time: SQL Server documents no unit.
		engine = append(engine, "blocked "+thousands(float64(*e.EngineBlocked))+" (unit undocumented)")
	}
	if len(engine) > 0 {
		s += " (engine: " + strings.Join(engine, ", ") + ")"
	}
	if len(e.Notes) > 0 {
		s += " *" // the notes are among the warnings
	}
	return s
}

func recordedVsExecuted(e *result.Events, counted bool) string {
	diff := func(n int64) string {
		if !counted {
			return ""
		}
		return " " + thousands(float64(n))
	}
	switch {
	case e == nil:
		return "-"
	case e.Error != "":
		return "not collected"
	case e.Volume:
		// Lock events and the like: many or none per statement.
		return thousands(float64(e.Recorded)) + " recorded (not per statement)"
	case e.SampleRate > 0:
		return sampledCell(e)
	case e.Recorded == e.Executed:
		return fmt.Sprintf("%s/%s", thousands(float64(e.Recorded)), thousands(float64(e.Executed)))
	case e.Recorded < e.Executed:
		return fmt.Sprintf("%s/%s LOST%s", thousands(float64(e.Recorded)), thousands(float64(e.Executed)), diff(e.Executed-e.Recorded))
	default:
		return fmt.Sprintf("%s/%s EXTRA%s", thousands(float64(e.Recorded)), thousands(float64(e.Executed)), diff(e.Recorded-e.Executed))
	}
}

// sampledCell is a sampling observer's count: recorded of executed, the
// rate, and where the count lies outside what a sample of that rate
// records, the interval it missed.
func sampledCell(e *result.Events) string {
	s := fmt.Sprintf("%s/%s sampled %g", thousands(float64(e.Recorded)), thousands(float64(e.Executed)), e.SampleRate)
	if lo, hi, outside := e.OutsideSample(); outside {
		s += fmt.Sprintf(" OFF (want %s-%s)", thousands(float64(lo)), thousands(float64(hi)))
	}
	return s
}

// measuresCell says whose cost a row is and over what: "whole, runs",
// "switchable, on phases". A window with a qualifier ("on phases;
// latency over whole runs") is marked *, and said in full under the
// table. Summaries from before these were recorded show "-".
func measuresCell(c result.ConditionSummary) string {
	m := c.Measures
	if m == result.MeasuresSwitchable {
		m = "switchable"
	}
	w := c.Window
	if head, _, ok := strings.Cut(w, ";"); ok {
		w = head + "*"
	}
	switch {
	case m != "" && w != "":
		return m + ", " + w
	case w != "":
		return w
	}
	return "-"
}

// sharedMeasures is what every observer's row measures and over what,
// when all say the same ("whole, runs"), so that the narrow table can say
// it once; empty when they differ. Rows without a measure (the baseline,
// its A/A) do not count.
func sharedMeasures(s result.Summary) string {
	shared := ""
	for _, c := range s.Conditions {
		if c.Measures == "" {
			continue
		}
		m := measuresCell(c)
		if shared != "" && m != shared {
			return ""
		}
		shared = m
	}
	return shared
}

// sameMethod is the note on how every row was measured, when it is the
// same for all; empty otherwise.
func sameMethod(s result.Summary) string {
	m := ""
	for i, c := range s.Conditions {
		if c.Method == "" || (i > 0 && c.Method != m) {
			return ""
		}
		m = c.Method
	}
	return m
}

// scaledOut reports whether a condition's sessions ran in more than one
// worker process.
func scaledOut(s result.Summary) bool {
	for _, c := range s.Conditions {
		if len(c.Workers) > 1 {
			return true
		}
	}
	return false
}

// hasMeasures reports whether s says what its rows measure.
func hasMeasures(s result.Summary) bool {
	for _, c := range s.Conditions {
		if c.Measures != "" || c.Window != "" {
			return true
		}
	}
	return false
}

func pct(p *float64) string {
	if p == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.0f%%", *p)
}

func perStmt(p *float64) string {
	if p == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.1f", *p)
}

// thousands formats a count with thousands separators.
func thousands(v float64) string {
	s := fmt.Sprintf("%.0f", v)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// heading is the line that says what was run: engine, server, workload,
// clients, method and time, seed.
func heading(s result.Summary) string { return strings.Join(headingWords(s), " ") }

// headingWords are the heading's parts, each with the comma or "and"
// that follows it: the text report wraps the heading between them, so
// that no part is cut.
func headingWords(s result.Summary) []string {
	var parts []string
	// Fixed work (a replay once, dss-mix's --blocks): runs ended before
	// --duration, which only capped them.
	longest := longestRun(s)
	fixed := longest > 0 && longest < 0.99*s.Seconds
	if uses(s, result.MethodSplit) {
		parts = append(parts, fmt.Sprintf("split of two session groups on one server, %d phases x %gs", s.Rounds, s.Seconds))
	}
	if uses(s, result.MethodDuet) {
		if fixed {
			parts = append(parts, fmt.Sprintf("duet of twin servers, %d phases of fixed work (up to %.0fs, at most %gs)", s.Rounds, longest, s.Seconds))
		} else {
			parts = append(parts, fmt.Sprintf("duet of twin servers, %d phases x %gs", s.Rounds, s.Seconds))
		}
	}
	if s.AltSeconds > 0 && uses(s, result.MethodAlternation) {
		parts = append(parts, fmt.Sprintf("alternation runs of %gs", s.AltSeconds))
	}
	if uses(s, result.MethodRounds) || hasRounds(s) {
		if fixed {
			parts = append(parts, fmt.Sprintf("%d rounds of fixed work (runs of up to %.0fs, at most %gs)", s.Rounds, longest, s.Seconds))
		} else {
			parts = append(parts, fmt.Sprintf("%d rounds x %gs", s.Rounds, s.Seconds))
		}
	}
	wl := s.Workload
	if e := s.Environment; e != nil && e.QueryMode != "" {
		wl += " (query mode " + e.QueryMode + ")"
	}
	clients := fmt.Sprintf("%d clients", s.Clients)
	if r := askedRate(s); r > 0 {
		clients += fmt.Sprintf(" at %s units/s", thousands(r))
	}
	words := []string{fmt.Sprintf("obsbench: %s %s,", s.Engine, s.Server), "workload " + wl + ",", clients + ","}
	for i, p := range parts {
		if i < len(parts)-1 {
			words = append(words, p+" and")
		}
	}
	last := ""
	if len(parts) > 0 {
		last = parts[len(parts)-1] + " "
	}
	return append(words, fmt.Sprintf("%s(+%gs warm-up each),", last, s.Warmup), fmt.Sprintf("seed %d", s.Seed))
}

// resolvedBy is the method whose A/A arm gave the resolution: the
// experiment's A/A arm's, else the split's beside an auto plan
// (analysis.Summarize).
func resolvedBy(s result.Summary) string {
	for _, c := range s.Conditions {
		if c.Name == result.AAName {
			m, _, _ := strings.Cut(c.Method, ":")
			return m
		}
	}
	return string(result.MethodSplit)
}

// sharedNotes say, for each observer measured whole by a duet and per
// session by a split beside it, how much of its cost all sessions share.
func sharedNotes(w io.Writer, s result.Summary) {
	for _, l := range sharedLines(s) {
		fmt.Fprintf(w, "shared: %s\n", l)
	}
}

// sharedLines are sharedNotes' lines, without their "shared: ".
func sharedLines(s result.Summary) []string {
	var lines []string
	for _, c := range s.Conditions {
		if c.Shared == nil {
			continue
		}
		on := "throughput"
		if c.Shared.Basis == result.BasisServerCPU {
			on = "server CPU per statement"
		}
		lines = append(lines, fmt.Sprintf("%s: %.1f points [%.1f, %.1f] of its whole cost fall on every session, not only those it is set in (the duet's whole less the split's per-session, on %s)",
			c.Name, c.Shared.Pct, c.Shared.CILow, c.Shared.CIHigh, on))
	}
	return lines
}
