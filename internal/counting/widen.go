package counting

import (
	"context"
	"fmt"
	"strings"

	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/observer"
	"github.com/obsbench/obsbench/internal/result"
	"github.com/obsbench/obsbench/internal/stats"
)

// MinPlanRounds is the fewest first rounds that more rounds are planned
// from: with fewer, the t quantile of their spread is so large that the
// plan asks for the most rounds whatever the spread.
const MinPlanRounds = 4

// MostTimes bounds the rounds a condition is counted: this many times
// the first rounds.
const MostTimes = 3

// Plan is how many rounds in all each condition wider than width (its
// backend change's half-width, in points) after the first rounds is to
// be counted: Stein's two-stage rule, the first rounds' spread taken as
// the later ones', so that the interval over all of them
// (stats.StagedMeanCI) is at most width wide where those later rounds
// spread no wider. Conditions not named need no more.
func Plan(conds []result.CountedCondition, first int, width float64) map[string]int {
	need := map[string]int{}
	if width <= 0 || first < MinPlanRounds {
		return need
	}
	for _, c := range conds {
		ch := c.BackendChange
		if ch == nil || !ch.HasCI {
			continue
		}
		if n := stats.SteinRounds(first, (ch.High-ch.Low)/2, width, MostTimes*first); n > first {
			need[c.Name] = n
		}
	}
	return need
}

// widen counts the rounds Plan asks for after the first e.Rounds, each
// with the baseline to pair it with, a server's round at a time.
func widen(ctx context.Context, e Experiment, cc Config, servers []engine.CountedServer, first []Sample) ([]Sample, error) {
	need := Plan(Summarize(observer.Names(e.Observers), first, 0), e.Rounds, e.Count.Width)
	if len(need) == 0 {
		return nil, nil
	}
	var wide []string
	for _, o := range e.Observers {
		if k, ok := need[o.Name]; ok {
			wide = append(wide, fmt.Sprintf("%s to %d", o.Name, k))
		}
	}
	e.Log("the first %d rounds leave %d change(s) wider than ±%g point (--count-width): counting more rounds of them beside the baseline, as many as those rounds' spread asks for (at most %d): %s",
		e.Rounds, len(wide), e.Count.Width, MostTimes*e.Rounds, strings.Join(wide, ", "))
	steps := later(e.Observers, need, e.Rounds, len(servers))
	total := len(first)
	for _, st := range steps {
		total += len(st.observers) * st.rounds
	}
	var out []Sample
	progress := cc.Progress
	for _, st := range steps {
		// Each later round is at a layout of its own as the first were
		// (func Run draws it from the seed and the round's number).
		cc.Observers, cc.FirstRound, cc.Rounds = st.observers, st.after, st.rounds
		off := len(first) + len(out)
		cc.Progress = func(s Sample, seq, _ int) { progress(s, off+seq, total) }
		s, err := Spread(ctx, cc, servers)
		out = append(out, s...)
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// step is rounds after+1 to after+rounds of observers.
type step struct {
	observers []observer.Observer
	after     int
	rounds    int
}

// later is the steps that count each observer (the first is the
// baseline) to the rounds need asks, from round first+1 on: as many
// rounds at a time as there are servers, each with the baseline and
// the observers that need more than the rounds before it.
func later(obs []observer.Observer, need map[string]int, first, servers int) []step {
	most := first
	for _, n := range need {
		most = max(most, n)
	}
	var out []step
	for done := first; done < most; {
		st := step{observers: []observer.Observer{obs[0]}, after: done, rounds: min(servers, most-done)}
		for _, o := range obs[1:] {
			if need[o.Name] > done {
				st.observers = append(st.observers, o)
			}
		}
		out = append(out, st)
		done += st.rounds
	}
	return out
}
