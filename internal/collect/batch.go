package collect

import (
	"context"
	"errors"
	"time"
)

// BatchWaitSource is a WaitSource that can also take several samples in
// one call, on the server itself: n samples, one every interval, answered
// at once. The sampler's process then wakes once a batch instead of once
// a sample, and the server once a sample instead of for a request and its
// answer (bench/sampler-queries: a client's wake-ups cost more than the
// query).
type BatchWaitSource interface {
	WaitSource
	// BatchWaits takes n samples, the i-th (from 0) due i+1 intervals
	// after the call. With kernel, a session that reports no wait has
	// its kernel wait read on the server's machine at the sample's
	// moment (SessionWait.Kernel). ErrNoBatches says the source cannot,
	// for good.
	BatchWaits(ctx context.Context, n int, interval time.Duration, kernel bool) ([]BatchSample, error)
}

// BatchSample is one sample of a batch.
type BatchSample struct {
	// After is when it was taken, from the batch's start as the source
	// measured it (the server's sleep may overrun its interval).
	After time.Duration
	Waits []SessionWait
}

// ErrNoBatches is a BatchWaitSource's answer when it cannot take batches
// (the server refused what that needs); the sampler then samples one at a
// time.
var ErrNoBatches = errors.New("the wait source cannot sample in batches")

// batchSpan is how long one batch samples. A switch of the observer or a
// pause of the sampler falls inside a batch: samples are filed by their
// time, but a pause stops the server's sampling only at the batch's end,
// so up to this much sampling runs into a pause (at most 5% of the 2-4 s
// phases in which --measure-collectors pauses it).
const batchSpan = 100 * time.Millisecond

// batchSize is how many samples a batch takes at interval: at 50 ms and
// more, one, and the sampler samples one at a time.
func batchSize(interval time.Duration) int {
	if 2*interval >= batchSpan {
		return 1
	}
	return int(batchSpan / interval)
}

// state is the observer's and the sampler's state from a moment on.
type state struct {
	at         time.Time
	on, paused bool
}

// record notes a change of state, for batches, whose samples are filed
// after the fact.
func (s *WaitSampler) record() {
	s.mu.Lock()
	now := time.Now() // under the lock: states stay in time order
	s.states = append(s.states, state{at: now, on: s.on.Load(), paused: s.paused.Load()})
	if len(s.states) > 256 { // sampling one at a time, no batch forgets them
		s.forgetBefore(now.Add(-time.Minute))
	}
	s.mu.Unlock()
}

// stateAt is the state at t; s.mu is held.
func (s *WaitSampler) stateAt(t time.Time) state {
	for i := len(s.states) - 1; i > 0; i-- {
		if !s.states[i].at.After(t) {
			return s.states[i]
		}
	}
	return s.states[0]
}

// forgetBefore drops the states that ended before t; s.mu is held.
func (s *WaitSampler) forgetBefore(t time.Time) {
	i := 0
	for i+1 < len(s.states) && !s.states[i+1].at.After(t) {
		i++
	}
	s.states = append(s.states[:0], s.states[i:]...)
}

// batchLoop samples src in batches until ctx ends; false when src cannot
// take batches, and the caller samples one at a time.
func (s *WaitSampler) batchLoop(ctx context.Context, src BatchWaitSource, n int) bool {
	s.batching.Store(true)
	defer s.batching.Store(false)
	failed := 0
	for ctx.Err() == nil && s.stopAt.Load() == 0 {
		if s.paused.Load() {
			// Woken by Pause(false), not polled: polling at the
			// interval would wake this process more often while
			// paused than while sampling, and --measure-collectors
			// compares the two.
			select {
			case <-ctx.Done():
			case <-s.resumed:
			case <-time.After(time.Second):
			}
			continue
		}
		start := time.Now()
		batch, err := src.BatchWaits(ctx, n, s.interval, s.os)
		if errors.Is(err, ErrNoBatches) {
			return false
		}
		if err != nil {
			if ctx.Err() != nil {
				return true
			}
			// A batch can fail for a moment (a process that ended
			// while the server read its /proc files): its samples are
			// dropped. Failing again and again, the sampler gives up.
			if failed++; failed >= maxFailedBatches {
				s.fail(err)
				return true
			}
			continue
		}
		failed = 0
		s.fileBatch(start, batch)
	}
	return true
}

// maxFailedBatches is how many batches in a row may fail before the
// sampler stops with the error.
const maxFailedBatches = 3

// fileBatch files a batch begun at start: each sample by the state at its
// time, none while paused or after Stop was called.
func (s *WaitSampler) fileBatch(start time.Time, batch []BatchSample) {
	labels := make([][]string, len(batch))
	for i, b := range batch {
		labels[i] = make([]string, len(b.Waits))
		for j, sw := range b.Waits {
			labels[i][j] = s.label(sw)
		}
	}
	stop := s.stopAt.Load()
	s.mu.Lock()
	defer s.mu.Unlock()
	last := start
	for i, b := range batch {
		at := start.Add(b.After)
		if at.After(last) {
			last = at
		}
		st := s.stateAt(at)
		if st.paused || (stop != 0 && at.UnixNano() > stop) {
			continue
		}
		s.file(st.on, labels[i])
	}
	s.forgetBefore(last) // the next batch starts later
}
