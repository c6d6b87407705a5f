package experiment

import (
	"testing"
	"time"

	"github.com/obsbench/obsbench/internal/driver"
)

// The time left scales the steps still to run by the pace of those done,
// and adds what follows the timed steps (the counted part) as it is: at
// the last step the counted part is what is left, not nothing.
func TestRemainingIncludesThen(t *testing.T) {
	cfg := Config{Driver: driver.Config{Warmup: 500 * time.Millisecond, Duration: 2 * time.Second}, Then: 2 * time.Minute}
	arms := []Arm{{Name: "baseline"}, {Name: "x"}}
	steps := []Step{{1, 0}, {1, 1}, {2, 0}, {2, 1}}
	tests := []struct {
		elapsed time.Duration
		done    int
		want    time.Duration
	}{
		{0, 0, 2 * time.Minute},                             // nothing done yet: no pace
		{6 * time.Second, 2, 6*time.Second + 2*time.Minute}, // two of four steps took 6 s
		{12 * time.Second, 4, 2 * time.Minute},              // every timed step done
	}
	for _, tt := range tests {
		if got := remaining(tt.elapsed, cfg, arms, steps, tt.done); got != tt.want {
			t.Errorf("remaining(%v, done %d) = %v; want %v", tt.elapsed, tt.done, got, tt.want)
		}
	}
}
