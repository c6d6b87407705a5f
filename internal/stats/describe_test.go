package stats

import (
	"math"
	"slices"
	"testing"
)

func TestPercentile(t *testing.T) {
	for _, c := range []struct {
		xs   []float64
		q    float64
		want float64
	}{
		{[]float64{1, 2, 3, 4}, 0.5, 2.5},
		{[]float64{4, 1, 3, 2}, 0.25, 1.75}, // numpy: percentile([1,2,3,4], 25)
		{[]float64{4, 1, 3, 2}, 0, 1},
		{[]float64{4, 1, 3, 2}, 1, 4},
		{[]float64{10, 20, 30, 40, 50}, 0.95, 48}, // position 3.8
		{[]float64{7}, 0.3, 7},
		{[]float64{1, 1, 1}, 0.5, 1},
	} {
		if got := Percentile(c.xs, c.q); !near(got, c.want, 1e-12) {
			t.Errorf("Percentile(%v, %v) = %v; want %v", c.xs, c.q, got, c.want)
		}
	}
	for _, c := range []struct {
		xs []float64
		q  float64
	}{
		{nil, 0.5}, {[]float64{}, 0}, {[]float64{1, 2}, -0.1}, {[]float64{1, 2}, 1.1},
		{[]float64{1, 2}, math.NaN()}, {[]float64{1, math.NaN()}, 0.5},
	} {
		if got := Percentile(c.xs, c.q); !math.IsNaN(got) {
			t.Errorf("Percentile(%v, %v) = %v; want NaN", c.xs, c.q, got)
		}
	}
}

func TestPercentileDoesNotModifyInput(t *testing.T) {
	xs := []float64{3, 1, 2}
	orig := slices.Clone(xs)
	Percentile(xs, 0.5)
	Median(xs)
	if !slices.Equal(xs, orig) {
		t.Errorf("Percentile modified its input: %v; want %v", xs, orig)
	}
}

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		xs   []float64
		want float64
	}{
		{[]float64{3, 1, 2}, 2},
		{[]float64{4, 1, 3, 2}, 2.5},
		{[]float64{5}, 5},
	} {
		if got := Median(c.xs); got != c.want {
			t.Errorf("Median(%v) = %v; want %v", c.xs, got, c.want)
		}
	}
	if got := Median(nil); !math.IsNaN(got) {
		t.Errorf("Median(nil) = %v; want NaN", got)
	}
}

func TestNoiseFloor(t *testing.T) {
	for _, c := range []struct {
		base []float64
		want float64
	}{
		// Pairs: 100/80 -> 20, 100/50 -> 50, 80/50 -> 37.5; sorted
		// {20, 37.5, 50}, position 0.95*2 = 1.9: 37.5 + 0.9*12.5 = 48.75.
		{[]float64{100, 80, 50}, 48.75},
		// One pair: 100*(1 - 90/100) = 10.
		{[]float64{90, 100}, 10},
		// Pairs {0, 10, 10}: position 1.9 -> 10.
		{[]float64{100, 100, 90}, 10},
		{[]float64{100, 100, 100, 100}, 0},
		{[]float64{100}, 0},
		{nil, 0},
	} {
		if got := NoiseFloor(c.base); !near(got, c.want, 1e-12) {
			t.Errorf("NoiseFloor(%v) = %v; want %v", c.base, got, c.want)
		}
	}
}
