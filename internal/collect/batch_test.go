package collect

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/obsbench/obsbench/internal/poll"
)

// A batch's samples are filed by their own time: under the observer's
// state then, and not at all while the sampler was paused.
func TestBatchSamplesFiledByTheirTime(t *testing.T) {
	s := NewWaitSampler(&fakeSource{}, 10*time.Millisecond, false)
	t0 := time.Now()
	s.states = []state{
		{on: true},
		{at: t0.Add(25 * time.Millisecond), on: false},
		{at: t0.Add(55 * time.Millisecond), on: false, paused: true},
	}
	batch := make([]BatchSample, 10) // samples at t0+10ms ... t0+100ms
	for i := range batch {
		batch[i] = BatchSample{After: time.Duration(i+1) * 10 * time.Millisecond, Waits: []SessionWait{{Wait: "Lock:tuple"}, {}}}
	}
	s.fileBatch(t0, batch)
	on, off, err := s.Stop()
	if err != nil {
		t.Fatal(err)
	}
	if on.Ticks != 2 || off.Ticks != 3 {
		t.Errorf("%d on and %d off ticks; want 2 (at 10 and 20 ms) and 3 (30-50 ms), none paused", on.Ticks, off.Ticks)
	}
	if on.Counts["Lock:tuple"] != 2 || off.Counts[CPULabel] != 3 {
		t.Errorf("on %v, off %v: want one lock and one CPU sample per tick", on.Counts, off.Counts)
	}
	if len(s.states) != 1 || !s.states[0].paused {
		t.Errorf("states kept after the batch: %+v; want the one in force at its end", s.states)
	}
}

// batchSource answers each batch after the time it covers, each sample
// with one session in the kernel wait it was given.
type batchSource struct {
	fakeSource
	batches, samples, cancelled atomic.Int64
	refuse                      bool
	failures                    atomic.Int64 // batches left to fail
}

func (b *batchSource) BatchWaits(ctx context.Context, n int, interval time.Duration, kernel bool) ([]BatchSample, error) {
	if b.refuse {
		return nil, ErrNoBatches
	}
	if b.failures.Add(-1) >= 0 {
		return nil, errors.New("could not read file \"/proc/123/wchan\": No such process")
	}
	select {
	case <-ctx.Done():
		b.cancelled.Add(1)
		return nil, ctx.Err()
	case <-time.After(time.Duration(n) * interval):
	}
	b.batches.Add(1)
	b.samples.Add(int64(n))
	out := make([]BatchSample, n)
	for i := range out {
		sw := SessionWait{PID: 1}
		if kernel {
			sw.Kernel = KernelWaitOf("pipe_write\n", "")
		}
		out[i] = BatchSample{After: time.Duration(i+1) * interval, Waits: []SessionWait{sw}}
	}
	return out, nil
}

// A source that takes batches is asked for batches of 100 ms; the kernel
// waits it read are labels; Stop lets the batch in flight finish and keeps
// its samples up to the stop. One that refuses is sampled one at a time.
func TestSamplerUsesBatches(t *testing.T) {
	src := &batchSource{}
	s := NewWaitSampler(src, 10*time.Millisecond, true)
	s.Start(context.Background())
	time.Sleep(350 * time.Millisecond)
	on, _, err := s.Stop()
	if err != nil {
		t.Fatal(err)
	}
	if src.batches.Load() < 2 || src.calls.Load() != 0 {
		t.Fatalf("%d batches and %d single samples; want batches only", src.batches.Load(), src.calls.Load())
	}
	if src.cancelled.Load() != 0 {
		t.Errorf("Stop cancelled the batch in flight")
	}
	if n := src.samples.Load(); on.Ticks > n || on.Ticks < n-10 || on.Counts["OS:pipe_write"] != on.Ticks {
		t.Errorf("%d ticks for %d samples, counts %v; want every sample up to the stop as OS:pipe_write", on.Ticks, n, on.Counts)
	}

	refusing := &batchSource{refuse: true}
	s = NewWaitSampler(refusing, 10*time.Millisecond, false)
	s.Start(context.Background())
	// Until it has sampled at all: on a loaded machine its first tick
	// can come later than a fixed sleep.
	poll.Until(context.Background(), 5*time.Second, 10*time.Millisecond,
		func() (bool, error) { return refusing.calls.Load() > 0, nil }, func() error { return nil })
	on, _, err = s.Stop()
	if err != nil {
		t.Fatal(err)
	}
	if refusing.calls.Load() == 0 || on.Ticks != refusing.calls.Load() {
		t.Errorf("%d ticks, %d single samples; want the sampler to fall back to them", on.Ticks, refusing.calls.Load())
	}
}

// At 50 ms or more a batch would hold two samples or fewer: the sampler
// asks for one at a time.
func TestNoBatchesOfOne(t *testing.T) {
	if batchSize(50*time.Millisecond) != 1 || batchSize(49*time.Millisecond) != 2 {
		t.Errorf("batch sizes at 50 and 49 ms: %d, %d; want 1 and 2", batchSize(50*time.Millisecond), batchSize(49*time.Millisecond))
	}
	src := &batchSource{}
	s := NewWaitSampler(src, 50*time.Millisecond, false)
	s.Start(context.Background())
	time.Sleep(200 * time.Millisecond)
	if _, _, err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if src.batches.Load() != 0 || src.calls.Load() == 0 {
		t.Errorf("%d batches, %d single samples at 50 ms; want single samples", src.batches.Load(), src.calls.Load())
	}
}

func TestKernelWaitOf(t *testing.T) {
	for _, c := range []struct{ wchan, syscall, want string }{
		{"pipe_write", "", "pipe_write"},
		{"0", "1 0x2 0x3 0x4 0x5 0x6 0x7 0x7ffd 0x7f", "syscall:write"},
		{"0", "running", ""},
		{"", "", ""},
	} {
		if got := KernelWaitOf(c.wchan, c.syscall); got != c.want {
			t.Errorf("KernelWaitOf(%q, %q) = %q, want %q", c.wchan, c.syscall, got, c.want)
		}
	}
}

// A batch that fails is dropped and sampling goes on; batches that keep
// failing stop the sampler with the error.
func TestFailedBatches(t *testing.T) {
	for _, c := range []struct {
		failures int64
		wantErr  bool
	}{{2, false}, {maxFailedBatches, true}} {
		src := &batchSource{}
		src.failures.Store(c.failures)
		s := NewWaitSampler(src, 10*time.Millisecond, false)
		s.Start(context.Background())
		time.Sleep(250 * time.Millisecond)
		on, _, err := s.Stop()
		if (err != nil) != c.wantErr || (!c.wantErr && on.Ticks == 0) {
			t.Errorf("%d failed batches: error %v, %d ticks; want error %v and, without one, samples", c.failures, err, on.Ticks, c.wantErr)
		}
	}
}
