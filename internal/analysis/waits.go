package analysis

import (
	"sort"

	"github.com/obsbench/obsbench/internal/collect"
	"github.com/obsbench/obsbench/internal/result"
)

// A wait is an observer's signature when it takes at least SignaturePct of
// the active-session samples under the observer and at most NegligiblePct
// in the baseline: it appeared, rather than grew with the load.
const (
	SignaturePct  = 5.0
	NegligiblePct = 1.0
)

// waitProfiles sums the wait profiles of a condition's runs: what was
// sampled with the observer on, and what with it off (alternation runs'
// off phases).
func waitProfiles(runs []result.Run) (on, off collect.Waits, engine map[string]int64) {
	for _, r := range runs {
		if r.Error != "" {
			continue
		}
		if r.Waits != nil {
			on.Add(*r.Waits)
		}
		if r.WaitsOff != nil {
			off.Add(*r.WaitsOff)
		}
		for k, n := range r.EngineWaits {
			if engine == nil {
				engine = map[string]int64{}
			}
			engine[k] += n
		}
	}
	return on, off, engine
}

// summarizeWaits compares a condition's profile with its baseline's; base
// has no samples for the baseline condition itself.
func summarizeWaits(w, base collect.Waits, engine map[string]int64) *result.WaitSummary {
	total := w.Total()
	if total == 0 {
		return nil
	}
	ws := &result.WaitSummary{Samples: total, Signatures: []string{}}
	if w.Ticks > 0 {
		ws.ActiveSessions = float64(total) / float64(w.Ticks)
	}
	baseTotal := base.Total()
	for _, sh := range shares(w.Counts, total) {
		if baseTotal > 0 {
			b := 100 * float64(base.Counts[sh.Wait]) / float64(baseTotal)
			d := sh.Pct - b
			sh.BaselinePct, sh.DeltaPct = &b, &d
			if sh.Wait != collect.CPULabel && sh.Pct >= SignaturePct && b <= NegligiblePct {
				sh.Signature = true
				ws.Signatures = append(ws.Signatures, sh.Wait)
			}
		}
		if len(ws.Top) < result.TopWaits {
			ws.Top = append(ws.Top, sh)
		}
	}
	var et int64
	for _, n := range engine {
		et += n
	}
	if et > 0 {
		ws.Engine = shares(engine, et)
		if len(ws.Engine) > result.TopWaits {
			ws.Engine = ws.Engine[:result.TopWaits]
		}
	}
	return ws
}

// shares lists counts as percentages of total, largest first.
func shares(counts map[string]int64, total int64) []result.WaitShare {
	out := make([]result.WaitShare, 0, len(counts))
	for k, n := range counts {
		out = append(out, result.WaitShare{Wait: k, Pct: 100 * float64(n) / float64(total)})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Pct != out[j].Pct {
			return out[i].Pct > out[j].Pct
		}
		return out[i].Wait < out[j].Wait
	})
	return out
}

// medianCounters is each counter's median rate over a condition's runs.
func medianCounters(runs []result.Run) map[string]float64 {
	by := map[string][]float64{}
	for _, r := range runs {
		if r.Error != "" {
			continue
		}
		for k, v := range r.Counters {
			by[k] = append(by[k], v)
		}
	}
	if len(by) == 0 {
		return nil
	}
	out := map[string]float64{}
	for k, vs := range by {
		out[k] = median(vs)
	}
	return out
}

// samplerCPU is the median over runs of the wait sampler's server CPU.
func samplerCPU(runs []result.Run) *float64 {
	var xs []float64
	for _, r := range runs {
		if r.Error == "" && r.WaitSamplerCPUPct != nil {
			xs = append(xs, *r.WaitSamplerCPUPct)
		}
	}
	if len(xs) == 0 {
		return nil
	}
	m := median(xs)
	return &m
}
