package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/obsbench/obsbench/internal/result"
)

// askedRate is the arrival rate the experiment's runs were driven at, 0
// for a closed loop.
func askedRate(s result.Summary) float64 {
	for _, c := range s.Conditions {
		if c.Rate != nil {
			return c.Rate.AskedPerS
		}
	}
	return 0
}

// Rate lists, for an experiment at a fixed arrival rate, how each
// condition kept the rate and its latency counted from the schedule: the
// observer's side, and under it the side without the observer in the
// same seconds; then, in a table of its own, the latency the observer
// added. A side that could not keep the rate shows its backlog, never a
// latency the queue made.
func Rate(w io.Writer, s result.Summary) error {
	asked := askedRate(s)
	if asked == 0 {
		return nil
	}
	fmt.Fprintln(w)
	notef(w, "at a fixed rate of %s units/s (Poisson arrivals, as pgbench -R), latency and lag in ms from each unit's scheduled start:", thousands(asked))
	sides := columns{head: []string{"condition", "achieved/s", "p50", "p99", "p99.9", "lag p99", "srv CPUs", "capacity/s"}, left: []bool{true}}
	added := columns{head: []string{"condition", "p50 added ms [CI]", "p99 added ms [CI]", "p99.9 added ms [CI]"}, left: []bool{true}}
	var late, saturated []string
	side := func(name, label, which string, r result.RateSide) {
		sides.add(append([]string{label}, rateSideText(r)...)...)
		if r.Late > 0 || r.Skipped > 0 {
			late = append(late, fmt.Sprintf("%s (%s) %s/%s", name, which, thousands(float64(r.Late)), thousands(float64(r.Skipped))))
		}
		if r.Latency == nil {
			saturated = append(saturated, fmt.Sprintf("%s (%s) in %d of %d runs, backlog up to %s", name, which, r.SaturatedRuns, r.Runs, thousands(float64(r.BacklogMax))))
		}
	}
	for _, c := range s.Conditions {
		r := c.Rate
		if r == nil {
			continue
		}
		which := "with"
		if r.Reference == nil {
			which = "sessions" // one side: the method compares none
		}
		side(c.Name, c.Name, which, r.Side)
		if r.Reference != nil {
			side(c.Name, "  without", "without", *r.Reference)
		}
		if cells := addedCells(r); cells != "-\t-\t-" {
			added.add(append([]string{c.Name}, strings.Split(cells, "\t")...)...)
		}
	}
	if err := sides.write(w); err != nil {
		return err
	}
	lateNote, satNote := "none", ": the side could not keep the rate, and its backlog (arrivals left waiting) replaces a latency the queue made"
	if len(late) > 0 {
		lateNote = strings.Join(late, ", ")
	}
	if len(saturated) > 0 {
		satNote = " (the side could not keep the rate; its backlog, arrivals left waiting, replaces a latency the queue made): " +
			strings.Join(saturated, "; ")
	}
	notef(w, "a condition's row is the observer's side (its twin or group, or the sessions where the method compares no sides), "+
		"\"without\" the side without it in the same seconds; lag: how late a unit was sent; "+
		"srv CPUs: the side's server CPU, median phase (its busy share at this rate); "+
		"capacity/s: the units a second its server would complete with its whole CPU share busy, at the CPU per unit it spent "+
		"at this rate (a unit takes a little less at saturation, so somewhat more); "+
		"late/skipped over --latency-limit: %s; saturated%s.", lateNote, satNote)
	if len(added.rows) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	if err := added.write(w); err != nil {
		return err
	}
	notef(w, "added: the latency the observer added, with against without, each phase's difference [interval at the level the method line names].")
	return nil
}

// rateSideText are one side's cells in the text table: a side that could
// not keep the rate shows its backlog where its latency would be, the
// runs it fell behind in said under the table.
func rateSideText(r result.RateSide) []string {
	busy, capacity := "-", "-"
	if r.BusyCPUs > 0 {
		busy = fmt.Sprintf("%.2f", r.BusyCPUs)
	}
	if r.CapacityPerS > 0 {
		capacity = thousands(r.CapacityPerS)
	}
	if r.Latency == nil {
		return []string{thousands(r.AchievedPerS), "saturated", "backlog", thousands(float64(r.BacklogMax)), "-", busy, capacity}
	}
	l := r.Latency
	return []string{thousands(r.AchievedPerS), fmt.Sprintf("%.3f", l.P50), fmt.Sprintf("%.3f", l.P99), fmt.Sprintf("%.3f", l.P999),
		fmt.Sprintf("%.3f", r.LagP99MS), busy, capacity}
}

// rateSideCells are one side's cells, its latency replaced by its backlog
// when it could not keep the rate.
func rateSideCells(r result.RateSide) string {
	busy, capacity := "-", "-"
	if r.BusyCPUs > 0 {
		busy = fmt.Sprintf("%.2f", r.BusyCPUs)
	}
	if r.CapacityPerS > 0 {
		capacity = thousands(r.CapacityPerS)
	}
	counts := fmt.Sprintf("%s\t%s\t%s\t%s", busy, capacity, thousands(float64(r.Late)), thousands(float64(r.Skipped)))
	if r.Latency == nil {
		return fmt.Sprintf("%s\tsaturated (%d/%d runs)\tbacklog\t%s\t-\t%s",
			thousands(r.AchievedPerS), r.SaturatedRuns, r.Runs, thousands(float64(r.BacklogMax)), counts)
	}
	l := r.Latency
	return fmt.Sprintf("%s\t%.3f\t%.3f\t%.3f\t%.3f\t%s", thousands(r.AchievedPerS), l.P50, l.P99, l.P999, r.LagP99MS, counts)
}

// addedCells are the latency an observer added at p50, p99 and p99.9.
func addedCells(r *result.RateSummary) string {
	cell := func(a *result.LatencyAdded) string {
		if a == nil {
			return "-"
		}
		return fmt.Sprintf("%+.3f [%.3f, %.3f]", a.MS, a.CILow, a.CIHigh)
	}
	return cell(r.P50Added) + "\t" + cell(r.P99Added) + "\t" + cell(r.P999Added)
}

// rateView is the rate section of the text and HTML reports: the rate
// asked, and a row of cells per side of each condition.
type rateView struct {
	Asked string
	Rows  [][]string
}

func rateTable(s result.Summary) rateView {
	asked := askedRate(s)
	if asked == 0 {
		return rateView{}
	}
	v := rateView{Asked: thousands(asked)}
	for _, c := range s.Conditions {
		r := c.Rate
		if r == nil {
			continue
		}
		side := "sessions"
		if r.Reference != nil {
			side = "with"
		}
		v.Rows = append(v.Rows, append([]string{c.Name, side}, strings.Split(rateSideCells(r.Side)+"\t"+addedCells(r), "\t")...))
		if r.Reference != nil {
			v.Rows = append(v.Rows, append([]string{"", "without"}, strings.Split(rateSideCells(*r.Reference)+"\t\t\t", "\t")...))
		}
	}
	return v
}

// rateLegend says what the overhead is at a rate.
func rateLegend(w io.Writer, s result.Summary) {
	if askedRate(s) == 0 {
		return
	}
	fmt.Fprintln(w, "overhead % at a fixed rate: the server CPU the observer added to a statement, as a share of the server's CPU per statement "+
		"with it, X/(S+X): the throughput a CPU-bound server would lose. Below saturation both sides complete what arrives, "+
		"so throughput is the rate's; the cost is in CPU (srv CPUs below) and latency (added below).")
}
