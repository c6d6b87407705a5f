package analysis

import (
	"fmt"
	"math"

	"github.com/obsbench/obsbench/internal/result"
	"github.com/obsbench/obsbench/internal/stats"
)

// ShortOfShare is the fraction of its CPU share below which a twin is
// said to have waited rather than computed: its share was not lent to the
// other twin (the quota holds it), but the ratio then includes the wait.
const ShortOfShare = 0.9

// duetRatios are a duet run's ratios, the observer's twin over the other
// in the same window: throughput, and server CPU per statement (NaN-free:
// ok false when either twin's CPU was not read).
func duetRatios(r result.Run) (tput, cpu float64, cpuOK bool) {
	d := r.Duet
	if d == nil || d.Off.Throughput <= 0 || r.Driver.Throughput <= 0 {
		return 0, 0, false
	}
	tput = r.Driver.Throughput / d.Off.Throughput
	on, off := cpuPerStmt(r), cpuPerStmt(offRun(r))
	if on > 0 && off > 0 {
		return tput, on / off, true
	}
	return tput, 0, false
}

// offRun is the other twin of a duet run as a run of its own.
func offRun(r result.Run) result.Run {
	return result.Run{Driver: r.Duet.Off, Usage: r.Duet.OffUsage}
}

// duetPairs are a duet condition's ratios, the observer's twin against
// the other over the same seconds, taken in pairs of phases with the
// observer once in each twin (rounds 1-2, 3-4, ...: A,B then B,A): a
// pair's geometric mean holds no difference between the twins, which
// would otherwise split the phases into two groups and widen the interval
// by twice that difference. cpu are the same of server CPU per statement,
// for the pairs where it was read.
func duetPairs(runs []result.Run) (tput, cpu []float64) {
	type phase struct {
		on        string
		tput, cpu float64 // cpu 0: not read
	}
	byRound := map[int]phase{}
	last := 0
	for _, r := range runs {
		if r.Error != "" || r.Duet == nil {
			continue
		}
		if t, c, _ := duetRatios(r); t > 0 {
			byRound[r.Round] = phase{on: r.Duet.On, tput: t, cpu: c}
			last = max(last, r.Round)
		}
	}
	for k := 1; k < last; k += 2 {
		p, q := byRound[k], byRound[k+1]
		if p.tput == 0 || q.tput == 0 || p.on == q.on {
			continue
		}
		tput = append(tput, math.Sqrt(p.tput*q.tput))
		if p.cpu > 0 && q.cpu > 0 {
			cpu = append(cpu, math.Sqrt(p.cpu*q.cpu))
		}
	}
	return tput, cpu
}

// duetOverhead compares a duet condition's twins pair of phases by pair
// (duetPairs); its reference is the twin without the observer.
func duetOverhead(runs []result.Run, alpha float64) (*result.OverheadSummary, *result.ChangeSummary, string, *result.Reference, *result.DuetSummary) {
	var refTput, refP50, refP99, refCPU, onCPUs, offCPUs, onHeld, offHeld []float64
	share := 0.0
	for _, r := range runs {
		if r.Error != "" || r.Duet == nil {
			continue
		}
		d := r.Duet
		refTput, refP50, refP99 = append(refTput, d.Off.Throughput), append(refP50, d.Off.Latency.P50), append(refP99, d.Off.Latency.P99)
		if c := cpuPerStmt(offRun(r)); c > 0 {
			refCPU = append(refCPU, 1e6*c)
		}
		onCPUs, offCPUs = append(onCPUs, d.OnCPUs), append(offCPUs, d.OffCPUs)
		onHeld, offHeld = append(onHeld, d.OnThrottledS), append(offHeld, d.OffThrottledS)
		share = d.ShareCPUs
	}
	tput, cpu := duetPairs(runs)
	isolation := "not isolated"
	if share > 0 {
		isolation = fmt.Sprintf("each twin held to %.3g CPU", share)
	}
	method := fmt.Sprintf("duet: %d pairs of phases, the observer's twin against its twin server in the same seconds, once in each twin (A,B,B,A or B,A,A,B; %s)", len(tput), isolation)
	if len(tput) == 0 {
		return &result.OverheadSummary{Verdict: "not measured: no pair of successful phases"}, nil, method, nil, nil
	}
	ref := &result.Reference{StmtsPerS: median(refTput), LatencyMS: result.LatencySummary{P50: median(refP50), P99: median(refP99)}}
	if len(refCPU) > 0 {
		v := median(refCPU)
		ref.ServerUSPerStmt = &v
	}
	var change *result.ChangeSummary
	if len(cpu) >= 2 {
		if o, err := stats.PairedOverhead(cpu, alpha); err == nil {
			change = &result.ChangeSummary{Pct: -o.Pct, CILow: -o.CIHigh, CIHigh: -o.CILow}
		}
	}
	ds := &result.DuetSummary{Phases: len(refTput), ShareCPUs: share, OnCPUs: median(onCPUs), OffCPUs: median(offCPUs),
		OnThrottledS: median(onHeld), OffThrottledS: median(offHeld)}
	return summarizeOverhead(stats.PairedOverhead(tput, alpha)), change, method, ref, ds
}

// duetWarnings say when a twin used less than its CPU share in the
// median phase. The observer's twin alone: it waited (a blocking sink, a
// lock) instead of computing, so its cost is in time rather than CPU, and
// the quota kept the other twin from taking the CPU it left. Both: the
// workload leaves CPU idle, and the shares are not what limits it.
func duetWarnings(name string, d *result.DuetSummary) []string {
	if d == nil || d.ShareCPUs <= 0 {
		return nil
	}
	short := func(used float64) bool { return used < ShortOfShare*d.ShareCPUs }
	switch {
	case short(d.OnCPUs) && short(d.OffCPUs):
		return []string{fmt.Sprintf("%s: neither twin used its %.3g CPU share (%.2f with the observer, %.2f without, median phase): the workload leaves CPU idle",
			name, d.ShareCPUs, d.OnCPUs, d.OffCPUs)}
	case short(d.OnCPUs):
		return []string{fmt.Sprintf("%s: the observer's twin used %.2f of its %.3g CPU share against %.2f without it (median phase): it waited rather than computed, and the quota kept the other twin from taking what it left",
			name, d.OnCPUs, d.ShareCPUs, d.OffCPUs)}
	}
	return nil
}
