package driver

import (
	"math"
	"testing"
	"time"
)

// A lane's arrivals are Poisson: gaps exponential of the asked mean (their
// mean and spread alike), the same numbers give the same schedule and
// other numbers another.
func TestLaneIsPoisson(t *testing.T) {
	start := time.Unix(1000, 0)
	const rate, n = 5000.0, 200_000
	l := newLane(rate, start, start, start.Add(time.Hour), 7, 3, 0)
	prev := start
	var sum, sq float64
	for range n {
		at, _ := l.take()
		g := at.Sub(prev).Seconds()
		prev = at
		sum += g
		sq += g * g
	}
	mean := sum / n
	sd := math.Sqrt(sq/n - mean*mean)
	if rel := mean*rate - 1; math.Abs(rel) > 0.01 {
		t.Errorf("mean gap %.3g s; want 1/%v within 1%% (off by %.2f%%)", mean, rate, 100*rel)
	}
	// An exponential's spread equals its mean.
	if cv := sd / mean; math.Abs(cv-1) > 0.02 {
		t.Errorf("gaps' coefficient of variation %.3f; want 1 (exponential)", cv)
	}
	same := newLane(rate, start, start, start.Add(time.Hour), 7, 3, 1)
	other := newLane(rate, start, start, start.Add(time.Hour), 7, 4, 0)
	a, _ := same.take()
	b, _ := other.take()
	first, _ := newLane(rate, start, start, start.Add(time.Hour), 7, 3, 0).take()
	if !a.Equal(first) {
		t.Errorf("lanes of the same seed and stream start at %v and %v; want alike", a, first)
	}
	if a.Equal(b) {
		t.Errorf("lanes of other streams both start at %v; want apart", a)
	}
}

// An arrival counts in the window when it is due inside it and taken
// before it closed; the backlog is the window's arrivals not taken by
// then, counted without moving the schedule.
func TestLaneBacklog(t *testing.T) {
	now := time.Now()
	opened, closed := now.Add(-2*time.Second), now.Add(-time.Second)
	// Taken after the window closed: nothing counts, all of the window's
	// arrivals are its backlog.
	l := newLane(1000, opened.Add(-time.Second), opened, closed, 1, 1, 0)
	want := int64(0)
	copyOf := newLane(1000, opened.Add(-time.Second), opened, closed, 1, 1, 0)
	for {
		at, _ := copyOf.take()
		if !at.Before(closed) {
			break
		}
		if !at.Before(opened) {
			want++
		}
	}
	if got := l.backlog(); got != want {
		t.Fatalf("backlog %d; want the window's %d arrivals", got, want)
	}
	for range 10 {
		if _, counts := l.take(); counts {
			t.Fatal("an arrival taken after the window closed counts in it")
		}
	}
	if got := l.backlog(); got != want {
		t.Errorf("backlog %d after late takes; want %d, as when the window closed", got, want)
	}
	// Taken while the window is open: arrivals inside it count.
	open := newLane(1000, now, now, now.Add(time.Hour), 1, 1, 0)
	if _, counts := open.take(); !counts {
		t.Error("an arrival due in the open window, taken now, does not count")
	}
}
