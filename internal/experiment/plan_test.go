package experiment_test

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/obsbench/obsbench/internal/experiment"
)

func TestPlan(t *testing.T) {
	steps := experiment.Plan(5, 4, 42)
	if len(steps) != 20 {
		t.Fatalf("len(Plan(5, 4, 42)) = %d; want 20", len(steps))
	}
	orders := map[string]bool{}
	for r := 1; r <= 4; r++ {
		seen := map[int]bool{}
		var order []int
		for _, s := range steps[(r-1)*5 : r*5] {
			if s.Round != r {
				t.Errorf("step in round block %d has Round %d", r, s.Round)
			}
			seen[s.Condition] = true
			order = append(order, s.Condition)
		}
		if len(seen) != 5 {
			t.Errorf("round %d runs conditions %v; want each of 0..4 once", r, order)
		}
		orders[fmt.Sprint(order)] = true
	}
	if len(orders) < 2 {
		t.Errorf("all rounds have the same order; want them shuffled independently")
	}
	if again := experiment.Plan(5, 4, 42); !reflect.DeepEqual(again, steps) {
		t.Error("Plan with the same seed gave a different order")
	}
	if other := experiment.Plan(5, 4, 43); reflect.DeepEqual(other, steps) {
		t.Error("Plan with another seed gave the same order")
	}
}
