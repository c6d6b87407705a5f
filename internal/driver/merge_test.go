package driver_test

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/obsbench/obsbench/internal/driver"
	"github.com/obsbench/obsbench/internal/engine/enginetest"
	"github.com/obsbench/obsbench/internal/workload"
)

// Three drivers sharing one run's sessions, each behind the same start
// barrier, merge into one result: counts add up, sessions keep their
// global numbers, and the merged percentiles are exactly those of every
// statement's latency pooled in one histogram, also after the parts went
// through their wire encoding.
func TestMergeIsLossless(t *testing.T) {
	ctx := context.Background()
	srv := enginetest.New(enginetest.Options{StatementCost: 300 * time.Microsecond, Capacity: 2, Noise: 0.2, Seed: 3})
	start := time.Now().Add(200 * time.Millisecond)
	begin := func(context.Context) (time.Time, error) { return start, nil }
	sizes := []int{1, 2, 3}
	parts := make([]driver.Part, len(sizes))
	errs := make([]error, len(sizes))
	var wg sync.WaitGroup
	first := 0
	for i, n := range sizes {
		cfg := driver.Config{Clients: n, Warmup: 200 * time.Millisecond, Duration: 1500 * time.Millisecond,
			Executions: true, FirstSession: first, Begin: begin, Labels: []string{"on", "off"}}
		first += n
		wg.Add(1)
		go func() {
			defer wg.Done()
			parts[i], errs[i] = driver.RunPart(ctx, cfg, srv.Dial, workload.Loop("SELECT 1"))
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("part %d: %v", i, err)
		}
	}
	// Through the wire, as a worker sends its part.
	for i, p := range parts {
		w, err := p.Wire()
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(w)
		if err != nil {
			t.Fatal(err)
		}
		var back driver.PartWire
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if parts[i], err = back.Part(); err != nil {
			t.Fatal(err)
		}
	}
	m := driver.Merge(parts)

	pooled := hdrhistogram.New(1, 60_000_000, 3)
	onSecond := hdrhistogram.New(1, 60_000_000, 3)
	var measured int64
	sessions := map[int]bool{}
	for _, p := range parts {
		measured += p.Result.Measured
		for _, e := range p.Result.Executions {
			pooled.RecordValue(e.LatencyUS)
			if e.EndUS < 1_000_000 {
				onSecond.RecordValue(e.LatencyUS)
			}
			sessions[e.Session] = true
		}
	}
	if m.Clients != 6 || len(m.PerSecond) != 6 || m.Measured != measured || int64(len(m.Executions)) != measured {
		t.Fatalf("merged: %d clients, %d rows, %d measured, %d executions; want 6, 6, %d, %d",
			m.Clients, len(m.PerSecond), m.Measured, len(m.Executions), measured, measured)
	}
	var sum int64
	for _, row := range m.PerSecond {
		for _, n := range row {
			sum += n
		}
	}
	if sum != m.Measured {
		t.Errorf("per-second counts add up to %d; want %d", sum, m.Measured)
	}
	ids := make([]int, 0, len(sessions))
	for id := range sessions {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	if !slices.Equal(ids, []int{0, 1, 2, 3, 4, 5}) {
		t.Errorf("sessions %v; want the global ids 0-5", ids)
	}
	ms := func(us int64) float64 { return float64(us) / 1000 }
	for _, q := range []struct {
		name string
		got  float64
		want int64
	}{
		{"p50", m.Latency.P50, pooled.ValueAtQuantile(50)},
		{"p90", m.Latency.P90, pooled.ValueAtQuantile(90)},
		{"p99", m.Latency.P99, pooled.ValueAtQuantile(99)},
		{"p99.9", m.Latency.P999, pooled.ValueAtQuantile(99.9)},
		{"max", m.Latency.Max, pooled.Max()},
		{"on p99", m.LatencyBy["on"].P99, onSecond.ValueAtQuantile(99)},
	} {
		if q.got != ms(q.want) {
			t.Errorf("merged %s = %v ms; pooled latencies give %v ms", q.name, q.got, ms(q.want))
		}
	}
	if m.Latency.Mean != pooled.Mean()/1000 {
		t.Errorf("merged mean %v ms; pooled %v ms", m.Latency.Mean, pooled.Mean()/1000)
	}

	// Each second's latency, merged from the parts' buckets, counts that
	// second's statements and gives its percentiles within 6.25% of the
	// exact ones of the latencies pooled second by second.
	bySecond := map[int64][]int64{}
	for _, p := range parts {
		for _, e := range p.Result.Executions {
			bySecond[e.EndUS/1_000_000] = append(bySecond[e.EndUS/1_000_000], e.LatencyUS)
		}
	}
	if len(m.LatencyPerSecond) != 2 {
		t.Fatalf("%d seconds of latency; want 2 (1.5 s rounded up)", len(m.LatencyPerSecond))
	}
	for s, l := range m.LatencyPerSecond {
		lat := bySecond[int64(s)]
		slices.Sort(lat)
		if l.Count != int64(len(lat)) || len(lat) == 0 {
			t.Errorf("second %d: %d statements; want %d, more than none", s, l.Count, len(lat))
			continue
		}
		for _, q := range []struct {
			name string
			got  float64
			q    float64
		}{{"p50", l.P50, 0.50}, {"p90", l.P90, 0.90}, {"p99", l.P99, 0.99}, {"max", l.Max, 1}} {
			rank := max(int(q.q*float64(len(lat))+0.5), 1)
			exact := ms(lat[rank-1])
			if q.got < exact*0.9375 || q.got > exact*1.0625 {
				t.Errorf("second %d: %s = %v ms; the exact one is %v ms, want within 6.25%%", s, q.name, q.got, exact)
			}
		}
	}
}
