package report

import (
	"fmt"
	"html/template"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/obsbench/obsbench/internal/result"
)

// The page's conditions table is narrow: what is the same in every row
// (the method, what the rows measure) is said once under it, so that at
// a phone's width the rest needs no word broken.

// conditionsView is the conditions table and the notes under it.
type conditionsView struct {
	Rows []conditionRow
	// The optional columns: each shown when a row has it.
	Measures, ServerCost, Events, EngineLost, Counted bool
	// SharedMeasures says in a sentence what every observer's row
	// measures, over what, once when Measures is false.
	SharedMeasures string
	// Methods say how the rows were measured, each method once.
	Methods []methodNote
	// Windows are in full the windows a measures cell stars ("on
	// phases*": the rest of its text).
	Windows []string
	// FromThroughput are the throughput overheads of the rows whose
	// overhead was read from server CPU (starred).
	FromThroughput []string
}

type conditionRow struct {
	Name, Measures, Stmts, Ref, Overhead, Verdict string
	// Slower and Faster colour the overhead: significant either way.
	Slower, Faster                 bool
	SrvAdded, SrvShare             string
	P50, P99, ServerCPU, DriverCPU string
	// Recorded and Executed are the events the observer recorded of
	// the statements executed; EventsDiff what is missing or extra.
	Recorded, Executed, EventsDiff string
	EngineLost                     string
	EventsLost, EngineLostFlag     bool
	Counted                        string
}

type methodNote struct {
	Rows   string // the rows it is of; empty when every row
	Method string
}

// conditionsTable is the rows of s's conditions table and its notes.
func conditionsTable(s result.Summary) conditionsView {
	var v conditionsView
	measures := map[string]bool{}
	var methods []methodNote
	counted := s.Counted != nil && len(s.Counted.Conditions) > 0
	v.Counted = counted
	for _, c := range s.Conditions {
		r := conditionRow{Name: c.Name, Measures: measuresCell(c), Stmts: fmt.Sprintf("%.0f", c.Throughput.Median), Ref: "-",
			Overhead: overheadCell(c.Overhead), Verdict: "-", SrvAdded: "-", SrvShare: "-",
			P50: fmt.Sprintf("%.3f", c.LatencyMS.P50), P99: fmt.Sprintf("%.3f", c.LatencyMS.P99),
			ServerCPU: pct(c.CPU.ServerPct), DriverCPU: fmt.Sprintf("%.0f%%", c.CPU.DriverPct)}
		if c.Measures != "" {
			measures[r.Measures] = true
		}
		if strings.Contains(c.Window, ";") && !slices.Contains(v.Windows, c.Window) {
			v.Windows = append(v.Windows, c.Window)
		}
		if c.Reference != nil {
			r.Ref = fmt.Sprintf("%.0f", c.Reference.StmtsPerS)
		}
		if o := c.Overhead; o != nil {
			r.Verdict = o.Verdict
			r.Slower, r.Faster = o.Measured() && o.Significant && o.Pct > 0, o.Measured() && o.Significant && o.Pct < 0
		}
		if t := c.ThroughputOverhead; t != nil {
			r.Overhead += "*"
			v.FromThroughput = append(v.FromThroughput, c.Name+" "+overheadCell(t))
		}
		if sc := c.ServerCost; sc != nil {
			v.ServerCost = true
			r.SrvAdded = fmt.Sprintf("%+.2f [%+.2f, %+.2f]", sc.Added.US, sc.Added.CILow, sc.Added.CIHigh)
			r.SrvShare = fmt.Sprintf("%.1f [%.1f, %.1f]", sc.Share.Pct, sc.Share.CILow, sc.Share.CIHigh)
		}
		if ev := c.Events; ev != nil {
			v.Events = true
			e := eventRow(c.Name, ev)
			r.Recorded, r.Executed = thousands(float64(ev.Recorded)), thousands(float64(ev.Executed))
			if e.Difference != "none" {
				r.EventsDiff, r.EventsLost = e.Difference, e.Lost
			}
			r.EngineLost, r.EngineLostFlag = e.EngineLostText, e.EngineLost
			v.EngineLost = v.EngineLost || e.EngineLostText != "-"
		}
		if counted {
			r.Counted = countedSession(s, c)
		}
		v.Rows = append(v.Rows, r)
		methods = addMethod(methods, c)
	}
	if len(measures) > 1 {
		v.Measures = true
	} else if len(measures) == 1 {
		v.SharedMeasures = measuresSentence(s, "")
	}
	if len(methods) == 1 {
		methods[0].Rows = ""
	}
	v.Methods = methods
	return v
}

// addMethod adds c's method to the notes: to the note of the rows with
// the same method, or as a note of its own.
func addMethod(notes []methodNote, c result.ConditionSummary) []methodNote {
	if c.Method == "" {
		return notes
	}
	for i := range notes {
		if notes[i].Method == c.Method {
			notes[i].Rows += ", " + c.Name
			return notes
		}
	}
	return append(notes, methodNote{Rows: c.Name, Method: c.Method})
}

// methodNames are the short names of the methods s's rows were measured
// by ("duet", "alternation"), in order of first use.
func methodNames(s result.Summary) string {
	var names []string
	for _, c := range s.Conditions {
		head, _, _ := strings.Cut(c.Method, ":")
		if head != "" && !slices.Contains(names, head) {
			names = append(names, head)
		}
	}
	return strings.Join(names, ", ")
}

// nonZeroCounters lists the counters a condition moved (0.5 a second or
// more, as the text report's list): the engines record some twenty, most
// of which a workload leaves at 0.
func nonZeroCounters(s result.Summary) counterView {
	names := map[string]bool{}
	for _, c := range s.Conditions {
		for k, x := range c.Counters {
			if math.Abs(x) >= 0.5 {
				names[k] = true
			}
		}
	}
	v := counterView{Names: slices.Sorted(maps.Keys(names))}
	if len(v.Names) == 0 {
		return v
	}
	for _, c := range s.Conditions {
		if len(c.Counters) == 0 {
			continue
		}
		row := counterRow{Name: c.Name}
		for _, k := range v.Names {
			if x, ok := c.Counters[k]; ok {
				row.Values = append(row.Values, thousands(x))
			} else {
				row.Values = append(row.Values, "-")
			}
		}
		v.Rows = append(v.Rows, row)
	}
	return v
}

// workersAsked says whether the sessions were spread over worker
// processes: more than one worker ran a condition, or the command asked
// for workers. Every run has its one in-process worker otherwise, which
// is the driver the table already shows.
func workersAsked(s result.Summary) bool {
	for _, c := range s.Conditions {
		if len(c.Workers) > 1 {
			return true
		}
	}
	if s.Environment != nil {
		for _, a := range s.Environment.Command {
			if a == "--workers" || strings.HasPrefix(a, "--workers=") {
				return true
			}
		}
	}
	return false
}

// ciCell is a figure and its interval, "3.1 [1.6, 4.5]", as HTML that
// may wrap before the interval and nowhere else: a narrow column keeps
// its figures whole, one above the other.
func ciCell(s string) template.HTML {
	est, ci, ok := strings.Cut(s, " [")
	if !ok {
		return template.HTML(template.HTMLEscapeString(s))
	}
	return template.HTML(template.HTMLEscapeString(est) + ` <span class="ci">[` + template.HTMLEscapeString(ci) + `</span>`)
}
