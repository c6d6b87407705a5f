package analysis

import (
	"fmt"
	"math"

	"github.com/obsbench/obsbench/internal/result"
	"github.com/obsbench/obsbench/internal/stats"
)

// atRate says the runs were driven at a fixed arrival rate (--rate):
// below saturation their throughput is the rate's, whatever the
// observer costs, and the cost is in server CPU and latency.
func atRate(runs []result.Run) bool {
	for _, r := range runs {
		if r.Driver.Rate != nil {
			return true
		}
	}
	return false
}

// rateSummary is how a condition's runs kept their rate and, for a paired
// method, how the side without the observer kept it in the same seconds,
// with the latency the observer added phase against phase; nil for a
// closed loop.
func rateSummary(runs []result.Run, alpha float64) *result.RateSummary {
	if !atRate(runs) {
		return nil
	}
	var side, ref rateSide
	var p50, p99, p999 []stats.Phase
	paired := false
	for _, r := range runs {
		if r.Error != "" || r.Driver.Rate == nil {
			continue
		}
		side.add(r.Driver.Rate, 0)
		d := r.Duet
		if d == nil || d.Off.Rate == nil {
			continue
		}
		paired = true
		side.busy = append(side.busy, d.OnCPUs)
		ref.add(d.Off.Rate, d.OffCPUs)
		on, off := r.Driver.Rate, d.Off.Rate
		if on.Saturated() || off.Saturated() || on.Completed == 0 || off.Completed == 0 {
			continue
		}
		ph := stats.Phase{InA: d.On == "a", Time: float64(r.Round)}
		ph.Value = on.Latency.P50 - off.Latency.P50
		p50 = append(p50, ph)
		ph.Value = on.Latency.P99 - off.Latency.P99
		p99 = append(p99, ph)
		ph.Value = on.Latency.P999 - off.Latency.P999
		p999 = append(p999, ph)
	}
	if side.runs == 0 {
		return nil
	}
	s := &result.RateSummary{AskedPerS: side.asked, Side: side.summary()}
	if paired {
		r := ref.summary()
		s.Reference = &r
		if s.Side.SaturatedRuns == 0 && r.SaturatedRuns == 0 {
			s.P50Added, s.P99Added, s.P999Added = latencyAdded(p50, alpha), latencyAdded(p99, alpha), latencyAdded(p999, alpha)
		}
	}
	return s
}

// rateSide gathers one side's runs at a rate.
type rateSide struct {
	runs, saturated        int
	asked                  float64
	backlog, skipped, late int64
	achieved, lag, busy    []float64
	p50, p99, p999         []float64
}

func (s *rateSide) add(r *result.RateResult, busy float64) {
	s.runs++
	s.asked = r.Asked
	s.achieved = append(s.achieved, r.Achieved)
	s.skipped += r.Skipped
	s.late += r.Late
	s.lag = append(s.lag, r.Lag.P99)
	if busy > 0 {
		s.busy = append(s.busy, busy)
	}
	if r.Saturated() {
		s.saturated++
		s.backlog = max(s.backlog, r.Backlog)
		return
	}
	s.p50, s.p99, s.p999 = append(s.p50, r.Latency.P50), append(s.p99, r.Latency.P99), append(s.p999, r.Latency.P999)
}

func (s *rateSide) summary() result.RateSide {
	out := result.RateSide{Runs: s.runs, AchievedPerS: median(s.achieved), SaturatedRuns: s.saturated, BacklogMax: s.backlog,
		Skipped: s.skipped, Late: s.late, LagP99MS: median(s.lag)}
	if len(s.busy) > 0 {
		out.BusyCPUs = median(s.busy)
	}
	if s.saturated == 0 && len(s.p99) > 0 {
		out.Latency = &result.RateLatency{P50: median(s.p50), P99: median(s.p99), P999: median(s.p999)}
	}
	return out
}

// latencyAdded is the phase model's estimate of a latency difference, in
// ms; nil with too few phases.
func latencyAdded(ph []stats.Phase, alpha float64) *result.LatencyAdded {
	e, err := stats.PhaseModel(ph, alpha)
	if err != nil || math.IsNaN(e.Est) {
		return nil
	}
	return &result.LatencyAdded{MS: e.Est, CILow: e.Low, CIHigh: e.High,
		Verdict: verdict(true, e.Low > 0 || e.High < 0, e.Est > 0, "slower", "faster")}
}

// cpuOverhead is, at a rate, the overhead of a method that is not paired
// (rounds, alternation) read from its change in server CPU per statement,
// 1 - 1/(1+change): its throughput is the rate's whatever the observer
// costs. Without a change measured it is not measured.
func cpuOverhead(o *result.OverheadSummary, change *result.ChangeSummary) *result.OverheadSummary {
	if o == nil {
		return nil
	}
	if change == nil {
		return &result.OverheadSummary{Verdict: "not measured: at a fixed rate throughput is the rate's, and the server CPU per statement was not compared"}
	}
	loss := func(pct float64) float64 { return 100 * (1 - 1/(1+pct/100)) }
	significant := change.CILow > 0 || change.CIHigh < 0
	return &result.OverheadSummary{Basis: result.BasisServerCPU, Pct: loss(change.Pct), CILow: loss(change.CILow), CIHigh: loss(change.CIHigh),
		Confidence: o.Confidence, Significant: significant, Verdict: verdict(true, significant, change.Pct > 0, "slower", "faster")}
}

// rateWarnings say when a side of a condition could not keep its rate:
// its latency is then left out, as the queue made it. With a twin's CPU
// share known, a side whose server kept well under it did not fall
// behind for want of CPU: it waited, or its sessions did not keep up.
func rateWarnings(name string, s *result.RateSummary, share float64) []string {
	if s == nil {
		return nil
	}
	var out []string
	say := func(who string, side result.RateSide) {
		if side.SaturatedRuns == 0 {
			return
		}
		why := "saturated at this rate, its latency not shown; a lower --rate measures it"
		if share > 0 && side.BusyCPUs > 0 && side.BusyCPUs < ShortOfShare*share {
			why = fmt.Sprintf("its server used only %.2f of its %.3g CPU, so it waited rather than computed (a blocking sink, a lock) or its sessions fell behind on a busy machine; its latency not shown", side.BusyCPUs, share)
		}
		skipped := ""
		if side.Skipped > 0 {
			skipped = fmt.Sprintf(", %d skipped over the latency limit", side.Skipped)
		}
		out = append(out, fmt.Sprintf("%s: %s could not keep the rate of %.0f a second in %d of %d runs (backlog up to %d arrivals%s): %s",
			name, who, s.AskedPerS, side.SaturatedRuns, side.Runs, side.BacklogMax, skipped, why))
	}
	if s.Reference == nil {
		say("the sessions", s.Side)
		return out
	}
	say("the observer's side", s.Side)
	say("the side without it", *s.Reference)
	return out
}
