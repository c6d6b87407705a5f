package analysis

import (
	"fmt"
	"math"
	"slices"

	"github.com/obsbench/obsbench/internal/result"
	"github.com/obsbench/obsbench/internal/stats"
)

// disturbance is what other processes did during an experiment's runs:
// a run is disturbed when they took clearly more of the machine in it
// than in the experiment's usual run. A neighbour that takes a steady
// share in every run is the machine the experiment ran on; one that took
// 9% in two runs where the rest saw 1% disturbed those two, though it
// never reached a fixed line.
type disturbance struct {
	// median is the experiment's median run's share of the machine used
	// by other processes (steal included), limit the share above which a
	// run is flagged, both in percent.
	median, limit float64
	// flagged holds the flagged runs' shares, by run (Seq).
	flagged map[int]float64
}

// disturbedMargin is the least a run's other processes must exceed the
// median run's by, in points of the machine, to flag it: below it, the
// machine's own jitter (obsbench's sampler, the kernel) is flagged.
const disturbedMargin = 2

// disturbances flags the runs whose other processes (and steal) took
// more of the machine than the median run's by three robust deviations
// (1.4826 MAD, a standard deviation's equal for normal noise) and at
// least disturbedMargin points.
func disturbances(runs []result.Run) disturbance {
	var shares []float64
	for _, r := range runs {
		if r.Error == "" {
			shares = append(shares, noiseOf(r))
		}
	}
	d := disturbance{flagged: map[int]float64{}}
	if len(shares) < 3 {
		return d
	}
	d.median = stats.Median(shares)
	dev := make([]float64, len(shares))
	for i, s := range shares {
		dev[i] = math.Abs(s - d.median)
	}
	d.limit = d.median + max(3*1.4826*stats.Median(dev), disturbedMargin)
	for _, r := range runs {
		if s := noiseOf(r); r.Error == "" && s > d.limit {
			d.flagged[r.Seq] = s
		}
	}
	return d
}

func noiseOf(r result.Run) float64 { return r.Noise.OtherPct + r.Noise.StealPct }

// count is how many of runs were flagged.
func (d disturbance) count(runs []result.Run) int {
	n := 0
	for _, r := range runs {
		if _, ok := d.flagged[r.Seq]; ok {
			n++
		}
	}
	return n
}

// without is runs less the flagged ones.
func (d disturbance) without(runs []result.Run) []result.Run {
	return slices.DeleteFunc(slices.Clone(runs), func(r result.Run) bool { _, ok := d.flagged[r.Seq]; return ok })
}

// warning says how many of a condition's runs were disturbed, how much
// of the machine other processes took in them against the median run,
// and, for a duet, where the estimate lies without them.
func (d disturbance) warning(name string, runs []result.Run, alpha float64) string {
	var in []float64
	for _, r := range runs {
		if s, ok := d.flagged[r.Seq]; ok {
			in = append(in, s)
		}
	}
	if len(in) == 0 {
		return ""
	}
	msg := fmt.Sprintf("%s: %d run(s) disturbed: other processes took %.1f-%.1f%% of the machine in them, %.1f%% in the experiment's median run (kept in the statistics",
		name, len(in), slices.Min(in), slices.Max(in), d.median)
	if len(runs) > 0 && runs[0].Method == "duet" {
		if o, _, _, _, _, _ := duetOverhead(d.without(runs), alpha); o.Measured() {
			msg += fmt.Sprintf("; without them %.1f [%.1f, %.1f]", o.Pct, o.CILow, o.CIHigh)
		}
	}
	return msg + ")"
}
