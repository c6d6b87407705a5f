package experiment_test

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/obsbench/obsbench/internal/experiment"
)

func TestPlan(t *testing.T) {
	steps := experiment.Plan([]int{4, 4, 4, 4, 4}, 42)
	if len(steps) != 20 {
		t.Fatalf("len(Plan(5 x 4, 42)) = %d; want 20", len(steps))
	}
	orders := map[string]bool{}
	for r := 1; r <= 4; r++ {
		seen := map[int]bool{}
		var order []int
		for _, s := range steps[(r-1)*5 : r*5] {
			if s.Round != r {
				t.Errorf("step in round block %d has Round %d", r, s.Round)
			}
			seen[s.Arm] = true
			order = append(order, s.Arm)
		}
		if len(seen) != 5 {
			t.Errorf("round %d runs arms %v; want each of 0..4 once", r, order)
		}
		orders[fmt.Sprint(order)] = true
	}
	if len(orders) < 2 {
		t.Errorf("all rounds have the same order; want them shuffled independently")
	}
	if again := experiment.Plan([]int{4, 4, 4, 4, 4}, 42); !reflect.DeepEqual(again, steps) {
		t.Error("Plan with the same seed gave a different order")
	}
	if other := experiment.Plan([]int{4, 4, 4, 4, 4}, 43); reflect.DeepEqual(other, steps) {
		t.Error("Plan with another seed gave the same order")
	}
}

// Arms repeated fewer times drop out of the later rounds.
func TestPlanUnequalReps(t *testing.T) {
	steps := experiment.Plan([]int{3, 1, 2}, 7)
	count := map[int]int{}
	for _, s := range steps {
		count[s.Arm]++
		if s.Arm == 1 && s.Round != 1 {
			t.Errorf("arm 1 (1 rep) runs in round %d", s.Round)
		}
	}
	if count[0] != 3 || count[1] != 1 || count[2] != 2 || len(steps) != 6 {
		t.Errorf("runs per arm = %v (%d steps); want 3, 1, 2", count, len(steps))
	}
}
