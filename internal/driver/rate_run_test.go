package driver_test

import (
	"context"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/obsbench/obsbench/internal/driver"
	"github.com/obsbench/obsbench/internal/result"
	"github.com/obsbench/obsbench/internal/workload"
)

// stallWork's statements take service; every session's statement that
// starts inside [stallAt, stallAt+stall) of the run waits for the stall's
// end, as behind a lock another session holds.
type stallWork struct {
	service        time.Duration
	stallAt, stall time.Duration
	start          *time.Time
	once           *sync.Once
}

func (w stallWork) Worker(ctx context.Context, conn workload.Conn, _ int) (workload.Op, error) {
	return func(ctx context.Context) error {
		w.once.Do(func() { *w.start = time.Now() })
		if w.stall > 0 {
			from := w.start.Add(w.stallAt)
			if now := time.Now(); !now.Before(from) && now.Before(from.Add(w.stall)) {
				time.Sleep(time.Until(from.Add(w.stall)))
			}
		}
		time.Sleep(w.service)
		return nil
	}, nil
}

func newStallWork(service, stallAt, stall time.Duration) stallWork {
	return stallWork{service: service, stallAt: stallAt, stall: stall, start: new(time.Time), once: new(sync.Once)}
}

func nopDial(context.Context) (driver.Session, error) { return &groupConn{}, nil }

func runAtRate(t *testing.T, cfg driver.Config, w workload.Workload) *result.RateResult {
	t.Helper()
	res, err := driver.Run(context.Background(), cfg, nopDial, w)
	if err != nil {
		t.Fatal(err)
	}
	if res.Rate == nil {
		t.Fatal("a run at a rate has no rate result")
	}
	r := res.Rate
	if r.Scheduled != r.Started+r.Skipped+r.Backlog {
		t.Errorf("scheduled %d; want started %d + skipped %d + backlog %d", r.Scheduled, r.Started, r.Skipped, r.Backlog)
	}
	t.Logf("rate: %+v", *r)
	return r
}

// Below capacity the sessions keep the schedule: every arrival due in the
// window is served, the achieved rate is the schedule's within a
// hundredth, the schedule's is the asked one within Poisson's spread,
// and the run is not saturated.
func TestRateHeld(t *testing.T) {
	cfg := driver.Config{Clients: 4, Warmup: 200 * time.Millisecond, Duration: 2 * time.Second, Goroutines: true,
		Rate: 1000, RateSeed: 1}
	r := runAtRate(t, cfg, newStallWork(200*time.Microsecond, 0, 0))
	// The window's end finds the arrivals of its last lag still queued: a
	// loaded machine that wakes a session late leaves a few, which is lag,
	// not saturation. Saturated's own bound is what the table reads.
	if r.Saturated() {
		t.Errorf("saturated with a backlog of %d at a tenth of capacity", r.Backlog)
	}
	if limit := int64(2 + cfg.Rate*r.Lag.Max/1000); r.Backlog > limit {
		t.Errorf("backlog %d at the window's end; want at most the %d due within the largest lag (%.1f ms)", r.Backlog, limit, r.Lag.Max)
	}
	// Completions differ from the window's arrivals by the units in flight
	// at its edges: those of the warm-up a late session finished inside
	// it, and those due within its last lag. On a starved machine that
	// is more than a hundredth.
	edges := math.Max(0.01*float64(r.Scheduled), 2+cfg.Rate*r.Lag.Max/1000)
	if d := math.Abs(float64(r.Completed - r.Scheduled)); d > edges {
		t.Errorf("completed %d of %d scheduled; want within %.0f (a hundredth, or the arrivals of the largest lag, %.1f ms)", r.Completed, r.Scheduled, edges, r.Lag.Max)
	}
	want := cfg.Rate * cfg.Duration.Seconds()
	if d := math.Abs(float64(r.Scheduled) - want); d > 4*math.Sqrt(want) {
		t.Errorf("%d arrivals scheduled in %v; want %.0f within 4 sigma (%.0f)", r.Scheduled, cfg.Duration, want, 4*math.Sqrt(want))
	}
	if r.Latency.P50 < 0.2 {
		t.Errorf("latency p50 %.3f ms; want at least the 0.2-ms service", r.Latency.P50)
	}
}

// A stall of every session shows in the latency counted from the
// schedule, as it would to users arriving meanwhile (no coordinated
// omission), while the statements' own latency hides it.
func TestRateStallShowsInP99(t *testing.T) {
	cfg := driver.Config{Clients: 4, Warmup: 200 * time.Millisecond, Duration: 2 * time.Second, Goroutines: true,
		Rate: 1000, RateSeed: 2}
	w := newStallWork(100*time.Microsecond, time.Second, 300*time.Millisecond)
	res, err := driver.Run(context.Background(), cfg, nopDial, w)
	if err != nil {
		t.Fatal(err)
	}
	r := res.Rate
	if r.Latency.P99 < 100 {
		t.Errorf("p99 from the schedule %.1f ms; want the 300-ms stall in it (over 100 ms)", r.Latency.P99)
	}
	if res.Latency.P99 > r.Latency.P99/2 {
		t.Errorf("the statements' own p99 %.1f ms against %.1f ms from the schedule; want it to hide the stall", res.Latency.P99, r.Latency.P99)
	}
	if r.Lag.P99 < 100 {
		t.Errorf("lag p99 %.1f ms; want the stall's queue in it", r.Lag.P99)
	}
	if r.Saturated() {
		t.Errorf("saturated (backlog %d); the sessions caught up after the stall", r.Backlog)
	}
	// Second by second, the units count up to those completed, and the
	// stall shows in the second it ended in: the window's second 1 (the
	// stall is 0.8-1.1 s into the window), not in second 0's median.
	var n int64
	for _, s := range r.LatencyPerSecond {
		n += s.Count
	}
	if len(r.LatencyPerSecond) != 2 || n != r.Completed {
		t.Fatalf("%d seconds of %d units; want 2 seconds of the %d completed", len(r.LatencyPerSecond), n, r.Completed)
	}
	if s := r.LatencyPerSecond; s[1].Max < 200 || s[0].P50 > 50 {
		t.Errorf("per second %+v; want second 1's slowest unit over 200 ms and second 0's median under 50", s)
	}
}

// Over capacity the run says it is saturated: its backlog grows.
func TestRateSaturated(t *testing.T) {
	cfg := driver.Config{Clients: 2, Warmup: 100 * time.Millisecond, Duration: time.Second, Goroutines: true,
		Rate: 20_000, RateSeed: 3}
	r := runAtRate(t, cfg, newStallWork(time.Millisecond, 0, 0))
	if !r.Saturated() {
		t.Errorf("not saturated at 10 times capacity: backlog %d of %d", r.Backlog, r.Scheduled)
	}
	if r.Achieved > 0.2*r.Asked {
		t.Errorf("achieved %.0f a second of %.0f asked; want about the capacity, 2,000", r.Achieved, r.Asked)
	}
}

// A latency limit skips arrivals already later than it when a session is
// free, and counts the units that took longer than it as late.
func TestRateLatencyLimit(t *testing.T) {
	cfg := driver.Config{Clients: 4, Warmup: 200 * time.Millisecond, Duration: 2 * time.Second, Goroutines: true,
		Rate: 1000, RateSeed: 4, LatencyLimit: 50 * time.Millisecond}
	r := runAtRate(t, cfg, newStallWork(100*time.Microsecond, time.Second, 300*time.Millisecond))
	if r.Skipped == 0 || r.Late == 0 {
		t.Errorf("skipped %d, late %d after a 300-ms stall with a 50-ms limit; want both", r.Skipped, r.Late)
	}
	if r.LimitMS != 50 {
		t.Errorf("limit %.1f ms; want 50", r.LimitMS)
	}
	// About 250 arrivals are due more than 50 ms into the stall.
	if r.Skipped < 100 || r.Skipped > 400 {
		t.Errorf("skipped %d; want about 250", r.Skipped)
	}
}

// The groups of a split share the rate by their sessions and are offered
// the same arrivals; their counts add up to the whole's.
func TestRateGroups(t *testing.T) {
	cfg := driver.Config{Clients: 4, Warmup: 100 * time.Millisecond, Duration: time.Second, Goroutines: true,
		Groups: 2, Rate: 800, RateSeed: 5}
	res, err := driver.Run(context.Background(), cfg, nopDial, newStallWork(100*time.Microsecond, 0, 0))
	if err != nil {
		t.Fatal(err)
	}
	var sum int64
	for g, r := range res.Groups {
		if r.Rate == nil || r.Rate.Asked != 400 {
			t.Fatalf("group %d: rate %+v; want half of 800", g, r.Rate)
		}
		sum += r.Rate.Scheduled
	}
	if a, b := res.Groups[0].Rate.Scheduled, res.Groups[1].Rate.Scheduled; a != b {
		t.Errorf("the groups were offered %d and %d arrivals; want the same schedule", a, b)
	}
	if sum != res.Rate.Scheduled {
		t.Errorf("groups scheduled %d; the whole %d", sum, res.Rate.Scheduled)
	}
}

// Parts run by several drivers merge into one rate result: counts and
// rates add up, latencies are read from the merged histograms.
func TestRateMerge(t *testing.T) {
	var parts []driver.Part
	for i := range 2 {
		cfg := driver.Config{Clients: 2, FirstSession: 2 * i, Warmup: 100 * time.Millisecond, Duration: time.Second,
			Goroutines: true, Rate: 300, RateSeed: 6}
		p, err := driver.RunPart(context.Background(), cfg, nopDial, newStallWork(100*time.Microsecond, 0, 0))
		if err != nil {
			t.Fatal(err)
		}
		w, err := p.Wire()
		if err != nil {
			t.Fatal(err)
		}
		if p, err = w.Part(); err != nil {
			t.Fatal(err)
		}
		parts = append(parts, p)
	}
	m := driver.Merge(parts).Rate
	a, b := parts[0].Result.Rate, parts[1].Result.Rate
	if m == nil || m.Asked != 600 || m.Completed != a.Completed+b.Completed || m.Scheduled != a.Scheduled+b.Scheduled {
		t.Fatalf("merged %+v; want the parts' %+v and %+v added", m, a, b)
	}
	if m.Latency.P50 <= 0 || m.Latency.P50 > max(a.Latency.P50, b.Latency.P50)*1.1 {
		t.Errorf("merged p50 %.3f ms; parts' %.3f and %.3f", m.Latency.P50, a.Latency.P50, b.Latency.P50)
	}
	if a.Scheduled == b.Scheduled {
		t.Errorf("both parts scheduled %d: their sessions' streams should differ", a.Scheduled)
	}
	// The per-second latency travels with the parts and adds up.
	if len(m.LatencyPerSecond) != 1 || m.LatencyPerSecond[0].Count != m.Completed {
		t.Errorf("merged per second %+v; want one second of the %d units completed", m.LatencyPerSecond, m.Completed)
	}
}
