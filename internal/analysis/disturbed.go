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
	var spread float64
	d.median, spread = robustSpread(shares)
	d.limit = d.median + max(3*spread, disturbedMargin)
	for _, r := range runs {
		if s := noiseOf(r); r.Error == "" && s > d.limit {
			d.flagged[r.Seq] = s
		}
	}
	return d
}

// robustSpread is xs's median and its deviation's robust equal (1.4826
// MAD, a standard deviation for normal noise): a few outliers move
// neither.
func robustSpread(xs []float64) (median, spread float64) {
	median = stats.Median(xs)
	dev := make([]float64, len(xs))
	for i, x := range xs {
		dev[i] = math.Abs(x - median)
	}
	return median, 1.4826 * stats.Median(dev)
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
	if len(runs) > 0 && runs[0].Method.Paired() {
		if o := duetOverhead(d.without(runs), alpha).Overhead; o.Measured() {
			msg += fmt.Sprintf("; without them %.1f [%.1f, %.1f]", o.Pct, o.CILow, o.CIHigh)
		}
	}
	return msg + ")"
}

// lopsidedMargin is the least, in percent of a twin's CPU share, by which
// a phase's gap between the twins' CPU must exceed the condition's usual
// gap to flag the phase.
const lopsidedMargin = 5

// lopside is a duet phase in which one twin's server got clearly less CPU
// than the other's: Short is that twin, Gap how much less, in percent of
// the share.
type lopside struct {
	Short string
	Gap   float64
}

// lopsided flags a duet condition's phases that fell on one twin and not
// the other: the twins' CPU gap (the observer's twin's less the other's,
// in percent of the share) away from the condition's median gap by three
// robust deviations and at least lopsidedMargin points. A median gap is
// the observer's own (a twin that waits on its sink uses less CPU in
// every phase); a phase beyond it is something that took CPU from one
// twin alone (a neighbour on its core, its load throttled), which the
// twins' ratio does not cancel. By run (Seq).
func lopsided(runs []result.Run) map[int]lopside {
	gaps := map[int]float64{}
	var all []float64
	for _, r := range runs {
		d := r.Duet
		if r.Error != "" || d == nil || d.ShareCPUs <= 0 || d.OnCPUs <= 0 || d.OffCPUs <= 0 {
			continue
		}
		g := 100 * (d.OnCPUs - d.OffCPUs) / d.ShareCPUs
		gaps[r.Seq] = g
		all = append(all, g)
	}
	if len(all) < 3 {
		return nil
	}
	med, spread := robustSpread(all)
	limit := max(3*spread, lopsidedMargin)
	out := map[int]lopside{}
	for _, r := range runs {
		g, ok := gaps[r.Seq]
		if !ok || math.Abs(g-med) <= limit {
			continue
		}
		short := r.Duet.On
		if g > med {
			short = otherTwin(short)
		}
		out[r.Seq] = lopside{Short: short, Gap: math.Abs(g - med)}
	}
	return out
}

func otherTwin(name string) string {
	if name == "a" {
		return "b"
	}
	return "a"
}

// lopsidedWarning says how many of a duet condition's phases fell on one
// twin, on which, by how much, and where the estimate lies without them.
func lopsidedWarning(name string, runs []result.Run, alpha float64) string {
	flagged := lopsided(runs)
	if len(flagged) == 0 {
		return ""
	}
	var gaps []float64
	short := map[string]int{}
	for _, l := range flagged {
		gaps = append(gaps, l.Gap)
		short[l.Short]++
	}
	msg := fmt.Sprintf("%s: %d phase(s) fell on one twin: its server got %.0f-%.0f%% of its share less CPU than the other's, beyond the condition's usual gap (twin a short in %d, b in %d; kept in the statistics",
		name, len(flagged), slices.Min(gaps), slices.Max(gaps), short["a"], short["b"])
	rest := slices.DeleteFunc(slices.Clone(runs), func(r result.Run) bool { _, ok := flagged[r.Seq]; return ok })
	if o := duetOverhead(rest, alpha).Overhead; o.Measured() {
		msg += fmt.Sprintf("; without them %.1f [%.1f, %.1f]", o.Pct, o.CILow, o.CIHigh)
	}
	return msg + ")"
}
