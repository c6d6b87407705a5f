package counting

import (
	"reflect"
	"testing"

	"github.com/obsbench/obsbench/internal/observer"
	"github.com/obsbench/obsbench/internal/result"
)

// A condition whose change is wider than --count-width after the first
// rounds is planned Stein's rounds (at most three times the first); one
// within it, the baseline, one with no interval, and any after fewer
// than MinPlanRounds are not.
func TestPlan(t *testing.T) {
	ch := func(half float64) *result.CountChange {
		return &result.CountChange{Pct: 5, Low: 5 - half, High: 5 + half, HasCI: true}
	}
	conds := []result.CountedCondition{
		{Name: "baseline"},
		{Name: "narrow", BackendChange: ch(0.04)},
		{Name: "wide", BackendChange: ch(0.07)},
		{Name: "widest", BackendChange: ch(0.5)},
		{Name: "one-pair", BackendChange: &result.CountChange{Pct: 5, Low: 5, High: 5}},
	}
	if got, want := Plan(conds, 8, 0.05), map[string]int{"wide": 16, "widest": 24}; !reflect.DeepEqual(got, want) {
		t.Errorf("Plan(8 rounds, 0.05) = %v; want %v", got, want)
	}
	for _, c := range []struct {
		first int
		width float64
	}{{8, 0}, {MinPlanRounds - 1, 0.05}} {
		if got := Plan(conds, c.first, c.width); len(got) != 0 {
			t.Errorf("Plan(%d rounds, %v) = %v; want nothing", c.first, c.width, got)
		}
	}
}

// The later rounds go a server's rounds at a time, each step with the
// baseline and the observers that still need rounds.
func TestLaterSteps(t *testing.T) {
	obs := []observer.Observer{{Name: "baseline"}, {Name: "a"}, {Name: "b"}, {Name: "c"}}
	steps := later(obs, map[string]int{"a": 11, "c": 14}, 8, 2)
	type got struct {
		names         []string
		after, rounds int
	}
	var gots []got
	for _, st := range steps {
		gots = append(gots, got{observer.Names(st.observers), st.after, st.rounds})
	}
	want := []got{
		{[]string{"baseline", "a", "c"}, 8, 2},
		{[]string{"baseline", "a", "c"}, 10, 2},
		{[]string{"baseline", "c"}, 12, 2},
	}
	if !reflect.DeepEqual(gots, want) {
		t.Errorf("later = %v; want %v", gots, want)
	}
}
