package counting

import (
	"maps"
	"math"
	"slices"

	"github.com/obsbench/obsbench/internal/result"
	"github.com/obsbench/obsbench/internal/stats"
)

// Level is the confidence level of the intervals.
const Level = 0.95

// Summarize is each condition's counts, in names' order (the first is
// the baseline), its change against the baseline paired by round: the
// mean of the log ratios with Student's t interval. Rounds 1 to first
// are the first stage of a two-stage count (0: there is one stage): a
// condition counted more rounds than those has the wider of that
// interval and Stein's (stats.StagedMeanCI).
func Summarize(names []string, samples []Sample, first int) []result.CountedCondition {
	byCond := map[string]map[int]Sample{}
	for _, s := range samples {
		if byCond[s.Condition] == nil {
			byCond[s.Condition] = map[int]Sample{}
		}
		byCond[s.Condition][s.Round] = s
	}
	var out []result.CountedCondition
	for i, name := range names {
		runs := byCond[name]
		c := result.CountedCondition{Name: name, Runs: len(runs)}
		if len(runs) == 0 {
			// Not counted (the counting stopped first): no means, and
			// no change against a baseline.
			c.Syscalls, c.HelperSyscalls = -1, -1
			out = append(out, c)
			continue
		}
		var backend, helpers, sys, hsys, secs []float64
		for _, s := range runs {
			backend = append(backend, s.Backend)
			helpers = append(helpers, s.Helpers)
			sys = append(sys, s.Syscalls)
			hsys = append(hsys, s.HelperSyscalls)
			secs = append(secs, s.Seconds)
		}
		c.Backend, c.Helpers = mean(backend), mean(helpers)
		c.Syscalls, c.HelperSyscalls, c.Seconds = knownMean(sys), knownMean(hsys), mean(secs)
		if len(backend) > 0 {
			lo, hi := backend[0], backend[0]
			for _, b := range backend {
				lo, hi = math.Min(lo, b), math.Max(hi, b)
			}
			if c.Backend > 0 {
				c.BackendSpreadPct = 100 * (hi - lo) / c.Backend
			}
		}
		if i > 0 {
			base := byCond[names[0]]
			c.BackendChange = change(base, runs, first, func(s Sample) float64 { return s.Backend })
			c.HelperChange = change(base, runs, first, func(s Sample) float64 { return s.Helpers })
		}
		c.Queries = queries(runs, byCond[names[0]], i == 0, first)
		out = append(out, c)
	}
	return out
}

// change pairs the rounds both conditions ran; rounds 1 to first are the
// first stage (Summarize).
func change(base, cond map[int]Sample, first int, v func(Sample) float64) *result.CountChange {
	var logs []float64
	staged := 0
	for _, r := range slices.Sorted(maps.Keys(cond)) {
		s := cond[r]
		b, ok := base[r]
		if ok && v(b) > 0 && v(s) > 0 {
			logs = append(logs, math.Log(v(s)/v(b)))
			if r <= first {
				staged++
			}
		}
	}
	if len(logs) == 0 {
		return nil
	}
	m, lo, hi, ok := stats.StagedMeanCI(logs, staged, Level)
	c := &result.CountChange{Pct: pct(m), Low: pct(lo), High: pct(hi), HasCI: ok, Pairs: len(logs)}
	c.Signif = ok && (c.Low > 0 || c.High < 0)
	return c
}

func pct(logRatio float64) float64 { return 100 * (math.Exp(logRatio) - 1) }

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// knownMean is the mean of xs, -1 if any is unknown (-1).
func knownMean(xs []float64) float64 {
	for _, x := range xs {
		if x < 0 {
			return -1
		}
	}
	return mean(xs)
}

// queries is each query's counts over a condition's runs, in the order
// the runs name them, with its change against the baseline's runs base
// (none for the baseline itself).
func queries(runs, base map[int]Sample, isBase bool, first int) []result.CountedQuery {
	var out []result.CountedQuery
	for _, r := range slices.Sorted(maps.Keys(runs)) {
		for _, q := range runs[r].Queries {
			if !slices.ContainsFunc(out, func(c result.CountedQuery) bool { return c.Name == q.Name }) {
				out = append(out, result.CountedQuery{Name: q.Name, Executions: q.Executions})
			}
		}
	}
	for i := range out {
		perExec := func(s Sample) float64 {
			for _, q := range s.Queries {
				if q.Name == out[i].Name {
					return q.PerExec
				}
			}
			return 0
		}
		var xs []float64
		for _, s := range runs {
			if v := perExec(s); v > 0 {
				xs = append(xs, v)
			}
		}
		out[i].PerExec = mean(xs)
		if !isBase {
			out[i].Change = change(base, runs, first, perExec)
		}
	}
	return out
}
