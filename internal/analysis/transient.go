package analysis

import (
	"fmt"
	"math"
	"slices"

	"golang.org/x/perf/benchmath"

	"github.com/obsbench/obsbench/internal/stats"
)

// This file reads one run's throughput over time. A run's mean hides an
// observer whose cost changes mid-run: study 2's live event stream cost a
// lot at first, until the server cut off the lagging reader and throughput
// recovered, which only the per-5-second series showed. The functions
// below find such a change of level in a run's series and put it in words.
//
// Within a run the comparison is of a run with itself, so the run-to-run
// noise (identical runs on a shared machine differ by far more than an
// observer's cost) does not enter; what limits it is second-to-second noise, which is much
// smaller.

// Defaults for FindShift, as DetectTransient uses them.
const (
	// DefaultMinSegment is the shortest level FindShift considers, in
	// points of the series: 3 buckets, 15 s at study 2's 5 s buckets. A
	// shorter dip is a checkpoint or an autovacuum pass, not a level.
	//
	// With alpha = 0.01 the rank test can only reach significance when
	// the series is long enough: a 3-point segment needs at least 9
	// points on the other side, and no split of fewer than 10 points in
	// all can be significant (5 vs 5 gives at best p = 2/252). At 5 s
	// buckets a run must last about 50 s for a shift to be found at all.
	DefaultMinSegment = 3
	// DefaultAlpha is the level of the rank-sum test. It is small because
	// the test runs at the split that separates the two sides best, which
	// makes its p-value optimistic, and because every run of every
	// condition is tested.
	DefaultAlpha = 0.01
	// DefaultMinChange is the smallest relative change of level reported.
	// Within a run, seconds are steady enough that the rank test finds
	// a few percent of drift (caches warming, a table growing)
	// significant; 15% is above such drifts and well below the
	// transient costs that matter, such as a log stream falling behind.
	DefaultMinChange = 0.15
)

// Kinds of Transient.
const (
	// TransientRecovered: throughput rose to a level nearer the
	// baseline's; the observer was heavy at first, then cost less.
	TransientRecovered = "recovered"
	// TransientDegraded: throughput fell away from the baseline's level;
	// the observer started costing (more) mid-run.
	TransientDegraded = "degraded"
	// TransientShift: a change of level that cannot be read against the
	// baseline, because there is no reference level or the change moved
	// neither towards nor away from it.
	TransientShift = "shift"
)

// streamQuietFraction is the share of its earlier median rate below which
// a stream counts as receiving nothing: a stopped reader may still see a
// last buffer or a keepalive trickle.
const streamQuietFraction = 0.01

// TotalPerSecond sums a per-session, per-second count matrix
// (driver.Result.PerSecond: perSession[s][i] is what session s completed
// in second i) into the whole run's count per second. Sessions of unequal
// length count as 0 where they have no entry.
func TotalPerSecond(perSession [][]int64) []float64 {
	n := 0
	for _, s := range perSession {
		n = max(n, len(s))
	}
	total := make([]float64, n)
	for _, s := range perSession {
		for i, v := range s {
			total[i] += float64(v)
		}
	}
	return total
}

// Bucket returns the means of consecutive width-point buckets of
// perSecond. A last, partial bucket is averaged over its own length if it
// holds at least half of width and dropped otherwise: a mean of one or two
// seconds would be as noisy as the seconds themselves. width < 1 is taken
// as 1 (a copy of perSecond).
func Bucket(perSecond []float64, width int) []float64 {
	width = max(width, 1)
	out := make([]float64, 0, (len(perSecond)+width-1)/width)
	for i := 0; i < len(perSecond); i += width {
		b := perSecond[i:min(i+width, len(perSecond))]
		if 2*len(b) < width {
			break
		}
		sum := 0.0
		for _, v := range b {
			sum += v
		}
		out = append(out, sum/float64(len(b)))
	}
	return out
}

// Shift is a single change of level in a series.
type Shift struct {
	// At is the index, in the series' units (points, e.g. buckets), of
	// the first point of the new level.
	At int
	// Before and After are the mean levels of series[:At] and
	// series[At:].
	Before, After float64
	// Change is the relative change of level, (After-Before)/Before.
	Change float64
	// P is the two-sided p-value of the Mann–Whitney rank-sum test of
	// the two segments. It is conditional on At, which was chosen from
	// the same data, and is therefore optimistic.
	P float64
}

// FindShift looks for a single change of level in series: the split into
// two segments of at least minSegment points each that maximizes the
// between-segment sum of squares, k(n-k)/n * (mean1-mean2)^2 (the
// statistic of binary segmentation, equivalently the largest weighted
// CUSUM deviation). ok reports that the split is a real change: the
// rank-sum test of the two segments gives p < alpha and |Change| >=
// minChange.
//
// Why two tests: the sum of squares finds where the level changes best
// but is not robust (one checkpoint bucket moves it), and says nothing
// about significance; the rank test is robust to such a bucket but, with
// steady seconds, finds changes too small to matter, which minChange
// removes.
//
// The returned Shift is the best split even when ok is false, so a caller
// can tell which condition failed; it is zero when the series has fewer
// than 2*minSegment points. The series is assumed finite. minSegment < 1
// is taken as 1.
func FindShift(series []float64, minSegment int, alpha float64, minChange float64) (Shift, bool) {
	minSegment = max(minSegment, 1)
	n := len(series)
	if n < 2*minSegment {
		return Shift{}, false
	}
	total := 0.0
	for _, v := range series {
		total += v
	}
	bestK, best, left := 0, -1.0, 0.0
	for k := 1; k <= n-minSegment; k++ {
		left += series[k-1]
		if k < minSegment {
			continue
		}
		d := left/float64(k) - (total-left)/float64(n-k)
		if ss := float64(k) * float64(n-k) / float64(n) * d * d; ss > best {
			bestK, best = k, ss
		}
	}
	if bestK == 0 { // only NaN sums of squares
		return Shift{}, false
	}
	before, after := series[:bestK], series[bestK:]
	s := Shift{At: bestK, Before: mean(before), After: mean(after), P: rankSumP(before, after)}
	s.Change = (s.After - s.Before) / s.Before
	return s, s.P < alpha && math.Abs(s.Change) >= minChange
}

// mean is the arithmetic mean of a non-empty xs.
func mean(xs []float64) float64 {
	sum := 0.0
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}

// rankSumP is the two-sided p-value of the Mann–Whitney U test of a
// against b, as benchstat computes it: exact for small samples (ties
// included), normal with tie and continuity corrections beyond. The stats
// package only exposes this test as the Moses interval, which needs
// positive values and gives no p-value. Samples that cannot be compared
// (all values equal) give 1.
func rankSumP(a, b []float64) float64 {
	th := benchmath.DefaultThresholds
	// NewSample sorts its values in place.
	sa := benchmath.NewSample(slices.Clone(a), &th)
	sb := benchmath.NewSample(slices.Clone(b), &th)
	return benchmath.AssumeNothing.Compare(sa, sb).P
}

// Transient is a change of a run's throughput level, read against the
// baseline's level.
type Transient struct {
	// Kind is TransientRecovered, TransientDegraded or TransientShift.
	Kind string
	// At is the second at which the new level starts.
	At int
	// BeforeOverhead and AfterOverhead are the overheads of the two
	// levels against the reference, 1 - level/reference, as fractions
	// (0.6 is 60% slower than the baseline); NaN without a reference.
	BeforeOverhead, AfterOverhead float64
	// Shift is the change found, in bucket units.
	Shift Shift
}

// DetectTransient looks for a change of level in a run's per-second
// throughput, read in buckets of bucket seconds (study 2 used 5), with
// the default thresholds. reference is the baseline's throughput level in
// the same unit; 0 means unknown, and the change is then reported as
// TransientShift.
//
// The kind compares both levels with the reference: a rise to a level
// closer to it is a recovery, a fall away from it a degradation. The
// reference comes from other runs, so it carries the run-to-run noise;
// the direction of the change, which decides between the two, does not.
func DetectTransient(perSecond []float64, bucket int, reference float64) (Transient, bool) {
	bucket = max(bucket, 1)
	s, ok := FindShift(Bucket(perSecond, bucket), DefaultMinSegment, DefaultAlpha, DefaultMinChange)
	if !ok {
		return Transient{}, false
	}
	t := Transient{
		Kind: TransientShift, At: s.At * bucket,
		BeforeOverhead: math.NaN(), AfterOverhead: math.NaN(), Shift: s,
	}
	if reference > 0 && !math.IsInf(reference, 1) {
		t.BeforeOverhead = 1 - s.Before/reference
		t.AfterOverhead = 1 - s.After/reference
		far, near := math.Abs(t.BeforeOverhead), math.Abs(t.AfterOverhead)
		switch {
		case s.After > s.Before && near < far:
			t.Kind = TransientRecovered
		case s.After < s.Before && near > far:
			t.Kind = TransientDegraded
		}
	}
	return t, true
}

// String reads t in one line, e.g. "heavy for the first 35 s (-62% vs
// baseline), then -3%: the observer stopped costing mid-run". A level
// within DefaultMinChange of the baseline's counts as costing nothing.
func (t Transient) String() string {
	switch t.Kind {
	case "":
		return "no change of level"
	case TransientRecovered:
		how := "the observer's cost fell mid-run"
		if math.Abs(t.AfterOverhead) < DefaultMinChange {
			how = "the observer stopped costing mid-run"
		}
		return fmt.Sprintf("heavy for the first %d s (%s vs baseline), then %s: %s",
			t.At, vsBaseline(t.BeforeOverhead), vsBaseline(t.AfterOverhead), how)
	case TransientDegraded:
		how := "the observer's cost grew mid-run"
		if math.Abs(t.BeforeOverhead) < DefaultMinChange {
			how = "the observer started costing mid-run"
		}
		return fmt.Sprintf("%s vs baseline for the first %d s, then %s: %s",
			vsBaseline(t.BeforeOverhead), t.At, vsBaseline(t.AfterOverhead), how)
	}
	if math.IsNaN(t.BeforeOverhead) || math.IsNaN(t.AfterOverhead) {
		return fmt.Sprintf("throughput changed %s at %d s (%.4g/s before, %.4g/s after)",
			signedPct(t.Shift.Change), t.At, t.Shift.Before, t.Shift.After)
	}
	return fmt.Sprintf("throughput changed %s at %d s (%s vs baseline before, %s after)",
		signedPct(t.Shift.Change), t.At, vsBaseline(t.BeforeOverhead), vsBaseline(t.AfterOverhead))
}

// vsBaseline writes an overhead as the throughput change it is: an
// overhead of 0.62 is "-62%".
func vsBaseline(overhead float64) string {
	return signedPct(-overhead)
}

// signedPct writes a fraction as a signed whole percentage, "+0%" rather
// than "-0%" for a tiny negative one.
func signedPct(fraction float64) string {
	v := math.Round(100 * fraction)
	if v == 0 {
		v = 0 // drop the sign of -0
	}
	return fmt.Sprintf("%+.0f%%", v)
}

// StreamStopped reports whether the reader of an observer's live stream
// stopped receiving mid-run: at is the first second from which it
// received nothing (less than 1% of its median rate in the seconds
// before) for the rest of the run, at least minQuiet seconds, while
// statements went on completing in every one of those seconds. This is
// study 2's lagging reader that the server cut off: "the stream stopped
// receiving events at second at".
//
// eventsPerSecond is anything proportional to what the reader receives
// (events or bytes per second); statementsPerSecond is the run's
// throughput per second. Only the seconds both cover are read. A quiet
// tail during which statements stopped too is not reported: then the
// whole server stalled, not the stream. A stream that never received
// anything did not stop. minQuiet < 1 is taken as 1.
func StreamStopped(eventsPerSecond []float64, statementsPerSecond []float64, minQuiet int) (at int, ok bool) {
	minQuiet = max(minQuiet, 1)
	n := min(len(eventsPerSecond), len(statementsPerSecond))
	events := eventsPerSecond[:n]
	// tailMax[i] is the most the reader received in any second from i on.
	tailMax := make([]float64, n+1)
	for i := n - 1; i >= 0; i-- {
		tailMax[i] = max(events[i], tailMax[i+1])
	}
	// The quiet tail starts at the first second after which the reader
	// stays below the threshold set by the seconds before it. The median
	// is at most the running maximum, so most seconds are ruled out
	// without computing it.
	at, headMax := -1, math.Inf(-1)
	for i := 1; i < n; i++ {
		headMax = max(headMax, events[i-1])
		if !(tailMax[i] < streamQuietFraction*headMax) {
			continue
		}
		if med := stats.Median(events[:i]); med > 0 && tailMax[i] < streamQuietFraction*med {
			at = i
			break
		}
	}
	if at < 0 || n-at < minQuiet {
		return 0, false
	}
	for _, s := range statementsPerSecond[at:n] {
		if !(s > 0) {
			return 0, false
		}
	}
	return at, true
}
