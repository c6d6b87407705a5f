package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

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
// observer's side, and beside it the side without the observer in the
// same seconds, with the latency the observer added. A side that could
// not keep the rate shows its backlog, never a latency the queue made.
func Rate(w io.Writer, s result.Summary) error {
	v := rateTable(s)
	if v.Rows == nil {
		return nil
	}
	fmt.Fprintf(w, "\nat a fixed rate of %s units/s (Poisson arrivals, as pgbench -R; latency from each unit's scheduled start):\n", v.Asked)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "  condition\tside\tachieved/s\tp50 ms\tp99 ms\tp99.9 ms\tlag p99 ms\tserver CPUs\tcapacity/s\tlate\tskipped\tp50 added ms [CI]\tp99 added ms [CI]\tp99.9 added ms [CI]\t")
	for _, row := range v.Rows {
		fmt.Fprintf(tw, "  %s\t\n", strings.Join(row, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "  with/without: the observer's twin or group, and the one without it in the same seconds; lag: how late a unit was sent;")
	fmt.Fprintln(w, "  late and skipped: over --latency-limit; server CPUs: the side's server CPU, median phase (its busy share at this rate);")
	fmt.Fprintln(w, "  capacity/s: the units a second its server would complete with its whole CPU share busy, at the CPU per unit it spent")
	fmt.Fprintln(w, "  at this rate (a unit takes a little less at saturation, so somewhat more);")
	fmt.Fprintln(w, "  saturated: the side could not keep the rate, and its backlog (arrivals left waiting) replaces a latency the queue made")
	return nil
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
	fmt.Fprintln(w, "overhead % at a fixed rate: the server CPU the observer added to a statement, as a share of the server's CPU per statement")
	fmt.Fprintln(w, "  with it, X/(S+X): the throughput a CPU-bound server would lose. Below saturation both sides complete what arrives,")
	fmt.Fprintln(w, "  so throughput is the rate's; the cost is in CPU (server CPUs below) and latency (added below).")
}
