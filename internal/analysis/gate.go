package analysis

// The gates decide whether an experiment fails --max-overhead: an
// observer fails when the whole 95% interval of its cost lies above the
// limit, not merely its point estimate, so that a pipeline gated on it
// fails on the observer's cost and not on the machine's noise.

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/obsbench/obsbench/internal/result"
)

// OverheadError says which observers exceeded --max-overhead. The command
// exits with its own code then, so that a pipeline can tell "too costly"
// from "broken".
type OverheadError struct {
	Limit float64
	// Over are the observers above the limit, each with its estimate and
	// interval.
	Over []string
	// Counted: the limit applied to counted instructions per statement,
	// not to timed throughput.
	Counted bool
	// Flag is the flag that set the limit, without its dashes; "" is
	// max-overhead.
	Flag string
	// Latency: the limit applied to the p99 latency added at a rate, in
	// ms (--max-latency-added).
	Latency bool
}

func (e *OverheadError) Error() string {
	what, unit := "overhead", "%"
	switch {
	case e.Counted:
		what = "counted instructions per statement"
	case e.Latency:
		what, unit = "p99 latency added", " ms"
	}
	flag := e.Flag
	if flag == "" {
		flag = "max-overhead"
	}
	return fmt.Sprintf("%s above --%s %g%s with 95%% confidence: %s", what, flag, e.Limit, unit, strings.Join(e.Over, "; "))
}

// GateLatency fails a summary at a fixed rate whose observers add more
// than limit ms to the p99 latency, their whole interval above it, or
// whose side could not keep the rate in most of its runs while the side
// without them kept it in all (*OverheadError): a run that fell behind
// now and then is a busy machine's, not the observer's. A summary with no latency added (a closed loop, a
// method that is not paired) is an error: nothing could be gated.
func GateLatency(limit float64, sum result.Summary) error {
	var over []string
	gated := false
	for _, cs := range sum.Conditions {
		r := cs.Rate
		if r == nil || r.Reference == nil || strings.HasPrefix(cs.Name, "baseline") || strings.HasPrefix(cs.Name, "collector:") {
			continue
		}
		gated = true
		switch a := r.P99Added; {
		case 2*r.Side.SaturatedRuns > r.Side.Runs && r.Reference.SaturatedRuns == 0:
			over = append(over, fmt.Sprintf("%s saturated at this rate (backlog up to %d)", cs.Name, r.Side.BacklogMax))
		case a != nil && a.CILow > limit:
			over = append(over, fmt.Sprintf("%s %+.3f ms [%.3f, %.3f]", cs.Name, a.MS, a.CILow, a.CIHigh))
		}
	}
	if !gated {
		return errors.New("--max-latency-added: no observer's latency was compared side by side at a rate (a duet or a split at --rate or --load), so nothing is gated")
	}
	if len(over) == 0 {
		return nil
	}
	return &OverheadError{Limit: limit, Over: over, Flag: "max-latency-added", Latency: true}
}

// Limits are the gates an experiment was given: --max-overhead,
// --max-counted-overhead and --max-latency-added; nil: not given.
type Limits struct {
	Overhead, Counted, Latency *float64
}

// Gate fails a timed experiment whose observers cost more than the
// overhead limit (GateTimed), add more counted instructions per
// statement than the counted one (GateCounted) or more p99 latency at a
// rate than the latency one (GateLatency): an *OverheadError for each
// gate that fails.
func (l Limits) Gate(sum result.Summary) error {
	var timed, counted, latency error
	if l.Overhead != nil {
		timed = GateTimed(*l.Overhead, sum)
	}
	if l.Latency != nil {
		latency = GateLatency(*l.Latency, sum)
	}
	if l.Counted != nil {
		switch k := sum.Counted; {
		case k == nil:
			counted = errors.New("--max-counted-overhead: nothing was counted, so nothing is gated")
		case k.Error != "":
			counted = fmt.Errorf("--max-counted-overhead: the counted runs failed (%s), so nothing is gated", k.Error)
		default:
			counted = GateCounted("max-counted-overhead", *l.Counted, k.Conditions)
		}
	}
	return errors.Join(timed, counted, latency)
}

// GateCountedRun fails a counted experiment (--method instructions)
// whose observers add more than either limit to the session's
// instructions per statement: both gate the one figure.
func (l Limits) GateCountedRun(conds []result.CountedCondition) error {
	var errs []error
	if l.Overhead != nil {
		errs = append(errs, GateCounted("max-overhead", *l.Overhead, conds))
	}
	if l.Counted != nil {
		errs = append(errs, GateCounted("max-counted-overhead", *l.Counted, conds))
	}
	return errors.Join(errs...)
}

// GateTimed fails a summary whose observers cost more than limit percent of
// throughput (*OverheadError). The baseline's A/A arm and the collector
// arm are not observers and are not gated.
func GateTimed(limit float64, sum result.Summary) error {
	var over []string
	for _, cs := range sum.Conditions {
		o := cs.Overhead
		if o == nil || strings.HasPrefix(cs.Name, "baseline") || strings.HasPrefix(cs.Name, "collector:") {
			continue
		}
		if o.Significant && o.CILow > limit {
			over = append(over, fmt.Sprintf("%s %.1f%% [%.1f, %.1f]", cs.Name, o.Pct, o.CILow, o.CIHigh))
		}
	}
	if len(over) == 0 {
		return nil
	}
	return &OverheadError{Limit: limit, Over: over}
}

// GateCounted fails a counted experiment whose observers add more than limit
// percent to the session's instructions per statement; flag names the
// limit in the error. The other processes' count is per run, start-up and
// shutdown included, so it is not a per-statement cost and is not gated.
// conds[0] is the baseline.
func GateCounted(flag string, limit float64, conds []result.CountedCondition) error {
	if len(conds) == 0 {
		return nil
	}
	var over []string
	for _, cond := range conds[1:] {
		ch := cond.BackendChange
		if ch != nil && ch.Signif && ch.Low > limit {
			over = append(over, fmt.Sprintf("%s %+.2f%% [%+.2f, %+.2f]", cond.Name, ch.Pct, ch.Low, ch.High))
		}
	}
	if len(over) == 0 {
		return nil
	}
	return &OverheadError{Limit: limit, Over: over, Counted: true, Flag: flag}
}

// GateSessions applies the limit to every experiment of a sweep, by its
// session count, and names each over it with its count.
func GateSessions(limit float64, sums map[int]result.Summary) error {
	var over []string
	for _, n := range slices.Sorted(maps.Keys(sums)) {
		var oe *OverheadError
		if errors.As(GateTimed(limit, sums[n]), &oe) {
			for _, o := range oe.Over {
				over = append(over, fmt.Sprintf("%d sessions: %s", n, o))
			}
		}
	}
	if len(over) == 0 {
		return nil
	}
	return &OverheadError{Limit: limit, Over: over}
}
