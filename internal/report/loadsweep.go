package report

import (
	"fmt"
	"io"

	"github.com/obsbench/obsbench/internal/result"
)

// LoadSweep writes a sweep of loads: for each condition, one row per
// load, the rate it drove, the server CPU busy with the observer and
// without it and the overhead; then, in a table of its own, the latency
// from the schedule on both sides and what the observer added: an
// observer's latency against load, the baseline's beside it.
func LoadSweep(w io.Writer, points []SweepPoint) error {
	h := loadSweepHead
	cpu := columns{head: []string{h[0], h[1], h[2], h[3], h[4]}, left: []bool{true}}
	latency := columns{head: []string{h[0], h[1], h[5], h[6], h[7]}, left: []bool{true}}
	last := ""
	for _, row := range loadSweepRows(points) {
		name := row[0]
		if name == last {
			name = "" // the rows of a condition under its name
		}
		last = row[0]
		cpu.add(name, row[1], row[2], row[3], row[4])
		latency.add(name, row[1], row[5], row[6], row[7])
	}
	if err := cpu.write(w); err != nil {
		return err
	}
	fmt.Fprintln(w)
	if err := latency.write(w); err != nil {
		return err
	}
	notef(w, "latency from each unit's scheduled start, median run; with/without: the observer's side and the side without it in the same seconds "+
		"(a duet's twins, a split's groups; one figure where the method compares no sides); saturated: the side could not keep the rate")
	return nil
}

var loadSweepHead = []string{"condition", "load", "rate/s", "server CPUs with/without", "overhead % [CI]",
	"p50 ms with/without", "p99 ms with/without", "p99 added ms [CI]"}

// loadSweepRows are the load sweep's table, a row per condition and
// load, for the text and HTML reports alike.
func loadSweepRows(points []SweepPoint) [][]string {
	var rows [][]string
	for _, name := range conditionNames(points) {
		for _, p := range points {
			c, ok := conditionOf(p.Summary, name)
			if !ok || c.Rate == nil {
				continue
			}
			r := c.Rate
			ref := r.Side
			if r.Reference != nil {
				ref = *r.Reference
			}
			added := "-"
			if a := r.P99Added; a != nil {
				added = fmt.Sprintf("%+.3f [%.3f, %.3f]", a.MS, a.CILow, a.CIHigh)
			}
			rows = append(rows, []string{name, fmt.Sprintf("%g%%", p.LoadPct), thousands(r.AskedPerS),
				pair(r.Side.BusyCPUs, ref.BusyCPUs, "%.2f"), overheadCell(c.Overhead),
				latencyPair(r.Side, ref, func(l *result.RateLatency) float64 { return l.P50 }),
				latencyPair(r.Side, ref, func(l *result.RateLatency) float64 { return l.P99 }), added})
		}
	}
	return rows
}

// conditionNames are the conditions of the points, in the order they
// first appear.
func conditionNames(points []SweepPoint) []string {
	var names []string
	seen := map[string]bool{}
	for _, p := range points {
		for _, c := range p.Summary.Conditions {
			if !seen[c.Name] {
				seen[c.Name] = true
				names = append(names, c.Name)
			}
		}
	}
	return names
}

func conditionOf(s result.Summary, name string) (result.ConditionSummary, bool) {
	for _, c := range s.Conditions {
		if c.Name == name {
			return c, true
		}
	}
	return result.ConditionSummary{}, false
}

// pair is two figures as "a/b", "-" for one not read.
func pair(a, b float64, format string) string {
	cell := func(v float64) string {
		if v <= 0 {
			return "-"
		}
		return fmt.Sprintf(format, v)
	}
	return cell(a) + "/" + cell(b)
}

// latencyPair is one latency of both sides, "saturated" for a side that
// could not keep the rate.
func latencyPair(side, ref result.RateSide, of func(*result.RateLatency) float64) string {
	cell := func(s result.RateSide) string {
		if s.Latency == nil {
			return "saturated"
		}
		return fmt.Sprintf("%.3f", of(s.Latency))
	}
	return cell(side) + "/" + cell(ref)
}
