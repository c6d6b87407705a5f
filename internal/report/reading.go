package report

import (
	"fmt"
	"strings"

	"github.com/obsbench/obsbench/internal/result"
)

// readings are the lines under the default tables that say in words what
// each observer's row found, as hyperfine's summary does: its cost with
// the interval beside it, the latency it added at a rate, the events it
// recorded. The baseline and the A/A arm have none: no observer. Each
// line is its words, to wrap: the events recorded are one, which a line
// that does not fit carries whole to the next.
func readings(s result.Summary) [][]string {
	var lines [][]string
	for _, c := range s.Conditions {
		if c.Overhead == nil || result.IsAA(c.Name) {
			continue
		}
		parts := []string{costWords(c)}
		if l := latencyWords(c.Rate); l != "" {
			parts = append(parts, l)
		}
		line := c.Name + ": " + strings.Join(parts, ", ")
		e := eventWords(c.Events)
		if e == "" {
			lines = append(lines, strings.Split(line, " "))
			continue
		}
		lines = append(lines, append(strings.Split(line+";", " "), e))
	}
	return lines
}

// costWords is what an observer costs: its overhead with its interval,
// and the server CPU it added to a statement where a duet read it. At a
// rate a duet's overhead is the share of the server's CPU per statement
// that added CPU is, and reads as such.
func costWords(c result.ConditionSummary) string {
	o := c.Overhead
	if !o.Measured() {
		return o.Verdict
	}
	k := c.ServerCost
	if k == nil {
		return overheadWords(o, basisWords(o))
	}
	added := fmt.Sprintf("%+.1f µs of server CPU per statement", k.Added.US)
	if o.Basis == result.BasisServerCPU && c.Rate != nil {
		return added + " (" + overheadWords(o, "") + ")"
	}
	return overheadWords(o, basisWords(o)) + ", " + added
}

// overheadWords is an overhead with its interval, of what (basis) said
// after it: where the interval holds no change, the two ends it lies
// between, never a word that reads as free.
func overheadWords(o *result.OverheadSummary, basis string) string {
	of := ""
	if basis != "" {
		of = " " + basis
	}
	figure := fmt.Sprintf("%.1f%% [%.1f, %.1f]%s", o.Pct, o.CILow, o.CIHigh, of)
	switch {
	case o.Verdict == "slower":
		return figure
	case o.Verdict == "faster":
		return figure + " (faster)"
	case o.Verdict == "no detectable difference":
		return fmt.Sprintf("not resolved: between %.1f%% and %.1f%%%s", o.CILow, o.CIHigh, of)
	}
	return figure + ", " + o.Verdict
}

// basisWords says what an overhead is a share of.
func basisWords(o *result.OverheadSummary) string {
	if o.Basis == result.BasisServerCPU {
		return "of the server's CPU per statement"
	}
	return "of throughput lost"
}

// latencyWords is the median latency an observer added at a rate, or that
// its side could not keep the rate; "" in a closed loop.
func latencyWords(r *result.RateSummary) string {
	switch {
	case r == nil:
		return ""
	case r.Side.Latency == nil:
		return fmt.Sprintf("saturated at this rate (backlog up to %s arrivals)", thousands(float64(r.Side.BacklogMax)))
	case r.P50Added == nil:
		return ""
	}
	a := r.P50Added
	if a.Verdict == "slower" || a.Verdict == "faster" {
		return fmt.Sprintf("p50 %+.3f ms", a.MS)
	}
	if a.Verdict == "no detectable difference" {
		return fmt.Sprintf("p50 not resolved: between %+.3f and %+.3f ms", a.CILow, a.CIHigh)
	}
	return fmt.Sprintf("p50 %+.3f ms [%.3f, %.3f], %s", a.MS, a.CILow, a.CIHigh, a.Verdict)
}

// eventWords is how many statements an observer recorded of those
// executed; "" where it records none.
func eventWords(e *result.Events) string {
	if e == nil {
		return ""
	}
	rec, exec := thousands(float64(e.Recorded)), thousands(float64(e.Executed))
	switch cell := eventsCell(e, false); {
	case e.Error != "":
		return "events not collected"
	case e.Volume:
		return "recorded " + rec + " events (not per statement)"
	case e.SampleRate > 0:
		line := fmt.Sprintf("recorded %s of %s statements, sampled at %g", rec, exec, e.SampleRate)
		if lo, hi, outside := e.OutsideSample(); outside {
			line += fmt.Sprintf(", OFF: a sample of that rate records %s-%s", thousands(float64(lo)), thousands(float64(hi)))
		}
		return line
	case e.Recorded == e.Executed:
		return fmt.Sprintf("recorded %s of %s statements", rec, exec)
	case e.Recorded < e.Executed && strings.Contains(cell, "not counted"):
		return fmt.Sprintf("recorded %s of %s statements (%s not counted)", rec, exec, thousands(float64(e.Executed-e.Recorded)))
	case e.Recorded < e.Executed:
		return fmt.Sprintf("recorded %s of %s statements, %s LOST", rec, exec, thousands(float64(e.Executed-e.Recorded)))
	}
	return fmt.Sprintf("recorded %s of %s statements, %s EXTRA", rec, exec, thousands(float64(e.Recorded-e.Executed)))
}
